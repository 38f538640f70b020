"""ExperimentRow: one experiment of a report card in the gallery (``widgets.reports.gallery``).

The row picks a size (tiny by default, with what it will cost here: time, memory, disk), the
database under test (the embedded DuckDB by default) and, when the report compared with another
system, which of the configured targets plays it; Run starts it. Where the report says how it
drove DolphinDB (node policy, protocol, compression, replicas), the row shows that method with its
sections, whether the runs use it ("Use the report's method", on by default) and where the chosen
target's own settings differ from it.
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFrame, QHBoxLayout, QLabel, QMessageBox, QPushButton,
                               QVBoxLayout, QWidget)

from widgets.common.flow_layout import FlowLayout
from widgets.common.theme import Theme, current_theme
from workloads.reproduce.catalog import DEFAULT_SUBJECT, SIZE_TEXT, Experiment
from workloads.reproduce.estimate import Estimate, estimate
from workloads.reproduce.method import summary as method_summary
from workloads.scenario import SIZES, Scenario
from workloads.text import plural

Target = tuple[str, str, str, dict[str, Any]]          # key, label, kind, config (as the targets panel gives)
EMBEDDED: Target = (DEFAULT_SUBJECT, "DuckDB (embedded)", DEFAULT_SUBJECT, None)  # config None: its default place


def _label(text: str = "", *, name: str = "", muted: bool = False, rich: bool = False, wrap: bool = True) -> QLabel:
    label = QLabel(text, objectName=name, wordWrap=wrap)
    if muted:
        label.setProperty("role", "muted")
    if rich:
        label.setTextFormat(Qt.TextFormat.RichText)
    else:
        label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def _pair(label: QLabel, field: QWidget) -> QWidget:
    """A label and its picker, kept on one line when the controls wrap."""
    box = QWidget()
    layout = QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(label)
    layout.addWidget(field)
    return box


def scenario_target_config(key: str, kind: str, config: dict | None) -> dict | None:
    """As the scenario builder fills it: a server profile's key travels with its config so the
    window can add the password at run time; a local target's config is its own."""
    if config is None:
        return None                # the engine's default place under the data folder
    return {**config, "target_key": key} if key != kind else dict(config)


class ExperimentRow(QFrame):
    """One experiment: what it asks, its size and cost, where it runs, and Run."""

    run_requested = Signal(list)        # Scenarios
    estimate_changed = Signal()         # its size, targets or this machine's calibration changed it

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
        self.size_combo.setToolTip("How much data and how long each step runs (the estimate beside it says how long here): "
                                   "tiny is a quick look, the report's own scale may take hours and a server's disks")
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

        # the controls wrap onto a second line when the card is narrower than they are (a laptop's
        # screen, demo mode's large fonts): a label stays beside its picker, Run is never cut off
        controls = FlowLayout(spacing=12)
        self.versus_label = QLabel("Versus:")
        pairs = [_pair(QLabel("Size:"), self.size_combo), _pair(QLabel("On:"), self.subject_combo)]
        self.versus_box = _pair(self.versus_label, self.comparator_combo)
        for widget in (*pairs, self.versus_box, self.method_check, self.run_button):
            controls.addWidget(widget)
        for combo in (self.size_combo, self.subject_combo, self.comparator_combo):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(16)
        comparing = bool(experiment.comparator)
        for widget in (self.versus_box, self.versus_label, self.comparator_combo, self.needs_label):
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
        return kind, scenario_target_config(key, kind, config)

    def _comparator(self) -> tuple[str | None, dict | None]:
        key = self.comparator_combo.currentData() if self.experiment.comparator else None
        if key is None or key not in self._targets:
            return None, None
        key, _label, kind, config = self._targets[key]
        return kind, scenario_target_config(key, kind, config)

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
        self.estimate_changed.emit()

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
