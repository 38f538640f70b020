"""How a snapshot reaches the live dashboard's charts: throughput, latency and client resources fed
as time series (only the points a chart does not hold yet), the phase breakdown and its table, the
users sweep with its published references, and the query and footprint tabs of a suite.
"""
from __future__ import annotations

import bisect

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidgetItem, QWidget

from widgets.charts.breakdown import format_seconds, ordered_phases
from widgets.charts.live import TimeSeriesChart
from workloads.results.figures import breakdown
from workloads.run.snapshot import LiveSnapshot

EACH_OPERATION = "each operation"
GAP = float("nan")                 # a point the chart's line breaks at
# metric key -> (menu text, axis label, unit, getter of a SweepPoint)
SWEEP_METRICS = {
    "rows_per_s": ("rows/s", "throughput", "rows/s", lambda p: p.rows_per_s),
    "bytes_per_s": ("MB/s", "throughput", "B/s", lambda p: p.bytes_per_s),
    "ops_per_s": ("operations/s", "throughput", "ops/s", lambda p: p.ops_per_s),
    "p50": ("latency p50", "latency p50", "s", lambda p: p.p50),
    "p99": ("latency p99", "latency p99", "s", lambda p: p.p99),
}


def phase_origin(snap: LiveSnapshot) -> str:
    """Which step the phase figures describe and what they rest on, e.g.
    "step 2 users, 8 probe operations" (probes: the target splits phases only in probes)."""
    ops = f"{snap.phase_ops:,} {snap.phase_source or 'measured'} operation{'s' if snap.phase_ops != 1 else ''}"
    live = "" if snap.phase_exact else ", live estimate"
    return f"step {snap.phase_step or snap.step_label}, {ops}{live}"


def _broken_at_missing_seconds(ts: list[float], ys: list[float]) -> tuple[list, list]:
    """Points one a second, with a gap point wherever seconds are missing (no operation in the
    window, between steps), so the line does not bridge the idle time."""
    out_t, out_y = [], []
    for i, (t, y) in enumerate(zip(ts, ys)):
        if i and t - ts[i - 1] > 1.0 + 1e-6:
            out_t.append((ts[i - 1] + t) / 2)
            out_y.append(GAP)
        out_t.append(t)
        out_y.append(y)
    return out_t, out_y


