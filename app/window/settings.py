"""The main window's settings: its geometry, dock layout and the widgets' state restored at start
and saved at close (QSettings)."""
from __future__ import annotations

from PySide6.QtCore import QRect, Qt, QTimer

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


class MainWindowSettings:
    """Restoring and saving MainWindow's layout and the widgets' state."""

    def _keep_within(self, available: QRect) -> None:
        """A normal (not maximized) window larger than the screen's free area, or partly off it,
        is shrunk and moved into it."""
        if self.isMaximized() or self.isFullScreen():
            return
        frame = self.frameGeometry()
        if available.contains(frame):
            return
        extra = frame.size() - self.geometry().size()          # the window manager's frame, if known
        self.resize(min(self.width(), available.width() - extra.width()),
                    min(self.height(), available.height() - extra.height()))
        frame = self.frameGeometry()
        self.move(max(available.left(), min(frame.left(), available.right() - frame.width() + 1)),
                  max(available.top(), min(frame.top(), available.bottom() - frame.height() + 1)))

    def _restore(self) -> None:
        available = self.screen().availableGeometry()
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
            self._keep_within(available)      # saved on a larger screen: brought within this one
        else:  # first start: most of the screen, the charts need the room; all of it within the screen
            self.setGeometry(opening_geometry(available))
        state = self.settings.value("window/state")
        if state is not None:
            self.restoreState(state)
            saved_docks = str(self.settings.value("window/docks", LEGACY_DOCKS)).split(",")
            newer = [dock for dock in self._docks if dock.objectName() not in saved_docks]
            if newer:       # docks the saved layout did not know come squeezed: a share, once shown
                QTimer.singleShot(0, lambda: self.resizeDocks(newer, [self.height() // 4] * len(newer),
                                                              Qt.Orientation.Vertical))
        else:   # first start: the charts get most of the width, the docks what their forms need
            targets, scenario, load_generators = self._docks
            # Dask load generators are for a few: a tab behind Targets, the scenario form the height
            self.tabifyDockWidget(targets, load_generators)
            targets.raise_()
            self.resizeDocks(self._docks, [max(420, self.width() * 3 // 10)] * len(self._docks),
                             Qt.Orientation.Horizontal)
            self.resizeDocks([targets, scenario], [self.height() * share // 100 for share in DOCK_HEIGHTS],
                             Qt.Orientation.Vertical)
        if not self.targets_panel.registry.profiles():   # profiles kept by versions before targets.json
            load_state(STATE_KEYS["targets"], self.targets_panel, self.settings)
        load_state(STATE_KEYS["dashboard"], self.dashboard, self.settings)
        load_state(STATE_KEYS["history"], self.history, self.settings)
        self.builder.set_targets(self.targets_panel.targets())
        load_state(STATE_KEYS["builder"], self.builder, self.settings)
        load_state(STATE_KEYS["load_generators"], self.load_generators, self.settings)
        self._place_builder_users()
        self._show_scenario_name()

    def save_settings(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("window/docks", ",".join(dock.objectName() for dock in self._docks))
        store_state(STATE_KEYS["dashboard"], self.dashboard, self.settings)
        store_state(STATE_KEYS["history"], self.history, self.settings)
        store_state(STATE_KEYS["builder"], self.builder, self.settings)
        store_state(STATE_KEYS["load_generators"], self.load_generators, self.settings)
        self.settings.sync()
