"""The one orchestrator between the GUI and the engine.

It owns the Runner (which owns the worker processes and the writer to the results file), runs it
on a background thread, and turns its state into Qt signals. Widgets only listen.
"""
from __future__ import annotations

import threading
from collections import deque

from PySide6.QtCore import QObject, QTimer, Signal

from workloads.runner import RunResult, Runner
from workloads.scenario import Scenario
from workloads.store import ResultsStore
from workloads.worker import describe_error

POLL_MS = 200  # a snapshot five times a second is plenty for people; charts repaint on their own timers


class RunController(QObject):
    run_started = Signal(str, object)           # run id, Scenario
    snapshot_ready = Signal(object)             # LiveSnapshot
    run_finished = Signal(object)               # RunResult
    run_failed_to_start = Signal(str)           # readable message
    queue_changed = Signal(int)                 # scenarios waiting (demo playlist)

    def __init__(self, store: ResultsStore, parent: QObject | None = None):
        super().__init__(parent)
        self.store = store
        self._runner: Runner | None = None
        self._thread: threading.Thread | None = None
        self._result: RunResult | None = None
        self._queue: deque[Scenario] = deque()
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    @property
    def busy(self) -> bool:
        return self._thread is not None

    @property
    def current_run_id(self) -> str | None:
        return self._runner.run_id if self._runner else None

    def start(self, scenario: Scenario) -> bool:
        """Start one scenario now; False (with a signal) if it cannot start."""
        if self.busy:
            self.run_failed_to_start.emit("a run is already going: stop it first")
            return False
        try:
            runner = Runner(scenario, self.store)
        except Exception as exc:  # bad parameters, unknown target: say so, start nothing
            self.run_failed_to_start.emit(describe_error(exc) if not isinstance(exc, ValueError) else str(exc))
            return False
        self._runner, self._result = runner, None
        self._thread = threading.Thread(target=self._run, name="tickbench-run", daemon=True)
        self._thread.start()
        self._timer.start()
        self.run_started.emit(runner.run_id, scenario)
        return True

    def start_playlist(self, scenarios: list[Scenario]) -> None:
        """Run scenarios one after another, unattended (demo mode)."""
        self._queue.extend(scenarios)
        self.queue_changed.emit(len(self._queue))
        if not self.busy:
            self._start_next()

    def stop(self) -> None:
        """Cancel the running scenario (workers stop within a second) and drop the queue."""
        self._queue.clear()
        self.queue_changed.emit(0)
        if self._runner is not None:
            self._runner.cancel()

    def _run(self) -> None:
        runner = self._runner
        try:
            self._result = runner.run()
        except Exception as exc:  # Runner.run records its own failures; this is the last net
            self._result = RunResult(runner.run_id, "failed", describe_error(exc))

    def _poll(self) -> None:
        if self._runner is None:
            return
        self.snapshot_ready.emit(self._runner.snapshot())
        if self._thread is not None and not self._thread.is_alive():
            self._thread.join()
            result = self._result
            self._timer.stop()
            self._thread = None
            self.run_finished.emit(result)
            if self._queue:
                QTimer.singleShot(1000, self._start_next)

    def _start_next(self) -> None:
        if self._queue and not self.busy:
            scenario = self._queue.popleft()
            self.queue_changed.emit(len(self._queue))
            self.start(scenario)

    def shutdown(self, timeout_s: float = 3.0) -> None:
        """On window close: cancel and wait briefly so no worker outlives the app."""
        self._queue.clear()
        if self._runner is not None:
            self._runner.cancel()
        if self._thread is not None:
            self._thread.join(timeout_s)
