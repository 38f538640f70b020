"""Python's cycle collector runs on the GUI thread only.

Left automatic, a collection starts in whichever thread allocates; in a background reader it can
free a cycle holding Qt objects made on the GUI thread while that thread is inside Qt (a theme
change restyling every widget), and the two wait on each other. A CI run hung 8 minutes like that
(the GUI thread in ``QApplication.setFont``, the history reader in pandas). pyqtgraph's collector
turns automatic collection off and collects on a GUI-thread timer instead.
"""
from __future__ import annotations

import gc

from PySide6.QtWidgets import QApplication
from pyqtgraph.util.garbage_collector import GarbageCollector

_kept: dict[int, GarbageCollector] = {}


def collect_on_gui_thread(app: QApplication, interval_s: float = 1.0) -> GarbageCollector:
    """Turn automatic collection off and collect on a timer of ``app``'s thread (idempotent)."""
    collector = _kept.get(id(app))
    if collector is None:
        collector = _kept[id(app)] = GarbageCollector(interval=interval_s)
    else:
        gc.disable()
        collector.timer.start(int(interval_s * 1000))
    return collector


def collect_anywhere(app: QApplication) -> None:
    """Give collection back to Python, after collecting the young garbage here, on the GUI thread."""
    collector = _kept.get(id(app))
    if collector is not None:
        collector.timer.stop()
    gc.collect(1)            # the young generations only: a full collection per test cost ~0.35 s
    gc.enable()
