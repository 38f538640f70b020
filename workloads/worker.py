"""The body of one worker process: build the target, wait at the barrier, run, report.

Runs in a spawned process (also from the frozen app). Talks to the parent over its own pipe, so
a worker killed mid-message corrupts only its own channel.
"""
from __future__ import annotations

import os
import signal
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from workloads.records import OpRecord, to_columns
from workloads.targets.base import PHASES, Layout

FLUSH_EVERY_S = 0.2
FLUSH_EVERY_RECORDS = 256
MAX_CONSECUTIVE_ERRORS = 5


@dataclass(frozen=True)
class WorkerSpec:
    """Plain, picklable instructions for one worker."""

    scenario: dict[str, Any]
    step: dict[str, Any]               # StepPlan fields
    worker: int
    layout: Layout | None
    target_kind: str
    target_config: dict[str, Any]


def describe_error(exc: BaseException) -> str:
    """One readable line: the exception's type and message, never a traceback."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else 'no message'}"


def worker_main(spec: WorkerSpec, conn: Connection, start_event, stop_event, step_t0) -> None:
    # The parent handles Ctrl+C and tells workers to stop; a worker must not die mid-record.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        ctx, workload = _build_context(spec)
        for _ in range(int(spec.scenario.get("warmup_ops", 0))):
            op = workload.next_op(ctx, 0)
            if op is not None:
                op()
        ctx.rows_done = 0
        conn.send(("ready", spec.worker, {"pid": os.getpid(), "node": _node_of(ctx.target)}))
    except BaseException as exc:  # report anything that stops a worker from starting
        conn.send(("failed", spec.worker, describe_error(exc), traceback.format_exc()))
        conn.close()
        return
    while not start_event.wait(0.05):
        if stop_event.is_set():
            conn.send(("done", spec.worker, {"ops": 0}))
            return
    try:
        _run_loop(spec, ctx, workload, conn, stop_event, step_t0.value)
    except BaseException as exc:
        conn.send(("failed", spec.worker, describe_error(exc), traceback.format_exc()))
    finally:
        try:
            ctx.target.close()
        except Exception:  # closing after a failure must not hide the failure itself
            pass
        conn.close()


def _build_context(spec: WorkerSpec):
    from workloads.datasets import get_dataset
    from workloads.kinds import StepPlan, WorkerContext, get_workload
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


def _node_of(target) -> str:
    return str(getattr(target, "node", "") or "")


def _run_loop(spec: WorkerSpec, ctx, workload, conn: Connection, stop_event, t0: float) -> None:
    scenario = ctx.scenario
    cold = scenario.cache == "cold" and workload.uses_target
    op_limit = scenario.operations if workload.bounded_by_operations else 0
    deadline = t0 + scenario.duration_s if scenario.duration_s > 0 else float("inf")
    batch: list[OpRecord] = []
    last_flush = time.monotonic()
    seq = consecutive_errors = 0
    cache_methods: list[str] = []
    while not stop_event.is_set():
        if (op_limit and seq >= op_limit) or time.monotonic() >= deadline:
            break
        op = workload.next_op(ctx, seq)
        if op is None:
            break
        if cold:
            cache_methods = ctx.target.drop_cache(ctx.layout)
        started = time.monotonic()
        perf_start = time.perf_counter()
        try:
            result = op()
            error = ""
        except Exception as exc:
            result, error = None, describe_error(exc)
        total = time.perf_counter() - perf_start
        batch.append(_record(spec, workload.op_name, seq, started - t0, total, result, error))
        if result is not None:
            ctx.rows_done += result.rows
            consecutive_errors = 0
        else:
            consecutive_errors += 1
        seq += 1
        now = time.monotonic()
        if len(batch) >= FLUSH_EVERY_RECORDS or now - last_flush >= FLUSH_EVERY_S:
            conn.send(("records", spec.worker, to_columns(batch)))
            batch, last_flush = [], now
        if consecutive_errors >= MAX_CONSECUTIVE_ERRORS:
            conn.send(("records", spec.worker, to_columns(batch)))
            raise RuntimeError(f"stopped after {consecutive_errors} failed operations in a row; "
                               f"last: {error}")
    conn.send(("records", spec.worker, to_columns(batch)))
    conn.send(("done", spec.worker, {"ops": seq, "cache_methods": cache_methods}))


def _record(spec: WorkerSpec, op: str, seq: int, t_start: float, total: float, result, error: str) -> OpRecord:
    phases = result.phases if result is not None else {}
    return OpRecord(
        step=int(spec.step["index"]), worker=spec.worker, seq=seq, op=op, t_start=t_start,
        total_s=total, **{f"{p}_s": phases.get(p) for p in PHASES},
        rows=result.rows if result else 0, bytes=result.nbytes if result else 0,
        ok=result is not None, error=error, node=(result.node if result else "") or "",
    )
