"""DemoCard: the narrated demo's cards, drawn over the window for an audience.

A title card (the report, the question, what to watch), a result card (measured beside published,
each finding's verdict and how sure it is), and a summary of every finding. Text is large and
wraps; nothing is hover-only. Plain data in (``workloads.reproduce.story``), no run ids shown.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QVBoxLayout, QWidget

from widgets.common.theme import OKABE_ITO, current_theme, theme_notifier
from workloads.reproduce.confidence import CROSS_RUN_BAND
from workloads.reproduce.findings import HOLDS, INCONCLUSIVE, NOT_HOLD, NOT_MEASURED, STRONGER, WEAKER

# (key, on the cards, in Help): the presenter's keys (app.demo.presenter binds them)
PRESENTER_KEYS = (("Space", "pause", "pause and resume"), ("→", "next", "the next experiment"),
                  ("←", "previous", "the previous experiment"), ("H", "hide", "hide or show the card"),
                  ("F", "full screen", "full screen on or off"), ("Esc", "stop", "end the demo"))
KEYS_HINT = " · ".join(f"{key} {short}" for key, short, _what in PRESENTER_KEYS)
MAX_PAIRS = 6                  # a result card's figures: more would not be read from a screen
HEADING, BODY, DETAIL = 2.0, 1.35, 1.1      # sizes against the application font (already demo-scaled)
SMALLEST_FIT = 0.6             # a card too tall for the screen is drawn smaller, down to this share


def verdict_colour(verdict: str) -> str:
    theme = current_theme()
    return {HOLDS: OKABE_ITO["bluish_green"], STRONGER: theme.accent, WEAKER: OKABE_ITO["orange"],
            NOT_HOLD: theme.error, INCONCLUSIVE: theme.muted, NOT_MEASURED: theme.muted}.get(verdict, theme.text)


class PauseSign(QLabel):
    """Over the charts while a paused demo's run holds: the audience sees that it waits (a card
    says so in its own state line)."""

    def __init__(self, parent: QWidget):
        super().__init__("❚❚  Paused · Space resumes", parent)
        self.setObjectName("demo_pause_sign")
        self.setAutoFillBackground(True)
        self.setMargin(16)
        font = QFont(self.font())
        font.setPointSizeF((font.pointSizeF() if font.pointSizeF() > 0 else 10.0) * BODY)
        font.setBold(True)
        self.setFont(font)
        self.hide()

    def place(self, area) -> None:
        """At the top right of ``area`` (a QRect in the parent's coordinates)."""
        self.adjustSize()
        self.move(area.right() - self.width() - 24, area.top() + 24)
        self.raise_()


class DemoCard(QFrame):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._shrink = 1.0          # < 1 while the card's text is too tall for it at full size
        self.setObjectName("demo_card")
        self.setAutoFillBackground(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(64, 48, 64, 32)
        self.kicker = self._label(DETAIL, muted=True)
        self.heading = self._label(HEADING, bold=True)
        self.body = self._label(BODY)
        self.watch = self._label(BODY)
        self.figures = QGridLayout()
        self.figures.setHorizontalSpacing(32)
        self.reversed = self._label(BODY)                   # figures standing the other way round here
        self.reversed.setProperty("role", "warning")
        self.verdicts = self._label(BODY)
        self.verdicts.setTextFormat(Qt.TextFormat.RichText)
        self.note = self._label(DETAIL, muted=True)         # where each side was measured
        self.state = self._label(DETAIL, muted=True)        # "paused", "replay of runs recorded ..."
        self.keys = self._label(DETAIL * 0.8, muted=True)
        self.keys.setText(KEYS_HINT)
        outer.addStretch(1)
        for widget in (self.kicker, self.heading, self.body, self.watch):
            outer.addWidget(widget)
        outer.addSpacing(16)
        outer.addLayout(self.figures)
        outer.addWidget(self.reversed)
        outer.addSpacing(16)
        outer.addWidget(self.verdicts)
        outer.addSpacing(12)
        outer.addWidget(self.note)
        outer.addStretch(2)
        outer.addWidget(self.state)
        outer.addWidget(self.keys)
        self._figure_labels: list[QLabel] = []
        self.kind = ""
        theme_notifier().changed.connect(self._on_theme)   # a bound slot: gone with the card
        self._restyle()

    # ---- the three cards ------------------------------------------------------------------------
    def show_title(self, title: str, question: str, watch: str, position: str) -> None:
        self._reset("title")
        self.kicker.setText(position)
        self.heading.setText(title)
        self.body.setText(question)
        self.watch.setText(f"Watch: {watch}" if watch else "")
        self._settle()

    def show_starting(self, run: str, position: str, watch: str = "") -> None:
        """Between a beat's runs: which run comes, while its process lays out data and warms up, and
        what to watch once it does."""
        self._reset("starting")
        self.kicker.setText(position)
        self.heading.setText(run)
        self.body.setText("starting: its data is laid out and warmed up, then the charts follow")
        self.watch.setText(f"Watch: {watch}" if watch else "")
        self._settle()

    def show_result(self, card, position: str) -> None:
        """``card``: a ``story.ResultCard``."""
        self._reset("result")
        self.kicker.setText(f"{position} · the result")
        self.heading.setText(card.title)
        if card.pairs:
            self._figure_row(0, ("", "published", "measured here"), header=True)
            for row, pair in enumerate(card.pairs[:MAX_PAIRS], start=1):
                self._figure_row(row, (pair.figure, pair.published, pair.measured))
        else:
            self.body.setText("The report answered this experiment in findings, not in figures: here they are, "
                              "measured.")
        self.reversed.setText("\n".join(card.reversals))
        self.note.setText(card.scales)
        self.verdicts.setText(self._verdict_lines(card.findings) or
                              "No finding of the report rests on this experiment alone; the summary has them all.")
        self._settle()

    def show_summary(self, findings: list, replayed: str = "") -> None:
        self._reset("summary")
        held = sum(f.verdict in (HOLDS, STRONGER, WEAKER) for f in findings)
        self.kicker.setText("Summary" + (f" · {replayed}" if replayed else ""))
        self.heading.setText(f"{held} of {len(findings)} findings hold on this machine" if findings
                             else "No finding was measured")
        said = {f.verdict for f in findings}
        self.body.setText("; ".join(text for verdict, text in (
            (WEAKER, "“holds, more weakly”: the same direction, a smaller effect"),
            (INCONCLUSIVE, f"“inconclusive”: a repeat of one run can land ±{CROSS_RUN_BAND * 100:.0f} % away, "
                           "and that would change it"),
            (NOT_MEASURED, "“not measured”: this demo's size could not show it")) if verdict in said))
        self.verdicts.setText(self._verdict_lines(findings))
        self._settle()

    def set_state(self, text: str) -> None:
        self.state.setText(text)
        self._settle()

    def text(self) -> str:
        """Every text the card shows now, in reading order (tests, and the demo's own checks)."""
        labels = [self.kicker, self.heading, self.body, self.watch, *self._figure_labels, self.reversed, self.verdicts,
                  self.note, self.state]
        return "\n".join(label.text() for label in labels if label.text())

    # ---- internals --------------------------------------------------------------------------
    def _settle(self) -> None:
        """Empty lines take no room (they left a blank band over a summary's findings), and the
        whole card fits: text too tall for the screen is drawn smaller, to SMALLEST_FIT of its size,
        rather than its last findings cut off (6 findings at 1366x768)."""
        for label in (self.kicker, self.body, self.watch, self.reversed, self.verdicts, self.note, self.state):
            label.setVisible(bool(label.text()))
        if self.width() <= 0 or self.height() <= 0:
            return
        self._shrink = 1.0
        self._restyle()
        layout = self.layout()
        while self._shrink > SMALLEST_FIT and layout.totalHeightForWidth(self.width()) > self.height():
            self._shrink = round(self._shrink - 0.05, 2)
            self._restyle()

    def fits(self) -> bool:
        """Whether every line of the card is on it (its text no taller than the card)."""
        return self.layout().totalHeightForWidth(self.width()) <= self.height()

    def _verdict_lines(self, findings: list) -> str:
        lines = []
        for f in findings:
            why = f" — {html.escape(f.why)}" if f.why else ""
            lines.append(f"<span style='color:{verdict_colour(f.verdict)}'><b>{html.escape(f.verdict)}</b></span>: "
                         f"{html.escape(f.statement)}, published {html.escape(f.published)}, "
                         f"here {html.escape(f.measured)}{why}")
        return "<br>".join(lines)

    def _figure_row(self, row: int, cells: tuple[str, str, str], header: bool = False) -> None:
        for column, text in enumerate(cells):
            label = self._label(BODY if not header else DETAIL, bold=column == 2 and not header, muted=header)
            label.setText(text)
            if column:
                label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            label.setWordWrap(False)        # a row keeps its line: a full card squeezes its stretch, never a row
            self.figures.addWidget(label, row, column)
            self._figure_labels.append(label)
        self.figures.setColumnStretch(0, 1)

    def _reset(self, kind: str) -> None:
        self.kind = kind
        for label in (self.kicker, self.heading, self.body, self.watch, self.reversed, self.verdicts, self.note):
            label.setText("")
        for label in self._figure_labels:
            self.figures.removeWidget(label)
            label.deleteLater()
        self._figure_labels = []

    def _label(self, scale: float, bold: bool = False, muted: bool = False) -> QLabel:
        label = QLabel(wordWrap=True)
        label.setTextFormat(Qt.TextFormat.PlainText)      # the verdicts alone are rich text (escaped)
        label.setProperty("scale", scale)
        label.setProperty("bold", bold)
        if muted:
            label.setProperty("role", "muted")
        self._size(label)
        return label

    def _on_theme(self, _theme) -> None:
        self._restyle()

    def _restyle(self) -> None:
        for label in self.findChildren(QLabel):
            self._size(label)

    def _size(self, label: QLabel) -> None:
        """Headings larger than body at any application font (demo mode scales it)."""
        base = self.font().pointSizeF() if self.font().pointSizeF() > 0 else 10.0
        font = QFont(label.font())
        shrink = 1.0 if label is getattr(self, "keys", None) else self._shrink
        font.setPointSizeF(base * float(label.property("scale") or 1.0) * shrink)
        font.setBold(bool(label.property("bold")))
        label.setFont(font)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.oldSize() != event.size():
            self._settle()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._settle()
