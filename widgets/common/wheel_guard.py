"""The mouse wheel changes a combo box or a spin box only when the user gave it the focus.

Qt lets the wheel change whatever value field is under the pointer, so scrolling a long form
silently changed the field the pointer happened to pass over (the scenario's Target, a batch
size). `guard_wheel(root)` fixes that for every combo box and spin box under `root`:

- a wheel event on one the user has not focused is ignored, so Qt hands it on to the parents and
  the scroll area around the form scrolls instead;
- their focus policy becomes Qt.StrongFocus (click or Tab), so the wheel no longer gives them focus.

"The user focused it" means by a click, Tab / Shift+Tab or a shortcut. The focus Qt gives the first
field of a window when it is shown does not count: the first combo box of a form has the focus from
the start, and it was just such a field the wheel changed on its way down the form. Once the user
clicks (or tabs into) a field the wheel changes it as usual, until the focus moves on.
Calling it again on the same widgets is harmless; call it after adding fields to a form.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QWidget

GUARDED = (QComboBox, QAbstractSpinBox)
_PROPERTY = "tickbenchWheelGuard"


_USER_REASONS = (Qt.FocusReason.MouseFocusReason, Qt.FocusReason.TabFocusReason,
                 Qt.FocusReason.BacktabFocusReason, Qt.FocusReason.ShortcutFocusReason)
# the field keeps its focus through these (its own popup, another window): it stays armed
_KEEP_REASONS = (Qt.FocusReason.ActiveWindowFocusReason, Qt.FocusReason.PopupFocusReason)
_ARMED = "tickbenchWheelArmed"


class WheelGuard(QObject):
    """The event filter: refuses wheel events to a value field the user has not focused."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.FocusIn:
            if event.reason() in _USER_REASONS:
                watched.setProperty(_ARMED, True)
        elif kind == QEvent.Type.FocusOut:
            if event.reason() not in _KEEP_REASONS:
                watched.setProperty(_ARMED, False)
        elif kind == QEvent.Type.Wheel and isinstance(watched, GUARDED) and not takes_wheel(watched):
            # Ignored, and filtered out: the field never sees it, and QApplication offers an
            # ignored wheel event to the parent widget next (the form's scroll area scrolls).
            event.ignore()
            return True
        return False


def takes_wheel(widget: QWidget) -> bool:
    """Whether the wheel would change this field now: it has the focus and the user gave it."""
    return widget.hasFocus() and bool(widget.property(_ARMED))


_guard: WheelGuard | None = None


def wheel_guard() -> WheelGuard:
    """The one shared filter object (it holds no state)."""
    global _guard
    if _guard is None:
        _guard = WheelGuard()
    return _guard


def guard_widget(widget: QWidget) -> None:
    """Guard one combo box or spin box (anything else is left alone)."""
    if not isinstance(widget, GUARDED) or widget.property(_PROPERTY):
        return
    widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    widget.installEventFilter(wheel_guard())
    widget.setProperty(_PROPERTY, True)


def guard_wheel(root: QWidget) -> list[QWidget]:
    """Guard `root` (if it is a value field) and every combo box and spin box under it; returns
    the widgets guarded by this call."""
    fresh = []
    for widget in [root, *root.findChildren(QWidget)]:
        if isinstance(widget, GUARDED) and not widget.property(_PROPERTY):
            guard_widget(widget)
            fresh.append(widget)
    return fresh


def is_guarded(widget: QWidget) -> bool:
    return bool(widget.property(_PROPERTY))
