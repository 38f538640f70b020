"""Reading the results off the GUI thread: a function runs on Qt's thread pool and its result (or
its error) comes back on the GUI thread, newest request first: an answer that a newer request of
the same name has overtaken is dropped, so a slow read never paints over a fresh one."""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal


class _Relay(QObject):
    done = Signal(str, int, object, object)        # name, generation, result, error


class _Job(QRunnable):
    def __init__(self, relay: _Relay, name: str, generation: int, work: Callable[[], Any]):
        super().__init__()
        self.relay, self.name, self.generation, self.work = relay, name, generation, work

    def run(self) -> None:
        try:
            result, error = self.work(), None
        except Exception as exc:  # delivered to the caller's error handler on the GUI thread
            result, error = None, exc
        self.relay.done.emit(self.name, self.generation, result, error)


class Background(QObject):
    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._relay = _Relay(self)
        self._relay.done.connect(self._deliver)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)          # one reader at a time: the store has one connection
        self._generation: dict[str, int] = {}
        self._handlers: dict[tuple[str, int], tuple[Callable, Callable]] = {}

    def run(self, name: str, work: Callable[[], Any], on_result: Callable[[Any], None],
            on_error: Callable[[Exception], None]) -> None:
        generation = self._generation.get(name, 0) + 1
        self._generation[name] = generation
        self._handlers[(name, generation)] = (on_result, on_error)
        self._pool.start(_Job(self._relay, name, generation, work))

    def wait(self, timeout_ms: int = 30_000) -> bool:
        """Until every job has run (tests, and the window closing)."""
        return self._pool.waitForDone(timeout_ms)

    @property
    def busy(self) -> bool:
        return bool(self._handlers)

    def _deliver(self, name: str, generation: int, result: Any, error: Exception | None) -> None:
        on_result, on_error = self._handlers.pop((name, generation))
        if generation != self._generation.get(name):
            return                                  # overtaken by a newer request
        if error is not None:
            on_error(error)
        else:
            on_result(result)
