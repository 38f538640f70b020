"""HeadingLabel: a bold heading whose size stays a multiple of the application font, so it stays
larger than the body text when demo mode enlarges every font. A widget given its own font is not
told when the application's changes, so it follows ``apply_theme``, which sets that font."""
from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from widgets.common.theme import theme_notifier


class HeadingLabel(QLabel):
    def __init__(self, text: str = "", scale: float = 1.3, name: str = "", parent: QWidget | None = None):
        super().__init__(text, parent)
        if name:
            self.setObjectName(name)
        self.setWordWrap(True)
        self._scale = scale
        self._follow_application_font()
        theme_notifier().changed.connect(self._on_theme)     # a bound slot: gone with the label

    def _on_theme(self, _theme) -> None:
        self._follow_application_font()

    def _follow_application_font(self) -> None:
        base = QApplication.font().pointSizeF()
        font = QFont(self.font())
        font.setPointSizeF((base if base > 0 else 9.0) * self._scale)
        font.setBold(True)
        self.setFont(font)
