"""A stored run played back at its real pace: the live view as it stood at any second of the run.

``RunReplay`` reads the run once (``snapshot_from_store``'s figures of the finished run, plus the
end of every measured operation and step on the run clock) and answers ``snapshot_at(t)`` from
memory, so a player can ask many times a second. At run-clock ``t`` a replay shows only what had
happened by then: series points, operations and resource samples of time <= t, and a step's
figures (its sweep point, phases, queries, footprint) once that step had ended, its probe
operations too (the live view had them only then: a pickle read's phases come from its probes);
while a step is under way its phases are the live estimate the run showed (the mean of each phase
over its measured operations ended by then). Until its end a replay draws the series per second as
the live view did, also for a short run whose stored view draws each operation. Every snapshot
says it is a replay (``replayed_from``), so no screen can pass it off as a live run.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import timezone

import numpy as np
import pandas as pd

from workloads.results.figures import phase_summary, step_figures
# the stored view's own helpers: the replay's clock and step figures are those of snapshot_from_store
from workloads.results.history import (_binned_points, _last_with_phases, _measuring_windows, _optional,
                                       _step_window, release_offsets, snapshot_from_store, sweep_points)
from workloads.results.store import ResultsStore
from workloads.results.suite_figures import query_figures
from workloads.run.metrics import MIN_TAIL_S
from workloads.run.snapshot import LiveSnapshot, SweepPoint, ThroughputPoint
from workloads.targets.base import PHASES

RUNNING = "running"

_MEASURED_SQL = (f"SELECT step, t_start, total_s, ok, rows, bytes, {', '.join(f'{p}_s' for p in PHASES)} FROM ops "
                 "WHERE run_id = ? AND kind = 'measured'")
_PROBES_END_SQL = ("SELECT step, max(t_start + total_s) AS probed FROM ops WHERE run_id = ? AND kind = 'probe' "
                   "GROUP BY step")


class RunReplay:
    """One stored run, replayable at any run-clock second between 0 and ``duration_s``."""

    def __init__(self, store: ResultsStore, run_id: str) -> None:
        run = store.run(run_id)
        self.run_id: str = run["run_id"]          # a unique prefix was enough to find it
        self._final = snapshot_from_store(store, self.run_id)
        self._figures = step_figures(store, self.run_id)
        ops = store.frame(_MEASURED_SQL, [self.run_id])

        ends_in_step = (ops["t_start"] + ops["total_s"]).groupby(ops["step"]).max()
        windows = [_step_window(row, ends_in_step) for row in self._figures.itertuples()]
        releases = release_offsets(self._figures, windows, run.get("created_at"), run.get("finished_at"))
        self._releases = np.asarray(releases, dtype=float)
        probed = store.frame(_PROBES_END_SQL, [self.run_id]).set_index("step")["probed"]
        probes_end = self._figures["step"].map(probed).fillna(0.0).to_numpy(dtype=float)
        # a step's figures reached the live view once its probe operations were done as well
        self._step_ends = self._releases + np.maximum(np.asarray(windows, dtype=float), probes_end)
        offset_of = dict(zip(self._figures["step"], releases))

        ends = (ops["t_start"] + ops["total_s"]).to_numpy(dtype=float) + \
            ops["step"].map(offset_of).fillna(0.0).to_numpy(dtype=float)
        ok = ops["ok"].to_numpy(dtype=bool)
        order = np.argsort(ends[ok], kind="stable")
        self._ok_ends = ends[ok][order]
        self._failed_ends = np.sort(ends[~ok])
        # running totals by end time: what ended in any stretch of the run clock, at once
        self._rows_by_end = np.concatenate([[0.0], np.cumsum(ops["rows"].to_numpy(dtype=float)[ok][order])])
        self._bytes_by_end = np.concatenate([[0.0], np.cumsum(ops["bytes"].to_numpy(dtype=float)[ok][order])])
        self._step_by_end = ops["step"].to_numpy()[ok][order]
        self._phases_by_end = {p: ops[f"{p}_s"].to_numpy(dtype=float)[ok][order] for p in PHASES}
        self._totals_by_end = ops["total_s"].to_numpy(dtype=float)[ok][order]
        # the series as the live view drew them while the run ran: per second (a short run's stored
        # view draws each operation, which live never did)
        self._live_series = (self._final.throughput, self._final.latency) if not self._final.per_operation else \
            _binned_points(ends[ok], ops["rows"].to_numpy()[ok], ops["bytes"].to_numpy()[ok],
                           ops["total_s"].to_numpy(dtype=float)[ok], min(releases, default=0.0),
                           _measuring_windows(ops["step"].to_numpy()[ok], ends[ok], offset_of))

        workers = store.workers(self.run_id)
        self._workers_of_step = {int(step): sorted(int(w) for w in group["worker"])
                                 for step, group in workers.groupby("step")}
        self._query_step = self._last_query_step(store) if self._final.queries else None

        final = self._final
        self.duration_s: float = float(max(
            [0.0, *ends, *self._step_ends, *(p.t for p in final.throughput), *(p.t for p in final.latency),
             *(r.t for r in final.resources)]))
        self.replayed_from: str = recorded_words(run.get("created_at"))

    @property
    def step_ends_s(self) -> dict[int, float]:
        """Run-clock second at which each step ended (its release plus its measurement window)."""
        return {int(s): float(e) for s, e in zip(self._figures["step"], self._step_ends)}

    def snapshot_at(self, t: float) -> LiveSnapshot:
        """The live view as it stood at run-clock ``t`` (clamped into [0, duration_s])."""
        t = min(max(float(t), 0.0), self.duration_s)
        final = self._final
        ended = self._figures[self._step_ends <= t]
        over = t >= self.duration_s
        index = self._current_step(t)
        current = self._figures.iloc[index] if len(self._figures) else None
        phase_row = _last_with_phases(ended)
        means, percentiles, phase_ops, source = phase_summary(phase_row) if phase_row is not None \
            else ({}, {}, 0, "")
        under_way = self._phases_under_way(t, index) if current is not None and not over else None
        if under_way is not None:                 # as live: the current step's estimate once it has one
            means, phase_ops = under_way
            percentiles, source = {}, "measured"
        figures_row = phase_row if phase_row is not None else \
            (ended.iloc[-1].to_dict() if len(ended) else None)
        ended_steps = {int(s) for s in ended["step"]}
        query_shown = self._query_step is not None and self._query_step in ended_steps
        return replace(
            final,
            status=final.status if over else RUNNING,
            step_index=int(current["step"]) if current is not None else 0,
            users=int(current["users"]) if current is not None else 0,
            step_label=str(current["label"]) if current is not None else "",
            elapsed_s=t,
            ops_done=int(np.searchsorted(self._ok_ends, t, side="right")),
            ops_failed=int(np.searchsorted(self._failed_ends, t, side="right")),
            # a completed run's bar fills as t / duration; a cancelled one ends where it stopped
            progress=final.progress if over else final.progress * t / self.duration_s,
            message=final.message if over else "",
            throughput=list(final.throughput) if over else [p for p in self._live_series[0] if p.t <= t],
            throughput_tail=None if over else self._second_under_way(t, index),
            latency=list(final.latency) if over else [p for p in self._live_series[1] if p.t <= t],
            per_operation=final.per_operation and over,
            resources=[r for r in final.resources if r.t <= t],
            sweep=sweep_points(ended) + ([] if over else self._sweep_under_way(t, index)),
            phase_means=means, phase_percentiles=percentiles, phase_ops=phase_ops, phase_source=source,
            phase_step=str(current["label"]) if under_way is not None else
            str(phase_row["label"]) if phase_row is not None else "",
            phase_exact=phase_row is not None and under_way is None,
            first_op_s=_optional(figures_row, "first_op_s"),
            steady_p50_s=_optional(figures_row, "p50_s"),
            mean_total_s=_optional(figures_row, "mean_s"),
            workers=dict(final.workers) if over else
            {w: RUNNING for w in self._workers_of_step.get(int(current["step"]) if current is not None else 0, [])},
            worker_errors=dict(final.worker_errors) if over else {},
            queries=list(final.queries) if query_shown else [],
            query_step=final.query_step if query_shown else "",
            # the layout's footprint reached the live view only with the stored figures, at the end
            footprints={"layout": final.footprints.get("layout") if over else None,
                        "steps": {s: f for s, f in (final.footprints.get("steps") or {}).items()
                                  if s in ended_steps}} if final.footprints else {},
            replayed_from=self.replayed_from,
        )

    def _second_under_way(self, t: float, step: int) -> ThroughputPoint | None:
        """As live (``workloads.run.metrics``): what ended since the last whole-second point (or the
        step's release), over the time since; none in the first tenth of a second."""
        if not len(self._releases):
            return None
        shown = [p.t for p in self._live_series[0] if p.t <= t]
        start = max(shown[-1] if shown else 0.0, float(self._releases[step]))
        if t - start < MIN_TAIL_S:
            return None
        first, last = np.searchsorted(self._ok_ends, [start, t], side="right")
        if last <= first:
            return None
        span = t - start
        return ThroughputPoint(t, (self._rows_by_end[last] - self._rows_by_end[first]) / span,
                               (self._bytes_by_end[last] - self._bytes_by_end[first]) / span,
                               (last - first) / span, span, True)

    def _sweep_under_way(self, t: float, index: int) -> list[SweepPoint]:
        """As live (``workloads.run.metrics``): the step under way's point, a live estimate over its
        measured operations ended by ``t`` (the header's figures line reads it)."""
        if not len(self._step_ends) or t >= self._step_ends[index]:
            return []
        done = np.searchsorted(self._ok_ends, t, side="right")
        mine = np.flatnonzero(self._step_by_end[:done] == self._figures["step"].iloc[index])
        if not mine.size:
            return []
        row = self._figures.iloc[index]
        span = max(float(self._ok_ends[mine[-1]] - self._releases[index]), 1e-9)
        rows = float(np.diff(self._rows_by_end)[mine].sum())
        nbytes = float(np.diff(self._bytes_by_end)[mine].sum())
        p50, p99 = np.percentile(self._totals_by_end[mine], (50, 99))
        return [SweepPoint(users=int(row["users"]), rows_per_s=rows / span, bytes_per_s=nbytes / span,
                           ops_per_s=mine.size / span, p50=float(p50), p99=float(p99), complete=False,
                           label=str(row["label"]))]

    def _phases_under_way(self, t: float, index: int) -> tuple[dict[str, float], int] | None:
        """Each phase's mean over the step's measured operations ended by ``t``, while it is under
        way (None once it has ended, or before any of its operations reported a phase)."""
        if not len(self._step_ends) or t >= self._step_ends[index]:
            return None
        done = np.searchsorted(self._ok_ends, t, side="right")
        in_step = self._step_by_end[:done] == self._figures["step"].iloc[index]
        means, count = {}, 0
        for phase, values in self._phases_by_end.items():
            seen = values[:done][in_step]
            seen = seen[~np.isnan(seen)]
            if seen.size:
                means[phase] = float(seen.mean())
                count = max(count, int(seen.size))
        return (means, count) if means else None

    def _current_step(self, t: float) -> int:
        """Row of the step under way at t: the last one released by then (the first before that)."""
        released = np.flatnonzero(self._releases <= t)
        return int(released[-1]) if released.size else 0

    def _last_query_step(self, store: ResultsStore) -> int | None:
        queries = query_figures(store, self.run_id)
        return int(queries["step"].max()) if not queries.empty else None


def recorded_words(created_at) -> str:
    """'recorded 2026-11-27 14:05': when the run was made, local time (stored as naive UTC)."""
    if created_at is None or pd.isna(created_at):
        return "recorded earlier"
    moment = pd.Timestamp(created_at).to_pydatetime().replace(tzinfo=timezone.utc).astimezone()
    return f"recorded {moment:%Y-%m-%d %H:%M}"
