"""CompareView: two or more stored runs overlaid: throughput vs users, phases, and a table."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QHeaderView, QLabel, QSplitter, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from widgets.breakdown_chart import BreakdownChart
from widgets.sweep_chart import SweepChart
from workloads.figures import breakdown as with_other

TABLE_COLUMNS = (("run", "run"), ("step", "step_label"), ("users", "users"), ("rows/s", "rows_per_s"),
                 ("MB/s", "mb_per_s"), ("ops/s", "ops_per_s"), ("p50 ms", "p50_ms"), ("p99 ms", "p99_ms"),
                 ("first op ms", "first_op_ms"), ("window s", "window_s"))
PHASE_KEYS = ("io", "read", "query", "server", "transfer", "decode")


class CompareView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("Select two or more runs in History and press Compare.", wordWrap=True)
        self.sweep_chart = SweepChart("Throughput vs users")
        self.breakdown_chart = BreakdownChart("Phases per operation (mean)")
        self.table = QTableWidget(0, len(TABLE_COLUMNS))
        self.table.setHorizontalHeaderLabels([c[0] for c in TABLE_COLUMNS])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        charts = QSplitter(Qt.Orientation.Horizontal)
        charts.addWidget(self.sweep_chart)
        charts.addWidget(self.breakdown_chart)
        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(charts)
        outer.addWidget(self.table)
        outer.setSizes([500, 200])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addWidget(outer, 1)

    def charts(self) -> dict[str, QWidget]:
        return {"Compare: throughput vs users": self.sweep_chart,
                "Compare: phases": self.breakdown_chart}

    def show_runs(self, rows: list[dict]) -> None:
        """One dict per run-step (workloads.history.compare_frame rows): run (label), users,
        rows_per_s, mb_per_s, ops_per_s, p50_ms, p99_ms and phase means as io_ms, decode_ms..."""
        self.sweep_chart.clear()
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
                if c:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
        self.title.setText(f"Comparing {len(by_run)} runs")
