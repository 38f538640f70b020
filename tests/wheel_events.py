"""Real mouse-wheel turns for tests, through the window system as a wheel turns.

QApplication.sendEvent would not do: Qt offers a wheel event a widget ignores to its parents only
when the event is spontaneous (from the window system), so a sent event never reaches the scroll
area around a form. QTest.wheelEvent goes through QWindowSystemInterface, as a real wheel does."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget


def wheel(widget: QWidget, steps: int = -1, at: QPoint | None = None) -> None:
    """`steps` notches of the wheel over `widget` (its middle, or `at` in its coordinates);
    negative: towards the user ("down", zooming a chart out)."""
    window = widget.window()
    where = widget.mapTo(window, at if at is not None else widget.rect().center())
    QTest.wheelEvent(window.windowHandle(), QPointF(where), QPoint(0, 120 * steps))
    QApplication.processEvents()


def wheel_over_plot(chart, steps: int = 1) -> None:
    """Wheel over the middle of a chart's plot area (positive: zoom in)."""
    view = chart.plot_item.getViewBox()
    centre = chart.graphics.mapFromScene(view.sceneBoundingRect().center())
    wheel(chart.graphics.viewport(), steps, at=centre)
