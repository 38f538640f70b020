"""The main window's menus and its Run toolbar: Run and Stop always in reach, with the name of what
Run would start; the View menu's full screen, demo mode and theme."""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QToolBar

from app.window.ab_dialog import open_compare_by_running
from app.demo.mode import builtin_playlists, builtin_scenarios
from widgets.reports.demo_card import PRESENTER_KEYS
from widgets.common.full_screen import enter_full_screen, is_full_screen, leave_full_screen


class MainWindowMenus:
    """The menus, the Run toolbar and the View menu's actions of MainWindow."""

    def _action(self, menu, text: str, slot, shortcut=None, name: str = "") -> QAction:
        action = QAction(text, self, objectName=name or text)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self._action(file_menu, "Open scenario…", self.open_scenario_dialog, QKeySequence.StandardKey.Open)
        self._action(file_menu, "Save scenario…", self.save_scenario_dialog, QKeySequence.StandardKey.Save)
        self._action(file_menu, "Reproduce a report…", self.show_gallery, name="reproduce_report")
        builtin = file_menu.addMenu("Built-in scenarios")
        for title, path in builtin_scenarios().items():
            self._action(builtin, title, lambda _=False, p=path: self.load_scenario(p))
        file_menu.addSeparator()
        self._action(file_menu, "Import data…", self.import_data_dialog, "Ctrl+I", "import_data")
        self._action(file_menu, "Open run…", self.open_run_bundle_dialog, name="open_run_bundle")
        self._action(file_menu, "Export chart…", self.export_chart_dialog, "Ctrl+E", "export_chart")
        self._action(file_menu, "Export run report…", self.export_report_dialog, "Ctrl+R", "export_report")
        file_menu.addSeparator()
        self._action(file_menu, "Quit", self.close, QKeySequence.StandardKey.Quit)
        run_menu = bar.addMenu("&Run")
        self.run_action = self._action(run_menu, "Run", self.builder.run_button.click, "F5", "run")
        self.stop_action = self._action(run_menu, "Stop", self.stop_run, "Esc", "stop")
        # F5 works whatever widget has focus, even in a dock floated apart (Esc stays the window's:
        # in a dialog it must close the dialog, not stop a run)
        self.run_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        playlists = run_menu.addMenu("Play a playlist")
        for title, path in builtin_playlists().items():
            self._action(playlists, title, lambda _=False, p=path: self.play_playlist(p))
        playlists.addSeparator()
        self._action(playlists, "Playlist file…", self.open_playlist_dialog, name="open_playlist")
        self._action(run_menu, "Compare by running…", lambda: open_compare_by_running(self), name="compare_by_running")
        view_menu = bar.addMenu("&View")
        self.full_screen_action = self._action(view_menu, "Full screen", self.toggle_full_screen, "F11", "full_screen")
        self.full_screen_action.setCheckable(True)
        self.full_screen_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        self.demo_action = self._action(view_menu, "Demo mode", self.toggle_demo, "Ctrl+Shift+D", "demo_mode")
        self.demo_action.setCheckable(True)
        self._action(view_menu, "Present the reports (narrated demo)…", self.open_present_dialog, name="present")
        self._action(view_menu, "Light theme", lambda: self.set_theme("light"), name="theme_light")
        self._action(view_menu, "Dark theme", lambda: self.set_theme("dark"), name="theme_dark")
        view_menu.addSection("Panels")
        for dock in self._docks:         # a closed panel comes back from here
            view_menu.addAction(dock.toggleViewAction())
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "Keys of the narrated demo", self.show_presenter_keys, name="presenter_keys")

    def show_presenter_keys(self) -> None:
        from PySide6.QtWidgets import QMessageBox
        rows = "".join(f"<tr><td><b>{key}</b></td><td>&nbsp;&nbsp;{what}</td></tr>" for key, _short, what in PRESENTER_KEYS)
        QMessageBox.information(self, "Keys of the narrated demo",
                                "<p>View → Present the reports, or <code>tickbench demo</code>:</p>"
                                f"<table>{rows}</table><p>More in docs/demo.md.</p>")

    def _build_toolbar(self) -> None:
        """Run and Stop always in reach, with the name of what Run would start."""
        bar = QToolBar("Run", self, objectName="run_toolbar")
        self.run_toolbar = bar
        bar.setMovable(False)
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        bar.addAction(self.run_action)
        bar.addAction(self.stop_action)
        bar.addSeparator()
        self.scenario_label = QLabel(objectName="toolbar_scenario")
        bar.addWidget(self.scenario_label)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        self.stop_action.setEnabled(False)
        self._show_scenario_name()

    def _show_scenario_name(self) -> None:
        """The form's scenario; while a run goes, the run's name, and the form's when it differs
        (being edited for later: nothing is queued)."""
        try:
            form = f"<b>{html.escape(self.builder.scenario().name)}</b>"
        except ValueError as exc:
            form = html.escape(str(exc))
        running = f"<b>{html.escape(self._running_name)}</b>"
        if not self.controller.busy:
            text = f"Scenario: {form}"
        elif form == running:
            text = f"Running: {running}"
        else:
            text = f"Running: {running}&nbsp;&nbsp;·&nbsp;&nbsp;in the form: {form}"
        self.scenario_label.setText(text)

    def toggle_demo(self) -> None:
        self.demo.set_active(not self.demo.active)
        self.demo_action.setChecked(self.demo.active)
        self.full_screen_action.setChecked(is_full_screen(self))

    def toggle_full_screen(self) -> None:
        """F11: full screen and back, in demo mode or not."""
        if is_full_screen(self):
            leave_full_screen(self)
        else:
            enter_full_screen(self)
        self.full_screen_action.setChecked(is_full_screen(self))

    def set_theme(self, name: str) -> None:
        self.demo.set_theme(name)
        if not self.demo.active:          # demo mode's theme is its own, not the window's next start
            self.settings.setValue("theme", name)
