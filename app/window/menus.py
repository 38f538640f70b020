"""The main window's menu bar, laid out in one place from the actions the controllers own: File
(scenarios, reports, data, runs, exports), Run (Run, Stop, playlists, comparing by running), View
(full screen, demo mode, the narrated demo, themes, the panels) and Help."""
from __future__ import annotations

from PySide6.QtWidgets import QMainWindow


def build_menus(window: QMainWindow, controllers, quit_action, docks) -> None:
    """``controllers``: the window's (scenario, runs, gallery, bundles, exports, view, presenting, comparing)."""
    scenario, runs, gallery, bundles, exports, view, presenting, comparing = controllers
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.addActions([scenario.open_action, scenario.save_action, gallery.reproduce_action])
    file_menu.addMenu("Built-in scenarios").addActions(scenario.builtin_actions)
    file_menu.addSeparator()
    file_menu.addActions([scenario.import_action, bundles.open_action, exports.chart_action, exports.report_action])
    file_menu.addSeparator()
    file_menu.addAction(quit_action)
    run_menu = bar.addMenu("&Run")
    run_menu.addActions([scenario.run_action, scenario.stop_action])
    playlists = run_menu.addMenu("Play a playlist")
    playlists.addActions(runs.playlist_actions)
    playlists.addSeparator()
    playlists.addAction(runs.playlist_file_action)
    run_menu.addAction(comparing.action)
    view_menu = bar.addMenu("&View")
    view_menu.addActions([view.full_screen_action, view.demo_action, presenting.present_action, *view.theme_actions])
    view_menu.addSection("Panels")
    for dock in docks:         # a closed panel comes back from here
        view_menu.addAction(dock.toggleViewAction())
    bar.addMenu("&Help").addAction(presenting.keys_action)
