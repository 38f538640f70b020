"""One chart renders at a time, and the next only after it has painted.

Qt paints every dirty widget of a window in one pass, so charts rendered back to back are painted
together (six of them: ~80 ms in which no input or timer is served; `benchmarks/bench_event_loop.py`).
"""
from __future__ import annotations

from typing import Protocol

import shiboken6
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QGraphicsView, QWidget


class Renderable(Protocol):
    """What the queue asks of a chart (``widgets.charts.base.ChartBase`` is one)."""

    graphics: QGraphicsView

    @property
    def is_dirty(self) -> bool: ...

    def isVisible(self) -> bool: ...

    def render_now(self) -> None: ...


class RenderQueue(QObject):
    """Charts due to render, in the order they became due; each paint is a pass of its own and
    the event loop serves input and timers between them."""

    PAINT_WAIT_MS = 100    # a chart whose paint never comes (covered, minimised) holds up no other

    def __init__(self) -> None:
        super().__init__()
        self._due: list[Renderable] = []
        self._painting: QWidget | None = None     # the viewport whose paint the queue waits for
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._render_next)

    def add(self, chart: Renderable) -> None:
        if chart not in self._due:
            self._due.append(chart)
        if self._painting is None and not self._timer.isActive():
            self._timer.start(0)

    def _render_next(self) -> None:
        self._stop_waiting()
        while self._due:
            chart = self._due.pop(0)
            if shiboken6.isValid(chart) and chart.is_dirty and chart.isVisible():
                chart.render_now()
                self._painting = chart.graphics.viewport()
                self._painting.installEventFilter(self)
                self._timer.start(self.PAINT_WAIT_MS)
                return

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Paint and watched == self._painting:
            self._stop_waiting()
            self._timer.start(0)          # the next chart in a later pass, after this paint
        return False

    def _stop_waiting(self) -> None:
        if self._painting is not None and shiboken6.isValid(self._painting):
            self._painting.removeEventFilter(self)
        self._painting = None


_render_queue: RenderQueue | None = None


def render_queue() -> RenderQueue:
    """The application's one queue, made on first use (after the QApplication)."""
    global _render_queue
    if _render_queue is None or not shiboken6.isValid(_render_queue):
        _render_queue = RenderQueue()
    return _render_queue
