"""AbView: an A/B session's answer, as ``tickbench ab --json`` gives it (``AbResult.to_dict()``):
per step and figure A, B, B/A with its 95 % interval and the verdict (coloured as the Compare tab's
``widgets.history.verdict_view``), what changes this machine could see, the pairs kept and those dropped
with why, and why the session stopped. While it runs, a line of progress.

Every text from a run (steps, names, reasons) is shown as plain text: it may come from a hostile
file. Plain data in, nothing of the app: the dialog that starts the session feeds it."""
from __future__ import annotations

import html
import math
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QLabel, QTableWidgetItem, QVBoxLayout, QWidget

from widgets.common.figure_table import figure_table
from widgets.common.theme import OKABE_ITO, current_theme
from workloads.results.compare import figure_text
from workloads.results.evidence import FASTER, SLOWER
from workloads.run.turns import pairs_words
from workloads.scenario import scenario_differences

COLUMNS = ("step", "figure", "A", "B", "B / A", "95 % interval", "verdict")
VERDICT = COLUMNS.index("verdict")
OUTCOME_ROLE = {"clear": None, "cancelled": "warning", "inconclusive": "warning", "too few": "error", "failed": "error"}
MAX_TABLE_WIDTH = 1200      # past this the table scrolls across rather than the dialog outgrowing a laptop
MAX_DROPPED = 6             # dropped repetitions listed with their reasons; the rest counted
MIN_ROWS = 4                # the table shows this many verdicts however small the dialog


def _plain(label: QLabel) -> QLabel:
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _value(figure: str, value: Any) -> str:
    return figure_text(figure, value) if isinstance(value, (int, float)) and math.isfinite(value) else "—"


