"""What the main window's controllers share, and nothing else: the catalog, the settings, the
reader threads, the run controller, the targets' passwords, and the window as the parent of their
dialogs and the owner of the status bar. Controllers talk to one another only through their
signals, which ``app.window.main_window`` wires; what they all need is here."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow

from app.window.background import Background
from app.window.run_controller import RunController
from workloads.results.store import ResultsStore
from workloads.scenario import Scenario


class Shell(QObject):
    error = Signal(str)          # one line for the person: the status bar and the scenario form

    def __init__(self, window: QMainWindow, store: ResultsStore, data_dir: Path, settings: QSettings,
                 runs: RunController, background: Background, targets_panel):
        super().__init__(window)
        self.window = window
        self.store = store
        self.data_dir = data_dir
        self.settings = settings
        self.runs = runs
        self.background = background
        self.cluster_background = Background(window)    # a scheduler's 10 s timeout must not hold the store's reads
        self._targets = targets_panel

    def say(self, text: str, timeout_ms: int = 0) -> None:
        self.window.statusBar().showMessage(text, timeout_ms)

    def show_error(self, message: str) -> None:
        self.error.emit(message)

    def targets(self) -> list:
        """(key, label, kind, config) of every target the targets panel offers."""
        return self._targets.targets()

    def with_password(self, scenario: Scenario) -> Scenario | None:
        """Server profiles need their password at run time; local targets pass through. None: the
        person gave none; ValueError: a local engine that is not running (how to start it)."""
        key = scenario.target_config.get("target_key")
        if not key or key not in {p.key for p in self._targets.registry.profiles()}:
            return scenario
        config = self._targets.resolve_config(key)
        if config is None:
            return None
        return scenario.with_changes(target_config={**config, "target_key": key})

    def action(self, text: str, slot, shortcut=None, name: str = "") -> QAction:
        """A menu action of the window (its parent, so its shortcut works wherever the window has focus)."""
        action = QAction(text, self.window, objectName=name or text)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        return action