class DashboardCharts:
    """Spreads LiveDashboard's newest snapshot over its charts (a mixin: the charts are the dashboard's)."""

    def _apply(self) -> None:
        snap = self._snapshot
        self._dirty = False
        self.apply_count += 1
        if snap is None:
            return
        if snap.run_id != self._shown_run:
            # a new run: start the charts afresh (but keep published references)
            current = snap
            self.clear()
            self._snapshot, self._shown_run = current, snap.run_id
        self._apply_text()
        switched = self._set_per_operation(snap.per_operation)
        tp = snap.throughput
        # seconds between steps (no step measuring) are gaps in the line, not zero throughput
        self._feed(self.rows_chart, "rows/s", [p.t for p in tp], [p.rows_per_s if p.measuring else GAP for p in tp])
        self._feed(self.bytes_chart, "B/s", [p.t for p in tp], [p.bytes_per_s if p.measuring else GAP for p in tp])
        tail = snap.throughput_tail        # the second under way: what the header already says
        self.rows_chart.set_tail("rows/s", None if tail is None else (tail.t, tail.rows_per_s))
        self.bytes_chart.set_tail("B/s", None if tail is None else (tail.t, tail.bytes_per_s))
        lat = snap.latency
        ts = [p.t for p in lat]
        if snap.per_operation:
            self._feed(self.latency_chart, EACH_OPERATION, ts, [p.p50 for p in lat])
        else:
            for name in ("p50", "p95", "p99"):
                self._feed(self.latency_chart, name, *_broken_at_missing_seconds(ts, [getattr(p, name) for p in lat]))
        res = snap.resources
        ts = [p.t for p in res]
        self._feed(self.cpu_chart, "CPU %", ts, [p.cpu_percent for p in res])
        self._feed(self.memory_chart, "PSS", ts, [p.rss_bytes for p in res])
        if switched:        # their new titles are drawn at once: so are their new points, never the old
            for chart in (self.rows_chart, self.bytes_chart, self.latency_chart):
                if chart.isVisible():
                    chart.render_now()
        if snap.phase_means:
            published = {k: v for k, v in self._breakdown_refs.items() if k == snap.target}
            self.breakdown_chart.set_data({snap.target: breakdown(snap.phase_means, snap.mean_total_s)},
                                          published)
            # which step and how many operations, under the bars (a long title would widen the chart)
            origin = f"Phases of {phase_origin(snap)}."
            self.breakdown_chart.set_note(" ".join(filter(None, [origin, self.breakdown_chart.note])))
        if self.spotlit:
            self._mark_steps(snap)
        self._refresh_sweep()
        self.worker_grid.set_workers(snap.workers, snap.worker_errors)
        self._fill_phase_table(snap)
        self._fill_suite(snap)

    def _time_charts(self) -> tuple:
        return self.rows_chart, self.bytes_chart, self.latency_chart, self.cpu_chart, self.memory_chart

    def set_time_horizon(self, seconds: float | None) -> None:
        """The live time axes held from 0 to ``seconds``, the run's planned length (None: they follow
        the data): before an audience the line grows across a still axis, every chart on the same one."""
        for chart in self._time_charts():
            chart.set_horizon(seconds)

    def _mark_steps(self, snap) -> None:
        """Where each step of a sweep began, named by its users, on the time charts: a step starts
        where the dashboard first sees it (the first step: where its first point's span begins, its
        release; a mark at the point itself stood a second after the latency line began)."""
        starts = self._step_starts          # emptied with the charts (a new run clears them)
        if snap.step_index not in starts and (snap.throughput or snap.step_index):
            first = snap.throughput[0] if snap.throughput else None
            at = first.t - first.span_s if snap.step_index == 0 and first else snap.elapsed_s
            starts[snap.step_index] = (at, snap.step_label or f"{snap.users} users")
        marks = [starts[i] for i in sorted(starts)] if snap.steps_total > 1 else []
        for chart in self._time_charts():
            chart.set_marks(marks)

    def _set_per_operation(self, per_operation: bool) -> bool:
        """A short run is drawn operation by operation (each at its end: its own rate and time);
        a longer one per second. The titles say which. The other way's points go: a chart (and its
        export) never shows the live view's per-second lines under a legend naming operations.
        True when the way changed."""
        if per_operation == self._per_operation:
            return False
        self._per_operation = per_operation
        for chart, names in ((self.rows_chart, ("rows/s",)), (self.bytes_chart, ("B/s",)),
                             (self.latency_chart, ("p50", "p95", "p99", EACH_OPERATION))):
            for name in names:
                if name in chart.series_names():
                    chart.set_series(name, [], [])    # refilled from the snapshot's whole history below
        markers = "always" if per_operation else "auto"
        for chart, series, title in ((self.rows_chart, "rows/s", "Rows per second"),
                                     (self.bytes_chart, "B/s", "Data per second")):
            chart.add_series(series, markers=markers)
            chart.set_title(f"{title}, each operation" if per_operation else title)
        self.latency_chart.set_title("Latency of each operation" if per_operation else "Latency per operation")
        for name in ("p50", "p95", "p99"):
            self.latency_chart.set_in_legend(name, not per_operation)
        self.latency_chart.set_in_legend(EACH_OPERATION, per_operation)
        return True

    def _fill_suite(self, snap: LiveSnapshot) -> None:
        """Per-query bars of a query suite and the footprints of a stored run."""
        if snap.queries:
            self.query_chart.set_data({snap.target: snap.queries})
            self.query_chart.set_title(f"Time per query (mean) · step {snap.query_step}")
        footprints = {}
        if snap.footprints.get("layout"):
            footprints[f"{snap.target} table"] = snap.footprints["layout"]
        for step, footprint in snap.footprints.get("steps", {}).items():
            footprints[f"imported, step {int(step) + 1}"] = footprint
        self.footprint_chart.set_data(footprints)
        self._show_tab(self.query_chart, bool(snap.queries))
        self._show_tab(self.footprint_chart, bool(footprints))

    def _show_tab(self, page: QWidget, visible: bool) -> None:
        self.tabs.setTabVisible(self.tabs.indexOf(page), visible)

    @staticmethod
    def _feed(chart: TimeSeriesChart, name: str, ts: list[float], ys: list[float]) -> None:
        """Append only the points newer than what the chart holds (snapshots may repeat history)."""
        last = chart.last_x(name)
        if last is not None and ts and ts[-1] < last:
            chart.set_series(name, ts, ys)       # history went backwards: the engine restarted it
            return
        start = 0 if last is None else bisect.bisect_right(ts, last)
        if start < len(ts):
            chart.extend(name, ts[start:], ys[start:])

    def _refresh_sweep(self) -> None:
        key = self.sweep_metric.currentData() or "rows_per_s"
        _text, label, unit, getter = SWEEP_METRICS[key]
        self.sweep_chart.set_y_axis(label, unit)
        self.sweep_chart.clear()
        for (name, metric), (users, values) in self._sweep_refs.items():
            if metric == key:
                self.sweep_chart.set_series(name, users, values, reference=True)
        snap = self._snapshot
        if snap is not None and snap.sweep:
            self.sweep_chart.set_series(snap.target, [p.users for p in snap.sweep],
                                        [getter(p) for p in snap.sweep], [p.complete for p in snap.sweep])

    def _fill_phase_table(self, snap: LiveSnapshot) -> None:
        phases = ordered_phases({"": snap.phase_means}, {"": snap.phase_percentiles})
        self.phase_caption.setText(f"Phases of {phase_origin(snap)}." if phases else "")
        self.phase_table.setRowCount(len(phases))
        for row, phase in enumerate(phases):
            pct = snap.phase_percentiles.get(phase, {})
            cells = [phase, f"{snap.phase_ops:,}", snap.phase_means.get(phase)] + \
                [pct.get(k) for k in ("p50", "p95", "p99")]
            for col, value in enumerate(cells):
                text = value if isinstance(value, str) else ("" if value is None else format_seconds(value))
                item = self.phase_table.item(row, col)
                if item is None:
                    item = QTableWidgetItem()
                    self.phase_table.setItem(row, col, item)
                item.setText(text)
                if col:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