class AbView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ab_view")
        self.sides_label = _plain(QLabel(objectName="ab_sides"))
        self.progress_label = _plain(QLabel(objectName="ab_progress"))
        self.table = figure_table(COLUMNS, stretch=VERDICT, name="ab_table")
        self.table.setMinimumHeight(self.table.horizontalHeader().sizeHint().height()
                                    + MIN_ROWS * self.table.verticalHeader().defaultSectionSize() + 4)
        self.could_see_label = _plain(QLabel(objectName="ab_could_see"))
        self.pairs_label = _plain(QLabel(objectName="ab_pairs"))
        self.stop_label = _plain(QLabel(objectName="ab_stop"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for label in (self.sides_label, self.progress_label):
            layout.addWidget(label)
        layout.addWidget(self.table, 1)
        for label in (self.could_see_label, self.pairs_label, self.stop_label):
            layout.addWidget(label)
        self.clear()

    # ---- states -----------------------------------------------------------------------------
    def clear(self) -> None:
        self.result: dict[str, Any] | None = None
        self.table.setRowCount(0)
        for label in (self.sides_label, self.could_see_label, self.pairs_label, self.stop_label):
            label.setText("")
        self._set_role(self.stop_label, None)
        self.progress_label.setText("A and B run as interleaved pairs of repetitions (their users taking turns "
                                    "operation by operation where both can); the verdicts show here.")
        self._set_role(self.progress_label, "muted")

    def show_sides(self, name_a: str, name_b: str, changed: list[str]) -> None:
        said = "B is A with " + "; ".join(changed) if changed else "B is A (an A/A session)"
        self.sides_label.setText(f"A: {name_a}\nB: {name_b}\n{said}")

    def show_progress(self, text: str) -> None:
        self.progress_label.setText(text)
        self._set_role(self.progress_label, None)

    def show_error(self, line: str) -> None:
        """One clear line: the session could not start, or its process ended without an answer."""
        self.progress_label.setText(line)
        self._set_role(self.progress_label, "error")

    def show_result(self, data: dict[str, Any]) -> None:
        """The session's record (``AbResult.to_dict()``), a finished or a stopped one."""
        self.result = data
        a, b = data.get("scenario_a") or {}, data.get("scenario_b") or {}
        if data.get("outcome") == "failed" and not data.get("pairs_run"):
            self.clear()                          # nothing ran (a target unreachable): its one line
            self.result = data
            self.show_sides(str(a.get("name") or ""), str(b.get("name") or ""), scenario_differences(a, b))
            self.show_error(str(data.get("stop") or data.get("message") or "failed"))
            return
        self.show_sides(str(a.get("name") or ""), str(b.get("name") or ""), scenario_differences(a, b))
        status = "stopped: " if data.get("status") == "cancelled" else ""
        self.progress_label.setText(f"{status}{data.get('pairs_run', 0)} pairs run in "
                                    f"{float(data.get('elapsed_s') or 0):,.0f} s · order: {data.get('order') or '—'}\n"
                                    + pairs_words(str(data.get("interleave") or "runs"),
                                                  str(data.get("interleave_why") or "")))
        self._set_role(self.progress_label, "muted")
        self._fill(data.get("verdicts") or [], str(data.get("primary") or ""))
        seen = [f"{v.get('figure')}{' at ' + str(v.get('step')) if len(self._steps()) > 1 else ''}: could see "
                f"changes of ±{v['could_see'] * 100:.1f} % or more"
                for v in data.get("verdicts") or [] if v.get("figure") == data.get("primary")
                and isinstance(v.get("could_see"), (int, float))]
        self.could_see_label.setText("\n".join(seen))
        pairs = int(data.get("pairs_run") or 0)
        kept = f"kept {data.get('kept_pairs', 0)} of {pairs} pair{'s' if pairs != 1 else ''}"
        dropped = data.get("dropped") or []
        if dropped:
            kept += "; dropped:" + "".join(f"\n  pair {d.get('pair')} {d.get('side')}: {d.get('reason')}"
                                            for d in dropped[:MAX_DROPPED])
            if len(dropped) > MAX_DROPPED:
                kept += f"\n  and {len(dropped) - MAX_DROPPED} more (in the session's record, tickbench ab --json)"
        self.pairs_label.setText(kept)
        self.stop_label.setText(str(data.get("stop") or data.get("status") or ""))
        self._set_role(self.stop_label, OUTCOME_ROLE.get(str(data.get("outcome")), None))

    # ---- parts ------------------------------------------------------------------------------
    def verdicts(self) -> list[tuple[str, str, str]]:
        """(step, figure, verdict) of each row, as shown: for tests."""
        return [tuple(self.table.item(r, c).text() for c in (0, 1, VERDICT)) for r in range(self.table.rowCount())]

    def _steps(self) -> list[str]:
        return list(dict.fromkeys(self.table.item(r, 0).text() for r in range(self.table.rowCount())))

    def _fill(self, verdicts: list[dict[str, Any]], primary: str) -> None:
        theme = current_theme()
        self.table.setRowCount(len(verdicts))
        for r, v in enumerate(verdicts):
            figure = str(v.get("figure") or "")
            ratio, low, high = v.get("ratio"), v.get("low"), v.get("high")
            numbers = all(isinstance(x, (int, float)) for x in (ratio, low, high))
            cells = (str(v.get("step") or ""), figure, _value(figure, v.get("a")), _value(figure, v.get("b")),
                     f"{ratio:.3f}×" if numbers else "—", f"{low:.3f}× – {high:.3f}×" if numbers else "—",
                     str(v.get("verdict") or ""))
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if 2 <= c <= 5:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if c == 1 and figure == primary:
                    font = item.font()
                    font.setBold(True)            # the figure that decides when to stop
                    item.setFont(font)
                if c == VERDICT and v.get("basis"):       # what it rests on, or why it cannot be told
                    item.setToolTip(f"<p>{html.escape(str(v['basis']))}</p>")
                if c == VERDICT and v.get("verdict") in (FASTER, SLOWER):
                    colour = OKABE_ITO["bluish_green"] if v.get("verdict") == FASTER else theme.error
                    item.setForeground(QBrush(QColor(colour)))
                self.table.setItem(r, c, item)
        # every column in full (a verdict elided reads as another one): the dialog grows to it
        needed = sum(max(self.table.sizeHintForColumn(c), self.table.horizontalHeader().sectionSizeHint(c))
                     for c in range(len(COLUMNS)))
        self.table.setMinimumWidth(min(needed + 2 * self.table.frameWidth() + 4, MAX_TABLE_WIDTH))

    @staticmethod
    def _set_role(label: QLabel, role: str | None) -> None:
        if label.property("role") != role:
            label.setProperty("role", role)           # the theme's error and muted styles
            label.style().unpolish(label)
            label.style().polish(label)
