"""Stored runs played back through the live view at their real pace (``workloads.results.replay``):
a rehearsed demo that cannot fail in the meeting, and engines this laptop cannot run, shown from
runs made earlier. Each snapshot says it is a replay (the header reads "REPLAY")."""
from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Signal

FRAME_MS = 200            # as often as the live view reads a running run's folder
BETWEEN_RUNS_MS = 1000    # as the controller waits between a playlist's runs


class ReplayDriver(QObject):
    run_started = Signal(str)         # run id
    run_finished = Signal(str)        # run id
    done = Signal()                   # every run played
    failed = Signal(str)              # a run could not be read: one line

    def __init__(self, store, background, dashboard, parent: QObject | None = None):
        super().__init__(parent)
        self._store, self._background, self._dashboard = store, background, dashboard
        self._queue: list[str] = []
        self._replay = None
        self._started_at = 0.0
        self._paused_at: float | None = None
        self._frame = QTimer(self)
        self._frame.setInterval(FRAME_MS)
        self._frame.timeout.connect(self._show_frame)
        self._generation = 0

    @property
    def busy(self) -> bool:
        return self._replay is not None or bool(self._queue)

    def play(self, run_ids: list[str]) -> None:
        self.stop()
        self._queue = list(run_ids)
        self._next()

    def stop(self) -> None:
        self._generation += 1              # a read still under way lands nowhere
        self._queue, self._replay, self._paused_at = [], None, None
        self._frame.stop()

    def pause(self) -> None:
        if self._paused_at is None:
            self._paused_at = time.monotonic()
            self._frame.stop()

    def resume(self) -> None:
        if self._paused_at is not None:
            self._started_at += time.monotonic() - self._paused_at
            self._paused_at = None
            if self._replay is not None:
                self._frame.start()

    def _next(self) -> None:
        if not self._queue:
            self.done.emit()
            return
        run_id, generation = self._queue.pop(0), self._generation
        from workloads.results.replay import RunReplay
        # reading a run is the store's work: off the GUI thread
        self._background.run("replay", lambda: RunReplay(self._store, run_id),
                             lambda replay: self._begin(replay, run_id, generation),
                             lambda exc: self._fail(run_id, exc, generation))

    def _begin(self, replay, run_id: str, generation: int) -> None:
        if generation != self._generation:
            return
        self._replay, self._run_id = replay, run_id
        self._dashboard.start_run(replay.snapshot_at(0.0).name)
        self._started_at = time.monotonic()
        self.run_started.emit(run_id)
        if self._paused_at is None:
            self._frame.start()
        else:
            self._paused_at = self._started_at

    def _fail(self, run_id: str, exc: Exception, generation: int) -> None:
        if generation == self._generation:
            self.stop()
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self.failed.emit(f"a recorded run could not be replayed: {reason[:200]}")

    def _show_frame(self) -> None:
        if self._replay is None:
            return
        t = time.monotonic() - self._started_at
        if t < self._replay.duration_s:
            self._dashboard.show_snapshot(self._replay.snapshot_at(t))
            return
        self._frame.stop()
        self._dashboard.show_final(self._replay.snapshot_at(self._replay.duration_s))
        finished, self._replay = self._run_id, None
        self.run_finished.emit(finished)
        generation = self._generation
        QTimer.singleShot(BETWEEN_RUNS_MS, self, lambda: generation == self._generation and self._next())
