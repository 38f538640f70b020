"""LocalEnginesButton: "Start local engine…" with a menu of the engines Tickbench can start here
(QuestDB, PostgreSQL, Apache Druid; ``workloads.local_engines``). Starting runs in a thread of its
own, never on the GUI thread: progress, the started engine or the failure come back as signals.
Druid's cost (~3 GB, five processes) is shown and confirmed before it starts. ``stop_started()``
stops the engines a window started, this one's and those an earlier window left running for a run
it let finish in the background (the app calls it when it closes)."""
from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QMenu, QMessageBox, QPushButton

from workloads.local_engines import EngineStartError, available, start_engine, stop_engine
from workloads.local_engines.base import WINDOW, remember, running
from workloads.targets.engines import missing_client

CONFIRM = {"druid"}          # heavy enough to ask first


class LocalEnginesButton(QPushButton):
    engine_started = Signal(object)     # LocalEngine
    start_failed = Signal(str, str)     # kind, message
    progress = Signal(str)

    def __init__(self, home: Path, parent=None):
        super().__init__("Start local engine…", parent)
        self.setObjectName("start_engine_button")
        self.setToolTip("Start a private QuestDB, PostgreSQL or Druid on this computer (loopback only) to try it")
        self.home = Path(home)
        # kind -> LocalEngine started from a window: this one's, and those an earlier window left
        # running for a run it let finish in the background (stopped when this one closes)
        self.started: dict[str, object] = {k: e for k, e in running(self.home).items() if e.owner == WINDOW}
        self.starting: set[str] = set()
        self._threads: list[threading.Thread] = []
        self.setMenu(QMenu(self))
        self.menu().aboutToShow.connect(self._fill_menu)
        self.engine_started.connect(self._remember)
        self.start_failed.connect(lambda kind, _message: self.starting.discard(kind))

    def _fill_menu(self) -> None:
        menu = self.menu()
        menu.clear()
        for kind, (label, note) in available().items():
            action = menu.addAction(label)
            action.setToolTip(note)
            action.setStatusTip(note)
            action.setEnabled(kind not in self.starting)
            action.triggered.connect(lambda _checked=False, kind=kind: self.start(kind))
        menu.setToolTipsVisible(True)

    def start(self, kind: str, confirm: bool = True) -> bool:
        """Start ``kind`` in a thread; False when the user declines (Druid) or it is starting."""
        engines = available()
        if kind in self.starting or kind not in engines:
            return False
        label, note = engines[kind]
        missing = missing_client(kind, server=True)
        if missing:       # before the server: a started engine no run can reach is a dead end
            self.start_failed.emit(kind, f"{label} not started: its client is {missing}")
            return False
        if confirm and kind in CONFIRM:
            answer = QMessageBox.question(self, f"Start {label}?", f"{label} is heavy: {note}\n\nStart it now?")
            if answer != QMessageBox.StandardButton.Yes:
                return False
        self.starting.add(kind)
        self.progress.emit(f"Starting {label}: {note}")

        def run() -> None:
            try:
                engine = start_engine(self.home, kind, lambda text: self._emit(self.progress, f"{label}: {text}"))
            except (EngineStartError, OSError) as exc:
                self._emit(self.start_failed, kind, f"{label} did not start: {exc}")
                return
            self._emit(self.engine_started, engine)
        thread = threading.Thread(target=run, name=f"tickbench-start-{kind}", daemon=True)
        self._threads.append(thread)
        thread.start()
        return True

    @staticmethod
    def _emit(signal, *args) -> None:
        try:
            signal.emit(*args)
        except RuntimeError:      # the button was deleted meanwhile
            pass

    def _remember(self, engine) -> None:
        self.starting.discard(engine.kind)
        engine.owner = WINDOW
        remember(self.home, engine)              # the next window knows it is a window's to stop
        self.started[engine.kind] = engine

    def stop_started(self) -> list[str]:
        """Stop the engines started from here; the kinds stopped."""
        stopped = [kind for kind in list(self.started) if stop_engine(self.home, kind)]
        self.started.clear()
        return stopped
