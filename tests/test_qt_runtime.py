"""PySide6 6.12.0 on Python 3.11 drops a reference to None on every void call and to True on every
Signal.emit, so a live-plotting process aborts within seconds ("none_dealloc"). pyproject.toml
pins below 6.12; this test fails if an installed PySide6 has that bug."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QObject, QPointF, Signal
class S(QObject):
    fired = Signal()
s, p = S(), QPointF()
none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
for _ in range(200_000):      # far beyond the few thousand that abort an affected build
    p.setX(1.0)
    s.fired.emit()
print("leaks", none_before - sys.getrefcount(None), true_before - sys.getrefcount(True))
"""


def test_pyside_keeps_references_to_none_and_true():
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    leaked_none, leaked_true = (int(v) for v in done.stdout.split()[1:])
    assert abs(leaked_none) < 1000 and abs(leaked_true) < 1000, done.stdout
