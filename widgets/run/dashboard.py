"""LiveDashboard: the live view of a run, composed of the reusable charts.

The app calls `show_snapshot(snapshot)` whenever the engine hands over a LiveSnapshot (a few
times a second, or more: it does not matter). That call only stores the snapshot and starts a
timer; when the timer fires (at most 5 times a second: text and axes are costly to lay out) the newest
snapshot is spread over the header and the charts, and each chart repaints at most 30 times a
second and only while visible. Nothing here knows the engine: the snapshot is plain data.

The header's lines are ``widgets.run.header``'s; spreading a snapshot over the charts is
``widgets.run.dashboard_charts``'.
"""
from __future__ import annotations

from PySide6.QtCore import QThread, Qt, QTimer
from PySide6.QtWidgets import (QComboBox, QGridLayout, QHBoxLayout, QHeaderView, QLabel, QProgressBar,
                               QSplitter, QTableWidget, QTabWidget, QVBoxLayout, QWidget)

from widgets.charts.breakdown import BreakdownChart, Breakdown
from widgets.run.dashboard_charts import SWEEP_METRICS, DashboardCharts
from widgets.run.header import DashboardHeader
from widgets.common.plain_text import plain_label
from widgets.charts.footprint import FootprintChart
from widgets.charts.live import TimeSeriesChart
from widgets.charts.query import QueryChart
from widgets.run.results_view import RunResultsView
from widgets.charts.sweep import SweepChart
from widgets.common.theme import theme_notifier
from widgets.run.worker_grid import WorkerGrid
from workloads.results.figures import STEP_FIGURES_DOC
from workloads.run.snapshot import LiveSnapshot

APPLY_INTERVAL_MS = 200
BREAKDOWN_TITLE = "Phases per operation (mean)"
WINDOW_NOTE = ("Each step's throughput is over its measurement window: from the release of the workers "
               "to the end of their last measured operation. Warm-up and probe operations are not counted.")


class LiveDashboard(DashboardHeader, DashboardCharts, QWidget):
    """Header, message line, tabs of charts and the worker grid for one run."""

    def __init__(self, parent: QWidget | None = None, *, apply_interval_ms: int = APPLY_INTERVAL_MS) -> None:
        super().__init__(parent)
        self._snapshot: LiveSnapshot | None = None
        self._shown_run: str | None = None
        self._starting = ""              # the name of a run started but not yet heard from
        self.spotlit: tuple[str, ...] = ()  # the charts an audience is shown alone (spotlight)
        self._dirty = False
        self.apply_count = 0
        self._sweep_refs: dict[tuple[str, str], tuple[list, list]] = {}
        self._breakdown_refs: Breakdown = {}
        self._step_starts: dict[int, tuple[float, str]] = {}   # spotlit: where each step was first seen

        # header: one line of facts and a progress bar
        self.header_label = QLabel()
        self.header_label.setTextFormat(Qt.TextFormat.RichText)
        self.header_label.setWordWrap(True)   # wraps on narrow windows or large demo fonts
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat("%p%")
        self.progress.setFixedWidth(220)
        self.message_label = plain_label(QLabel())     # a run's or a server's words
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
        self.memory_chart = TimeSeriesChart("Client memory (PSS)", y_label="memory", y_unit="B",
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
        self._settle_text_heights(True)        # nothing updates it now: empty lines give their room back

    def show_results(self, answer) -> None:
        """A finished run's answer (``workloads.results.run_summary.RunAnswer``), brought to the front."""
        self.results_view.show_answer(answer)
        if not self.spotlit:            # an audience keeps watching the charts it was shown
            self.tabs.setCurrentWidget(self.results_view)

    def start_run(self, name: str = "") -> None:
        """A new run begins: everything cleared, the live charts to the front, zoom reset, and the
        header names the run that is starting (not "No run" while the toolbar says Running)."""
        self.clear()
        self._settle_text_heights(False)        # live: every line keeps its slot, so no chart jumps
        self._set_per_operation(False)          # a live run is drawn per second until its stored view
        self._starting = name or "a run"
        self._apply_text()
        self.results_view.clear()
        self.tabs.setCurrentWidget(self.live_page)
        for chart in self.charts().values():
            chart.reset_view()
            if chart.isVisibleTo(self):   # the live page's, empty now: their first paint is their last
                chart.render_now()

    def spotlight(self, names: tuple[str, ...] = ()) -> None:
        """Only these live charts (``charts()`` names), one above the other across the whole width,
        with no tabs or workers beside them: what an audience should watch (the narrated demo). No
        names: every chart back in its place."""
        grid = self.live_page.layout()
        live = {"Rows per second": (self.rows_chart, 0, 0), "Data per second": (self.bytes_chart, 0, 1),
                "Latency": (self.latency_chart, 1, 0), "Phases": (self.breakdown_chart, 1, 1),
                "Client CPU": (self.cpu_chart, 2, 0), "Client memory": (self.memory_chart, 2, 1)}
        for row, name in enumerate(names):              # the chosen ones in column 0, one per row
            grid.addWidget(live[name][0], row, 0, 1, 2)
        for name, (chart, row, column) in live.items():
            if name not in names:
                chart.setVisible(not names)
                if not names:
                    grid.addWidget(chart, row, column)
        for row in range(3):
            grid.setRowStretch(row, (1 if row < len(names) else 0) if names else (2 if row == 2 else 3))
        for chart in (live[name][0] for name in names):
            chart.setVisible(True)
        self.tabs.tabBar().setVisible(not names)
        self.splitter.widget(1).setVisible(not names)          # the workers' column
        if names:
            self.tabs.setCurrentWidget(self.live_page)
        self.spotlit = tuple(names)
        self._apply_text()                                     # the header's run id comes and goes
        self._fix_text_heights()                               # an audience's header keeps no empty slots

    def set_audience_title(self, title: str) -> None:
        """What the header calls the run while charts are spotlit (the demo's arm, "pickle, cold cache")."""
        self.audience_title = title
        self._apply_text()

    def clear(self) -> None:
        """Back to "no run": empty charts, header and messages."""
        self._snapshot = None
        self._shown_run = None
        self._starting = ""
        self._dirty = False
        self._step_starts.clear()
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
        self._fit_text_heights()                        # its lines all shown, however many
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

    # ---- applying a snapshot ----------------------------------------------------------------
    def _on_timer(self) -> None:
        if self._dirty and self.isVisible():
            self._apply()
        # hidden: stay dirty; showEvent applies the newest snapshot

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._dirty and not self._timer.isActive():
            self._timer.start()

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
