"""Live aggregates of a run, fed by the collector and read as LiveSnapshot by pollers.

While a step runs its figures are live estimates: throughput binned per second of operation end
time, latency percentiles from log histograms (constant memory however long the run), the step's
rate over its window so far (release -> latest measured end, the definition of
``workloads.results.figures``). When a step ends, the runner hands over that step's stored figures and
they replace the estimates, so the live view ends on exactly what history, compare and the report
show. Only measured operations enter throughput and latency; warm-up operations give the "first
operation in a fresh process"; phases come from measured operations or, where the target splits
them only in probes, from the probes.
"""
from __future__ import annotations

import json
import math
import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workloads.results.figures import phase_summary
from workloads.run.histogram import LogHistogram
from workloads.run.records import (MEASURED, PROBE, UNKNOWN_BYTES, UNSUPPORTED, WARMUP, Columns, OpRecord,
                               as_columns, batch_length)
from workloads.run.snapshot import (
    LatencyPoint, LiveSnapshot, QueryPoint, ResourcePoint, SweepPoint, ThroughputPoint,
)
from workloads.run.records import FAILED, NOT_SUPPORTED, OK, PENDING
from workloads.targets.base import PHASES

WINDOW_S = 5            # sliding window for live percentiles
HOST_WINDOW_S = 3       # rows/s per load-generating host, over this many whole seconds
MAX_POINTS = 3600       # time-series points kept for live charts
MIN_TAIL_S = 0.1        # the second under way is charted once this much of it has passed: less is noise


@dataclass
class _Second:
    rows: int = 0
    nbytes: int = 0
    ops: int = 0
    latency: LogHistogram = field(default_factory=LogHistogram)


@dataclass
class _PhaseStats:
    histograms: dict[str, LogHistogram] = field(default_factory=dict)
    sums: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, phase: str, values: np.ndarray) -> None:
        self.histograms.setdefault(phase, LogHistogram()).add_many(values)
        self.sums[phase] += float(values.sum())
        self.counts[phase] += int(values.size)


@dataclass
class _NamedOps:
    """Measured executions of one named operation (a suite's query) in a step: exact sums."""
    total_s: float = 0.0
    runs: int = 0
    min_s: float = float("inf")
    failed: int = 0
    unsupported: bool = False
    fingerprint: str = ""
    error: str = ""


@dataclass
class _StepTotals:
    users: int
    label: str
    released_at: float | None = None   # run clock of the release (None: workers still starting)
    rows: int = 0
    nbytes: int = 0
    ops: int = 0
    last_end: float = 0.0              # run clock of the latest measured op end
    latency: LogHistogram = field(default_factory=LogHistogram)
    total_s: float = 0.0               # sum of measured operation times (for the mean)
    phases: dict[str, _PhaseStats] = field(default_factory=lambda: {MEASURED: _PhaseStats(), PROBE: _PhaseStats()})
    first_ops: list[float] = field(default_factory=list)
    wire_bytes: int = 0                # of measured operations whose wire bytes are known
    wire_ops: int = 0
    named: dict[str, _NamedOps] = field(default_factory=dict)
    final: dict[str, Any] | None = None   # the stored figures, once the step has ended
    ended_at: float | None = None      # run clock of its last measured op end, once it has ended


FINISHED = ("completed", "failed", "cancelled", "aborted")     # a run's states after which no record comes


