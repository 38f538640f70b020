"""The main window's settings: its geometry, dock layout and the widgets' state restored at start
and saved at close (QSettings)."""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer

from widgets.state import load_state, store_state


STATE_KEYS = {"builder": "state/scenario_builder", "targets": "state/targets_panel",
              "dashboard": "state/dashboard", "history": "state/run_history",
              "load_generators": "state/load_generators"}
LEGACY_DOCKS = "targets_dock,scenario_dock"     # the docks of a layout saved before "window/docks"
DOCK_HEIGHTS = (36, 64)         # % of the height: targets (load generators behind), the scenario form


class MainWindowSettings:
    """Restoring and saving MainWindow's layout and the widgets' state."""

    def _restore(self) -> None:
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:  # first start: most of the screen, the charts need the room
            screen = self.screen().availableGeometry()
            self.resize(min(1600, int(screen.width() * 0.92)), min(1000, int(screen.height() * 0.92)))
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
