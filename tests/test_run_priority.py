"""A run the window starts yields the CPU to the window, and a run from a terminal leaves the
terminal's session alone. Real run processes, reading what each recorded about itself."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.window.run_process import RUN_NICE, start_run_process
from workloads.run.environment import autogroup_nice
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore

ROOT = Path(__file__).resolve().parent.parent
AUTOGROUPS = Path("/proc/self/autogroup").exists()


def _scenario() -> Scenario:
    return Scenario(name="priority", workload="noop", users=(1,), operations=5)


def test_a_run_started_like_the_window_lowers_its_own_group(tmp_path):
    store = ResultsStore(tmp_path / "results")
    process = start_run_process(_scenario(), store.path, store.runs_dir, "windowed")
    assert process.wait(timeout=120) == 0
    environment = store.run("windowed")["environment"]
    assert environment["nice"] == RUN_NICE
    # its own session is its own scheduling group: the group yields, not only its processes
    assert environment["autogroup_nice"] == (RUN_NICE if AUTOGROUPS else None)


@pytest.mark.skipif(not AUTOGROUPS, reason="this kernel has no autogroups: nice alone applies")
def test_a_run_from_a_terminal_leaves_the_terminal_session_alone(tmp_path):
    before = autogroup_nice()
    done = subprocess.run([sys.executable, "-m", "app", "--results", str(tmp_path / "results"), "run",
                           "--scenario-stdin", "--run-id", "terminal", "--nice", "3"],
                          input=json.dumps(_scenario().to_dict()), text=True, capture_output=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    environment = ResultsStore(tmp_path / "results").run("terminal")["environment"]
    assert environment["nice"] == 3
    assert environment["autogroup_nice"] == before == autogroup_nice()