class LiveAggregates:
    def __init__(self, run_id: str, target: str, workload: str, steps_total: int, name: str = "",
                 cache: str = ""):
        self._lock = threading.Lock()
        self._seconds: dict[int, _Second] = defaultdict(_Second)
        self._throughput: deque[ThroughputPoint] = deque(maxlen=MAX_POINTS)
        self._latency: deque[LatencyPoint] = deque(maxlen=MAX_POINTS)
        self._resources: deque[ResourcePoint] = deque(maxlen=MAX_POINTS)
        self._steps: list[_StepTotals] = []
        self._finalised_until = -1  # last whole second turned into points
        self._planned: list[tuple[str, str, str]] = []
        self._host_seconds: dict[str, dict[int, int]] = {}   # host -> second -> measured rows
        self._snapshot = LiveSnapshot(
            run_id=run_id, status="preparing", target=target, workload=workload,
            step_index=0, steps_total=steps_total, users=0, elapsed_s=0.0,
            ops_done=0, ops_failed=0, progress=0.0, name=name, cache=cache,
        )

    # --- writers (collector thread) --------------------------------------------------
    def plan_ops(self, planned: list[tuple[str, str, str]]) -> None:
        """The named operations each step runs (``Workload.planned_ops``), listed while pending."""
        with self._lock:
            self._planned = list(planned)

    def begin_step(self, index: int, users: int, label: str, run_clock: float) -> None:
        with self._lock:
            self._steps.append(_StepTotals(users=users, label=label))
            snap = self._snapshot
            snap.step_index, snap.users, snap.status, snap.step_label = index, users, "running", label
            snap.workers = {w: "starting" for w in range(users)}
            snap.worker_errors = {}

    def set_hosts(self, hosts: list[str]) -> None:
        """The current step's host of each user ("" = the run's own machine)."""
        with self._lock:
            counts: dict[str, int] = {}
            for host in hosts:
                if host:
                    counts[host] = counts.get(host, 0) + 1
            self._snapshot.host_users = counts

    def release_step(self, run_clock: float) -> None:
        """The current step's workers were released: its measurement window starts now."""
        with self._lock:
            if self._steps:
                self._steps[-1].released_at = run_clock
                self._steps[-1].last_end = run_clock

    def end_step(self, figures: dict[str, Any] | None = None) -> None:
        """The step is over; ``figures`` (a ``workloads.results.figures`` row) become its final word."""
        with self._lock:
            if self._steps:
                self._steps[-1].final = figures or {}
                self._steps[-1].ended_at = self._steps[-1].last_end

    def add(self, records: "Columns | list[OpRecord]", step_offset: float) -> None:
        """Add a batch of records; ``step_offset`` turns step-relative times into run clock."""
        batch = as_columns(records)
        count = batch_length(batch)
        if not count or not self._steps:
            return
        kind = batch["kind"]
        ok = batch["ok"]
        measured = ok & (kind == MEASURED)
        totals = batch["total_s"]
        ends = batch["t_start"] + totals + step_offset
        seconds = np.where(np.isfinite(ends), ends, 0.0).astype(np.int64)   # a missed start has no end
        # what a user waited: an open loop's counts from the intended start (workloads.run.schedule)
        intended = batch.get("intended_s")
        waits = totals if intended is None else np.where(np.isnan(intended), totals,
                                                         totals + batch["t_start"] - intended)
        with self._lock:
            step = self._steps[-1]
            if measured.any():
                step.last_end = max(step.last_end, float(ends[measured].max()))
                step.rows += int(batch["rows"][measured].sum())
                step.nbytes += int(batch["bytes"][measured].sum())
                step.ops += int(measured.sum())
                step.latency.add_many(waits[measured])
                step.total_s += float(totals[measured].sum())
            for sec in np.unique(seconds[measured]):
                in_second = measured & (seconds == sec)
                second = self._seconds[int(sec)]
                second.rows += int(batch["rows"][in_second].sum())
                second.nbytes += int(batch["bytes"][in_second].sum())
                second.ops += int(in_second.sum())
                second.latency.add_many(waits[in_second])
            for source in (MEASURED, PROBE):
                chosen = ok & (kind == source)
                if not chosen.any():
                    continue
                for phase in PHASES:
                    values = batch[f"{phase}_s"][chosen]
                    values = values[~np.isnan(values)]
                    if values.size:
                        step.phases[source].add(phase, values)
            first = ok & (kind == WARMUP) & (batch["seq"] == 0)
            step.first_ops.extend(float(v) for v in totals[first])
            known = measured & (batch["wire_bytes"] != UNKNOWN_BYTES)
            step.wire_bytes += int(batch["wire_bytes"][known].sum())
            step.wire_ops += int(known.sum())
            if self._planned:
                self._add_named(step, batch, ok, kind, totals)
            if "host" in batch and measured.any():
                self._add_host_rows(batch, measured, seconds)
            measured_all = kind == MEASURED
            failed = int((measured_all & ~ok).sum())
            self._snapshot.ops_done += int(measured.sum())
            self._snapshot.ops_failed += failed
            bad = ~ok & (kind != UNSUPPORTED)
            if bad.any():
                last = int(np.flatnonzero(bad)[-1])
                self._snapshot.message = f"worker {batch['worker'][last]}: {batch['error'][last]}"

    def _add_host_rows(self, batch: Columns, measured, seconds) -> None:
        for host in np.unique(batch["host"][measured]):
            if not host:
                continue
            chosen = measured & (batch["host"] == host)
            bins = self._host_seconds.setdefault(str(host), {})
            for sec in np.unique(seconds[chosen]):
                bins[int(sec)] = bins.get(int(sec), 0) + int(batch["rows"][chosen & (seconds == sec)].sum())

    def _host_rates(self, run_clock: float) -> dict[str, float]:
        """Rows/s per host over the last HOST_WINDOW_S whole seconds."""
        last = int(run_clock) - 1
        rates = {}
        for host, bins in self._host_seconds.items():
            for sec in [s for s in bins if s < last - HOST_WINDOW_S]:
                del bins[sec]
            rates[host] = sum(rows for sec, rows in bins.items() if sec > last - HOST_WINDOW_S and sec <= last) \
                / HOST_WINDOW_S
        return rates

    @staticmethod
    def _add_named(step: _StepTotals, batch: Columns, ok, kind, totals) -> None:
        for i in np.flatnonzero((kind == MEASURED) | (kind == UNSUPPORTED) | (ok & (kind == WARMUP))):
            named = step.named.setdefault(str(batch["op"][i]), _NamedOps())
            if kind[i] == UNSUPPORTED:
                named.unsupported = True
            elif kind[i] == MEASURED and ok[i]:
                named.total_s += float(totals[i])
                named.runs += 1
                named.min_s = min(named.min_s, float(totals[i]))
            elif kind[i] == MEASURED:
                named.failed += 1
                named.error = str(batch["error"][i])
            extra = str(batch["extra"][i])
            if not named.fingerprint and "fingerprint" in extra:
                named.fingerprint = json.loads(extra).get("fingerprint", "")

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
            if self._snapshot.status in FINISHED and self._steps:
                # no record will come: the last, partial second is a point too (over its own span),
                # else a run shorter than a second or two ends with an empty chart
                end = max(s.last_end for s in self._steps)
                self._finalise_seconds(int(end), end=end)
            else:
                self._finalise_seconds(int(run_clock) - 1)
            tail = None if self._snapshot.status in FINISHED else self._second_under_way(run_clock)
            snap = self._snapshot
            snap.elapsed_s = run_clock
            result = LiveSnapshot(**{**snap.__dict__})
            result.throughput, result.throughput_tail = list(self._throughput), tail
            result.latency = list(self._latency)
            result.resources = list(self._resources)
            result.workers = dict(snap.workers)
            result.worker_errors = dict(snap.worker_errors)
            result.host_users = dict(snap.host_users)
            result.host_rows_per_s = self._host_rates(run_clock)
            result.sweep = [self._sweep_point(s) for s in self._steps if s.ops or s.final is not None]
            phase_step = self._phase_step()
            if phase_step is not None:
                self._fill_phases(result, phase_step)
            if self._planned and self._steps:
                step = next((s for s in reversed(self._steps) if s.named), self._steps[-1])
                result.queries, result.query_step = self._query_points(step), step.label
            return result

    def _query_points(self, step: _StepTotals) -> list[QueryPoint]:
        """The planned operations of ``step``, as ``workloads.results.suite_figures`` words its statuses."""
        points = []
        for name, category, description in self._planned:
            named = step.named.get(name)
            point = QueryPoint(name, category, description)
            if named is not None:
                point.runs, point.fingerprint, point.error = named.runs, named.fingerprint, named.error
                point.mean_s = named.total_s / named.runs if named.runs else None
                point.min_s = named.min_s if named.runs else None
                point.status = NOT_SUPPORTED if named.unsupported else \
                    FAILED if named.failed else OK if named.runs else PENDING
            points.append(point)
        return points

    def _phase_step(self) -> _StepTotals | None:
        """The latest step with phase figures (the current one once it has any)."""
        for step in reversed(self._steps):
            if step.final is not None and phase_summary(step.final)[0]:
                return step
            if step.final is None and any(s.counts for s in step.phases.values()):
                return step
        return None

    def _fill_phases(self, result: LiveSnapshot, step: _StepTotals) -> None:
        result.phase_step = step.label
        if step.final is not None:
            means, percentiles, count, source = phase_summary(step.final)
            result.phase_means, result.phase_percentiles = means, percentiles
            result.phase_ops, result.phase_source, result.phase_exact = count, source, True
            result.first_op_s = _number(step.final.get("first_op_s"))
            result.steady_p50_s = _number(step.final.get("p50_s"))
            result.mean_total_s = _number(step.final.get("mean_s"))
            return
        source = PROBE if step.phases[PROBE].counts else MEASURED
        stats = step.phases[source]
        result.phase_means = {p: stats.sums[p] / stats.counts[p] for p in PHASES if stats.counts.get(p)}
        result.phase_percentiles = {
            p: {"p50": h.percentile(50), "p95": h.percentile(95), "p99": h.percentile(99)}
            for p, h in stats.histograms.items()}
        result.phase_ops = max(stats.counts.values(), default=0)
        result.phase_source, result.phase_exact = source, False
        result.first_op_s = float(np.median(step.first_ops)) if step.first_ops else None
        result.steady_p50_s = step.latency.percentile(50) if step.latency.total else None
        result.mean_total_s = step.total_s / step.ops if step.ops else None

    def _sweep_point(self, step: _StepTotals) -> SweepPoint:
        if step.final:
            f = step.final
            return SweepPoint(users=step.users, rows_per_s=_number(f.get("rows_per_s")) or 0.0,
                              bytes_per_s=(_number(f.get("mb_per_s")) or 0.0) * 1e6,
                              ops_per_s=_number(f.get("ops_per_s")) or 0.0,
                              p50=_number(f.get("p50_s")) or 0.0, p99=_number(f.get("p99_s")) or 0.0,
                              complete=True, label=step.label, short=bool(f.get("short")), exact=True,
                              wire_bytes_per_s=_wire(f.get("wire_mb_per_s")))
        window = step.last_end - step.released_at if step.released_at is not None else 0.0
        span = max(window, 1e-9)
        return SweepPoint(
            users=step.users, rows_per_s=step.rows / span, bytes_per_s=step.nbytes / span,
            ops_per_s=step.ops / span, p50=step.latency.percentile(50),
            p99=step.latency.percentile(99), complete=step.final is not None, label=step.label,
            wire_bytes_per_s=step.wire_bytes / span if step.ops and step.wire_ops == step.ops else None)

    def _finalise_seconds(self, until: int, end: float | None = None) -> None:
        """Turn whole seconds up to ``until`` into chart points (late records are rare); none
        before the first release (preparing and warm-ups move no measured rows: not a zero line).
        ``end``: the run is over, its last measured operation ended then: the second it falls in
        is a point over the span up to it."""
        released = next((s.released_at for s in self._steps if s.released_at is not None), None)
        if released is None:
            return
        partial = int(released) if released > int(released) else None   # the second the release fell in
        # a step followed by another ended with its last measured operation, even before end_step
        windows = [(s.released_at, s.ended_at if s.ended_at is not None else
                    s.last_end if s is not self._steps[-1] else math.inf)
                   for s in self._steps if s.released_at is not None]
        for sec in range(max(self._finalised_until + 1, int(released)), until + 1):
            # the part of a second after the release joins the next second, its rate over the
            # whole span: a bin of its own (no operation ended yet) would chart a false zero
            last = end is not None and sec == int(end)
            if sec != partial or last:
                data, start = self._seconds.get(sec, _Second()), float(sec)
                if sec - 1 == partial:          # this bin also holds the release's partial second
                    first = self._seconds.get(partial, _Second())
                    data = _Second(data.rows + first.rows, data.nbytes + first.nbytes, data.ops + first.ops)
                    start = released
                elif sec == partial:            # the run ended in the second it was released in
                    start = released
                span = max((end if last else sec + 1.0) - start, 1e-3)
                span = measured_span(start, end if last else sec + 1.0, windows, span)
                self._throughput.append(ThroughputPoint(sec + 1.0, data.rows / span, data.nbytes / span,
                                                        data.ops / span, span,
                                                        bool(data.ops) or measuring(sec, windows)))
            window = LogHistogram()
            for past in range(sec - WINDOW_S + 1, sec + 1):
                if past in self._seconds:
                    window.merge(self._seconds[past].latency)
            if window.total:
                self._latency.append(LatencyPoint(sec + 1.0, window.percentile(50),
                                                  window.percentile(95), window.percentile(99)))
            self._seconds.pop(sec - WINDOW_S, None)
        self._finalised_until = max(self._finalised_until, until)

    def _second_under_way(self, run_clock: float) -> ThroughputPoint | None:
        """Rows, bytes and operations that ended after the last whole-second point (or after the
        release, when that second is still open), over the time from there to ``run_clock``."""
        released = next((s.released_at for s in self._steps if s.released_at is not None), None)
        if released is None:
            return None
        start = float(self._finalised_until + 1)
        if start <= released or (released > int(released) and self._finalised_until == int(released)):
            start = released                     # the release's own second is not charted yet
        span = run_clock - start
        seconds = [data for sec, data in self._seconds.items() if sec >= int(start)]
        ops = sum(data.ops for data in seconds)
        if span < MIN_TAIL_S or not ops:
            return None
        return ThroughputPoint(run_clock, sum(d.rows for d in seconds) / span,
                               sum(d.nbytes for d in seconds) / span, ops / span, span, True)


MIN_MEASURED_PART_S = 0.25   # a shorter measured part of a second is charted over the whole second


def measured_span(low: float, high: float, windows: list[tuple[float, float]], whole: float) -> float:
    """The part of [low, high) inside the steps' measurement windows, where a step ended or began
    in it: a rate over the whole second would chart a false drop between steps. ``whole`` (the
    bin's own width) when the part is all of it, none of it, or too short to rest a rate on."""
    part = sum(max(0.0, min(high, end) - max(low, start)) for start, end in windows)
    return part if MIN_MEASURED_PART_S <= part < whole - 1e-9 else whole


def measuring(second: int, windows: list[tuple[float, float]]) -> bool:
    """Whether the second [second, second + 1) overlaps a step's measurement window (its release
    to its last measured operation's end): outside every one, an empty second is a gap between
    steps (workers starting, warming up), not a second in which the target served nothing."""
    return any(start < second + 1 and second < end for start, end in windows)


def _number(value) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if np.isnan(number) else number


def _wire(mb_per_s) -> float | None:
    number = _number(mb_per_s)
    return None if number is None else number * 1e6
