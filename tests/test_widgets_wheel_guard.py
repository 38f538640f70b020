"""The wheel scrolls a form instead of changing the combo box or spin box under the pointer,
unless that field has the keyboard focus. Real QWheelEvents, delivered as Qt delivers them."""
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QApplication, QComboBox, QDoubleSpinBox, QLineEdit, QScrollArea, QSpinBox,
                               QVBoxLayout, QWidget)

from tests.wheel_events import wheel
from widgets.scenario.param_form import ParamForm
from widgets.common.wheel_guard import guard_wheel, is_guarded, takes_wheel
from workloads.operations.params import Param


class TallForm(QScrollArea):
    """A form taller than its scroll area, value fields in the middle (like the scenario dock)."""

    def __init__(self, guarded: bool = True) -> None:
        super().__init__()
        self.setWidgetResizable(True)
        inner = QWidget()
        box = QVBoxLayout(inner)
        box.addSpacing(150)
        self.combo = QComboBox()
        self.combo.addItems(["duckdb", "parquet", "pickle"])
        self.spin = QSpinBox()
        self.spin.setRange(0, 100)
        self.spin.setValue(50)
        self.double = QDoubleSpinBox()
        self.double.setValue(5.0)
        for w in (self.combo, self.spin, self.double):
            box.addWidget(w)
        box.addSpacing(900)
        self.setWidget(inner)
        if guarded:
            guard_wheel(self)

    def values(self):
        return self.combo.currentIndex(), self.spin.value(), self.double.value()


def test_without_the_guard_the_wheel_changes_the_field_under_the_pointer(make_widget):
    # what the issue saw: the test's events reach the fields, so the next test means something
    form = make_widget(TallForm, False, size=(300, 300))
    form.combo.clearFocus()
    wheel(form.combo)
    wheel(form.spin)
    assert form.values() != (0, 50, 5.0)


def test_the_wheel_scrolls_the_form_past_unfocused_fields(make_widget):
    form = make_widget(TallForm, size=(300, 300))
    scroll = form.verticalScrollBar()
    assert scroll.maximum() > 0 and scroll.value() == 0
    for field in (form.combo, form.spin, form.double):
        before = scroll.value()
        assert not takes_wheel(field)
        wheel(field)
        assert scroll.value() > before, type(field).__name__
    assert form.values() == (0, 50, 5.0)
    assert all(is_guarded(w) for w in (form.combo, form.spin, form.double))
    assert form.combo.focusPolicy() == Qt.FocusPolicy.StrongFocus
    assert form.spin.focusPolicy() == Qt.FocusPolicy.StrongFocus


def active(make_widget, qtbot):
    form = make_widget(TallForm, size=(300, 300))
    form.activateWindow()
    qtbot.waitUntil(form.isActiveWindow, timeout=2000)
    return form


def test_a_field_the_user_focused_takes_the_wheel(make_widget, qtbot):
    form = active(make_widget, qtbot)
    qtbot.mouseClick(form.spin.findChild(QLineEdit), Qt.MouseButton.LeftButton)
    assert form.spin.hasFocus() and takes_wheel(form.spin)
    wheel(form.spin, steps=1)
    assert form.spin.value() == 51
    qtbot.keyClick(form.spin, Qt.Key.Key_Backtab)          # Shift+Tab back to the combo box
    assert form.combo.hasFocus() and not takes_wheel(form.spin)
    wheel(form.combo)
    assert form.combo.currentIndex() == 1
    wheel(form.spin, steps=1)                               # focus moved on: the form scrolls
    assert form.spin.value() == 51


def test_the_focus_a_window_gives_its_first_field_does_not_count(make_widget, qtbot):
    # Qt focuses the first field of a window when it is shown; the Target combo was one
    form = active(make_widget, qtbot)
    assert QApplication.focusWidget() is form.combo and not takes_wheel(form.combo)
    wheel(form.combo)
    assert form.combo.currentIndex() == 0 and form.verticalScrollBar().value() > 0


def test_guarding_twice_is_harmless(make_widget):
    form = make_widget(TallForm, size=(300, 300))
    assert guard_wheel(form) == []
    scroll = form.verticalScrollBar()
    wheel(form.combo)
    wheel(form.combo)
    assert form.combo.currentIndex() == 0 and scroll.value() > 0


@pytest.mark.parametrize("name", ["batch", "strings", "duration"])
def test_param_form_fields_ignore_the_wheel_until_focused(make_widget, name):
    params = [Param("batch", "Batch size", "int", 1000, 10, 10_000, "rows"),
              Param("strings", "Strings as", "choice", "arrow", choices=("object", "arrow", "category")),
              Param("duration", "Duration", "float", 30.0, 1, 3600, "s")]

    def scrolled_form():
        scroll = QScrollArea(widgetResizable=True)
        inner = QWidget()
        box = QVBoxLayout(inner)
        box.addSpacing(100)
        scroll.form = ParamForm(params)
        box.addWidget(scroll.form)
        box.addSpacing(900)
        scroll.setWidget(inner)
        return scroll

    scroll = make_widget(scrolled_form, size=(400, 250))
    before = scroll.form.values()
    wheel(scroll.form.editor(name))
    assert scroll.form.values() == before
    assert scroll.verticalScrollBar().value() > 0
    # a rebuilt form guards its new fields too
    scroll.form.set_params(params)
    assert is_guarded(scroll.form.editor(name))
