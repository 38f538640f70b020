"""Guard against a PySide6 build that releases references to None and True it never took.

PySide6/shiboken6 6.12.0 on Python 3.11 returns None from void methods (QPainter.drawLine,
QWidget.update, QTimer.setInterval, ...) and uses True in Signal.emit without taking a reference
first. On Python >= 3.12 these objects are immortal and nothing happens; on 3.11 their counts fall
by one per call and the process aborts ("Fatal Python error: none_dealloc: deallocating None",
or bool_dealloc) after a few thousand calls, i.e. after a second or two of live plotting.
PySide6 6.11.3 does not have the bug (measured with the probes below).

The right fix is a PySide6 version without the bug. Until the environment has one, this module
detects the bug with a probe and, only if present, gives None, True and False reference counts so
large that they can never reach zero: what Python 3.12 does for every process.
Imported by widgets/__init__, so any process that uses a widget is covered.
"""
from __future__ import annotations

import ctypes
import sys
import warnings

_PROBE_CALLS = 64
_state = {"checked": False, "leaks": False}


def none_refcount_leak_per_call() -> float:
    """References to None lost per void PySide6 call (0.0 on a correct build)."""
    from PySide6.QtCore import QPointF

    point = QPointF(1.0, 1.0)
    before = sys.getrefcount(None)
    for _ in range(_PROBE_CALLS):
        point.setX(2.0)
    return (before - sys.getrefcount(None)) / _PROBE_CALLS


def true_refcount_leak_per_emit() -> float:
    """References to True lost per Signal.emit (0.0 on a correct build)."""
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        fired = Signal()

    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(_PROBE_CALLS):
        probe.fired.emit()
    return (before - sys.getrefcount(True)) / _PROBE_CALLS


def guard_none_refcount() -> bool:
    """Detect the PySide6 None-refcount bug; if present, neutralise it. Returns True if it was found."""
    if _state["checked"]:
        return _state["leaks"]
    _state["checked"] = True
    if sys.version_info >= (3, 12):
        return False                     # None is immortal: the bug is harmless
    if none_refcount_leak_per_call() < 0.5 and true_refcount_leak_per_emit() < 0.5:
        return False
    import PySide6

    _state["leaks"] = True
    for singleton in (None, True, False):
        # ob_refcnt is the first field of every CPython object (a Py_ssize_t).
        ctypes.c_ssize_t.from_address(id(singleton)).value += 1 << 60
    warnings.warn(
        f"PySide6 {PySide6.__version__} loses references to None and True on Python "
        f"{sys.version.split()[0]}; Tickbench made them immortal to avoid a crash. "
        "Install another PySide6 (6.11.3 is known good).", RuntimeWarning, stacklevel=2)
    return True
