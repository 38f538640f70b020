"""The main window's layout kept between starts: its geometry and docks restored at start and saved
at close (QSettings), and a first start that fits the screen; the widgets' own state beside it."""
from __future__ import annotations

from PySide6.QtCore import QRect, QSettings, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow

from widgets.common.state import load_state, store_state

STATE_KEYS = {"builder": "state/scenario_builder", "targets": "state/targets_panel",
              "dashboard": "state/dashboard", "history": "state/run_history",
              "load_generators": "state/load_generators"}
LEGACY_DOCKS = "targets_dock,scenario_dock"     # the docks of a layout saved before "window/docks"
DOCK_HEIGHTS = (45, 55)         # % of the height: targets (load generators behind), the scenario form
OPENING_SHARE = 0.92            # of the screen's free area, on first start


def opening_geometry(available: QRect) -> QRect:
    """The window's first place on a screen whose free area (without panels and docks) is
    ``available``: most of it (the charts need the room), at most 1600x1000, with room left for the
    window manager's frame (most of the spare height above it, for a title bar), centred across;
    never more than the area itself."""
    width = min(1600, int(available.width() * OPENING_SHARE), available.width())
    height = min(1000, int(available.height() * OPENING_SHARE), available.height())
    return QRect(available.left() + (available.width() - width) // 2,
                 available.top() + (available.height() - height) * 2 // 3, width, height)


class WindowLayout:
    """Where the window and its docks (targets, scenario, load generators) were, and each widget's state."""

    def __init__(self, window: QMainWindow, settings: QSettings, docks: list[QDockWidget]):
        self._window = window
        self._settings = settings
        self._docks = docks

    def _keep_within(self, available: QRect) -> None:
        """A normal (not maximized) window larger than the screen's free area, or partly off it,
        is shrunk and moved into it."""
        window = self._window
        if window.isMaximized() or window.isFullScreen():
            return
        frame = window.frameGeometry()
        if available.contains(frame):
            return
        extra = frame.size() - window.geometry().size()          # the window manager's frame, if known
        window.resize(min(window.width(), available.width() - extra.width()),
                      min(window.height(), available.height() - extra.height()))
        frame = window.frameGeometry()
        window.move(max(available.left(), min(frame.left(), available.right() - frame.width() + 1)),
                    max(available.top(), min(frame.top(), available.bottom() - frame.height() + 1)))

    def restore(self) -> None:
        window, settings, docks = self._window, self._settings, self._docks
        available = window.screen().availableGeometry()
        geometry = settings.value("window/geometry")
        if geometry is not None:
            window.restoreGeometry(geometry)
            self._keep_within(available)      # saved on a larger screen: brought within this one
        else:  # first start: most of the screen, the charts need the room; all of it within the screen
            window.setGeometry(opening_geometry(available))
        state = settings.value("window/state")
        if state is not None:
            window.restoreState(state)
            saved_docks = str(settings.value("window/docks", LEGACY_DOCKS)).split(",")
            newer = [dock for dock in docks if dock.objectName() not in saved_docks]
            if newer:       # docks the saved layout did not know come squeezed: a share, once shown
                QTimer.singleShot(0, lambda: window.resizeDocks(newer, [window.height() // 4] * len(newer),
                                                                Qt.Orientation.Vertical))
        else:   # first start: the charts get most of the width, the docks what their forms need
            targets, scenario, load_generators = docks
            # Dask load generators are for a few: a tab behind Targets, the scenario form the height
            window.tabifyDockWidget(targets, load_generators)
            targets.raise_()
            window.resizeDocks(docks, [max(420, window.width() * 3 // 10)] * len(docks), Qt.Orientation.Horizontal)
            window.resizeDocks([targets, scenario], [window.height() * share // 100 for share in DOCK_HEIGHTS],
                               Qt.Orientation.Vertical)

    def load(self, key: str, widget) -> None:
        """``widget``'s state as it was saved (``STATE_KEYS[key]``)."""
        load_state(STATE_KEYS[key], widget, self._settings)

    def save(self, widgets: dict) -> None:
        """The window, its docks and ``widgets``' states (key -> widget), written at once."""
        settings = self._settings
        settings.setValue("window/geometry", self._window.saveGeometry())
        settings.setValue("window/state", self._window.saveState())
        settings.setValue("window/docks", ",".join(dock.objectName() for dock in self._docks))
        for key, widget in widgets.items():
            store_state(STATE_KEYS[key], widget, settings)
        settings.sync()
