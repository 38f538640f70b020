"""A window already open sees runs another process makes or deletes in its catalog (the command line,
a second window): its History tab lists them without a restart."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.test_bundles import window  # noqa: F401  (the main window on a fresh catalog)
from workloads.results.store import ResultsStore

ROOT = Path(__file__).resolve().parent.parent


def test_a_run_made_from_the_command_line_reaches_an_open_window(qtbot, window, tmp_path):  # noqa: F811
    assert window.history.visible_run_ids() == []
    done = subprocess.run([sys.executable, "-m", "app", "--results", str(tmp_path / "results"), "run", "--workload",
                           "noop", "--operations", "3", "--param", "hold_s=0.01"], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env={**os.environ, "TICKBENCH_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    (made,) = [p.name for p in (tmp_path / "results" / "runs").iterdir()]
    qtbot.waitUntil(lambda: window.history.visible_run_ids() == [made], timeout=20_000)
    other = ResultsStore(tmp_path / "results")         # a second window's store deletes it
    try:
        other.delete_run(made)
    finally:
        other.close()
    qtbot.waitUntil(lambda: window.history.visible_run_ids() == [], timeout=20_000)
