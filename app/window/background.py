"""Reading the results off the GUI thread: a function runs on a reader thread and its result (or its
error) comes back on the GUI thread, newest request first: an answer that a newer request of the
same name has overtaken is dropped, so a slow read never paints over a fresh one.

The reader thread never calls into Qt. Its answer is a plain ``Future`` that a GUI-thread timer
collects while a job is out: once (2026-11-28) a result emitted as a Qt signal from a pool thread,
while the GUI thread was restyling the application for demo mode, froze both threads.
"""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor, wait as wait_for_futures
from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer

COLLECT_EVERY_MS = 15        # how soon a finished read is painted: under a frame at 60 Hz


class Background(QObject):
    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        # one reader at a time: the store has one connection
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tickbench-reader")
        self._generation: dict[str, int] = {}
        self._jobs: list[tuple[str, int, Future, Callable, Callable]] = []
        self._collector = QTimer(self)
        self._collector.setInterval(COLLECT_EVERY_MS)
        self._collector.timeout.connect(self._collect)

    def run(self, name: str, work: Callable[[], Any], on_result: Callable[[Any], None],
            on_error: Callable[[Exception], None]) -> None:
        generation = self._generation.get(name, 0) + 1
        self._generation[name] = generation
        self._jobs.append((name, generation, self._pool.submit(work), on_result, on_error))
        self._collector.start()

    def wait(self, timeout_ms: int = 30_000) -> bool:
        """Until every job has run, its answer delivered (tests, and the window closing)."""
        _, pending = wait_for_futures([job[2] for job in self._jobs], timeout=timeout_ms / 1000)
        self._collect()
        return not pending

    @property
    def busy(self) -> bool:
        return bool(self._jobs)

    def _collect(self) -> None:
        finished, waiting = [], []
        for job in self._jobs:                          # one look at each: a job may finish meanwhile
            (finished if job[2].done() else waiting).append(job)
        self._jobs = waiting
        if not self._jobs:
            self._collector.stop()
        for name, generation, future, on_result, on_error in finished:
            if generation != self._generation.get(name):
                continue                                # overtaken by a newer request
            error = future.exception()
            if error is not None:
                on_error(error)
            else:
                on_result(future.result())
