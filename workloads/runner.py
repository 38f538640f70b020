"""One run: prepare the target, then per step start N worker processes, release them together,
collect their records into the results store and the live aggregates, and finish cleanly.

``Runner.run()`` is synchronous (tests call it directly); the GUI calls it off the GUI thread and
polls ``snapshot()``; ``cancel()`` may be called from any thread.
"""
from __future__ import annotations

import multiprocessing as mp
import secrets
import signal
import threading
import shutil
import time
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from multiprocessing.connection import wait
from typing import Any

import pandas as pd

from workloads.environment import capture_environment
from workloads.figures import figures_of_step, step_figures
from workloads.kinds import StepPlan, get_workload
from workloads.messages import Done, Failed, MeasuredDone, Ready, Records
from workloads.metrics import LiveAggregates
from workloads.records import MEASURED, Columns, batch_length, concat_columns
from workloads.sampler import ResourceSampler
from workloads.scenario import Scenario
from workloads.snapshot import LiveSnapshot
from workloads.store import ResultsStore, host_process
from workloads.targets import make_target
from workloads.datasets import get_dataset
from workloads.datasets.csv_files import existing_csv_bytes
from workloads.targets.base import IMPORT_TABLE, Layout, TargetError
from workloads.targets.sizes import rows_bytes
from workloads.worker import StepEvents, WorkerSpec, describe_error, worker_main

READY_TIMEOUT_S = 300.0     # spawned workers import pandas/pyarrow: slow with many on 2 cores
CANCEL_GRACE_S = 0.7        # then workers still busy in an operation are killed (cancel <= 1 s)
STORE_FLUSH_S = 0.5


def new_run_id() -> str:
    return f"{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def exit_description(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


@dataclass
class RunResult:
    run_id: str
    status: str                      # completed | cancelled | failed
    message: str
    figures: pd.DataFrame = field(default_factory=pd.DataFrame)


@dataclass
class _Worker:
    index: int
    process: Any
    conn: Any
    state: str = "starting"
    pid: int | None = None
    node: str = ""
    error: str = ""
    traceback: str = ""


