"""FlowLayout: a row of controls that wraps onto the next line when it is narrower than they are,
instead of cutting the last ones off (a report card's Size / On / Versus / Run on a laptop's
screen). Each item keeps its size hint where it fits, lines are centred vertically, and the layout's
height follows its width (``heightForWidth``), so a scroll area above it makes the room."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QWidget


class FlowLayout(QLayout):
    def __init__(self, parent: QWidget | None = None, spacing: int = 8, line_spacing: int = 4) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self._line_spacing = line_spacing
        self.setContentsMargins(0, 0, 0, 0)

    # ---- QLayout ----------------------------------------------------------------------------
    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._lay_out(QRect(0, 0, width, 0), place=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._lay_out(rect, place=True)

    def sizeHint(self) -> QSize:
        """Everything on one line."""
        shown = self._shown()
        margins = self.contentsMargins()
        width = sum(item.sizeHint().width() for item in shown) + self._spacing * max(len(shown) - 1, 0)
        height = max((item.sizeHint().height() for item in shown), default=0)
        return QSize(width + margins.left() + margins.right(), height + margins.top() + margins.bottom())

    def minimumSize(self) -> QSize:
        """The widest single item: narrower than that, something would be cut."""
        margins = self.contentsMargins()
        size = QSize(0, 0)
        for item in self._shown():
            size = size.expandedTo(item.minimumSize())
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    # ---- placing ----------------------------------------------------------------------------
    def _shown(self) -> list[QLayoutItem]:
        return [item for item in self._items if not item.isEmpty()]

    def _lay_out(self, rect: QRect, *, place: bool) -> int:
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        lines: list[list[tuple[QLayoutItem, int]]] = [[]]
        x = 0
        for item in self._shown():
            width = max(min(item.sizeHint().width(), area.width()), item.minimumSize().width())
            if lines[-1] and x + width > area.width():
                lines.append([])
                x = 0
            lines[-1].append((item, width))
            x += width + self._spacing
        y = area.y()
        for line in lines:
            if not line:
                continue
            height = max(item.sizeHint().height() for item, _width in line)
            if place:
                x = area.x()
                for item, width in line:
                    item_height = min(item.sizeHint().height(), height)
                    item.setGeometry(QRect(QPoint(x, y + (height - item_height) // 2), QSize(width, item_height)))
                    x += width + self._spacing
            y += height + self._line_spacing
        return max(y - self._line_spacing - area.y(), 0) + margins.top() + margins.bottom()
