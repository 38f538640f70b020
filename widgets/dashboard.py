"""LiveDashboard: the live view of a run, composed of the reusable charts.

The app calls `show_snapshot(snapshot)` whenever the engine hands over a LiveSnapshot (a few
times a second, or more: it does not matter). That call only stores the snapshot and starts a
timer; when the timer fires (at most 5 times a second: text and axes are costly to lay out) the newest
snapshot is spread over the header and the charts, and each chart repaints at most 30 times a
second and only while visible. Nothing here knows the engine: the snapshot is plain data.
"""
from __future__ import annotations

import bisect
import html

from PySide6.QtCore import QEvent, QThread, Qt, QTimer
from PySide6.QtWidgets import (QComboBox, QGridLayout, QHBoxLayout, QHeaderView, QLabel,
                               QProgressBar, QSplitter, QTableWidget, QTableWidgetItem,
                               QTabWidget, QVBoxLayout, QWidget)

from widgets.breakdown_chart import BreakdownChart, Breakdown, format_seconds, ordered_phases
from widgets.footprint_chart import FootprintChart
from widgets.live_chart import TimeSeriesChart
from widgets.query_chart import QueryChart
from widgets.results_view import RunResultsView
from widgets.sweep_chart import SweepChart
from widgets.theme import current_theme, theme_notifier
from widgets.worker_grid import WorkerGrid
from workloads.figures import STEP_FIGURES_DOC, breakdown
from workloads.snapshot import LiveSnapshot, SweepPoint
from workloads.text import plural

APPLY_INTERVAL_MS = 200
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
_MAX_MESSAGE = 400
CSV_WORKLOADS = ("import", "export")      # their wire bytes are the CSV files
BREAKDOWN_TITLE = "Phases per operation (mean)"
WINDOW_NOTE = ("Each step's throughput is over its measurement window: from the release of the workers "
               "to the end of their last measured operation. Warm-up and probe operations are not counted.")


def phase_origin(snap: LiveSnapshot) -> str:
    """Which step the phase figures describe and what they rest on, e.g.
    "step 2 users, 8 probe operations" (probes: the target splits phases only in probes)."""
    ops = f"{snap.phase_ops:,} {snap.phase_source or 'measured'} operation{'s' if snap.phase_ops != 1 else ''}"
    live = "" if snap.phase_exact else ", live estimate"
    return f"step {snap.phase_step or snap.step_label}, {ops}{live}"


def step_figures_line(snap: LiveSnapshot, warning_colour: str) -> str:
    """One line of the latest step's figures, naming the step; the first operation of a fresh
    process beside the steady state; a too-short step flagged."""
    point: SweepPoint | None = snap.sweep[-1] if snap.sweep else None
    if point is None:
        return ""
    moved = point.rows_per_s > 0
    rate = f"{_si(point.rows_per_s)} rows/s · {_si(point.bytes_per_s)}B/s" if moved else \
        f"{point.ops_per_s:,.1f} ops/s"
    if point.wire_bytes_per_s is not None:
        wire = "CSV" if snap.workload in CSV_WORKLOADS else "read"
        rate += f" · {wire} {_si(point.wire_bytes_per_s)}B/s"
    parts = [f"<b>Step {html.escape(point.label or str(point.users))}</b>", rate,
             f"p50 {format_seconds(point.p50)}", f"p99 {format_seconds(point.p99)}"]
    step = snap.phase_step or snap.step_label
    if snap.first_op_s is not None and step == point.label:
        first = f"first operation in a fresh process {format_seconds(snap.first_op_s)}"
        if snap.steady_p50_s:
            first += f" ({snap.first_op_s / snap.steady_p50_s:.1f}× the steady p50)"
        parts.append(first)
    parts.append("exact" if point.exact else "live estimate")
    line = " · ".join(parts)
    if point.short:
        line += (f"<br><span style='color:{warning_colour}'>⚠ too short to measure: give the step more "
                 "operations, a duration of a few seconds, or more data (a report card: a larger size)</span>")
    return line


def _si(value: float) -> str:
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}"
    return f"{value:.3g} "


