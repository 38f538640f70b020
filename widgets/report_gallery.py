"""ReportGallery: the start page that reproduces the five reports, one card per report.

A card says what the report asked and found, and lists its experiments. Each experiment row picks a
size (tiny by default, with what it will cost here: time, memory, disk), the database under test
(the embedded DuckDB by default) and, when the report compared with another system, which of the
configured targets plays it; Run starts it. Where the report says how it drove DolphinDB (node
policy, protocol, compression, replicas), the row shows that method with its sections, whether
the runs use it ("Use the report's method", on by default) and where the chosen target's own
settings differ from it. Once runs exist the card shows the published figures
beside the measured ones and the findings as ratios with a verdict, each linked to its runs.

A view only: it never reads the results or starts anything. The window gives it the targets
(``set_targets``) and each report's reproduction (``set_reproduction``, read off the GUI thread)
and listens to ``run_requested(list[Scenario])`` and ``run_clicked(run_id)``.
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFrame, QGridLayout, QHBoxLayout, QLabel, QMessageBox,
                               QPushButton, QScrollArea, QToolButton, QVBoxLayout, QWidget)

from widgets.theme import OKABE_ITO, Theme, current_theme, theme_notifier
from widgets.wheel_guard import guard_wheel
from workloads.reproduce.catalog import (DEFAULT_SUBJECT, REPORTS, SIZE_TEXT, SIZES, Experiment, ReportCard,
                                        gallery_scenarios)
from workloads.reproduce.estimate import Estimate, estimate
from workloads.reproduce.findings import INCONCLUSIVE, NOT_HOLD, NOT_MEASURED, Finding
from workloads.reproduce.method import summary as method_summary
from workloads.reproduce.published import Pair
from workloads.reproduce.reproduction import Reproduction
from workloads.scenario import Scenario
from workloads.text import plural

Target = tuple[str, str, str, dict[str, Any]]          # key, label, kind, config (as the targets panel gives)
EMBEDDED: Target = (DEFAULT_SUBJECT, "DuckDB (embedded)", DEFAULT_SUBJECT, None)  # config None: its default place
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


def _label(text: str = "", *, name: str = "", muted: bool = False, rich: bool = False, wrap: bool = True) -> QLabel:
    label = QLabel(text, objectName=name, wordWrap=wrap)
    if muted:
        label.setProperty("role", "muted")
    if rich:
        label.setTextFormat(Qt.TextFormat.RichText)
    else:
        label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def _target_config(key: str, kind: str, config: dict | None) -> dict | None:
    """As the scenario builder fills it: a server profile's key travels with its config so the
    window can add the password at run time; a local target's config is its own."""
    if config is None:
        return None                # the engine's default place under the data folder
    return {**config, "target_key": key} if key != kind else dict(config)


