"""Full screen that works with or without a window manager.

``showFullScreen`` asks the window manager for it: with none (a kiosk, a bare X server, some
projector setups) the window keeps its size though Qt calls it full screen. These also give it the
screen's geometry themselves (Qt then no longer calls it full screen, so ``is_full_screen`` keeps
the word), and the window its own geometry back afterwards.
"""
from __future__ import annotations

from PySide6.QtCore import QRect, QTimer
from PySide6.QtWidgets import QWidget

_NORMAL, _BY_HAND = "_normal_geometry", "_full_screen_by_hand"
WINDOW_MANAGER_MS = 300


def is_full_screen(window: QWidget) -> bool:
    return window.isFullScreen() or bool(getattr(window, _BY_HAND, False))


def enter_full_screen(window: QWidget) -> None:
    if not is_full_screen(window):
        setattr(window, _NORMAL, QRect(window.geometry()))
    window.showFullScreen()

    def unless_done() -> None:                  # a window manager answers within a moment, if any
        screen = window.screen().geometry()
        if window.isFullScreen() and window.geometry() != screen:
            setattr(window, _BY_HAND, True)
            window.setGeometry(screen)
    QTimer.singleShot(WINDOW_MANAGER_MS, window, unless_done)


def leave_full_screen(window: QWidget, maximized: bool = False) -> None:
    setattr(window, _BY_HAND, False)
    window.showMaximized() if maximized else window.showNormal()
    normal = getattr(window, _NORMAL, None)
    if normal is not None and not maximized and window.geometry() != normal:
        window.setGeometry(normal)