def readable_message(text: str) -> str:
    """A message fit for the status line: the last line of a traceback, trimmed, never the stack."""
    text = (text or "").strip()
    if "Traceback (most recent call last)" in text or "\n  File \"" in text:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        # the exception line is the last one not indented as a stack frame or a caret marker
        candidates = [ln for ln in lines if not ln.startswith(("File \"", "Traceback", "^", "~"))]
        text = candidates[-1] if candidates else lines[-1]
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def format_elapsed(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class LiveDashboard(QWidget):
    """Header, message line, tabs of charts and the worker grid for one run."""

    def __init__(self, parent: QWidget | None = None, *, apply_interval_ms: int = APPLY_INTERVAL_MS) -> None:
        super().__init__(parent)
        self._snapshot: LiveSnapshot | None = None
        self._shown_run: str | None = None
        self._starting = ""              # the name of a run started but not yet heard from
        self._dirty = False
        self.apply_count = 0
        self._sweep_refs: dict[tuple[str, str], tuple[list, list]] = {}
        self._breakdown_refs: Breakdown = {}

        # header: one line of facts and a progress bar
        self.header_label = QLabel()
        self.header_label.setTextFormat(Qt.TextFormat.RichText)
        self.header_label.setWordWrap(True)   # wraps on narrow windows or large demo fonts
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat("%p%")
        self.progress.setFixedWidth(220)
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # the step's figures in one line, naming the step (live estimate until the step ends)
        self.figures_label = QLabel()
        self.figures_label.setWordWrap(True)
        self.figures_label.setTextFormat(Qt.TextFormat.RichText)
        self.figures_label.setToolTip(STEP_FIGURES_DOC)
        self.published_label = QLabel()
        self.published_label.setWordWrap(True)
        self.published_label.setProperty("role", "muted")

        # charts
        self.rows_chart = TimeSeriesChart("Rows per second", y_label="", y_unit="rows/s",
                                          show_legend=False)
        self.bytes_chart = TimeSeriesChart("Data per second", y_label="", y_unit="B/s",
                                           show_legend=False)
        # its legend under the plot: over it, it hid the first seconds' points
        self.latency_chart = TimeSeriesChart("Latency per operation", y_label="latency", y_unit="s",
                                             legend_below=True)
        for name, width in (("p50", 2.0), ("p95", 2.0), ("p99", 2.0)):
            self.latency_chart.add_series(name, width=width)
        self._per_operation = False
        self.breakdown_chart = BreakdownChart("Phases per operation (mean)")
        self.cpu_chart = TimeSeriesChart("Client CPU", y_label="CPU", y_unit="%", y_si_prefix=False,
                                         show_legend=False)
        self.memory_chart = TimeSeriesChart("Client memory (RSS)", y_label="memory", y_unit="B",
                                            show_legend=False)
        self.sweep_chart = SweepChart()
        self.query_chart = QueryChart()
        self.footprint_chart = FootprintChart()
        self.worker_grid = WorkerGrid()
        self.phase_caption = QLabel()
        self.phase_caption.setWordWrap(True)
        self.phase_table = QTableWidget(0, 6)
        self.phase_table.setHorizontalHeaderLabels(["phase", "operations", "mean", "p50", "p95", "p99"])
        self.phase_table.verticalHeader().hide()
        self.phase_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.phase_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.sweep_metric = QComboBox()
        for key, (text, *_rest) in SWEEP_METRICS.items():
            self.sweep_metric.addItem(text, key)
        self.sweep_metric.currentIndexChanged.connect(lambda _i: self._refresh_sweep())

        live = QWidget()
        grid = QGridLayout(live)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(6)
        grid.addWidget(self.rows_chart, 0, 0)
        grid.addWidget(self.bytes_chart, 0, 1)
        grid.addWidget(self.latency_chart, 1, 0)
        grid.addWidget(self.breakdown_chart, 1, 1)
        grid.addWidget(self.cpu_chart, 2, 0)
        grid.addWidget(self.memory_chart, 2, 1)
        grid.setRowStretch(0, 3)
        grid.setRowStretch(1, 3)
        grid.setRowStretch(2, 2)

        sweep_page = QWidget()
        sweep_layout = QVBoxLayout(sweep_page)
        sweep_layout.setContentsMargins(0, 0, 0, 0)
        metric_row = QHBoxLayout()
        metric_row.addWidget(QLabel("Metric:"))
        metric_row.addWidget(self.sweep_metric)
        metric_row.addStretch(1)
        sweep_layout.addLayout(metric_row)
        sweep_layout.addWidget(self.sweep_chart, 1)
        self.window_note = QLabel(WINDOW_NOTE, wordWrap=True)
        self.window_note.setProperty("role", "muted")
        self.window_note.setToolTip(STEP_FIGURES_DOC)
        sweep_layout.addWidget(self.window_note)

        self.results_view = RunResultsView()
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.results_view, "Results")
        self.tabs.addTab(live, "Live")
        self.tabs.addTab(sweep_page, "Users sweep")
        self.live_page, self.sweep_page = live, sweep_page
        self.tabs.setCurrentWidget(live)
        phase_page = QWidget()
        phase_layout = QVBoxLayout(phase_page)
        phase_layout.setContentsMargins(0, 4, 0, 0)
        phase_layout.addWidget(self.phase_caption)
        phase_layout.addWidget(self.phase_table, 1)
        self.tabs.addTab(phase_page, "Phase percentiles")
        self.tabs.addTab(self.query_chart, "Queries")
        self.tabs.addTab(self.footprint_chart, "Footprint")

        workers = QWidget()
        workers_layout = QVBoxLayout(workers)
        workers_layout.setContentsMargins(4, 0, 0, 0)
        self.workers_title = QLabel("<b>Workers</b>")
        workers_layout.addWidget(self.workers_title)
        workers_layout.addWidget(self.worker_grid, 1)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.tabs)
        self.splitter.addWidget(workers)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)
        self.splitter.setSizes([1000, 180])

        header = QHBoxLayout()
        header.addWidget(self.header_label, 1)
        header.addWidget(self.progress)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(header)
        layout.addWidget(self.figures_label)
        layout.addWidget(self.published_label)
        layout.addWidget(self.message_label)
        layout.addWidget(self.splitter, 1)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(apply_interval_ms)
        self._timer.timeout.connect(self._on_timer)
        theme_notifier().changed.connect(self._on_theme_changed)
        self._fix_text_heights()
        self.clear()

    # ---- public -----------------------------------------------------------------------------
    def show_snapshot(self, snapshot: LiveSnapshot) -> None:
        """Cheap: keep the newest snapshot; the timer spreads it over the widgets.

        Call it on the GUI thread (connect a worker's signal to it: Qt queues the call)."""
        if QThread.currentThread() != self.thread():
            raise RuntimeError("LiveDashboard.show_snapshot called from another thread; deliver "
                               "snapshots through a queued signal (pyqtgraph issue #1398)")
        self._snapshot = snapshot
        self._dirty = True
        if not self._timer.isActive():
            self._timer.start()

    def show_final(self, snapshot: LiveSnapshot) -> None:
        """Show a finished (or stored) run at once: same data shape as a live snapshot."""
        self._snapshot = snapshot
        self._dirty = True
        self._timer.stop()
        self._apply()

    def show_results(self, answer) -> None:
        """A finished run's answer (``workloads.run_summary.RunAnswer``), brought to the front."""
        self.results_view.show_answer(answer)
        self.tabs.setCurrentWidget(self.results_view)

    def start_run(self, name: str = "") -> None:
        """A new run begins: everything cleared, the live charts to the front, zoom reset, and the
        header names the run that is starting (not "No run" while the toolbar says Running)."""
        self.clear()
        self._starting = name or "a run"
        self._apply_text()
        self.results_view.clear()
        self.tabs.setCurrentWidget(self.live_page)
        for chart in self.charts().values():
            chart.reset_view()
            if chart.isVisibleTo(self):   # the live page's, empty now: their first paint is their last
                chart.render_now()

    def clear(self) -> None:
        """Back to "no run": empty charts, header and messages."""
        self._snapshot = None
        self._shown_run = None
        self._starting = ""
        self._dirty = False
        self._timer.stop()
        for chart in (self.rows_chart, self.bytes_chart, self.latency_chart, self.cpu_chart,
                      self.memory_chart):
            chart.clear()
        self.breakdown_chart.clear()
        self.sweep_chart.clear(keep_references=True)
        self._refresh_sweep()
        self.worker_grid.clear()
        self.phase_table.setRowCount(0)
        self.phase_caption.setText("")
        self.query_chart.clear()
        self.footprint_chart.clear()
        self._show_tab(self.query_chart, False)
        self._show_tab(self.footprint_chart, False)
        self._apply_text()

    def charts(self) -> dict[str, QWidget]:
        """The exportable charts by the name a user picks them with."""
        return {"Rows per second": self.rows_chart, "Data per second": self.bytes_chart,
                "Latency": self.latency_chart, "Phases": self.breakdown_chart,
                "Client CPU": self.cpu_chart, "Client memory": self.memory_chart,
                "Users sweep": self.sweep_chart, "Time per query": self.query_chart,
                "Footprint": self.footprint_chart}

    def chart_in_view(self) -> str:
        """The name (as in ``charts``) of the chart on the visible tab: the one to export."""
        page = self.tabs.currentWidget()
        by_page = {self.sweep_page: "Users sweep", self.query_chart: "Time per query",
                   self.footprint_chart: "Footprint"}
        if page is self.results_view:
            return "Users sweep" if self.results_view.answer is not None and self.results_view.answer.is_sweep \
                else "Rows per second"
        return by_page.get(page, "Phases" if self.tabs.tabText(self.tabs.currentIndex()) == "Phase percentiles"
                           else "Rows per second")

    @property
    def snapshot(self) -> LiveSnapshot | None:
        return self._snapshot

    def set_sweep_reference(self, name: str, users, values, metric: str = "rows_per_s") -> None:
        """A published sweep (e.g. report 003, 8 nodes) drawn dashed when `metric` is shown.
        Values are in base units: rows/s, bytes/s, ops/s or seconds."""
        if metric not in SWEEP_METRICS:
            raise ValueError(f"unknown sweep metric {metric!r}; expected one of {', '.join(SWEEP_METRICS)}")
        self._sweep_refs[(name, metric)] = (list(users), list(values))
        self._refresh_sweep()

    def set_published_findings(self, run: list[str], queries: list[str], footprint: list[str]) -> None:
        """Published figures of the seed reports as text: those of the run's workload under the
        figures line, those of query suites and disk space under their charts."""
        text = "Published (their hardware): " + "; ".join(dict.fromkeys(run)) if run else ""
        self.published_label.setText(text)
        self.published_label.setVisible(bool(text))     # set at a run's start: no relayout while it runs
        self.published_label.setToolTip(text)
        self.query_chart.set_published(queries)
        self.footprint_chart.set_published(footprint)

    def clear_references(self) -> None:
        """Drop every published series (a new run may compare against other reports)."""
        self.set_published_findings([], [], [])
        self._sweep_refs.clear()
        self._breakdown_refs = {}
        self.sweep_chart.clear()
        self._refresh_sweep()

    def set_breakdown_reference(self, published: Breakdown) -> None:
        """Published phase seconds by target label, drawn beside the measured bar of that label."""
        self._breakdown_refs = {k: dict(v) for k, v in published.items()}
        self._dirty = True
        self._timer.start()

    def header_text(self) -> str:
        """The header as plain text (what a screen reader would say)."""
        return self.header_label.text().replace("&nbsp;", " ").replace("<b>", "").replace("</b>", "")

    def _fix_text_heights(self) -> None:
        """Header and figures lines keep their height whatever their text: a line that wraps one
        second and not the next would resize (and repaint) every chart below it."""
        spacing = self.fontMetrics().lineSpacing()
        # the message and published lines keep their slot even when empty: one appearing would
        # push every chart down (a relayout and repaint of all of them, ~0.1 s)
        for label in (self.header_label, self.figures_label, self.message_label, self.published_label):
            label.setFixedHeight(2 * spacing + 4)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.ApplicationFontChange):
            QTimer.singleShot(0, self._fix_text_heights)

    def _on_theme_changed(self, _theme) -> None:
        self._apply_text()      # the header's colours come from the theme

    # ---- applying a snapshot ----------------------------------------------------------------
    def _on_timer(self) -> None:
        if self._dirty and self.isVisible():
            self._apply()
        # hidden: stay dirty; showEvent applies the newest snapshot

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._dirty and not self._timer.isActive():
            self._timer.start()

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
        self._set_per_operation(snap.per_operation)
        tp = snap.throughput
        # seconds between steps (no step measuring) are gaps in the line, not zero throughput
        self._feed(self.rows_chart, "rows/s", [p.t for p in tp], [p.rows_per_s if p.measuring else GAP for p in tp])
        self._feed(self.bytes_chart, "B/s", [p.t for p in tp], [p.bytes_per_s if p.measuring else GAP for p in tp])
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
        self._feed(self.memory_chart, "RSS", ts, [p.rss_bytes for p in res])
        if snap.phase_means:
            published = {k: v for k, v in self._breakdown_refs.items() if k == snap.target}
            self.breakdown_chart.set_data({snap.target: breakdown(snap.phase_means, snap.mean_total_s)},
                                          published)
            # which step and how many operations, under the bars (a long title would widen the chart)
            origin = f"Phases of {phase_origin(snap)}."
            self.breakdown_chart.set_note(" ".join(filter(None, [origin, self.breakdown_chart.note])))
        self._refresh_sweep()
        self.worker_grid.set_workers(snap.workers, snap.worker_errors)
        self._fill_phase_table(snap)
        self._fill_suite(snap)

    def _set_per_operation(self, per_operation: bool) -> None:
        """A short run is drawn operation by operation (each at its end: its own rate and time);
        a longer one per second. The titles say which."""
        if per_operation == self._per_operation:
            return
        self._per_operation = per_operation
        markers = "always" if per_operation else "auto"
        for chart, series, title in ((self.rows_chart, "rows/s", "Rows per second"),
                                     (self.bytes_chart, "B/s", "Data per second")):
            chart.add_series(series, markers=markers)
            chart.set_title(f"{title}, each operation" if per_operation else title)
        self.latency_chart.set_title("Latency of each operation" if per_operation else "Latency per operation")
        for name in ("p50", "p95", "p99"):
            self.latency_chart.set_in_legend(name, not per_operation)
        self.latency_chart.set_in_legend(EACH_OPERATION, per_operation)

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

    def _apply_text(self) -> None:
        snap, theme = self._snapshot, current_theme()
        if snap is None:
            self.header_label.setText(
                f"<b>{html.escape(self._starting)}</b>&nbsp;&nbsp;starting: the figures follow its first operations"
                if self._starting else "<b>No run</b>&nbsp;&nbsp;start a scenario to see live figures here")
            self.figures_label.setText("")
            self.progress.setValue(0)
            self._set_message("", error=False)
            return
        status_colour = {"failed": theme.error, "cancelled": theme.warning}.get(snap.status, theme.text)
        errors = f"{snap.ops_failed:,} error{'' if snap.ops_failed == 1 else 's'}"
        if snap.ops_failed:
            errors = f"<span style='color:{theme.error}'><b>{errors}</b></span>"
        facts = [html.escape(snap.workload), f"<b>{html.escape(snap.target)}</b>",
                 *([f"{html.escape(snap.cache)} cache"] if snap.cache else [])]
        named_by_facts = all(f in (snap.name or "") for f in (snap.workload, snap.target, snap.cache))
        parts = [
            f"<b>{html.escape(snap.name or snap.run_id)}</b>",
            f"<span style='color:{status_colour}'>{html.escape(snap.status)}</span>",
            *([] if named_by_facts else facts),       # a descriptive name says them already
            f"step {snap.step_index + 1}/{max(snap.steps_total, 1)}",
            f"{snap.users} user{'s' if snap.users != 1 else ''}",
            f"elapsed {format_elapsed(snap.elapsed_s)}",
            plural(snap.ops_done, "op"),
            errors,
        ]
        if snap.name:
            parts.append(f"<span style='font-size:small'>{html.escape(snap.run_id)}</span>")
        self.header_label.setText("&nbsp;&nbsp;·&nbsp;&nbsp;".join(parts))
        self.figures_label.setText(step_figures_line(snap, theme.warning))
        value = round(min(max(snap.progress, 0.0), 1.0) * 1000)
        if abs(value - self.progress.value()) >= 2 or value in (0, 1000):     # a styled bar repaints dearly
            self.progress.setValue(value)
        message = readable_message(snap.message)
        failed = snap.status == "failed" or bool(snap.worker_errors)
        if not message and snap.status == "failed":
            message = "The run failed." + (" Hover a red worker for its error." if snap.worker_errors else "")
        elif not message and snap.worker_errors:
            message = f"{plural(len(snap.worker_errors), 'worker')} failed: hover a red cell for the error."
        self._set_message(message, error=failed)

    def _set_message(self, text: str, *, error: bool) -> None:
        self.message_label.setText(text)
        colour = current_theme().error if error else current_theme().text
        self.message_label.setStyleSheet(f"color: {colour};" + (" font-weight: bold;" if error else ""))

    # ---- state ------------------------------------------------------------------------------
    def save_state(self) -> dict:
        return {"version": 1, "tab": self.tabs.tabText(self.tabs.currentIndex()),
                "sweep_metric": self.sweep_metric.currentData(), "splitter": self.splitter.sizes()}

    def restore_state(self, state: dict) -> None:
        if not isinstance(state, dict):
            return
        for i in range(self.tabs.count()):
            if self.tabs.tabText(i) == state.get("tab"):
                self.tabs.setCurrentIndex(i)
        index = self.sweep_metric.findData(state.get("sweep_metric"))
        if index >= 0:
            self.sweep_metric.setCurrentIndex(index)
        sizes = state.get("splitter")
        if isinstance(sizes, list) and len(sizes) == 2 and all(isinstance(s, int) and s >= 0 for s in sizes):
            self.splitter.setSizes(sizes)


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
