"""ParamForm: a form generated from a workload's declared parameters (workloads.operations.params.Param).

int -> QSpinBox, float -> QDoubleSpinBox (limits and unit suffix from the Param), choice ->
QComboBox, bool -> QCheckBox, int_list -> QLineEdit checked by Param.coerce with a red hint
under it when the text is wrong. The wheel changes a spin box or combo box only once it has focus
(widgets.common.wheel_guard): scrolling the form never changes a value on the way. Values come out already coerced by the Param itself, so the form
and the engine agree on what is valid.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QLabel,
                               QLineEdit, QSpinBox, QVBoxLayout, QWidget)

from widgets.common.theme import current_theme
from widgets.common.wheel_guard import guard_widget
from workloads.operations.params import Param

_INT_LIMIT = 2**31 - 1           # QSpinBox holds a C int
_FLOAT_LIMIT = 1e12


def unit_for(value: float, unit: str) -> str:
    """A word unit in the number of `value`: unit_for(1, "days") -> "day", unit_for(2, "days") ->
    "days", unit_for(1, "queries") -> "query". Symbols ("s", "MB", "rows/s") stay as they are."""
    if value != 1 or len(unit) < 3 or not unit.isalpha() or not unit.endswith("s") or unit.endswith("ss"):
        return unit
    return unit[:-3] + "y" if unit.endswith("ies") else unit[:-1]


class ParamForm(QWidget):
    """Form over a list of Param. `values()` raises ValueError naming every field that is wrong."""

    changed = Signal()               # any field changed (valid or not)
    validity_changed = Signal(bool)  # the form as a whole became valid / invalid

    def __init__(self, params: list[Param] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QFormLayout(self)
        self._layout.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self._params: dict[str, Param] = {}
        self._editors: dict[str, QWidget] = {}
        self._hints: dict[str, QLabel] = {}
        self._errors: dict[str, str] = {}
        self._was_valid = True
        self.set_params(params or [])

    # ---- building ---------------------------------------------------------------------------
    def set_params(self, params: list[Param]) -> None:
        """Rebuild the form for another workload's parameters (values reset to defaults)."""
        while self._layout.rowCount():
            self._layout.removeRow(0)
        self._params = {p.name: p for p in params}
        self._editors.clear()
        self._hints.clear()
        self._errors.clear()
        for p in params:
            editor = self._make_editor(p)
            editor.setObjectName(f"param_{p.name}")
            guard_widget(editor)     # the wheel scrolls the form, not the field under the pointer
            if p.help:
                editor.setToolTip(p.help)
            self._editors[p.name] = editor
            label = QLabel(p.label + ("" if p.kind == "bool" else ":"))
            label.setBuddy(editor)
            if p.help:
                label.setToolTip(p.help)
            if p.kind == "int_list":
                field = QWidget()
                box = QVBoxLayout(field)
                box.setContentsMargins(0, 0, 0, 0)
                box.setSpacing(2)
                hint = QLabel()
                hint.setProperty("role", "error")
                hint.setWordWrap(True)
                hint.hide()
                self._hints[p.name] = hint
                box.addWidget(editor)
                box.addWidget(hint)
                self._layout.addRow(label, field)
            else:
                self._layout.addRow(label, editor)
        self._was_valid = True
        self._validate_all()

    def _make_editor(self, p: Param) -> QWidget:
        if p.kind == "int":
            w = QSpinBox()
            # QSpinBox holds a C int: larger limits (e.g. 10 billion rows) are clamped to it
            w.setRange(max(int(p.minimum), -_INT_LIMIT) if p.minimum is not None else -_INT_LIMIT,
                       min(int(p.maximum), _INT_LIMIT) if p.maximum is not None else _INT_LIMIT)
            w.setGroupSeparatorShown(True)
            w.setValue(int(p.default))
            self._follow_unit(w, p.unit)
            w.valueChanged.connect(lambda _v, n=p.name: self._on_edit(n))
        elif p.kind == "float":
            w = QDoubleSpinBox()
            w.setDecimals(3)
            w.setRange(p.minimum if p.minimum is not None else -_FLOAT_LIMIT,
                       p.maximum if p.maximum is not None else _FLOAT_LIMIT)
            w.setValue(float(p.default))
            self._follow_unit(w, p.unit)
            w.valueChanged.connect(lambda _v, n=p.name: self._on_edit(n))
        elif p.kind == "choice":
            w = QComboBox()
            w.addItems(list(p.choices))
            w.setCurrentText(str(p.default))
            w.currentTextChanged.connect(lambda _t, n=p.name: self._on_edit(n))
        elif p.kind == "bool":
            w = QCheckBox(p.unit)
            w.setChecked(bool(p.default))
            w.toggled.connect(lambda _b, n=p.name: self._on_edit(n))
        elif p.kind == "int_list":
            w = QLineEdit(", ".join(str(v) for v in p.default))
            w.setPlaceholderText("comma-separated, e.g. 1, 2, 4, 8" + (f" ({p.unit})" if p.unit else ""))
            w.textChanged.connect(lambda _t, n=p.name: self._on_edit(n))
        else:
            raise ValueError(f"parameter {p.name!r}: unknown kind {p.kind!r}; expected int, float, "
                             "choice, bool or int_list")
        return w

    @staticmethod
    def _follow_unit(w: QSpinBox | QDoubleSpinBox, unit: str) -> None:
        """The unit after the number, in the number's grammar: "1 day", "2 days"."""
        if not unit:
            return
        w.setProperty("unit", unit)
        ParamForm._sync_unit(w)
        w.valueChanged.connect(lambda _v: ParamForm._sync_unit(w))

    @staticmethod
    def _sync_unit(w: QWidget) -> None:
        unit = w.property("unit")
        if unit:
            w.setSuffix(f" {unit_for(w.value(), unit)}")

    # ---- values -----------------------------------------------------------------------------
    def params(self) -> list[Param]:
        return list(self._params.values())

    def editor(self, name: str) -> QWidget:
        """The input widget of one parameter (for tests and focus handling)."""
        return self._editors[name]

    def _raw(self, name: str) -> Any:
        w, kind = self._editors[name], self._params[name].kind
        if kind in ("int", "float"):
            return w.value()
        if kind == "choice":
            return w.currentText()
        if kind == "bool":
            return w.isChecked()
        # int list: tidy the spaces around commas so messages quote '400', not ' 400'
        return ",".join(part.strip() for part in w.text().split(","))

    def is_valid(self) -> bool:
        return not self._errors

    def errors(self) -> dict[str, str]:
        """Parameter name -> message, for every field that does not pass Param.coerce."""
        return dict(self._errors)

    def values(self) -> dict[str, Any]:
        """Coerced values by parameter name; ValueError (all messages) if a field is wrong."""
        if self._errors:
            raise ValueError("; ".join(self._errors.values()))
        return {name: p.coerce(self._raw(name)) for name, p in self._params.items()}

    def set_values(self, values: dict[str, Any]) -> None:
        """Fill fields from a dict (unknown keys are ignored: saved scenarios may be older)."""
        for name, value in values.items():
            p, w = self._params.get(name), self._editors.get(name)
            if p is None:
                continue
            w.blockSignals(True)
            try:
                if p.kind == "int":
                    w.setValue(int(value))
                elif p.kind == "float":
                    w.setValue(float(value))
                elif p.kind == "choice":
                    w.setCurrentText(p.coerce(value))   # coerce raises the readable message
                elif p.kind == "bool":
                    w.setChecked(bool(p.coerce(value)))
                else:
                    w.setText(value if isinstance(value, str) else ", ".join(str(v) for v in value))
            finally:
                w.blockSignals(False)
            self._sync_unit(w)
        self._validate_all()
        self.changed.emit()

    def reset(self) -> None:
        self.set_values({p.name: p.default for p in self._params.values()})

    def save_state(self) -> dict:
        """Plain, JSON-able field contents (int lists as typed, even if invalid)."""
        return {"version": 1, "values": {n: self._raw(n) for n in self._params}}  # JSON-able

    def restore_state(self, state: dict) -> None:
        values = state.get("values", {}) if isinstance(state, dict) else {}
        safe = {}
        for name, value in values.items():
            p = self._params.get(name)
            if p is None:
                continue
            try:
                if p.kind != "int_list":
                    p.coerce(value)     # skip stale values a newer Param no longer accepts
                safe[name] = value
            except ValueError:
                continue
        self.set_values(safe)

    # ---- validation -------------------------------------------------------------------------
    def _on_edit(self, name: str) -> None:
        self._validate(name)
        self._emit_validity()
        self.changed.emit()

    def _validate(self, name: str) -> None:
        try:
            self._params[name].coerce(self._raw(name))
            self._errors.pop(name, None)
        except ValueError as exc:
            self._errors[name] = str(exc)
        hint = self._hints.get(name)
        if hint is not None:
            message = self._errors.get(name, "")
            hint.setText(message)
            hint.setStyleSheet(f"color: {current_theme().error};")   # red even without apply_theme
            hint.setVisible(bool(message))
            self._editors[name].setStyleSheet(
                f"QLineEdit {{ border: 2px solid {current_theme().error}; }}" if message else "")

    def _validate_all(self) -> None:
        for name in self._params:
            self._validate(name)
        self._emit_validity()

    def _emit_validity(self) -> None:
        valid = self.is_valid()
        if valid != self._was_valid:
            self._was_valid = valid
            self.validity_changed.emit(valid)
