"""An import on a thread of its own, for the import dialogs: progress and the outcome come back to
the GUI thread as queued signals, and a cancel asks the import to stop at its next chunk."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from workloads.datasets.csv_import import ImportCancelled

# (progress(done, total, message), cancel event) -> the imported dataset
ImportCall = Callable[[Callable[[int, int, str], None], threading.Event], object]


class ImportJob(QObject):
    progressed = Signal(int, int, str)   # from the import thread, queued to the GUI thread
    finished = Signal(object)            # ("ok", dataset, seconds) | ("error", message) | ("cancelled", message)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._thread: threading.Thread | None = None
        self.cancel_event = threading.Event()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, call: ImportCall, expected: tuple[type[BaseException], ...]) -> None:
        """Run ``call`` on a new thread; ``expected`` errors are shown as their message alone."""
        self.cancel_event = threading.Event()
        self._thread = threading.Thread(target=self._work, args=(call, expected, self.cancel_event),
                                        name="tickbench-import", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        self.cancel_event.set()

    def join(self) -> None:
        """After ``finished``: the thread has only its return left."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _work(self, call: ImportCall, expected: tuple[type[BaseException], ...], cancel: threading.Event) -> None:
        """Runs on the import thread: only emits signals."""
        started = time.perf_counter()
        try:
            dataset = call(self.progressed.emit, cancel)
            outcome = ("ok", dataset, time.perf_counter() - started)
        except ImportCancelled as exc:
            outcome = ("cancelled", str(exc))
        except expected as exc:
            outcome = ("error", str(exc))
        except Exception as exc:  # anything else still reaches the user, not a silent thread
            outcome = ("error", f"{type(exc).__name__}: {exc}")
        try:
            self.finished.emit(outcome)
        except RuntimeError:
            pass  # the dialog was destroyed with the application: nobody is listening
