"""The View menu's side of the main window: full screen (with or without demo mode), demo mode
(large fonts, a high-contrast theme), and the light and dark themes."""
from __future__ import annotations

from PySide6.QtCore import QObject, Qt

from app.demo.mode import DemoMode
from app.window.shell import Shell
from widgets.common.full_screen import enter_full_screen, is_full_screen, leave_full_screen


class ViewController(QObject):
    def __init__(self, shell: Shell, demo: DemoMode):
        super().__init__(shell)
        self._shell = shell
        self._demo = demo
        action = shell.action
        self.full_screen_action = action("Full screen", self.toggle_full_screen, "F11", "full_screen")
        self.full_screen_action.setCheckable(True)
        self.full_screen_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        self.demo_action = action("Demo mode", self.toggle_demo, "Ctrl+Shift+D", "demo_mode")
        self.demo_action.setCheckable(True)
        self.theme_actions = [action("Light theme", lambda: self.set_theme("light"), name="theme_light"),
                              action("Dark theme", lambda: self.set_theme("dark"), name="theme_dark")]

    def toggle_demo(self) -> None:
        self._demo.set_active(not self._demo.active)
        self.demo_action.setChecked(self._demo.active)
        self.full_screen_action.setChecked(is_full_screen(self._shell.window))

    def enter_demo(self) -> None:
        if not self._demo.active:
            self.toggle_demo()

    def toggle_full_screen(self) -> None:
        """F11: full screen and back, in demo mode or not."""
        window = self._shell.window
        if is_full_screen(window):
            leave_full_screen(window)
        else:
            enter_full_screen(window)
        self.full_screen_action.setChecked(is_full_screen(window))

    def set_theme(self, name: str) -> None:
        self._demo.set_theme(name)
        if not self._demo.active:          # demo mode's theme is its own, not the window's next start
            self._shell.settings.setValue("theme", name)