class Runner:
    def __init__(self, scenario: Scenario, store: ResultsStore, ready_timeout_s: float = READY_TIMEOUT_S):
        self.scenario = scenario
        self.store = store
        self.run_id = new_run_id()
        self.ready_timeout_s = ready_timeout_s
        self.workload = get_workload(scenario.workload)
        self.params = self.workload.validate(scenario.params)
        if self.workload.bounded_by_operations and not scenario.operations and not scenario.duration_s:
            raise ValueError(f"{scenario.workload} needs a number of operations per user or a duration")
        self.steps: list[StepPlan] = self.workload.steps(scenario)
        self.target = make_target(scenario.target, scenario.target_config)  # config only, no I/O
        self._cancel = threading.Event()
        self._t0 = time.monotonic()
        self._metrics = LiveAggregates(self.run_id, scenario.target, scenario.workload, len(self.steps))
        self._metrics.plan_ops(self.workload.planned_ops(self.params))
        self._mp = mp.get_context("spawn")
        self._sampler: ResourceSampler | None = None
        self._failures: list[str] = []
        self._planned_ops: dict[int, int | None] = {}

    # --- control -------------------------------------------------------------------------
    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def clock(self) -> float:
        return time.monotonic() - self._t0

    def snapshot(self) -> LiveSnapshot:
        return self._metrics.snapshot(self.clock())

    # --- the run -------------------------------------------------------------------------
    def run(self) -> RunResult:
        scenario, target = self.scenario, self.target
        environment = capture_environment(self._data_paths())
        environment["string_mode"] = scenario.strings
        self.store.create_run(self.run_id, _public_scenario(scenario), environment, host_process())
        self._sampler = ResourceSampler()
        status, message = "completed", ""
        try:
            layout = self._prepare(target) if self.workload.uses_target else None
            self._describe_target()
            run_params = self.workload.prepare_run(self.scenario, layout, self._run_dir())
            if layout is not None:      # after prepare_run: an import's CSV files exist by now
                self.store.set_layout(self.run_id, {**_layout_record(layout), "footprint": self._footprint(layout)})
            for step in self.steps:
                if self.cancelled:
                    break
                self._run_step(replace(step, params={**step.params, **run_params}), layout)
                self.workload.finish_step(run_params)
            if self.cancelled:
                status, message = "cancelled", "stopped by the user; what was measured is kept"
            elif self._failures:
                all_failed = step_figures(self.store, self.run_id)["ops"].sum() == 0
                status = "failed" if all_failed else "completed"
                message = "; ".join(self._failures[:3]) + (
                    f" (+{len(self._failures) - 3} more)" if len(self._failures) > 3 else "")
        except (TargetError, ValueError, OSError) as exc:
            status, message = "failed", describe_error(exc) if not isinstance(exc, TargetError) else str(exc)
        except Exception as exc:  # keep the record: a run never vanishes
            status, message = "failed", describe_error(exc)
        finally:
            shutil.rmtree(self._run_dir(), ignore_errors=True)      # the run's scratch files
            self.store.finish_run(self.run_id, status, message)
            self._metrics.set_status(status, message or status, progress=1.0 if status == "completed" else None)
        return RunResult(self.run_id, status, message, step_figures(self.store, self.run_id))

    def _data_paths(self) -> list[str]:
        config = self.scenario.target_config
        return [str(p) for p in (config.get("root"), config.get("path"), self.store.path.parent) if p]

    def _prepare(self, target) -> Layout:
        def progress(done: int, total: int, text: str) -> None:
            self._metrics.set_status("preparing", f"preparing data: {text}",
                                     progress=0.0 if not total else 0.1 * done / total)
        self._metrics.set_status("preparing", "preparing data")
        layout = target.prepare(self.scenario.dataset, self.scenario.scale,
                                self.scenario.string_mode, progress)
        self.store.set_layout(self.run_id, _layout_record(layout))
        return layout

    def _footprint(self, layout: Layout, table: str = "") -> dict[str, Any]:
        """The table's space as the engine tells it, with what to compare it with."""
        try:
            footprint = self.target.footprint_detail(layout, table).to_dict()
        except Exception as exc:  # a footprint must never stop a run
            return {"error": describe_error(exc)}
        footprint["logical_bytes"] = rows_bytes(layout.rows, get_dataset(layout.dataset).info.schema)
        footprint["csv_bytes"] = existing_csv_bytes(layout.dataset, layout.scale)
        return footprint

    def _run_dir(self):
        from workloads.paths import data_dir
        return data_dir() / "runs" / self.run_id

    def _describe_target(self) -> None:
        """The target as it was used (server version, topology, what preparing it learnt)."""
        self.store.set_environment_entry(self.run_id, "target", _safe_describe(self.target))

    def _run_step(self, step: StepPlan, layout: Layout | None) -> None:
        events = StepEvents(self._mp.Event(), self._mp.Event(), self._mp.Event())
        step_t0 = self._mp.Value("d", 0.0)
        self.store.add_step(self.run_id, step.index, step.users, step.label, step.params)
        self._metrics.begin_step(step.index, step.users, step.label, self.clock())
        self._metrics.set_status("running", f"step {step.index + 1}/{len(self.steps)}: starting "
                                 f"{step.users} worker process{'es' if step.users > 1 else ''}")
        # A write workload's table is emptied after the warm-ups (they write too), or before the
        # workers start when there are none (a DuckDB worker then still holds the file read-only).
        clear = layout is not None and self.workload.writes
        if clear and not self.scenario.warmup_ops:
            self.target.clear_table(layout, self.workload.scratch_table(self.params))
        workers = [self._spawn(step, layout, i, events, step_t0) for i in range(step.users)]
        collector = _Collector(self, step, workers)
        collector.wait_ready(self.ready_timeout_s)
        if clear and self.scenario.warmup_ops:
            self.target.clear_table(layout, self.workload.scratch_table(self.params))
        step_methods = self._cold_step(layout)
        step_t0.value = time.monotonic()
        offset = self.clock()
        self.store.release_step(self.run_id, step.index, offset)
        self._metrics.release_step(offset)
        for w in workers:
            if w.state == "ready":
                collector.set_state(w, "running")
        events.start.set()
        running = sum(w.state == "running" for w in workers)
        self._metrics.set_status("running", f"step {step.index + 1}/{len(self.steps)} ({step.label}): "
                                 f"{running} of {step.users} workers running")
        collector.collect(offset, events.stop, until=("running",))
        window = collector.last_end            # release -> end of the last measured operation
        if not self.cancelled and any(w.state == "measured" for w in workers):
            self._metrics.set_status("running", f"step {step.index + 1}/{len(self.steps)}: "
                                     "probe operations for the phase split")
            events.probe.set()
        collector.collect(offset, events.stop, until=("running", "measured"))
        collector.finish()
        step_status = "cancelled" if self.cancelled else "completed"
        self.store.finish_step(self.run_id, step.index, window, step_status,
                               step_methods + collector.cache_methods)
        if layout is not None and self.workload.scratch_table(self.params) == IMPORT_TABLE:
            self.store.set_step_facts(self.run_id, step.index,
                                      {"footprint": self._footprint(layout, IMPORT_TABLE)})
        self._metrics.end_step(figures_of_step(self.store, self.run_id, step.index))

    def _cold_step(self, layout: Layout | None) -> list[str]:
        if self.scenario.cache != "cold" or layout is None or not self.workload.uses_target:
            return []
        return self.target.drop_cache_for_step(layout)

    def _spawn(self, step: StepPlan, layout, index: int, events: StepEvents, step_t0) -> _Worker:
        spec = WorkerSpec(scenario=self.scenario.to_dict(), step=asdict(step), worker=index,
                          layout=layout, target_kind=self.scenario.target,
                          target_config=dict(self.scenario.target_config))
        parent_conn, child_conn = self._mp.Pipe(duplex=False)
        process = self._mp.Process(target=worker_main, name=f"tickbench-worker-{index}",
                                   args=(spec, child_conn, events, step_t0), daemon=True)
        process.start()
        child_conn.close()
        return _Worker(index=index, process=process, conn=parent_conn)

    # called by the collector
    def _step_progress(self, step: StepPlan, ops: int, rows: int, elapsed: float) -> float:
        # asked on every collector pass: the planned count (a suite file read) once per step
        if step.index not in self._planned_ops:
            self._planned_ops[step.index] = self.workload.operations_per_step(self.scenario, step, self.params)
        planned = self._planned_ops[step.index]
        if self.scenario.duration_s:
            fraction = elapsed / self.scenario.duration_s
        elif planned:
            fraction = ops / planned
        elif self.workload.bounded_by_operations:
            fraction = ops / max(1, step.users * self.scenario.operations)
        else:
            per_user = self.params.get("rows_per_user") or self.params.get("rows_per_step") or 1
            fraction = rows / max(1, per_user * step.users)
        return min(1.0, 0.1 + 0.9 * (step.index + min(fraction, 1.0)) / len(self.steps))


