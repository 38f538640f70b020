"""Live aggregates of a run, fed by the collector and read as LiveSnapshot by pollers.

Throughput is binned per second of operation end time; latency percentiles come from log
histograms over a sliding window, so memory stays constant however long the run.
"""
from __future__ import annotations

import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field

import numpy as np

from workloads.histogram import LogHistogram
from workloads.records import Columns, OpRecord, as_columns, batch_length
from workloads.snapshot import (
    LatencyPoint, LiveSnapshot, ResourcePoint, SweepPoint, ThroughputPoint,
)
from workloads.targets.base import PHASES

WINDOW_S = 5            # sliding window for live percentiles
MAX_POINTS = 3600       # time-series points kept for live charts


@dataclass
class _Second:
    rows: int = 0
    nbytes: int = 0
    ops: int = 0
    latency: LogHistogram = field(default_factory=LogHistogram)


@dataclass
class _StepTotals:
    users: int
    started_at: float          # run clock, seconds
    rows: int = 0
    nbytes: int = 0
    ops: int = 0
    last_end: float = 0.0      # run clock of the latest op end
    latency: LogHistogram = field(default_factory=LogHistogram)
    finished: bool = False


class LiveAggregates:
    def __init__(self, run_id: str, target: str, workload: str, steps_total: int):
        self._lock = threading.Lock()
        self._seconds: dict[int, _Second] = defaultdict(_Second)
        self._throughput: deque[ThroughputPoint] = deque(maxlen=MAX_POINTS)
        self._latency: deque[LatencyPoint] = deque(maxlen=MAX_POINTS)
        self._resources: deque[ResourcePoint] = deque(maxlen=MAX_POINTS)
        self._phase_hist: dict[int, dict[str, LogHistogram]] = defaultdict(dict)
        self._phase_sum: dict[str, float] = defaultdict(float)
        self._phase_count: dict[str, int] = defaultdict(int)
        self._steps: list[_StepTotals] = []
        self._finalised_until = -1  # last whole second turned into points
        self._snapshot = LiveSnapshot(
            run_id=run_id, status="preparing", target=target, workload=workload,
            step_index=0, steps_total=steps_total, users=0, elapsed_s=0.0,
            ops_done=0, ops_failed=0, progress=0.0,
        )

    # --- writers (collector thread) --------------------------------------------------
    def begin_step(self, index: int, users: int, run_clock: float) -> None:
        with self._lock:
            self._steps.append(_StepTotals(users=users, started_at=run_clock))
            self._phase_sum.clear()
            self._phase_count.clear()
            snap = self._snapshot
            snap.step_index, snap.users, snap.status = index, users, "running"
            snap.workers = {w: "starting" for w in range(users)}
            snap.worker_errors = {}

    def end_step(self) -> None:
        with self._lock:
            if self._steps:
                self._steps[-1].finished = True

    def add(self, records: "Columns | list[OpRecord]", step_offset: float) -> None:
        """Add a batch of records; ``step_offset`` turns step-relative times into run clock."""
        batch = as_columns(records)
        count = batch_length(batch)
        if not count:
            return
        ok = batch["ok"]
        totals = batch["total_s"]
        ends = batch["t_start"] + totals + step_offset
        seconds = ends.astype(np.int64)
        with self._lock:
            step = self._steps[-1]
            step.last_end = max(step.last_end, float(ends.max()))
            good_seconds = seconds[ok]
            if good_seconds.size:
                step.rows += int(batch["rows"][ok].sum())
                step.nbytes += int(batch["bytes"][ok].sum())
                step.ops += int(good_seconds.size)
                step.latency.add_many(totals[ok])
            for sec in np.unique(good_seconds):
                in_second = ok & (seconds == sec)
                second = self._seconds[int(sec)]
                second.rows += int(batch["rows"][in_second].sum())
                second.nbytes += int(batch["bytes"][in_second].sum())
                second.ops += int(in_second.sum())
                second.latency.add_many(totals[in_second])
                for phase in PHASES:
                    values = batch[f"{phase}_s"][in_second]
                    values = values[~np.isnan(values)]
                    if values.size:
                        self._phase_hist[int(sec)].setdefault(phase, LogHistogram()).add_many(values)
            for phase in PHASES:
                values = batch[f"{phase}_s"][ok]
                values = values[~np.isnan(values)]
                if values.size:
                    self._phase_sum[phase] += float(values.sum())
                    self._phase_count[phase] += int(values.size)
            failed = int(count - good_seconds.size)
            self._snapshot.ops_done += int(good_seconds.size)
            self._snapshot.ops_failed += failed
            if failed:
                last = int(np.flatnonzero(~ok)[-1])
                self._snapshot.message = f"worker {batch['worker'][last]}: {batch['error'][last]}"

    def add_resources(self, point: ResourcePoint) -> None:
        with self._lock:
            self._resources.append(point)

    def set_worker(self, worker: int, state: str, error: str = "") -> None:
        with self._lock:
            self._snapshot.workers[worker] = state
            if error:
                self._snapshot.worker_errors[worker] = error
                self._snapshot.message = f"worker {worker}: {error}"

    def set_status(self, status: str, message: str = "", progress: float | None = None) -> None:
        with self._lock:
            self._snapshot.status = status
            if message:
                self._snapshot.message = message
            if progress is not None:
                self._snapshot.progress = progress

    # --- readers (any thread) ------------------------------------------------------------
    def snapshot(self, run_clock: float) -> LiveSnapshot:
        with self._lock:
            self._finalise_seconds(int(run_clock) - 1)
            snap = self._snapshot
            snap.elapsed_s = run_clock
            window = [s for s in range(int(run_clock) - WINDOW_S, int(run_clock) + 1)]
            phase_window: dict[str, LogHistogram] = {}
            for sec in window:
                for phase, hist in self._phase_hist.get(sec, {}).items():
                    phase_window.setdefault(phase, LogHistogram()).merge(hist)
            result = LiveSnapshot(**{**snap.__dict__})
            result.throughput = list(self._throughput)
            result.latency = list(self._latency)
            result.resources = list(self._resources)
            result.workers = dict(snap.workers)
            result.worker_errors = dict(snap.worker_errors)
            result.phase_means = {p: self._phase_sum[p] / self._phase_count[p]
                                  for p in PHASES if self._phase_count.get(p)}
            result.phase_percentiles = {
                p: {"p50": h.percentile(50), "p95": h.percentile(95), "p99": h.percentile(99)}
                for p, h in phase_window.items()
            }
            result.sweep = [self._sweep_point(s, run_clock) for s in self._steps if s.ops or s.finished]
            return result

    def _sweep_point(self, step: _StepTotals, run_clock: float) -> SweepPoint:
        span = max((step.last_end if step.finished else run_clock) - step.started_at, 1e-9)
        return SweepPoint(
            users=step.users, rows_per_s=step.rows / span, bytes_per_s=step.nbytes / span,
            ops_per_s=step.ops / span, p50=step.latency.percentile(50),
            p99=step.latency.percentile(99), complete=step.finished,
        )

    def _finalise_seconds(self, until: int) -> None:
        """Turn whole seconds up to ``until`` into chart points (late records are rare)."""
        for sec in range(self._finalised_until + 1, until + 1):
            data = self._seconds.get(sec, _Second())
            self._throughput.append(ThroughputPoint(sec + 1.0, data.rows, data.nbytes, data.ops))
            window = LogHistogram()
            for past in range(sec - WINDOW_S + 1, sec + 1):
                if past in self._seconds:
                    window.merge(self._seconds[past].latency)
            if window.total:
                self._latency.append(LatencyPoint(sec + 1.0, window.percentile(50),
                                                  window.percentile(95), window.percentile(99)))
            stale = sec - WINDOW_S
            self._seconds.pop(stale, None)
            self._phase_hist.pop(stale, None)
        self._finalised_until = max(self._finalised_until, until)
