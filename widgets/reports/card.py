"""ReportCardView: one report of the gallery (``widgets.reports.gallery``): what it asked and found,
its experiment rows, and once runs exist, the published figures beside the measured ones and the
findings as ratios with a verdict, each linked to its runs.
"""
from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QFrame, QGridLayout, QHBoxLayout, QLabel, QPushButton, QToolButton,
                               QVBoxLayout, QWidget)

from widgets.reports.experiment_row import ExperimentRow, Target, _label
from widgets.common.heading import HeadingLabel
from widgets.common.theme import OKABE_ITO, Theme, current_theme
from workloads.reproduce.catalog import ReportCard
from workloads.reproduce.estimate import together
from workloads.reproduce.findings import INCONCLUSIVE, NOT_HOLD, NOT_MEASURED, Finding
from workloads.reproduce.published import Pair
from workloads.reproduce.reproduction import Reproduction
from workloads.text import plural

RUN_LINK = "run:"
PAIR_COLUMNS = ("experiment", "figure", "published", "measured", "run")
_HOLDS_LIGHT = "#00745A"           # Okabe-Ito bluish green, darkened to read as text on white


def verdict_colour(verdict: str, theme: Theme | None = None) -> str:
    """Green when it holds (more or less strongly), red when it does not, grey when not measured,
    amber when the measurement is too noisy to say."""
    theme = theme or current_theme()
    if verdict.startswith(NOT_MEASURED):
        return theme.muted
    if verdict.startswith(INCONCLUSIVE):
        return theme.warning
    if verdict.startswith(NOT_HOLD):
        return theme.error
    return _HOLDS_LIGHT if theme.name == "light" else OKABE_ITO["bluish_green"]


def run_link(run_id: str) -> str:
    return f"<a href='{RUN_LINK}{html.escape(run_id)}'>{html.escape(run_id)}</a>"


