"""CompareView: two or more stored runs: first the verdicts (each run against the first, figure by
figure, with its interval and what differs around them: ``widgets.history.verdict_view``); then overlaid:
throughput vs users, phases and a table; for query suites the time per query side by side (a
differing answer in red, both answers a click away); the footprints of the runs' tables with their
compression ratios.

It fits the central area of a 1280 px window beside the docks (about 900 px wide): long run names are
shortened in the charts' legends and bar names and in the table (in full on hover), never pushing a
chart out of view; the two charts share the width equally and neither can be squeezed to nothing."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget

from widgets.history.answers_dialog import AnswersDialog
from widgets.charts.breakdown import BreakdownChart
from widgets.common.figure_table import figure_table
from widgets.common.plain_text import tooltip
from widgets.charts.footprint import FootprintChart
from widgets.charts.query import QueryChart
from widgets.charts.sweep import SweepChart
from widgets.history.verdict_view import VerdictView
from workloads.results.figures import breakdown as with_other
from workloads.run.snapshot import QueryPoint
from workloads.text import plural

TABLE_COLUMNS = (("run", "run"), ("step", "step_label"), ("users", "users"), ("rows/s", "rows_per_s"),
                 ("MB/s", "mb_per_s"), ("ops/s", "ops_per_s"), ("p50 ms", "p50_ms"), ("p99 ms", "p99_ms"),
                 ("first op ms", "first_op_ms"), ("window s", "window_s"),
                 ("cold: cleared", "cleared"))      # a cold run: what its clears emptied (engine caches only...)
PHASE_KEYS = ("io", "read", "query", "server", "transfer", "decode")
MIN_CHART_WIDTH = 300        # each chart keeps at least this much when the splitter is dragged


class CompareView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("Select two or more runs in History and press Compare.", wordWrap=True)
        self.sweep_chart = SweepChart("Throughput vs users")
        self.breakdown_chart = BreakdownChart("Phases per operation (mean)")
        # the figures take the room they need; the run's name the rest, shortened in the middle
        self.table = figure_table([c[0] for c in TABLE_COLUMNS], stretch=0)
        self.charts_splitter = charts = QSplitter(Qt.Orientation.Horizontal)
        for chart in (self.sweep_chart, self.breakdown_chart):
            chart.setMinimumWidth(MIN_CHART_WIDTH)
            charts.addWidget(chart)
            charts.setCollapsible(charts.indexOf(chart), False)
        charts.setSizes([1, 1])                          # half each, whatever the width
        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(charts)
        outer.addWidget(self.table)
        outer.setSizes([500, 200])
        self.query_chart = QueryChart("Time per query (mean), runs side by side")
        self.query_chart.query_clicked.connect(self.show_answers)
        self.footprint_chart = FootprintChart("Footprint of each run's table")
        self.answers_dialog = AnswersDialog(self)
        self._answers: dict[str, dict[str, dict]] = {}
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.verdicts = VerdictView()
        self.tabs.addTab(self.verdicts, "Verdicts")
        self.throughput_page = outer
        self.tabs.addTab(outer, "Throughput and phases")
        self.tabs.addTab(self.query_chart, "Queries")
        self.tabs.addTab(self.footprint_chart, "Footprint")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addWidget(self.tabs, 1)
        self.show_suites({}, {}, {})

    def charts(self) -> dict[str, QWidget]:
        return {"Compare: throughput vs users": self.sweep_chart,
                "Compare: phases": self.breakdown_chart,
                "Compare: time per query": self.query_chart,
                "Compare: footprint": self.footprint_chart}

    def chart_in_view(self) -> str:
        """The name (as in ``charts``) of the chart on the visible tab."""
        page = self.tabs.currentWidget()
        if page is self.query_chart:
            return "Compare: time per query"
        if page is self.footprint_chart:
            return "Compare: footprint"
        return "Compare: throughput vs users"

    def show_suites(self, queries: dict[str, list[QueryPoint]], answers: dict[str, dict[str, dict]],
                    footprints: dict[str, dict]) -> None:
        """Per run label: its query points, its recorded answers (query -> preview) and its
        footprint; tabs without data are hidden, and a comparison of suites opens on its queries."""
        self.query_chart.set_data(queries)
        self._answers = {label: dict(a) for label, a in answers.items()}
        self.footprint_chart.set_data(footprints)
        self.tabs.setTabVisible(self.tabs.indexOf(self.query_chart), bool(queries))
        self.tabs.setTabVisible(self.tabs.indexOf(self.footprint_chart), bool(self.footprint_chart.labels()))
        self.tabs.setCurrentWidget(self.verdicts)

    def show_verdicts(self, comparisons, labels: dict[str, str]) -> None:
        """Each run against the first (``workloads.results.compare.Comparison``s), with verdicts."""
        self.verdicts.show_comparisons(comparisons, labels)

    def show_answers(self, query: str) -> None:
        """Every run's answer to ``query`` side by side (a click on the query in the chart)."""
        labels = [label for label in self._answers if self.query_chart.point(label, query) is not None]
        points = {label: self.query_chart.point(label, query) for label in labels}
        description = next((p.description for p in points.values() if p.description), "")
        self.answers_dialog.show_answers(
            query, description, {label: self._answers[label].get(query, {}) for label in labels},
            {label: p.fingerprint for label, p in points.items()}, self.query_chart.reference(query))
        self.answers_dialog.show()
        self.answers_dialog.raise_()

    def show_runs(self, rows: list[dict]) -> None:
        """One dict per run-step (workloads.results.history.compare_frame rows): run (label), users,
        rows_per_s, mb_per_s, ops_per_s, p50_ms, p99_ms and phase means as io_ms, decode_ms..."""
        self.sweep_chart.clear()
        self.sweep_chart.reset_view()           # other runs: drop a zoom made on the last ones
        by_run: dict[str, list[dict]] = {}
        for row in rows:
            by_run.setdefault(row["run"], []).append(row)
        breakdown = {}
        for label, steps in by_run.items():
            steps = sorted(steps, key=lambda r: r["users"])
            self.sweep_chart.set_series(label, [r["users"] for r in steps],
                                        [r["rows_per_s"] or 0.0 for r in steps])
            best = max(steps, key=lambda r: (not r.get("short"), r["rows_per_s"] or 0.0))
            phases = {p: best[f"{p}_ms"] / 1000 for p in PHASE_KEYS
                      if best.get(f"{p}_ms") is not None and best[f"{p}_ms"] == best[f"{p}_ms"]}
            if phases:
                mean = best.get("mean_ms")
                breakdown[f"{label} · {best.get('step_label', '')}"] = with_other(
                    phases, mean / 1000 if mean == mean and mean is not None else None)
        self.breakdown_chart.set_data(breakdown)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, (_title, key) in enumerate(TABLE_COLUMNS):
                value = row.get(key)
                text = f"{value:,.1f}" if isinstance(value, float) and value == value else \
                    ("" if value is None or (isinstance(value, float)) else str(value))
                if key == "step_label" and row.get("short"):
                    text += " ⚠"
                item = QTableWidgetItem(text)
                if key == "run":
                    item.setToolTip(tooltip(text))       # shortened when the column is narrow
                if c:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
        self.title.setText(f"Comparing {plural(len(by_run), 'run')}")
