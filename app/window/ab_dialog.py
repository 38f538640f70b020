"""Run → Compare by running…, and the Targets dock's "Compare by running with…": the scenario in
the form on target X against the same on target Y, or against the same with one parameter changed,
run as interleaved pairs of repetitions by ``tickbench ab`` in a child process (``app.window.ab_job``),
its answer drawn by ``widgets.history.ab_view``.

The dialog only hides when closed during a session: the session goes on (its runs land in the
catalog) and the menu shows it again. Stop keeps what was measured; the window's closing stops it."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QButtonGroup, QComboBox, QDialog, QDoubleSpinBox, QFormLayout, QGroupBox,
                               QHBoxLayout, QLabel, QLineEdit, QPushButton, QRadioButton, QSpinBox, QVBoxLayout,
                               QWidget)

from app.window.ab_job import AbJob, AbOutcome
from widgets.history.ab_view import AbView
from workloads.operations import get_workload
from workloads.scenario import Scenario, run_name, scenario_differences

Target = tuple[str, str, str, dict[str, Any]]          # (key, label, kind, config), as TargetsPanel.targets()
STOP_WAIT_MS = 15_000


def on_target(scenario: Scenario, target: Target) -> Scenario:
    """The scenario on another target, as the form would build it with that target chosen."""
    key, _label, kind, config = target
    return scenario.with_changes(target=kind, target_config={**config, "target_key": key} if key != kind
                                 else dict(config))


class AbDialog(QDialog):
    session_finished = Signal(object)        # AbOutcome

    def __init__(self, results: Path, parent: QWidget | None = None,
                 resolve: Callable[[Scenario], Scenario | None] = lambda s: s,
                 busy: Callable[[], bool] = lambda: False):
        super().__init__(parent)
        self.setObjectName("ab_dialog")
        self.setWindowTitle("Compare by running")
        self.resolve, self.busy = resolve, busy
        self.scenario: Scenario | None = None
        self._targets: list[Target] = []
        self.job = AbJob(results, self)
        self.job.progressed.connect(self._progressed)
        self.job.finished.connect(self._finished)

        self.scenario_label = QLabel(objectName="ab_scenario")
        self.scenario_label.setTextFormat(Qt.TextFormat.PlainText)
        self.scenario_label.setWordWrap(True)
        self.a_target = QComboBox(objectName="ab_a_target")
        self.by_target = QRadioButton("the same on", objectName="ab_by_target")
        self.b_target = QComboBox(objectName="ab_b_target")
        self.by_param = QRadioButton("the same with", objectName="ab_by_param")
        self.param_combo = QComboBox(objectName="ab_param")
        self.param_value = QLineEdit(objectName="ab_param_value")
        self.param_value.setPlaceholderText("B's value")
        group = QButtonGroup(self)
        for button in (self.by_target, self.by_param):
            group.addButton(button)
        self.by_target.setChecked(True)
        self.pairs_spin = QSpinBox(objectName="ab_max_pairs", minimum=1, maximum=500, value=20)
        self.pairs_spin.setSuffix(" pairs at most")
        self.smallest_spin = QDoubleSpinBox(objectName="ab_smallest", minimum=0.5, maximum=50, value=5.0,
                                            decimals=1, singleStep=0.5)
        self.smallest_spin.setSuffix(" %")
        self.smallest_spin.setToolTip("The smallest change worth seeing: the session stops once no change this "
                                      "size is left, or a difference is clear")
        self.param_combo.currentIndexChanged.connect(self._param_chosen)

        form = QFormLayout()
        form.addRow("A:", self._row(QLabel("on"), self.a_target))
        form.addRow("B:", self._row(self.by_target, self.b_target))
        form.addRow("", self._row(self.by_param, self.param_combo, QLabel("="), self.param_value))
        form.addRow("Pairs:", self._row(self.pairs_spin, QLabel("smallest change worth seeing:"),
                                        self.smallest_spin))
        self.setup = QGroupBox("What to compare", objectName="ab_setup")
        setup = QVBoxLayout(self.setup)
        setup.addWidget(self.scenario_label)
        setup.addLayout(form)

        self.view = AbView()
        self.start_button = QPushButton("Start", objectName="ab_start")
        self.start_button.setDefault(True)
        self.stop_button = QPushButton("Stop", objectName="ab_stop")
        self.stop_button.setToolTip("End the session now: the run under way is cancelled, what was measured is kept")
        self.close_button = QPushButton("Close", objectName="ab_close")
        self.start_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.close_button.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.start_button, self.stop_button, self.close_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.setup)
        layout.addWidget(self.view, 1)
        layout.addLayout(buttons)
        self._set_running(False)
        self.resize(920, 600)

    @staticmethod
    def _row(*widgets: QWidget) -> QHBoxLayout:
        row = QHBoxLayout()
        for widget in widgets:
            row.addWidget(widget)
        row.addStretch(1)
        return row

    # ---- the sides --------------------------------------------------------------------------
    def set_sides(self, scenario: Scenario | None, targets: list[Target], first: str | None = None,
                  error: str = "") -> None:
        """The form's scenario (None: ``error`` says why there is none) and the targets to pick;
        ``first``: A's target (the Targets dock's row), B's the next other one."""
        if self.job.running:
            return                                  # a session goes: its sides stay as they were
        self.scenario, self._targets = scenario, list(targets)
        keys = [t[0] for t in targets]
        if scenario is not None:
            self.scenario_label.setText(f"The scenario in the form, “{scenario.name or run_name(scenario)}”, "
                                        "as A and as B with one change:")
        else:
            self.scenario_label.setText(f"No scenario to compare: {error or 'the form has none'}")
        current = first if first in keys else scenario.target_config.get("target_key", scenario.target) \
            if scenario is not None else None
        for combo in (self.a_target, self.b_target):
            combo.clear()
            for key, label, _kind, _config in targets:
                combo.addItem(label, key)
        self.a_target.setCurrentIndex(max(0, self.a_target.findData(current)))
        others = [k for k in keys if k != self.a_target.currentData()]
        self.b_target.setCurrentIndex(max(0, self.b_target.findData(others[0] if others else current)))
        self.param_combo.clear()
        if scenario is not None:
            params = get_workload(scenario.workload).params
            for param in params:
                self.param_combo.addItem(f"{param.label} ({param.name})", param.name)
            set_ones = [p.name for p in params if scenario.params.get(p.name, p.default) != p.default]
            self.param_combo.setCurrentIndex(max(0, self.param_combo.findData(set_ones[0] if set_ones else None)))
        self.by_param.setEnabled(self.param_combo.count() > 0)
        self._param_chosen()
        self.start_button.setEnabled(scenario is not None and bool(targets))

    def choose_param(self, name: str, value: str) -> None:
        self.by_param.setChecked(True)
        self.param_combo.setCurrentIndex(max(0, self.param_combo.findData(name)))
        self.param_value.setText(value)

    def _param_chosen(self) -> None:
        name = self.param_combo.currentData()
        if self.scenario is not None and name is not None:
            self.param_value.setText(str(self.scenario.params.get(name, "")))

    def sides(self) -> tuple[Scenario, Scenario]:
        """(A, B) as chosen; ValueError with a readable message when something is wrong."""
        if self.scenario is None:
            raise ValueError("no scenario in the form to compare")
        by_key = {t[0]: t for t in self._targets}
        a_key = self.a_target.currentData()
        if a_key not in by_key:
            raise ValueError("choose A's target")
        a = on_target(self.scenario, by_key[a_key])
        if self.by_target.isChecked():
            b_key = self.b_target.currentData()
            if b_key not in by_key:
                raise ValueError("choose B's target")
            return a, on_target(self.scenario, by_key[b_key])
        name = self.param_combo.currentData()
        param = next((p for p in get_workload(a.workload).params if p.name == name), None)
        if param is None:
            raise ValueError("choose the parameter B changes")
        return a, a.with_changes(params={**a.params, name: param.coerce(self.param_value.text())})

    # ---- a session --------------------------------------------------------------------------
    def start(self) -> bool:
        if self.job.running:
            return False
        if self.busy():
            self.view.show_error("a run is going: compare by running after it ends (both would share the machine)")
            return False
        try:
            a, b = self.sides()
            a, b = self.resolve(a), self.resolve(b)
        except ValueError as exc:
            self.view.show_error(f"not started: {exc}")
            return False
        if a is None or b is None:
            self.view.show_error("not started: no password given")
            return False
        self.view.clear()
        self.view.show_sides(run_name(a), run_name(b), scenario_differences(a.to_dict(), b.to_dict()))
        self.view.show_progress("starting tickbench ab…")
        self.job.start(a, b, max_pairs=self.pairs_spin.value(), smallest=self.smallest_spin.value())
        self._set_running(True)
        return True

    def stop(self) -> None:
        if self.job.stop():
            self.view.show_progress("stopping: the run under way is cancelled, what was measured is kept…")
            self.stop_button.setEnabled(False)

    def shutdown(self) -> None:
        """The window closes: a session going is stopped (what it measured is kept) and waited for."""
        if self.job.stop():
            self.job.wait(STOP_WAIT_MS)

    def _progressed(self, text: str) -> None:
        """"3/20: pair 4: B (run id)" from the session: said in words."""
        if self.job.stopping:
            return
        counts, sep, rest = text.partition(": ")
        done, slash, most = counts.partition("/")
        if sep and slash and done.isdigit() and most.isdigit():
            text = f"{done} of at most {most} pairs done · {rest}"
        self.view.show_progress(text)

    def _finished(self, outcome: AbOutcome) -> None:
        self._set_running(False)
        if outcome.data is not None:
            self.view.show_result(outcome.data)
            self._fit_height()
        else:
            self.view.show_error(outcome.line)
        self.session_finished.emit(outcome)

    def _set_running(self, running: bool) -> None:
        self.setup.setEnabled(not running)
        self.start_button.setEnabled(not running and self.scenario is not None)
        self.stop_button.setEnabled(running)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_height()

    def _fit_height(self) -> None:
        """Wrapped lines (the dropped pairs' reasons) need more height at a narrower width, which a
        window's minimum size does not follow by itself: without this the table is drawn under them."""
        needed = self.layout().totalHeightForWidth(self.width())
        if needed > 0 and needed != self.minimumHeight():
            screen = self.screen().availableGeometry().height() if self.screen() else needed
            self.setMinimumHeight(min(needed, screen))

    def reject(self) -> None:            # Esc and Close hide it: a session going goes on
        self.hide()
