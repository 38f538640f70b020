"""The body of one worker process: build the target, warm up, wait at the barrier, run, report.

Runs in a spawned process (also from the frozen app). Talks to the parent over its own pipe
(``workloads.run.messages``). Per step a worker runs, in order:

1. set-up (imports, connection, data): not timed, not recorded;
2. at least ``warmup_ops`` warm-up operations, timed and recorded as kind "warmup" (the first
   operation of a fresh process), in a warm step on until the process is steady
   (``workloads.run.warmup``), then ``Ready``; their records go to the parent after the measured
   operations, so handling them never competes with one;
3. after the release, the measured operations (kind "measured"): the step's figures; a timed
   step's worker stops at the first operation boundary past the duration, but not before the
   step's users together have made ``MIN_OPS`` operations (so a busy machine cannot leave the
   step too short to measure), nor before the workload's own floor (a suite: every query once);
4. after every worker's measured operations are over, ``probe_ops`` probe operations where the
   target splits phases in an instrumented path (kind "probe"), released together again.

A cold step's measured and probe operations run in rounds (``workloads.run.cold``): user 0 clears
every cache between rounds, outside every operation's timing, and each record says whether its
operation held cold; a cold step's warm-ups each clear before themselves.
"""
from __future__ import annotations

import math
import os
import signal
import time
import traceback
from contextlib import suppress
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from workloads.run.processes import enter_user, preload_for
from workloads.targets.common.cache import resident_bytes_of
from workloads.targets.common.cleared import NOT_DROPPED
from workloads.targets.common.host_agents import agent_token, agents_of, drop_host_caches, hosts_without_agent
from workloads.run.cold import (ColdRounds, RoundsBroken, RoundStart, one_user_start, watch_parent,
                            with_own_clear)
from workloads.results.figures import MIN_OPS
from workloads.run.warmup import more_warmup
from workloads.operations.base import apply_counts
from workloads.operations.harness import with_added_work
from workloads.run.messages import Done, Failed, MeasuredDone, Ready, Records
from workloads.run.record_buffer import RecordBuffer
from workloads.run.records import MEASURED, MISSED, PROBE, UNSUPPORTED, WARMUP
from workloads.run.schedule import Schedule
from workloads.targets.base import Layout, NotSupported

_NAN = float("nan")
FLUSH_EVERY_S = 0.1         # records reach the parent within this (a kill -9 loses no more)
FLUSH_EVERY_RECORDS = 4096
CHECK_EVERY_S = 0.005       # how often the loop looks at the cancel flag and the parent
MAX_CONSECUTIVE_ERRORS = 5
POLL_S = 0.05


@dataclass(frozen=True)
class WorkerSpec:
    """Plain, picklable instructions for one worker."""

    scenario: dict[str, Any]
    step: dict[str, Any]               # StepPlan fields
    worker: int
    layout: Layout | None
    target_kind: str
    target_config: dict[str, Any]
    host: str = ""                     # the load generator it runs on ("" = the run's own machine)
    turn: Any = None                   # workloads.run.turns.Turn: takes turns with another run's user

    def __repr__(self) -> str:         # Dask logs a failed task's arguments: never a password
        from workloads.scenario import redacted
        fields = ", ".join(f"{k}={redacted(v)!r}" for k, v in self.__dict__.items())
        return f"WorkerSpec({fields})"


@dataclass(frozen=True)
class StepEvents:
    """The step's multiprocessing events, shared by the runner and every worker."""

    start: Any      # release of the measured operations
    probe: Any      # release of the probe operations
    stop: Any       # cancel

    @classmethod
    def make(cls, context) -> StepEvents:
        return cls(context.Event(), context.Event(), StopFlag(context))


class StopFlag:
    """The step's cancel flag, read before every operation, without a lock.

    ``multiprocessing.Event.is_set()`` takes a lock shared by every user of the step: a user
    killed while holding it left all the others blocked for good."""

    def __init__(self, context) -> None:
        self._flag = context.RawValue("b", 0)

    def set(self) -> None:
        self._flag.value = 1

    def is_set(self) -> bool:
        return bool(self._flag.value)


