"""WorkerGrid: one cell per worker process, coloured by its state, reflowing for 1..128 workers.

Drawn with QPainter (one widget, not 128 labels) so a 128-worker run costs one paint.
Colour is never the only cue: failed cells carry a cross, cancelled cells a bar, and a legend
under the grid counts workers per state. Hovering a failed cell shows its error.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from workloads.run.snapshot import WORKER_STATES
from widgets.common.theme import Theme, current_theme, readable_text_colour, theme_notifier, worker_state_colour

_MIN_CELL, _MAX_CELL, _GAP = 14, 44, 3


class WorkerGrid(QWidget):
    """Cells for worker ids; `set_workers(states, errors)` with plain dicts from LiveSnapshot."""

    worker_clicked = Signal(int)   # a cell was clicked: the app may show that worker's details

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._states: dict[int, str] = {}
        self._errors: dict[int, str] = {}
        self._layout_cache: tuple[tuple, list[QRect], tuple[int, int, int]] | None = None
        self._pixmap_key: tuple | None = None
        self._pixmaps: dict[str, QPixmap] = {}
        self.paint_count = 0
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        theme_notifier().changed.connect(self._on_theme_changed)

    def _on_theme_changed(self, _theme: Theme) -> None:
        self.update()

    # ---- data -------------------------------------------------------------------------------
    def set_workers(self, states: dict[int, str], errors: dict[int, str] | None = None) -> None:
        for wid, state in states.items():
            if state not in WORKER_STATES:
                raise ValueError(f"worker {wid}: unknown state {state!r}; expected one of "
                                 f"{', '.join(WORKER_STATES)}")
        new_states = dict(sorted(states.items()))
        new_errors = dict(errors or {})
        if new_states == self._states and new_errors == self._errors:
            return          # nothing to repaint: snapshots often repeat worker states
        resized = len(new_states) != len(self._states)
        self._states, self._errors = new_states, new_errors
        if resized:
            self.updateGeometry()
        self.update()

    def clear(self) -> None:
        self.set_workers({})

    def worker_ids(self) -> list[int]:
        return list(self._states)

    def state_of(self, worker_id: int) -> str:
        return self._states[worker_id]

    def cell_colour(self, worker_id: int) -> QColor:
        return QColor(worker_state_colour(self._states[worker_id]))

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(WORKER_STATES, 0)
        for state in self._states.values():
            counts[state] += 1
        return counts

    def tooltip_for(self, worker_id: int) -> str:
        state = self._states[worker_id]
        text = f"worker {worker_id}: {state}"
        error = self._errors.get(worker_id, "").strip()
        if error:
            # the last line of a traceback is the one a user can act on
            text += "\n" + error.splitlines()[-1]
        return text

    # ---- geometry ---------------------------------------------------------------------------
    def _legend_height(self) -> int:
        return self.fontMetrics().height() * 2 + 6   # the legend wraps onto two lines at most

    def grid_shape(self, width: int | None = None, height: int | None = None) -> tuple[int, int, int]:
        """(columns, rows, cell size in px) that fit all workers in the widget, cells as big as fit."""
        n = max(1, len(self._states))
        w = max(1, width if width is not None else self.width())
        h = max(1, (height if height is not None else self.height()) - self._legend_height())
        best_key, best = None, (1, _MIN_CELL)
        for cols in range(1, n + 1):
            rows = math.ceil(n / cols)
            size = min((w - _GAP) // cols - _GAP, (h - _GAP) // rows - _GAP, _MAX_CELL)
            key = (size, -(rows * cols - n), cols)   # biggest cells, then fewest empty slots
            if best_key is None or key > best_key:
                best_key, best = key, (cols, size)
        cols, size = best
        if size < _MIN_CELL:
            # too many to fit: keep cells legible and let heightForWidth ask for more room
            size, cols = _MIN_CELL, max(1, min(n, (w - _GAP) // (_MIN_CELL + _GAP)))
        return cols, math.ceil(n / cols), size

    def _cells(self) -> tuple[list[QRect], tuple[int, int, int]]:
        """Every cell's rectangle, in worker order, and the grid shape. Worked out once per size,
        count and font: a paint of 128 cells must not search the shape 128 times."""
        key = (len(self._states), self.width(), self.height(), self.font().key())
        if self._layout_cache is None or self._layout_cache[0] != key:
            cols, rows, size = self.grid_shape()
            rects = [QRect(_GAP + col * (size + _GAP), _GAP + row * (size + _GAP), size, size)
                     for row, col in (divmod(index, cols) for index in range(len(self._states)))]
            self._layout_cache = (key, rects, (cols, rows, size))
        return self._layout_cache[1], self._layout_cache[2]

    def cell_rect(self, worker_id: int) -> QRect:
        return self._cells()[0][list(self._states).index(worker_id)]

    def worker_at(self, pos: QPoint) -> int | None:
        rects = self._cells()[0]
        for wid, rect in zip(self._states, rects):
            if rect.contains(pos):
                return wid
        return None

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        n = max(1, len(self._states))
        cols = max(1, (width - _GAP) // (_MIN_CELL + _GAP))
        return math.ceil(n / cols) * (_MIN_CELL + _GAP) + _GAP + self._legend_height()

    def sizeHint(self) -> QSize:
        return QSize(260, 220)

    def minimumSizeHint(self) -> QSize:
        return QSize(4 * (_MIN_CELL + _GAP), _MIN_CELL + 2 * _GAP + self._legend_height())

    # ---- events -----------------------------------------------------------------------------
    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            wid = self.worker_at(event.pos())
            if wid is None:
                QToolTip.hideText()
                event.ignore()
            else:
                QToolTip.showText(event.globalPos(), self.tooltip_for(wid), self, self.cell_rect(wid))
            return True
        return super().event(event)

    def mousePressEvent(self, event) -> None:
        wid = self.worker_at(event.position().toPoint())
        if wid is not None:
            self.worker_clicked.emit(wid)
        super().mousePressEvent(event)

    def paintEvent(self, _event) -> None:
        self.paint_count += 1
        theme = current_theme()
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(theme.window))
        rects, (_, rows, size) = self._cells()
        key = (size, theme.name, self.font().key(), self.devicePixelRatioF())
        if key != self._pixmap_key:      # cells are drawn once per look; a paint only copies them
            self._pixmap_key, self._pixmaps = key, {}
        show_ids = size >= 22 or (size >= 16 and len(self._states) < 100)
        for state, cell in zip(self._states.values(), rects):
            pixmap = self._pixmaps.get(state)      # drawn once per state and look, copied per cell
            if pixmap is None:
                pixmap = self._pixmaps[state] = self._cell_pixmap(state, size, theme)
            painter.drawPixmap(cell.topLeft(), pixmap)
        if show_ids:        # as text on the copies: a pixmap per worker cost ~15 ms per state change
            painter.setFont(self._id_font(size))
            inks = {state: QColor(readable_text_colour(worker_state_colour(state)))
                    for state in set(self._states.values()) - {"failed", "cancelled"}}
            for (wid, state), cell in zip(self._states.items(), rects):
                if state in inks:
                    painter.setPen(inks[state])
                    painter.drawText(cell, Qt.AlignmentFlag.AlignCenter, str(wid))
        self._paint_legend(painter, theme, _GAP + rows * (size + _GAP) + 4)
        painter.end()

    def _id_font(self, size: int) -> QFont:
        font = QFont(self.font())
        font.setPointSizeF(max(6.0, min(font.pointSizeF(), size * 0.38)))
        return font

    def _cell_pixmap(self, state: str, size: int, theme: Theme) -> QPixmap:
        ratio = self.devicePixelRatioF()
        pixmap = QPixmap(round(size * ratio), round(size * ratio))
        pixmap.setDevicePixelRatio(ratio)
        pixmap.fill(QColor(theme.window))
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(0, 0, size, size)
        fill = QColor(worker_state_colour(state))
        painter.setPen(QPen(QColor(theme.text if state == "running" else fill), 1))
        painter.setBrush(fill)
        painter.drawRoundedRect(rect.adjusted(0.5, 0.5, -0.5, -0.5), 3, 3)
        ink = QColor(readable_text_colour(fill.name()))
        if state == "failed":
            painter.setPen(QPen(ink, 2))
            inset = rect.adjusted(size * 0.22, size * 0.22, -size * 0.22, -size * 0.22)
            painter.drawLine(inset.topLeft(), inset.bottomRight())
            painter.drawLine(inset.topRight(), inset.bottomLeft())
        elif state == "cancelled":
            painter.setPen(QPen(ink, 2))
            y = rect.center().y()
            painter.drawLine(rect.left() + size * 0.2, y, rect.right() - size * 0.2, y)
        painter.end()
        return pixmap

    def _paint_legend(self, painter: QPainter, theme: Theme, top: int) -> None:
        painter.setFont(self.font())
        fm = painter.fontMetrics()
        x, y, box = _GAP, top, fm.height() - 4
        for state, count in self.counts().items():
            if not count:
                continue
            text = f"{state} {count}"
            width = box + 4 + fm.horizontalAdvance(text) + 12
            if x + width > self.width() and x > _GAP:
                x, y = _GAP, y + fm.height() + 2
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(worker_state_colour(state)))
            painter.drawRect(QRectF(x, y + 2, box, box))
            painter.setPen(QColor(theme.text))
            painter.drawText(QRectF(x + box + 4, y, width, fm.height()),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, text)
            x += width
