"""ScenarioBuilder: dataset and scale, target, workload and its parameters, users, cache, how the
users start and run, length.

It turns the form into a `Scenario` (the engine validates it) and back. It knows nothing of how
runs are started: it emits `run_requested(Scenario)` and `stop_requested()`. The form scrolls;
its Run and Stop buttons stay at the foot, always visible.

Names: a name the user types stays; a name that came with a loaded scenario (a preset) goes as
soon as a setting changes, since it would no longer say what runs, and the run is then named by
what it is (``workloads.scenario.describe``), shown greyed in the empty name field.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QButtonGroup, QComboBox, QDoubleSpinBox, QFormLayout, QFrame, QGroupBox,
                               QHBoxLayout, QLabel, QLineEdit, QMessageBox, QPushButton, QRadioButton,
                               QScrollArea, QSpinBox, QVBoxLayout, QWidget)

from widgets.datasets.schema_line import DatasetSchemaLine
from widgets.scenario.param_form import ParamForm
from widgets.scenario.process_options import ProcessOptions
from widgets.scenario.rate_field import RateField
from widgets.common.theme import current_theme
from widgets.common.wheel_guard import guard_wheel
from workloads.datasets import IMPORT_PREFIX, available_datasets, get_dataset, own_size_words
from workloads.datasets.schema import Scale, StringMode
from workloads.results.figures import MIN_OPS
from workloads.run.limits import form_estimate
from workloads.operations import WORKLOADS
from workloads.operations.base import MAX_OPERATIONS
from workloads.scenario import CACHE_STATES, UNNAMED, Scenario, describe, has_own_size

STRING_LABELS = {
    StringMode.ARROW.value: "Arrow strings (pandas default)",
    StringMode.OBJECT.value: "Python objects (as report 000's pickles)",
    StringMode.CATEGORY.value: "Categorical (like DolphinDB SYMBOL)",
}

class ScenarioBuilder(QWidget):
    run_requested = Signal(object)   # Scenario
    stop_requested = Signal()
    changed = Signal()

    def __init__(self, data_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._data_dir = Path(data_dir)
        self._targets: dict[str, tuple[str, dict[str, Any]]] = {}
        self._build()
        self._offer_workloads()
        self._on_workload_changed()
        self._update_estimate()
        guard_wheel(self)                    # the wheel scrolls the form, never an unfocused field
        for combo in self.findChildren(QComboBox):   # long item texts must not widen the dock:
            if combo.parentWidget() is self.rate_field:     # (short ones, sized to their words)
                continue
            # a narrow form elides a combo's text, its arrow always shown
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)

    # ---- building ---------------------------------------------------------------------------
    def _build(self) -> None:
        form = QWidget()
        outer = QVBoxLayout(form)
        outer.setContentsMargins(6, 6, 6, 6)
        self.name_edit = QLineEdit("")
        self.name_edit.setObjectName("scenario_name")
        self.name_edit.setToolTip("Leave empty to name the run by what it is (target, workload, users, cache)")
        self._name_loaded = False       # the name came with a loaded scenario, not from the user

        data_box = QGroupBox("Dataset")
        data_form = QFormLayout(data_box)
        self.dataset_combo = QComboBox(objectName="dataset")
        self.refresh_datasets()
        self.days_spin = self._spin("days", 1, 10_000, 1, " days")
        self.rows_spin = self._spin("rows_per_day", 1, 2_000_000_000, 1_000_000, " rows")
        self.rows_spin.setSingleStep(100_000)
        self.symbols_spin = self._spin("symbols", 1, 1_000_000, 500, " keys")
        self.symbols_spin.setToolTip("Symbols (TAQ), securities (level 2), devices, or keys (api45)")
        self.strings_combo = QComboBox(objectName="strings")
        for value, label in STRING_LABELS.items():
            self.strings_combo.addItem(label, value)
        data_form.addRow("Dataset:", self.dataset_combo)
        self.dataset_schema = DatasetSchemaLine()          # its roles and, hovered, its columns
        data_form.addRow("", self.dataset_schema)
        self._show_schema()
        data_form.addRow("Days:", self.days_spin)
        data_form.addRow("Rows per day:", self.rows_spin)
        data_form.addRow("Symbols:", self.symbols_spin)
        self.own_size = QLabel(objectName="own_size", wordWrap=True)     # an import's or a table's own size
        self.own_size.setTextFormat(Qt.TextFormat.PlainText)
        data_form.addRow("Size:", self.own_size)
        self._data_form = data_form
        data_form.addRow("Strings:", self.strings_combo)

        run_box = QGroupBox("Workload")
        run_form = QFormLayout(run_box)
        self.target_combo = QComboBox(objectName="target")
        self.workload_combo = QComboBox(objectName="workload")
        for key, workload in WORKLOADS.items():
            self.workload_combo.addItem(workload.title, key)
        self.workload_note = QLabel(wordWrap=True, objectName="workload_note")
        self.param_form = ParamForm()
        self.users_edit = QLineEdit("1", objectName="users")
        self.users_edit.setToolTip("One number, or a sweep such as 1,2,4,8: one step per value")
        self.rate_field = RateField()
        self.cache_combo = QComboBox(objectName="cache")
        for state in CACHE_STATES:
            self.cache_combo.addItem(state, state)
        self.process_options = ProcessOptions(self)      # forked or spawned users; settled or plain
        # a step's length: a number of operations per user OR a duration, chosen explicitly
        self.by_ops_radio = QRadioButton("Operations", objectName="by_operations")
        self.by_duration_radio = QRadioButton("Duration", objectName="by_duration")
        self.length_group = QButtonGroup(self)
        self.length_group.addButton(self.by_ops_radio)
        self.length_group.addButton(self.by_duration_radio)
        self.ops_spin = self._spin("operations", 1, 1_000_000, 3, " ops/user")
        self.duration_spin = QDoubleSpinBox(objectName="duration")
        self.duration_spin.setRange(0.1, 86_400)
        self.duration_spin.setSuffix(" s per step")
        self.duration_spin.setValue(5.0)       # long enough for stable figures on most workloads
        self.duration_spin.setToolTip(f"Seconds per step.\nA step also runs on until its users have made "
                                      f"{MIN_OPS} operations together:\nfewer cannot be measured.")
        self.by_duration_radio.setChecked(True)
        self.length_note = QLabel(wordWrap=True, objectName="length_note")
        self.length_note.setProperty("role", "muted")
        # a workload that ends by its rows (slice-download, the uploads): operations are a cap, as on
        # the command line (``--operations``), 0 for none
        self.max_ops_label = QLabel("At most:")
        self.max_ops_spin = self._spin("max_operations", 0, 1_000_000, 0, " ops/user")
        self.max_ops_spin.setSpecialValueText("as many as its rows take")
        self.max_ops_spin.setToolTip(MAX_OPERATIONS.help)
        self.warmup_spin = self._spin("warmup", 0, 1000, 1, " ops/user")
        self.warmup_spin.setToolTip("Operations each worker makes before the measured ones: the first "
                                    "operation of a fresh process, recorded and shown apart")
        self.probe_spin = self._spin("probes", 0, 1000, 2, " ops/user")
        self.probe_spin.setToolTip("Instrumented operations after the measured ones, for phase splits "
                                   "the user's own call cannot show (pickle io/decode, DolphinDB "
                                   "server/transfer/decode); never in the figures")
        run_form.addRow("Target:", self.target_combo)
        run_form.addRow("Workload:", self.workload_combo)
        run_form.addRow(self.workload_note)
        run_form.addRow(self.param_form)
        run_form.addRow("Users:", self.users_edit)
        run_form.addRow("Rate:", self.rate_field)
        run_form.addRow("Cache:", self.cache_combo)
        for label, field in self.process_options.rows():
            run_form.addRow(label, field)
        run_form.addRow(self.by_ops_radio, self.ops_spin)
        run_form.addRow(self.by_duration_radio, self.duration_spin)
        run_form.addRow(self.length_note)
        run_form.addRow(self.max_ops_label, self.max_ops_spin)
        run_form.addRow("Warm-up:", self.warmup_spin)
        run_form.addRow("Probes:", self.probe_spin)

        self.estimate_label = QLabel(wordWrap=True, objectName="estimate")
        self.error_label = QLabel(wordWrap=True, objectName="scenario_error")
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)     # a refusal may quote a file or a run
        self.run_button = QPushButton("Run", objectName="run_button")
        self.stop_button = QPushButton("Stop", objectName="stop_button", enabled=False)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.stop_button)

        name_row = QFormLayout()
        name_row.addRow("Name:", self.name_edit)
        outer.addLayout(name_row)
        outer.addWidget(data_box)
        outer.addWidget(run_box)
        outer.addWidget(self.estimate_label)
        outer.addStretch(1)

        self.scroll = QScrollArea(widgetResizable=True, objectName="scenario_scroll")
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(form)
        # the form's labels and notes wrap and its fields shrink to the dock's width; narrower than
        # its narrowest, a scroll bar reaches the rest rather than cutting it off
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        foot = QVBoxLayout()
        foot.setContentsMargins(6, 0, 6, 6)
        foot.addWidget(self.error_label)
        foot.addLayout(buttons)
        main = QVBoxLayout(self)
        main.setContentsMargins(0, 0, 0, 0)
        main.addWidget(self.scroll, 1)
        main.addLayout(foot)
        self.run_button.setDefault(True)

        self.workload_combo.currentIndexChanged.connect(self._on_workload_changed)
        self.dataset_combo.currentIndexChanged.connect(self._on_dataset_changed)
        self.run_button.clicked.connect(self._request_run)
        self.stop_button.clicked.connect(self.stop_requested)
        self.name_edit.textEdited.connect(self._on_name_typed)
        self.by_ops_radio.toggled.connect(self._on_length_mode)
        for spin, word in ((self.days_spin, "day"), (self.rows_spin, "row"), (self.symbols_spin, "key")):
            spin.valueChanged.connect(lambda value, spin=spin, word=word: self._plural_suffix(spin, word))
            self._plural_suffix(spin, word)
        self._on_length_mode()
        self._on_dataset_changed()          # the first dataset's rows (a generator's scale, or its own size)
        for signal in (self.dataset_combo.currentIndexChanged, self.days_spin.valueChanged,
                       self.rows_spin.valueChanged, self.users_edit.textChanged,
                       self.target_combo.currentIndexChanged):
            signal.connect(self._update_estimate)
        for signal in (self.dataset_combo.currentIndexChanged, self.days_spin.valueChanged,
                       self.rows_spin.valueChanged, self.symbols_spin.valueChanged,
                       self.strings_combo.currentIndexChanged, self.target_combo.currentIndexChanged,
                       self.users_edit.textChanged, self.cache_combo.currentIndexChanged,
                       self.ops_spin.valueChanged, self.duration_spin.valueChanged, self.max_ops_spin.valueChanged,
                       self.warmup_spin.valueChanged, self.probe_spin.valueChanged,
                       self.param_form.changed, self.workload_combo.currentIndexChanged,
                       self.by_ops_radio.toggled, self.rate_field.changed, self.process_options.changed):
            signal.connect(self._on_setting_changed)
        self.name_edit.textChanged.connect(self.changed)

    def _spin(self, name: str, low: int, high: int, value: int, suffix: str) -> QSpinBox:
        spin = QSpinBox(objectName=name)
        spin.setRange(low, min(high, 2**31 - 1))
        spin.setValue(value)
        spin.setSuffix(suffix)
        spin.setGroupSeparatorShown(True)
        return spin

    # ---- datasets ---------------------------------------------------------------------------
    def refresh_datasets(self, select: str | None = None) -> None:
        """List the built-in datasets and the imports on disk; keep the current choice (or
        pick ``select``, e.g. a dataset just imported)."""
        before = self.dataset_combo.currentData()
        current = select or before
        self.dataset_combo.blockSignals(True)
        self.dataset_combo.clear()
        for key, dataset in available_datasets().items():
            imported = key.startswith(IMPORT_PREFIX)   # two imports may share a file name
            self.dataset_combo.addItem(f"{key}: {dataset.info.title}" if imported else dataset.info.title, key)
        self.dataset_combo.setCurrentIndex(max(self.dataset_combo.findData(current), 0))
        self.dataset_combo.blockSignals(False)
        if hasattr(self, "rows_spin"):   # not while the form is first being built
            self._on_dataset_changed()
            self._update_estimate()
            if self.dataset_combo.currentData() != before:
                self.changed.emit()

    def _on_dataset_changed(self) -> None:
        name = str(self.dataset_combo.currentData())
        own = has_own_size(name)            # an import's or a table's rows and keys are its own
        for spin in (self.rows_spin, self.symbols_spin):
            self._data_form.setRowVisible(spin, not own)
        self._data_form.setRowVisible(self.own_size, own)
        if own:
            try:
                self.own_size.setText(own_size_words(name))
            except ValueError as exc:
                self.own_size.setText(str(exc))
        self._show_schema()
        self._offer_workloads()

    def _show_schema(self) -> None:
        try:
            info = get_dataset(self.dataset_combo.currentData()).info
        except ValueError:
            info = None
        self.dataset_schema.set_info(info)
        self.dataset_combo.setToolTip(self.dataset_schema.toolTip())

    def _offer_workloads(self) -> None:
        """Only the workloads the dataset has the roles for can be chosen; the others stay listed,
        greyed, their tooltip saying which role is missing. A chosen one that became impossible
        gives way to the first possible one."""
        try:
            info = get_dataset(self.dataset_combo.currentData()).info
        except ValueError:
            return
        items = self.workload_combo.model()
        for index in range(self.workload_combo.count()):
            refusal = WORKLOADS[self.workload_combo.itemData(index)].refusal(info, flags=False)
            items.item(index).setEnabled(not refusal)
            self.workload_combo.setItemData(index, f"{refusal}." if refusal else None, Qt.ItemDataRole.ToolTipRole)
        if not items.item(self.workload_combo.currentIndex()).isEnabled():
            possible = [i for i in range(self.workload_combo.count()) if items.item(i).isEnabled()]
            self.workload_combo.setCurrentIndex(possible[0])     # noop and the writes run on any dataset

    # ---- targets ----------------------------------------------------------------------------
    def set_targets(self, targets: list[tuple[str, str, str, dict[str, Any]]]) -> None:
        """(key, label, kind, config) per target the user can pick; keeps the current choice."""
        current = self.target_combo.currentData()
        self.target_combo.blockSignals(True)
        self.target_combo.clear()
        self._targets = {}
        for key, label, kind, config in targets:
            self._targets[key] = (kind, dict(config))
            self.target_combo.addItem(label, key)
        index = self.target_combo.findData(current)
        self.target_combo.setCurrentIndex(max(index, 0))
        self.target_combo.blockSignals(False)
        self._update_estimate()

    # ---- scenario in and out ------------------------------------------------------------------
    def scenario(self) -> Scenario:
        """The form as a Scenario; ValueError with a readable message when something is wrong."""
        key = self.target_combo.currentData()
        if key not in self._targets:
            raise ValueError("choose a target")
        kind, config = self._targets[key]
        users_text = self.users_edit.text()
        try:
            users = tuple(int(u) for u in users_text.replace(" ", "").split(",") if u)
        except ValueError:
            raise ValueError(f"Users: {users_text!r} is not a number or a list like 1,2,4,8") from None
        params = self.param_form.values()
        if not WORKLOADS[self.workload_combo.currentData()].bounded_by_operations and self.max_ops_spin.value():
            params[MAX_OPERATIONS.name] = self.max_ops_spin.value()
        scale = Scale(days=self.days_spin.value(), rows_per_day=self.rows_spin.value(),
                      symbols=self.symbols_spin.value())
        by_ops = self.by_ops_radio.isChecked()
        scenario = Scenario(
            name=self.name_edit.text().strip(), dataset=self.dataset_combo.currentData(),
            scale=scale, strings=self.strings_combo.currentData(), target=kind,
            target_config={**config, "target_key": key} if key != kind else config,
            workload=self.workload_combo.currentData(), params=params, users=users,
            cache=self.cache_combo.currentData(), operations=self.ops_spin.value() if by_ops else 0,
            duration_s=0.0 if by_ops else self.duration_spin.value(), warmup_ops=self.warmup_spin.value(),
            probe_ops=self.probe_spin.value(), **self.rate_field.values(), **self.process_options.values(),
        )
        return scenario if scenario.name else scenario.with_changes(name=describe(scenario))

    def set_scenario(self, scenario: Scenario) -> None:
        self._loading = True
        try:
            self._set_scenario(scenario)
        finally:
            self._loading = False
        named = scenario.name.strip() not in UNNAMED and scenario.name != describe(scenario)
        self.name_edit.setText(scenario.name if named else "")
        self._name_loaded = named
        self._refresh_name_hint()

    def _set_scenario(self, scenario: Scenario) -> None:
        self._select(self.dataset_combo, scenario.dataset)
        self.days_spin.setValue(scenario.scale.days)
        self.rows_spin.setValue(scenario.scale.rows_per_day)
        self.symbols_spin.setValue(scenario.scale.symbols)
        self._select(self.strings_combo, scenario.strings)
        target_key = scenario.target_config.get("target_key", scenario.target)
        if self.target_combo.findData(target_key) < 0:
            target_key = scenario.target
        self._select(self.target_combo, target_key)
        self._select(self.workload_combo, scenario.workload)
        self.param_form.set_values(scenario.params)
        self.max_ops_spin.setValue(int(scenario.params.get(MAX_OPERATIONS.name) or 0))
        self.users_edit.setText(",".join(str(u) for u in scenario.users))
        self.rate_field.set_values(scenario.rate, scenario.rate_per, scenario.schedule)
        self._select(self.cache_combo, scenario.cache)
        self.process_options.set_values(scenario.start, scenario.process)
        by_ops = scenario.operations > 0 or not scenario.duration_s
        if scenario.operations:
            self.ops_spin.setValue(scenario.operations)
        if scenario.duration_s:
            self.duration_spin.setValue(scenario.duration_s)
        (self.by_ops_radio if by_ops else self.by_duration_radio).setChecked(True)
        self.warmup_spin.setValue(scenario.warmup_ops)
        self.probe_spin.setValue(scenario.probe_ops)

    def save_to(self, path: Path) -> None:
        self.scenario().save_toml(Path(path))

    def load_from(self, path: Path) -> Scenario:
        scenario = Scenario.load_toml(Path(path))
        self.set_scenario(scenario)
        return scenario

    @staticmethod
    def _select(combo: QComboBox, value: Any) -> None:
        index = combo.findData(value)
        if index < 0:
            raise ValueError(f"{combo.objectName()}: {value!r} is not available here")
        combo.setCurrentIndex(index)

    # ---- running state ----------------------------------------------------------------------
    def set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.stop_button.setEnabled(running)

    def show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.setStyleSheet(f"color: {current_theme().error};" if message else "")

    # ---- reactions --------------------------------------------------------------------------
    def _request_run(self) -> None:
        try:
            scenario = self.scenario()
        except ValueError as exc:
            self.show_error(str(exc))
            return
        self.show_error("")
        text, too_large = form_estimate(scenario, self._data_dir)
        if too_large:
            answer = QMessageBox.question(
                self, "Larger than this machine", f"{text}\n\nRun anyway?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No)
            if answer != QMessageBox.StandardButton.Yes:
                self.show_error("not started: the data would not fit (see the estimate above)")
                return
        self.run_requested.emit(scenario)

    def _on_name_typed(self, _text: str) -> None:
        self._name_loaded = False           # the user's own name: it stays whatever changes

    def _on_setting_changed(self, *_args) -> None:
        if self._name_loaded and not getattr(self, "_loading", False):
            # a preset's name no longer says what runs: the run is named by what it is
            self._name_loaded = False
            self.name_edit.clear()
        self._refresh_name_hint()
        self.changed.emit()

    def _refresh_name_hint(self) -> None:
        """The name's hint from what would run; an error shown for the form follows the fields: gone
        once they are right, the new one while they are not."""
        try:
            self.name_edit.setPlaceholderText(describe(self.scenario()))
        except (ValueError, KeyError) as exc:
            self.name_edit.setPlaceholderText("named by what it runs")
            if self.error_label.text() and isinstance(exc, ValueError):
                self.show_error(str(exc))
        else:
            if self.error_label.text():
                self.show_error("")

    def _on_length_mode(self, *_args) -> None:
        by_ops = self.by_ops_radio.isChecked()
        self.ops_spin.setEnabled(by_ops)
        self.duration_spin.setEnabled(not by_ops)

    @staticmethod
    def _plural_suffix(spin: QSpinBox, word: str) -> None:
        suffix = f" {word}" + ("" if spin.value() == 1 else "s")
        if spin.suffix() != suffix:
            spin.setSuffix(suffix)

    def _on_workload_changed(self) -> None:
        workload = WORKLOADS[self.workload_combo.currentData()]
        self.param_form.set_params(list(workload.params))
        note = workload.description + (f" ({workload.reference})" if workload.reference else "")
        bounded = workload.bounded_by_operations
        self.workload_note.setText(note)
        for widget in (self.by_ops_radio, self.by_duration_radio, self.ops_spin, self.duration_spin):
            widget.setVisible(bounded)
        self.length_note.setText("" if bounded else f"Length: a step ends when {workload.ends_when} "
                                 "(set in the parameters above), or after as many operations as set below.")
        self.length_note.setVisible(not bounded)
        self.max_ops_label.setVisible(not bounded)
        self.max_ops_spin.setVisible(not bounded)

    def _update_estimate(self) -> None:
        try:
            text, too_large = form_estimate(self.scenario(), self._data_dir)
        except (ValueError, KeyError):
            return
        self.estimate_label.setText(text)
        self.estimate_label.setStyleSheet(f"color: {current_theme().error}; font-weight: bold;"
                                          if too_large else "")

    def save_state(self) -> dict:
        try:
            return {"scenario": self.scenario().to_dict()}
        except ValueError:
            return {}

    def restore_state(self, state: dict) -> None:
        data = state.get("scenario")
        if not data:
            return
        try:
            self.set_scenario(Scenario.from_dict(data))
        except (ValueError, TypeError):
            pass  # a scenario from an older version: keep the defaults