class ExperimentRow(QFrame):
    """One experiment: what it asks, its size and cost, where it runs, and Run."""

    run_requested = Signal(list)        # Scenarios

    def __init__(self, experiment: Experiment, data_dir: Path | None, parent: QWidget | None = None):
        super().__init__(parent)
        self.experiment = experiment
        self._data_dir = data_dir
        self._targets: dict[str, Target] = {}
        self._calibration = None          # workloads.reproduce.calibration.Calibration, once read
        self.setObjectName(f"experiment_{experiment.report}_{experiment.key}")
        self.title_label = _label(f"<b>{html.escape(experiment.title)}</b> — {html.escape(experiment.question)}",
                                  name="experiment_title", rich=True)
        self.size_combo = QComboBox(objectName="size")
        for size in SIZES:
            if size in experiment.sizes:
                self.size_combo.addItem(SIZE_TEXT[size], size)
        self.size_combo.setToolTip("How much data and how long each step runs: tiny takes under a minute, "
                                   "the report's own scale may take hours and a server's disks")
        self.subject_combo = QComboBox(objectName="subject")
        self.subject_combo.setToolTip("The database under test, in the report's DolphinDB's place")
        self.comparator_combo = QComboBox(objectName="comparator")
        self.comparator_combo.setToolTip(f"What the report compared it with: {experiment.needs}")
        self.run_button = QPushButton("Run", objectName="run_experiment")
        self.run_button.setToolTip(f"Run “{experiment.title}” at the chosen size, one run per arm, "
                                   "one after another")
        self.estimate_label = _label(name="estimate")
        self.needs_label = _label(name="needs", muted=True)
        self.method_check = QCheckBox("Use the report's method", objectName="use_method", checked=True)
        self.method_check.setToolTip("On a DolphinDB target, run with the node policy, protocol and compression "
                                     "the report used (its sections are cited); off: with your target's own "
                                     "settings")
        self.method_label = _label(name="method", rich=True)

        controls = QHBoxLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        controls.addWidget(QLabel("Size:"))
        controls.addWidget(self.size_combo)
        controls.addSpacing(8)
        controls.addWidget(QLabel("On:"))
        controls.addWidget(self.subject_combo)
        self.versus_label = QLabel("Versus:")
        controls.addSpacing(8)
        controls.addWidget(self.versus_label)
        controls.addWidget(self.comparator_combo)
        controls.addSpacing(8)
        controls.addWidget(self.method_check)
        controls.addStretch(1)
        controls.addWidget(self.run_button)
        for combo in (self.size_combo, self.subject_combo, self.comparator_combo):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(16)
        comparing = bool(experiment.comparator)
        for widget in (self.versus_label, self.comparator_combo, self.needs_label):
            widget.setVisible(comparing)
        has_method = bool(experiment.methods())
        for widget in (self.method_check, self.method_label):
            widget.setVisible(has_method)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 6)
        layout.setSpacing(3)
        layout.addWidget(self.title_label)
        layout.addLayout(controls)
        layout.addWidget(self.estimate_label)
        layout.addWidget(self.needs_label)
        layout.addWidget(self.method_label)

        self.size_combo.currentIndexChanged.connect(self._update_estimate)
        self.subject_combo.currentIndexChanged.connect(self._update_estimate)
        self.subject_combo.currentIndexChanged.connect(self._update_method)
        self.method_check.toggled.connect(self._update_method)
        self.comparator_combo.currentIndexChanged.connect(self._update_needs)
        self.comparator_combo.currentIndexChanged.connect(self._update_estimate)
        self.run_button.clicked.connect(self._request_run)
        self.set_targets([EMBEDDED])

    # ---- what it offers ---------------------------------------------------------------------
    def set_targets(self, targets: list[Target]) -> None:
        """The configured targets; keeps the current choices where they still exist."""
        self._targets = {t[0]: t for t in targets}
        if DEFAULT_SUBJECT not in self._targets:
            self._targets[DEFAULT_SUBJECT] = EMBEDDED
        subject = self.subject_combo.currentData() or DEFAULT_SUBJECT
        self._fill(self.subject_combo, list(self._targets.values()), subject, DEFAULT_SUBJECT)
        if self.experiment.comparator:
            current = self.comparator_combo.currentData()
            matching = [t for t in targets if t[2] == self.experiment.comparator]
            fresh = self.comparator_combo.count() == 0
            self._fill(self.comparator_combo, matching, current, matching[0][0] if matching else None)
            if matching:
                self.comparator_combo.addItem("leave it out", None)
                if not fresh and current is None:
                    self.comparator_combo.setCurrentIndex(self.comparator_combo.count() - 1)
            self.comparator_combo.setEnabled(bool(matching))
        self._update_estimate()
        self._update_needs()
        self._update_method()

    @staticmethod
    def _fill(combo: QComboBox, targets: list[Target], current: str | None, default: str | None) -> None:
        combo.blockSignals(True)
        combo.clear()
        for key, label, _kind, _config in targets:
            combo.addItem(label, key)
        index = combo.findData(current) if current is not None else -1
        combo.setCurrentIndex(index if index >= 0 else max(combo.findData(default), 0))
        combo.blockSignals(False)

    # ---- choices ----------------------------------------------------------------------------
    @property
    def size(self) -> str:
        return self.size_combo.currentData()

    def set_size(self, size: str) -> None:
        self.size_combo.setCurrentIndex(self.size_combo.findData(size))

    def _subject(self) -> tuple[str, dict | None]:
        key, _label, kind, config = self._targets[self.subject_combo.currentData() or DEFAULT_SUBJECT]
        return kind, _target_config(key, kind, config)

    def _comparator(self) -> tuple[str | None, dict | None]:
        key = self.comparator_combo.currentData() if self.experiment.comparator else None
        if key is None or key not in self._targets:
            return None, None
        key, _label, kind, config = self._targets[key]
        return kind, _target_config(key, kind, config)

    def set_calibration(self, calibration) -> None:
        """This machine's runs beside the model: the estimate becomes their range."""
        self._calibration = calibration
        self._update_estimate()

    def estimate(self) -> Estimate:
        return estimate(self.experiment, self.size, subject=self._subject()[0], data_dir=self._data_dir,
                        comparator=self._comparator()[0], calibration=self._calibration)

    def scenarios(self) -> list[Scenario]:
        """The runs Run starts: every arm at the chosen size, the comparator's only if one is chosen."""
        subject, subject_config = self._subject()
        comparator, comparator_config = self._comparator()
        return [scenario for _arm, scenario in self.experiment.scenarios(
            self.size, subject=subject, subject_config=subject_config, comparator=comparator,
            comparator_config=comparator_config, data_dir=self._data_dir,
            use_method=self.method_check.isChecked())]

    # ---- reactions --------------------------------------------------------------------------
    def _update_estimate(self, *_args) -> None:
        found = self.estimate()
        runs = len(self.scenarios())
        self.estimate_label.setText(f"{plural(runs, 'run')}, {found.text}")
        self.estimate_label.setProperty("fits", found.fits)
        self.restyle()

    def _update_needs(self, *_args) -> None:
        if not self.experiment.comparator:
            return
        needs = f"Needs {self.experiment.needs}"
        if self.comparator_combo.count() == 0:
            text = f"{needs}: none is configured, so the comparator side is left out (add one under Targets, or press Start local engine… there)."
        elif self.comparator_combo.currentData() is None:
            text = f"{needs}: the comparator side is left out."
        else:
            text = f"{needs}: runs on {self.comparator_combo.currentText()}."
        self.needs_label.setText(text)

    def _update_method(self, *_args) -> None:
        """The report's method, whether these runs use it, and where the target's settings differ."""
        groups = self.experiment.methods()
        if not groups:
            return
        kind, config = self._subject()
        found = method_summary(groups, kind, config, self.method_check.isChecked())
        self.method_label.setText(found.html)
        self.method_label.setProperty("differs", found.differs)
        self.restyle()

    def restyle(self, theme: Theme | None = None) -> None:
        theme = theme or current_theme()
        self.method_label.setStyleSheet(f"color: {theme.warning};" if self.method_label.property("differs")
                                        else f"color: {theme.muted};")
        fits = self.estimate_label.property("fits") is not False
        self.estimate_label.setStyleSheet(f"color: {theme.muted};" if fits
                                          else f"color: {theme.warning}; font-weight: bold;")

    def _request_run(self) -> None:
        found = self.estimate()
        if not found.fits:
            answer = QMessageBox.question(
                self, "Larger than this machine", f"{self.experiment.title} at {self.size} size: {found.text}."
                "\n\nRun anyway?", QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No)
            if answer != QMessageBox.StandardButton.Yes:
                return
        self.run_requested.emit(self.scenarios())


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
        self.title_label = _label(f"Report {card.report} · {card.title}", name="report_title")
        font = self.title_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.3)
        font.setBold(True)
        self.title_label.setFont(font)
        self.run_all_button = QPushButton("Run the whole report", objectName="run_report")
        self.run_all_button.setToolTip("Every experiment of this report, each at the size and on the targets "
                                       "chosen on its row, one after another")
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
        layout.addWidget(self.asked_label)
        layout.addWidget(self.found_label)
        layout.addWidget(_label(f"{plural(len(card.experiments), 'experiment')}:", name="experiments_heading",
                                rich=False))
        for experiment in card.experiments:
            row = ExperimentRow(experiment, data_dir)
            row.run_requested.connect(self.run_requested)
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

    def set_targets(self, targets: list[Target]) -> None:
        for row in self.rows.values():
            row.set_targets(targets)

    def set_calibration(self, calibration) -> None:
        for row in self.rows.values():
            row.set_calibration(calibration)

    def _request_all(self) -> None:
        self.run_requested.emit([s for row in self.rows.values() for s in row.scenarios()])

    # ---- the reproduction ---------------------------------------------------------------------
    def set_reproduction(self, reproduction: Reproduction) -> None:
        self.reproduction = reproduction
        if not reproduction.runs:
            self.results.hide()
            return
        self.results_heading.setText(
            f"<b>Yours</b>, from {plural(len(reproduction.run_ids), 'run')} at {html.escape(reproduction.size)} "
            "size on this machine, beside the report's published figures:")
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
                if column == 3 and pair.measured_value is None:
                    cell.setStyleSheet(f"color: {theme.muted};")
                self.pairs_grid.addWidget(cell, row, column, Qt.AlignmentFlag.AlignTop)
        self.pairs_grid.setColumnStretch(1, 1)
        self.pairs_grid.setColumnStretch(0, 0)
        if not shown:
            self.pairs_grid.addWidget(_label("No published figure stands beside what ran yet.", muted=True),
                                      1, 0, 1, len(PAIR_COLUMNS))
        self.more_pairs_button.setVisible(bool(rest))
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
        text = (f"<b>{html.escape(finding.statement)}</b><br>published: {html.escape(finding.published)}, "
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


class ReportGallery(QWidget):
    """The five reports as cards; the window's start page."""

    run_requested = Signal(list)        # Scenarios to run one after another
    run_clicked = Signal(str)           # a run id

    def __init__(self, data_dir: Path | str | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("report_gallery")
        self._data_dir = Path(data_dir) if data_dir is not None else None
        self.title_label = _label("Reproduce the five reports", name="gallery_title")
        font = self.title_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        self.title_label.setFont(font)
        self.intro_label = _label(
            "Each report's experiments, run on this machine at the size you choose. Tiny runs take under a "
            "minute on the embedded DuckDB and need no server. Your figures stand beside the published ones, "
            "and the findings compare ratios, which travel across hardware where absolute times do not.",
            name="gallery_intro")
        self.demo_button = QPushButton("Run the five reports (demo playlist)", objectName="run_demo")
        self.demo_button.setToolTip("Every experiment of the five reports at tiny size on the embedded DuckDB, "
                                    "one after another; the comparator sides (Druid, MongoDB) are left out")
        self.cards: dict[str, ReportCardView] = {}

        page = QWidget(objectName="gallery_page")
        column = QVBoxLayout(page)
        column.setContentsMargins(16, 12, 16, 16)
        column.setSpacing(12)
        head = QHBoxLayout()
        head.addWidget(self.title_label, 1)
        head.addWidget(self.demo_button, 0, Qt.AlignmentFlag.AlignVCenter)
        column.addLayout(head)
        column.addWidget(self.intro_label)
        for report, card in REPORTS.items():
            view = ReportCardView(card, self._data_dir)
            view.run_requested.connect(self.run_requested)
            view.run_clicked.connect(self.run_clicked)
            self.cards[report] = view
            column.addWidget(view)
        column.addStretch(1)
        self.scroll = QScrollArea(widgetResizable=True, objectName="gallery_scroll")
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(page)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.scroll)

        self.demo_button.clicked.connect(self._request_demo)
        guard_wheel(self)                    # the wheel scrolls the gallery, never an unfocused combo
        theme_notifier().changed.connect(self._on_theme_changed)
        self._on_theme_changed(current_theme())

    # ---- data in ------------------------------------------------------------------------------
    def set_targets(self, targets: list[Target]) -> None:
        """(key, label, kind, config) of every usable target, as the targets panel lists them."""
        for card in self.cards.values():
            card.set_targets(list(targets))

    def set_reproduction(self, report: str, reproduction: Reproduction) -> None:
        self.cards[report].set_reproduction(reproduction)

    def set_calibration(self, calibration) -> None:
        """This machine's gallery runs beside the model (``workloads.reproduce.calibration``)."""
        for card in self.cards.values():
            card.set_calibration(calibration)

    def card(self, report: str) -> ReportCardView:
        return self.cards[report]

    def row(self, report: str, experiment: str) -> ExperimentRow:
        return self.cards[report].rows[experiment]

    # ---- requests out -------------------------------------------------------------------------
    def demo_scenarios(self) -> list[Scenario]:
        """The demo playlist: every experiment at tiny size on the embedded default, no comparator."""
        return gallery_scenarios(size="tiny", data_dir=self._data_dir)

    def _request_demo(self) -> None:
        self.run_requested.emit(self.demo_scenarios())

    def _on_theme_changed(self, theme: Theme) -> None:
        self.setStyleSheet(f"QFrame#report_card {{ border: 1px solid {theme.muted}; border-radius: 6px; }}")
        for card in self.cards.values():
            card.restyle(theme)
