"""Demo mode: full screen, large fonts, a high-contrast theme, and unattended playlists."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow

from widgets.common.full_screen import enter_full_screen, leave_full_screen
from widgets.common.theme import apply_theme
from workloads.paths import resources_dir
from workloads.scenario import Scenario
from workloads.playlists import load_playlist

DEMO_FONT_SCALE = 1.5       # the least (a small screen)
BACK_OF_ROOM_SCALE = 2.2    # on 1080 lines: body text ~29 px, axis labels ~26 px, read across a room


def demo_font_scale(screen_lines: int) -> float:
    """Demo mode's font scale on a screen ``screen_lines`` tall (logical pixels): text keeps its share
    of the screen's height, as a projector shows it, never below ``DEMO_FONT_SCALE``."""
    return min(4.0, max(DEMO_FONT_SCALE, round(BACK_OF_ROOM_SCALE * screen_lines / 1080, 2)))
DEMO_THEME = "dark"         # white on black: what a projector shows best (`tickbench demo --theme` chooses)


def builtin_playlists() -> dict[str, Path]:
    folder = resources_dir() / "scenarios" / "playlists"
    playlists = {}
    for path in sorted(folder.glob("*.toml")):
        try:
            title, _ = load_playlist(path)
        except ValueError:
            continue  # a broken file is skipped, not fatal; the test suite checks the shipped ones
        playlists[title] = path
    return playlists


def builtin_scenarios() -> dict[str, Path]:
    folder = resources_dir() / "scenarios"
    scenarios = {}
    for path in sorted(folder.glob("*.toml")):
        try:
            scenarios[Scenario.load_toml(path).name] = path
        except ValueError:
            continue
    return scenarios


class DemoMode(QObject):
    toggled = Signal(bool)

    def __init__(self, window: QMainWindow, theme_name: str = "light"):
        super().__init__(window)
        self._window = window
        self.theme_name = theme_name          # the window's own, back when demo mode ends
        self.demo_theme = DEMO_THEME
        self.active = False
        self._was_maximized = False
        self._hidden_docks: list = []
        self._front_docks: list = []

    def set_theme(self, name: str) -> None:
        """The theme of the mode the window is in now (demo mode keeps its own)."""
        if self.active:
            self.demo_theme = name
        else:
            self.theme_name = name
        apply_theme(QApplication.instance(), name, self._scale() if self.active else 1.0)

    def _scale(self) -> float:
        screen = self._window.screen()
        return demo_font_scale(screen.geometry().height() if screen is not None else 768)

    def set_active(self, active: bool) -> None:
        if active == self.active:
            return
        self.active = active
        apply_theme(QApplication.instance(), self.demo_theme if active else self.theme_name,
                    self._scale() if active else 1.0)
        if active:
            self._was_maximized = self._window.isMaximized()
            # The audience watches the charts: side panels make way, and come back afterwards.
            self._hidden_docks = [d for d in self._window.findChildren(QDockWidget) if d.isVisible()]
            # of docks sharing tabs, the one in front: showing them again would put the last in front
            self._front_docks = [d for d in self._hidden_docks if not d.visibleRegion().isEmpty()]
            for dock in self._hidden_docks:
                dock.hide()
            enter_full_screen(self._window)
        else:
            for dock in self._hidden_docks:
                dock.show()
            for dock in self._front_docks:
                dock.raise_()
            self._hidden_docks, self._front_docks = [], []
            leave_full_screen(self._window, self._was_maximized)
        self.toggled.emit(active)