def describe_error(exc: BaseException) -> str:
    """One readable line: the exception's type and message, never a traceback."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else 'no message'}"


def worker_main(spec: WorkerSpec, conn: Connection, events: StepEvents, step_t0,
                rounds: ColdRounds | None = None, environ: dict[str, str] | None = None) -> None:
    # The run handles Ctrl+C and SIGTERM (both reach its whole group) and tells its users to stop;
    # a user must not die mid-record, nor end its step before the run has heard of the cancel
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    global _PARENT
    _PARENT = os.getppid()        # the run's process, or the forkserver it forked this user from
    # threads, random state and allocator (or a plain process's defaults), before anything is allocated
    conditions = enter_user(spec.scenario.get("process", "settled"), _seed_of(spec),
                            preload_for(spec.target_kind), environ)
    if rounds is not None:
        watch_parent(parent_gone)
    ops = None
    try:
        ctx, workload = _build_context(spec)
        ops = _Operations(spec, ctx, workload, conn, rounds)
        ops.warm_up()
        conn.send(Ready(spec.worker, os.getpid(), str(getattr(ctx.target, "node", "") or ""), conditions))
    except BaseException as exc:  # report anything that stops a worker from starting
        conn.send(Failed(spec.worker, describe_error(exc), traceback.format_exc()))
        _close(ops, conn)
        return
    try:
        if not _wait(events.start, events.stop):
            conn.send(Done(spec.worker))
            return
        t0 = step_t0.value
        try:
            count = ops.run(MEASURED, t0, events.stop)
            conn.send(MeasuredDone(spec.worker, count, tuple(ops.cache_methods)))
            probes = ops.probes_wanted and not ops.rounds_broken and not events.stop.is_set()
            # the probe release comes once every user's measured operations are over
            if (probes or ops.asked_again) and _wait(events.probe, events.stop):
                if probes:
                    ops.run(PROBE, t0, events.stop)
                ops.check_again(t0)
        finally:
            ops.send_warmups(t0)
        conn.send(Done(spec.worker, tuple(ops.cache_methods)))
    except BaseException as exc:
        conn.send(Failed(spec.worker, describe_error(exc), traceback.format_exc()))
    finally:
        _close(ops, conn)


# the process that started this user: the run's, or the forkserver (which ends with the run's);
# when it dies (kill -9) the worker must not linger
_PARENT = os.getppid()


def _seed_of(spec: WorkerSpec) -> list[int]:
    scale = spec.scenario.get("scale") or {}
    return [int(scale.get("seed", 0)), int(spec.step.get("index", 0)), spec.worker]


def parent_gone() -> bool:
    return os.getppid() != _PARENT


def _wait(event, stop_event) -> bool:
    """Wait for ``event``; False when the run was stopped (or its process died) first."""
    while not event.wait(POLL_S):
        if stop_event.is_set() or parent_gone():
            return False
    return True


def _close(ops: "_Operations | None", conn: Connection) -> None:
    if ops is not None:
        try:
            ops.ctx.target.close()
        except Exception:  # closing after a failure must not hide the failure itself
            pass
    conn.close()


def _build_context(spec: WorkerSpec):
    from workloads.datasets import get_dataset
    from workloads.operations import StepPlan, WorkerContext, get_workload
    from workloads.scenario import Scenario
    from workloads.targets import make_target

    scenario = Scenario.from_dict(spec.scenario)
    workload = get_workload(scenario.workload)
    step = StepPlan(**spec.step)
    params = {**workload.validate(scenario.params), **step.params}
    target = make_target(spec.target_kind, spec.target_config)
    if workload.uses_target and spec.layout is not None:
        target.open(spec.layout, spec.worker)
    seed = np.random.SeedSequence([scenario.scale.seed, step.index, spec.worker])
    ctx = WorkerContext(scenario=scenario, step=step, worker=spec.worker, target=target,
                        layout=spec.layout, dataset=get_dataset(scenario.dataset), params=params,
                        rng=np.random.default_rng(seed))
    workload.setup(ctx)
    return ctx, workload


class _Operations:
    """Runs one worker's operations of each kind and streams their records to the parent."""

    def __init__(self, spec: WorkerSpec, ctx, workload, conn: Connection, rounds: ColdRounds | None = None):
        self.spec, self.ctx, self.workload, self.conn = spec, ctx, workload, conn
        scenario = ctx.scenario
        self.cold = scenario.cache == "cold" and workload.uses_target
        self.rounds = rounds if self.cold else None
        self.rounds_broken = False
        self._day_index = {day: i for i, day in enumerate(ctx.layout.days)} if ctx.layout is not None else {}
        self.cache_methods: list[str] = []
        self.probes_wanted = (workload.uses_target and scenario.probe_ops > 0
                              and workload.op_name in ctx.target.probed_ops)
        step = int(spec.step["index"])
        # the workload's next_op, or with added work (``added_work_s``, ``_share``) one that wraps each
        # operation: 0 leaves the workload's own, so the fast path pays nothing
        self.next_op = with_added_work(workload.next_op, float(ctx.params.get("added_work_s") or 0.0),
                                       float(ctx.params.get("added_work_share") or 0.0))
        self._warmups = RecordBuffer(step, spec.worker, spec.host)
        self.asked_again: tuple | None = None      # (warm-up seq, operation, check): ``check_again``
        self._buffer = RecordBuffer(step, spec.worker, spec.host)
        self._last_flush = time.perf_counter()

    # --- warm-up: before the release, so it never overlaps a measured operation ----------------
    def warm_up(self) -> None:
        """The scenario's warm-up operations; a warm step's go on until the process is steady
        (``workloads.run.warmup``)."""
        minimum = int(self.ctx.scenario.warmup_ops)
        until_steady = not self.cold and self.workload.uses_target
        seconds: list[float] = []
        failed = False           # a failed warm-up still counts to the minimum, but ends the rest
        seq = 0
        while seq < minimum or (until_steady and not failed and more_warmup(seconds, minimum)):
            op = self.next_op(self.ctx, seq)
            if op is None:
                break
            marks = getattr(op, "__dict__", None)      # a check that asks again (``checked_again``) waits
            check = marks.pop("check", None) if marks and marks.get("check_again") else None
            started, total, result, error = self._timed(op, clear_first=self.cold)
            self._warmups.add(WARMUP, seq, started, total, result, error,
                              getattr(op, "op_name", self.workload.op_name))
            if check is not None and result is not None:
                self.asked_again = (seq, op, check)
            result = None
            failed = failed or bool(error)
            seconds.append(total)
            seq += 1
        self.ctx.rows_done = 0

    def check_again(self, t0: float) -> None:
        """The check set aside on a warm-up, of its question asked again now (every user's measured
        operations over), into that warm-up's record with when it was asked (on the step's clock)."""
        if self.asked_again is None:
            return
        seq, op, check = self.asked_again
        self.asked_again = None
        asked = {"asked_again_at_s": round(time.monotonic() - t0, 6)}
        try:
            facts = {**check(op()), **asked}
        except Exception as exc:        # the warm-up's record keeps its figures; it says why it has no check
            facts = {"check_error": describe_error(exc), **asked}
        self._warmups.add_facts(seq, facts)

    def send_warmups(self, t0: float) -> None:
        """Warm-up records on the step's clock (they ended before the release: t_start < 0), sent
        once the measured operations are over (and the probes, and a check asked again): handled
        at the release, a whole warm-up batch made the parent compete with the first measured
        operations (a PostgreSQL slice step measured 1.28x its hand-written path that way, 0.96x
        with the batch sent after)."""
        if not len(self._warmups):
            return
        records = self._warmups.take()
        records["t_start"] -= t0          # they were stamped on the monotonic clock
        with suppress(OSError, ValueError):     # the parent is gone or closed the pipe: nothing to keep them for
            self.conn.send(Records(self.spec.worker, records))

    # --- measured and probe operations ------------------------------------------------------
    def run(self, kind: str, t0: float, stop_event) -> int:
        """This worker's operations of ``kind`` until its share is done. What the harness adds to an
        operation is kept small (``benchmarks/bench_harness.py``): one pair of clock reads around
        it, its figures appended to typed columns (``workloads.run.record_buffer``), the cancel flag and
        the parent looked at every ``CHECK_EVERY_S`` rather than every operation."""
        scenario, ctx = self.ctx.scenario, self.ctx
        measured = kind == MEASURED
        limit = (scenario.operations if self.workload.bounded_by_operations
                 else ctx.params.get("max_operations", 0)) if measured else scenario.probe_ops
        timed = measured and scenario.duration_s > 0
        # the release on perf_counter's clock (on Linux the same CLOCK_MONOTONIC: a difference of 0)
        origin = t0 - (time.monotonic() - time.perf_counter())
        deadline = origin + scenario.duration_s if timed else float("inf")
        # a busy machine can fit too few operations in a short duration to measure the step:
        # a timed step runs on until its users together have made MIN_OPS of them
        floor = max(math.ceil(MIN_OPS / max(1, ctx.step.users)), self.workload.timed_floor(ctx)) if timed else 0
        schedule = self._schedule() if measured and ctx.step.rate > 0 else None
        buffer = self._buffer
        default_name = self.workload.op_name
        buffer.begin(kind, 0, default_name)
        # the loop's names bound once: a lookup per operation is the harness's own cost
        add_start, add_total, add_rows, add_bytes = buffer.appenders()
        add_intended = buffer.intended_appender()
        next_op, clock = self.next_op, time.perf_counter
        probe_mode = None if measured else ctx.target.probe_mode
        cold = self.cold
        turn = self.spec.turn if measured else None      # another run's user takes every other turn
        ctx.rows_done = 0
        seq = consecutive_errors = pending = 0
        now = next_check = last_flush = clock()
        stopped = False
        cache = None
        try:
            while True:
                if now >= next_check:
                    stopped = stop_event.is_set() or parent_gone()
                    next_check = now + CHECK_EVERY_S
                done = stopped or (limit and seq >= limit) or (now >= deadline and seq >= floor)
                op = None if done else next_op(ctx, seq)
                if cold:
                    cache = self._start_cold(op)
                    if not cache.go:
                        break
                    if op is None:        # done, but the step's other users go on: their rounds wait for none
                        continue
                elif op is None:
                    break
                if turn is not None and not turn.wait(stop_event):
                    break                 # the other run's user is done: both measured the same stretch
                if schedule is not None:
                    intended = schedule.next_start()
                    if origin + intended > clock() and not self._sleep_until(origin + intended, stop_event):
                        break
                    add_intended(intended)
                # the same timed call twice: a measured operation pays no with-statement (the
                # harness's cost per operation), a probe runs inside the target's probe mode
                if probe_mode is None:
                    began = clock()
                    try:
                        result, error = op(), ""
                    except Exception as exc:
                        result, error = None, describe_error(exc)
                    now = clock()
                else:
                    with probe_mode():
                        began = clock()
                        try:
                            result, error = op(), ""
                        except Exception as exc:
                            result, error = None, describe_error(exc)
                        now = clock()
                # the record: a few appends to typed columns; what few operations have goes aside
                marks = getattr(op, "__dict__", None)      # named(), counted_as(), checked() mark the operation
                add_start(began - origin)
                add_total(now - began)
                if marks:
                    buffer.name(pending, marks.get("op_name", default_name))
                if result is not None:
                    if marks:
                        apply_counts(op, result)
                    rows = result.rows
                    add_rows(rows)
                    add_bytes(result.nbytes)
                    ctx.rows_done += rows
                    consecutive_errors = 0
                    if (cache is not None or result.phases or result.node or result.extra
                            or result.wire_bytes is not None):
                        buffer.rare(pending, result, "", cache.facts() if cache is not None else None)
                else:
                    add_rows(0)
                    add_bytes(0)
                    unsupported = error.startswith(NotSupported.__name__)
                    consecutive_errors += not unsupported
                    buffer.rare(pending, None, error, cache.facts() if cache is not None else None,
                                UNSUPPORTED if unsupported else "")
                # Free the result before the next operation, as a job that handles one day at a time
                # does: a frame still held while the next one loads changes how memory is reused
                # (2M-row pickle loads alternate 30 / 110 ms) and doubles the memory a big day needs.
                result = None
                seq += 1
                pending += 1
                if pending >= FLUSH_EVERY_RECORDS or now - last_flush >= FLUSH_EVERY_S:
                    self._flush(now)
                    pending, last_flush = 0, now
                if consecutive_errors >= MAX_CONSECUTIVE_ERRORS:
                    self._flush()
                    raise RuntimeError(f"stopped after {consecutive_errors} failed operations in a row; "
                                       f"last: {error}")
                if turn is not None:      # after this operation's bookkeeping: none overlaps the other's
                    turn.hand_over()
        except RoundsBroken:
            self.rounds_broken = True     # another user stopped: this one keeps what it measured
        except BaseException:
            if self.rounds is not None:
                self.rounds.abort()       # the others must not wait for this user's next round
            raise
        finally:
            if turn is not None:
                turn.finish()
        self._flush()
        if schedule is not None and timed:
            self._record_missed(schedule, seq, scenario.duration_s)
        return seq

    def _schedule(self) -> Schedule:
        step, scenario = self.ctx.step, self.ctx.scenario
        seeds = np.random.SeedSequence([scenario.scale.seed, step.index, self.spec.worker, 1])  # not the workload's
        return Schedule(step.rate / max(1, step.users), scenario.schedule, self.spec.worker, step.users, seeds)

    @staticmethod
    def _sleep_until(wake: float, stop_event) -> bool:
        """Wait for an intended start (False: the run was stopped meanwhile)."""
        while (left := wake - time.perf_counter()) > 0:
            if left > CHECK_EVERY_S and (stop_event.is_set() or parent_gone()):
                return False
            time.sleep(min(left, POLL_S))
        return True

    def _record_missed(self, schedule: Schedule, seq: int, duration_s: float) -> None:
        """The scheduled starts of the step's duration this user never reached, one record each
        (kind "missed": its intended start, no time): a stalled server's backlog is counted, not lost."""
        while schedule.peek() < duration_s:
            self._buffer.add(MISSED, seq, _NAN, _NAN, None, "", self.workload.op_name, intended=schedule.next_start())
            seq += 1
        self._flush()

    def _start_cold(self, op) -> RoundStart | None:
        """A cold step's cache facts for the next operation (None in a warm step): in rounds,
        after this user's own clear and user 0's; without them (users on other hosts), after this
        worker's own clears."""
        if not self.cold:
            return None
        if self.rounds is None:
            if op is None:
                return RoundStart(False, False, "")
            own, own_error = self._drop_process_cache()
            return with_own_clear(one_user_start(*self._clear_shared(), self.ctx.step.users), own, own_error)
        own, own_error = self._drop_process_cache() if op is not None else ([], "")
        reads = getattr(op, "reads", None)
        days = None if reads is None else [self._day_index[d] for d in reads if d in self._day_index]
        start = self.rounds.next_round(self.spec.worker, op is not None, days, self._clear_shared)
        return with_own_clear(start, own, own_error)

    def _drop_cache(self) -> list[str]:
        """The engine's clear, then the database hosts' agents' (``common.host_agents``): asked only
        when the engine's clear applied, or the engine keeps no data of its own to clear."""
        target = self.ctx.target
        methods = list(target.drop_cache(self.ctx.layout))
        agents = agents_of(target.config)
        if agents and (methods or not target.engine_caches_data):
            methods += drop_host_caches(agents, agent_token(target.config))
            methods += [f"{NOT_DROPPED} (no agent on {host}, which serves the data)"
                        for host in hosts_without_agent(target.data_hosts(), agents)]
        self.cache_methods = methods
        return self.cache_methods

    def _clear_shared(self) -> tuple[list[str], int | None]:
        """The shared caches emptied, and how many bytes of the layout's files the kernel still
        holds after it (None where there are none here to ask about)."""
        methods = self._drop_cache()
        files = self.ctx.target.data_files(self.ctx.layout)
        return methods, (resident_bytes_of(files) if files else None)

    def _drop_process_cache(self) -> tuple[list[str], str]:
        try:
            return list(self.ctx.target.drop_process_cache(self.ctx.layout)), ""
        except Exception as exc:      # the operation then runs warm, and its record says why
            return [], describe_error(exc)

    def _timed(self, op, clear_first: bool = False):
        """(start on the monotonic clock, seconds, result or None, error text) of one operation;
        a clear asked for comes before the timed span."""
        if clear_first:
            self._drop_process_cache()
            self._drop_cache()
        started = time.monotonic()
        perf_start = time.perf_counter()
        try:
            result = op()
            error = ""
        except Exception as exc:
            result, error = None, describe_error(exc)
        total = time.perf_counter() - perf_start
        if result is not None:
            apply_counts(op, result)
        return started, total, result, error

    def _flush(self, now: float | None = None) -> None:
        if len(self._buffer):
            self.conn.send(Records(self.spec.worker, self._buffer.take()))
        self._last_flush = time.perf_counter() if now is None else now