_LIVE = ("starting", "ready", "running", "measured")   # states in which a worker's pipe is read


class _Collector:
    """Reads every worker's pipe, feeds the store and the live aggregates, watches for deaths.

    It owns the workers' states: starting -> ready -> running -> measured -> done, or failed /
    cancelled from any of them.
    """

    def __init__(self, runner: Runner, step: StepPlan, workers: list[_Worker]):
        self.runner, self.step, self.workers = runner, step, workers
        self.pending: list[Columns] = []
        self.last_end = 0.0          # release-relative end of the last measured operation
        self.cache_methods: list[str] = []
        self.ops = self.rows = 0
        self._last_flush = self._last_sample = time.monotonic()

    def _open(self) -> list[_Worker]:
        return [w for w in self.workers if w.conn is not None]

    def set_state(self, w: _Worker, state: str) -> None:
        w.state = state
        self.runner._metrics.set_worker(w.index, state)

    def wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while any(w.state == "starting" for w in self.workers):
            if self.runner.cancelled or time.monotonic() > deadline:
                for w in self.workers:
                    if w.state == "starting":
                        reason = "cancelled before it started" if self.runner.cancelled else \
                            f"not ready within {timeout_s:.0f} s"
                        self._fail(w, reason, state="cancelled" if self.runner.cancelled else "failed")
                        w.process.kill()
                return
            self._poll(0.1, None)
            self._sample()

    def collect(self, offset: float, stop_event, until: tuple[str, ...]) -> None:
        """Read records while any worker is in one of the ``until`` states (or cancel)."""
        cancel_deadline = None
        while any(w.state in until and w.conn is not None for w in self.workers):
            if self.runner.cancelled and cancel_deadline is None:
                stop_event.set()
                cancel_deadline = time.monotonic() + CANCEL_GRACE_S
            if cancel_deadline is not None and time.monotonic() > cancel_deadline:
                for w in self._open():
                    w.process.kill()
                    w.process.join(1.0)
                    self._drain(w, offset)
                    if w.conn is not None:
                        self._close(w, "cancelled", "stopped by the user during an operation")
                break
            self._poll(0.1, offset)
            self._flush_if_due()
            self._sample()
            elapsed = self.runner.clock() - offset
            self.runner._metrics.set_status(
                "running", progress=self.runner._step_progress(self.step, self.ops, self.rows, elapsed))

    def finish(self) -> None:
        for w in self.workers:
            w.process.join(2.0)
            if w.process.is_alive():
                w.process.kill()
                w.process.join(2.0)
            if w.conn is not None:     # a worker that never said Done (stopped before the release)
                self._close(w, "cancelled" if self.runner.cancelled else w.state)
        self._flush()

    def _poll(self, timeout: float, offset: float | None) -> None:
        by_conn = {w.conn: w for w in self._open()}
        if not by_conn:
            time.sleep(timeout)
            return
        for conn in wait(list(by_conn), timeout=timeout):
            self._receive(by_conn[conn], offset)
        for w in self._open():  # a worker that died without a word (killed, crashed)
            if not w.process.is_alive() and not w.conn.poll():
                w.process.join(0.1)
                if w.state in _LIVE:
                    self._fail(w, f"worker process {exit_description(w.process.exitcode)}")
                else:
                    self._close(w, w.state)

    def _drain(self, w: _Worker, offset: float) -> None:
        while w.conn is not None and w.conn.poll():
            self._receive(w, offset)

    def _receive(self, w: _Worker, offset: float | None) -> None:
        try:
            message = w.conn.recv()
        except (EOFError, OSError, Exception):  # closed or half-written by a dying worker
            w.process.join(0.5)
            if w.state in _LIVE:
                self._fail(w, f"worker process {exit_description(w.process.exitcode)}")
            else:
                self._close(w, w.state)
            return
        if isinstance(message, Ready):
            w.pid, w.node = message.pid, message.node
            self.set_state(w, "ready")
            self.runner.store.set_worker(self.runner.run_id, self.step.index, w.index, w.pid, w.node, "ready")
        elif isinstance(message, Records):
            self._add(message.batch, offset)
        elif isinstance(message, MeasuredDone):
            self.cache_methods = list(message.cache_methods) or self.cache_methods
            self.set_state(w, "measured")
        elif isinstance(message, Done):
            self.cache_methods = list(message.cache_methods) or self.cache_methods
            self._close(w, "cancelled" if self.runner.cancelled else "done")
        elif isinstance(message, Failed):
            self._fail(w, message.error, traceback=message.traceback)

    def _add(self, batch: Columns, offset: float | None) -> None:
        if not batch_length(batch) or offset is None:
            return
        self.pending.append(batch)
        self.runner._metrics.add(batch, offset)
        measured = batch["kind"] == MEASURED
        ok = batch["ok"] & measured
        if measured.any():
            ends = batch["t_start"][measured] + batch["total_s"][measured]
            self.last_end = max(self.last_end, float(ends.max()))
        self.ops += int(ok.sum())
        self.rows += int(batch["rows"][ok].sum())

    def _fail(self, w: _Worker, error: str, state: str = "failed", traceback: str = "") -> None:
        w.error, w.traceback = error, traceback
        if state == "failed":
            self.runner._failures.append(f"worker {w.index} (step {self.step.index + 1}): {error}")
        self._close(w, state)

    def _close(self, w: _Worker, state: str, error: str = "") -> None:
        w.state = state
        w.error = w.error or error
        if w.conn is not None:
            w.conn.close()
            w.conn = None
        self.runner._metrics.set_worker(w.index, state, w.error)
        self.runner.store.set_worker(self.runner.run_id, self.step.index, w.index, w.pid, w.node,
                                     state, w.error, w.process.exitcode, w.traceback)

    def _flush_if_due(self) -> None:
        if time.monotonic() - self._last_flush >= STORE_FLUSH_S:
            self._flush()

    def _flush(self) -> None:
        if self.pending:
            self.runner.store.add_ops(self.runner.run_id, concat_columns(self.pending))
            self.pending = []
        self._last_flush = time.monotonic()

    def _sample(self) -> None:
        now = time.monotonic()
        if now - self._last_sample < 1.0 or self.runner._sampler is None:
            return
        self._last_sample = now
        point = self.runner._sampler.sample(self.runner.clock())
        self.runner._metrics.add_resources(point)
        self.runner.store.add_resource(self.runner.run_id, point.t, point.cpu_percent, point.rss_bytes,
                                       point.read_bytes_per_s, point.write_bytes_per_s)


def _safe_describe(target) -> dict[str, Any]:
    try:
        return target.describe()
    except Exception as exc:  # a description must never stop a run
        return {"kind": getattr(target, "kind", "?"), "describe_error": describe_error(exc)}


def _public_scenario(scenario: Scenario) -> dict[str, Any]:
    data = scenario.to_dict()
    data["target_config"] = {k: v for k, v in data["target_config"].items() if k != "password"}
    return data


def _layout_record(layout: Layout) -> dict[str, Any]:
    record = asdict(layout)
    record["days"] = [str(d) for d in layout.days]
    record["keys_sample"] = list(layout.keys_sample)[:20]
    record["strings"] = layout.strings.value
    return record