class ReportCardView(QFrame):
    """One report: its question, what it found, its experiments, and once run, its reproduction."""

    run_requested = Signal(list)
    run_clicked = Signal(str)

    def __init__(self, card: ReportCard, data_dir: Path | None, parent: QWidget | None = None):
        super().__init__(parent)
        self.card = card
        self.reproduction: Reproduction | None = None
        self.setObjectName("report_card")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title_label = HeadingLabel(f"{card.heading} · {card.title}", 1.3, name="report_title")
        whole = "report" if card.published else "pack"
        self.run_all_button = QPushButton(f"Run the whole {whole}", objectName="run_report")
        self.run_all_button.setToolTip(f"Every experiment of this {whole}, each at the size and on the targets "
                                       "chosen on its row, one after another")
        self.total_label = _label(name="report_total", muted=True)
        self.asked_label = _label(f"<b>Asked:</b> {html.escape(card.asked)}", name="asked", rich=True)
        self.found_label = _label("<b>Found:</b>" + "".join(f"<br>&nbsp;• {html.escape(line)}" for line in card.found),
                                  name="found", rich=True)
        self.rows: dict[str, ExperimentRow] = {}

        head = QHBoxLayout()
        head.addWidget(self.title_label, 1)
        head.addWidget(self.run_all_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 10, 14, 12)
        layout.setSpacing(6)
        layout.addLayout(head)
        layout.addWidget(self.total_label)
        layout.addWidget(self.asked_label)
        layout.addWidget(self.found_label)
        layout.addWidget(_label(f"{plural(len(card.experiments), 'experiment')}:", name="experiments_heading",
                                rich=False))
        for experiment in card.experiments:
            row = ExperimentRow(experiment, data_dir)
            row.run_requested.connect(self.run_requested)
            row.estimate_changed.connect(self._update_total)
            self.rows[experiment.key] = row
            layout.addWidget(row)

        # the reproduction: hidden until this report has runs
        self.results = QWidget(objectName="reproduction")
        results = QVBoxLayout(self.results)
        results.setContentsMargins(0, 8, 0, 0)
        results.setSpacing(4)
        self.results_heading = _label(name="results_heading", rich=True)
        self.pairs_caption = _label("Published figures were measured on the report's hardware (hover a row "
                                    "to read it); yours on this machine. Compare them by their ratios below, "
                                    "not as absolute numbers.", name="pairs_caption", muted=True)
        self.pairs_grid_host = QWidget(objectName="pairs")
        self.pairs_grid = QGridLayout(self.pairs_grid_host)
        self.pairs_grid.setContentsMargins(0, 0, 0, 0)
        self.pairs_grid.setHorizontalSpacing(14)
        self.pairs_grid.setVerticalSpacing(2)
        self.more_pairs_button = QToolButton(objectName="more_pairs", checkable=True)
        self.more_pairs_button.setAutoRaise(True)
        self.more_pairs_button.toggled.connect(self._show_pairs)
        self.findings_heading = _label("<b>Findings, as ratios</b>", name="findings_heading", rich=True)
        self.findings_host = QWidget(objectName="findings")
        self.findings_layout = QVBoxLayout(self.findings_host)
        self.findings_layout.setContentsMargins(0, 0, 0, 0)
        self.findings_layout.setSpacing(6)
        for widget in (self.results_heading, self.pairs_grid_host, self.more_pairs_button, self.pairs_caption,
                       self.findings_heading, self.findings_host):
            results.addWidget(widget)
        results.setAlignment(self.more_pairs_button, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.results)
        self.results.hide()
        self.run_all_button.clicked.connect(self._request_all)
        self._update_total()

    def set_targets(self, targets: list[Target]) -> None:
        for row in self.rows.values():
            row.set_targets(targets)

    def set_calibration(self, calibration) -> None:
        for row in self.rows.values():
            row.set_calibration(calibration)

    def _update_total(self) -> None:
        """What "Run the whole report" would take: its rows' estimates, one after another."""
        if len(self.rows) < len(self.card.experiments):     # still adding the rows
            return
        runs = sum(len(row.scenarios()) for row in self.rows.values())
        total = together([row.estimate() for row in self.rows.values()])
        self.total_label.setText(f"The whole {'report' if self.card.published else 'pack'}: {plural(runs, 'run')}, "
                                 f"{total.text}")

    def _request_all(self) -> None:
        self.run_requested.emit([s for row in self.rows.values() for s in row.scenarios()])

    # ---- the reproduction ---------------------------------------------------------------------
    def set_reproduction(self, reproduction: Reproduction) -> None:
        self.reproduction = reproduction
        if not reproduction.runs:
            self.results.hide()
            return
        beside = "beside the report's published figures:" if self.card.published else \
            "no published figures stand beside them (this pack is not from a report):"
        self.results_heading.setText(
            f"<b>Yours</b>, from {plural(len(reproduction.run_ids), 'run')} at {html.escape(reproduction.size)} "
            f"size on this machine, {beside}")
        for widget in (self.pairs_grid_host, self.pairs_caption):
            widget.setVisible(self.card.published)
        self.findings_heading.setText("<b>Findings, as ratios</b>" if self.card.published else
                                      "<b>Findings, as ratios between your engines</b>")
        self._show_pairs()
        self._show_findings()
        self.results.show()

    def _pairs(self) -> tuple[list[Pair], list[Pair]]:
        """Pairs of the experiments that ran, and the rest (shown on request)."""
        repro = self.reproduction
        ran = {exp.title for exp in self.card.experiments if any(key == exp.key for key, _arm in repro.runs)}
        shown = [p for p in repro.pairs if p.experiment in ran or p.measured_value is not None]
        return shown, [p for p in repro.pairs if p not in shown]

    def _show_pairs(self, *_args) -> None:
        if self.reproduction is None:
            return
        _clear(self.pairs_grid)
        shown, rest = self._pairs()
        if self.more_pairs_button.isChecked():
            shown = shown + rest
        theme = current_theme()
        for column, title in enumerate(("Experiment", "Figure", "Published", "Yours", "Run")):
            header = _label(f"<b>{title}</b>", rich=True, wrap=False)
            self.pairs_grid.addWidget(header, 0, column)
        previous = None
        for row, pair in enumerate(shown, start=1):
            hardware = f"Published on: {pair.hardware}"
            experiment = pair.experiment if pair.experiment != previous else ""     # once per group
            previous = pair.experiment
            cells = (_label(experiment, wrap=False), _label(pair.figure), _label(pair.published, wrap=False),
                     _label(pair.measured, wrap=False), self._link_label(pair.run_id) if pair.run_id else _label(""))
            for column, cell in enumerate(cells):
                if column < 4:                        # the run column keeps its link's name
                    cell.setObjectName(f"pair_{PAIR_COLUMNS[column]}")
                    cell.setToolTip(hardware)
                if (column == 3 and pair.measured_value is None) or not pair.applies:
                    cell.setStyleSheet(f"color: {theme.muted};")     # a DolphinDB-only row: greyed, whole
                self.pairs_grid.addWidget(cell, row, column, Qt.AlignmentFlag.AlignTop)
        self.pairs_grid.setColumnStretch(1, 1)
        self.pairs_grid.setColumnStretch(0, 0)
        if not shown:
            self.pairs_grid.addWidget(_label("No published figure stands beside what ran yet.", muted=True),
                                      1, 0, 1, len(PAIR_COLUMNS))
        self.more_pairs_button.setVisible(bool(rest) and self.card.published)
        self.more_pairs_button.setText(
            "▾ Hide the figures of experiments not run yet" if self.more_pairs_button.isChecked()
            else f"▸ Show the {plural(len(rest), 'published figure')} of experiments not run yet")

    def _show_findings(self) -> None:
        _clear(self.findings_layout)
        theme = current_theme()
        for finding in self.reproduction.findings:
            self.findings_layout.addWidget(self._finding_widget(finding, theme))

    def _finding_widget(self, finding: Finding, theme: Theme) -> QWidget:
        box = QWidget(objectName="finding")
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(1)
        colour = verdict_colour(finding.verdict, theme)
        why = f", {html.escape(finding.why)}" if finding.why else ""
        measured = finding.measured if finding.measured_value is not None else "none yet"
        published = f"published: {html.escape(finding.published)}, " if self.card.published else ""
        text = (f"<b>{html.escape(finding.statement)}</b><br>{published}"
                f"yours: {html.escape(measured)} — "
                f"<span style='color:{colour}; font-weight:bold'>{html.escape(finding.verdict)}</span>{why}")
        line = _label(text, name="finding_line", rich=True)
        line.setProperty("verdict", finding.verdict)
        layout.addWidget(line)
        if finding.run_ids:
            runs = QHBoxLayout()
            runs.setContentsMargins(0, 0, 0, 0)
            runs.setSpacing(12)
            runs.addWidget(_label("runs:", muted=True, wrap=False))
            for run_id in finding.run_ids:
                runs.addWidget(self._link_label(run_id))
            runs.addStretch(1)
            layout.addLayout(runs)
        return box

    def _link_label(self, run_id: str) -> QLabel:
        label = _label(run_link(run_id), name="run_link", rich=True, wrap=False)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse
                                      | Qt.TextInteractionFlag.LinksAccessibleByKeyboard)
        label.setToolTip(f"Open run {run_id}")
        label.setProperty("run_id", run_id)
        label.linkActivated.connect(self._on_link)
        return label

    def _on_link(self, link: str) -> None:
        if link.startswith(RUN_LINK):
            self.run_clicked.emit(link[len(RUN_LINK):])

    def restyle(self, theme: Theme) -> None:
        for row in self.rows.values():
            row.restyle(theme)
        if self.reproduction is not None and self.reproduction.runs:
            self._show_pairs()
            self._show_findings()


def _clear(layout) -> None:
    while layout.count():
        item = layout.takeAt(0)
        widget = item.widget()
        if widget is not None:
            widget.hide()
            widget.setParent(None)         # gone from the children at once, deleted soon
            widget.deleteLater()
        elif item.layout() is not None:
            _clear(item.layout())
