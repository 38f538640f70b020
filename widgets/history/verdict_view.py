"""VerdictView: the Compare tab's verdicts, as ``tickbench compare`` prints them: for each run
against the first, why they cannot be compared (if so), each figure's ratio with its 95 % interval
and verdict, and what differs around them (``workloads.results.compare``)."""
from __future__ import annotations

import html
import math

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QLabel, QTableWidgetItem, QVBoxLayout, QWidget

from widgets.common.figure_table import figure_table
from widgets.common.plain_text import tooltip
from widgets.common.theme import OKABE_ITO, current_theme
from workloads.results.compare import FASTER, LARGER, SAME, SLOWER, SMALLER, Comparison, figure_text

COLUMNS = ("#", "step", "figure", "base", "new", "new / base", "95 % across runs", "verdict")
SHORT = {SAME: "no difference"}             # the column's words; the summary says them in full
BETTER, WORSE = (FASTER, SMALLER), (SLOWER, LARGER)


class VerdictView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel(wordWrap=True, objectName="verdict_summary")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.table = figure_table(COLUMNS, stretch=2, name="verdict_table")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)

    def show_comparisons(self, comparisons: list[Comparison], labels: dict[str, str]) -> None:
        theme = current_theme()
        lines, rows = [], []
        for number, comparison in enumerate(comparisons, 2):
            new = html.escape(labels.get(comparison.new_run, comparison.new_run))
            base = html.escape(labels.get(comparison.base_run, comparison.base_run))
            if not comparison.comparable:
                reasons = "; ".join(html.escape(r) for r in comparison.refusals)
                lines.append(f"{number} · <b>{new}</b> against <b>{base}</b>: <span style='color:{theme.error}'>not compared"
                             f"</span> ({reasons})")
                continue
            moved = [c for c in comparison.changes if c.verdict in BETTER + WORSE]
            said = (", ".join(f"{c.figure} {c.verdict}" for c in moved[:6]) + (" …" if len(moved) > 6 else "")
                    if moved else "no difference this machine can see")
            differs = [f"{html.escape(w)}: {html.escape(b)} → {html.escape(n)}" for w, b, n in comparison.environment
                       if w != "load during the run"]
            said += f"<br><span style='color:{theme.muted}'>noise model: {html.escape(comparison.noise)}</span>"
            lines.append(f"{number} · <b>{new}</b> against <b>{base}</b>: {said}"
                         + (f"<br><span style='color:{theme.muted}'>differs around them: {'; '.join(differs)}</span>"
                            if differs else ""))
            rows += [(str(number), labels.get(comparison.new_run, comparison.new_run), c) for c in comparison.changes]
        lines.append(f"<span style='color:{theme.muted}'>Each run against the oldest (#1). A figure is better or "
                     "worse only when its whole 95 % interval across runs (from repeats of the scenario, never one run's "
                     "operations) lies beyond ±2 % either side of 1; otherwise there is no difference this machine "
                     "can see.</span>")
        self.summary.setText("<br>".join(lines))
        self.table.setRowCount(len(rows))
        for r, (number, label, change) in enumerate(rows):
            cells = (number, change.step, change.figure, figure_text(change.figure, change.base),
                     figure_text(change.figure, change.new), f"{change.ratio:.3f}×" if math.isfinite(change.ratio) else "—", change.interval,
                     SHORT.get(change.verdict, change.verdict))
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c == 0:
                    item.setToolTip(tooltip(label))
                if 3 <= c <= 5:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if c == 7 and change.verdict in BETTER + WORSE:
                    item.setForeground(QBrush(QColor(OKABE_ITO['bluish_green'] if change.verdict in BETTER else theme.error)))
                if c == 2:
                    item.setToolTip(tooltip(change.basis))
                self.table.setItem(r, c, item)
