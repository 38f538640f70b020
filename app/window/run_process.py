"""A run in a process of its own: ``tickbench run --scenario-stdin --live``, the command line's own
code path, in a session of its own so that it outlives the window if asked to. Qt-free.

The scenario goes in on standard input (a password in it is never written to disk); what the
process prints goes to ``process.log`` in the run's folder, which explains a run that could not
start."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from workloads.scenario import Scenario

LOG_FILE = "process.log"
PROJECT_ROOT = Path(__file__).resolve().parent.parent


RUN_NICE = 5      # the window's runs yield the CPU to it: it stays responsive with 128 busy workers


def lower_priority(nice: int) -> None:
    """Lower this process's CPU priority (its workers inherit it) by ``nice``.

    Linux's autogroup scheduling makes each session a group that gets an equal share of the CPU
    whatever its processes' nice values, and a run the window starts is a session of its own: so
    the group's nice is lowered as well, or 128 busy workers would still take half of the window's
    core. Only in a session of its own: a terminal's session is the person's, not the run's."""
    if not nice or not hasattr(os, "nice"):
        return
    os.nice(nice)
    if os.getsid(0) == os.getpid():
        try:
            Path("/proc/self/autogroup").write_text(str(nice))
        except OSError:
            pass                      # no autogroups (other kernels, containers): nice alone applies


def run_command(results: Path, run_id: str, nice: int = RUN_NICE, force: bool = False) -> list[str]:
    """The command line that runs one scenario read from standard input; ``force`` runs it even
    beyond what this machine looks able to hold (``workloads.run.limits``: refused otherwise)."""
    entry = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "app"]
    return [*entry, "--results", str(results), "run", "--scenario-stdin", "--run-id", run_id, "--live",
            "--nice", str(nice), *(("--force",) if force else ())]


def start_run_process(scenario: Scenario, results: Path, runs_dir: Path, run_id: str,
                      force: bool = False) -> subprocess.Popen:
    folder = Path(runs_dir) / run_id
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOG_FILE, "ab") as log:
        process = subprocess.Popen(run_command(results, run_id, force=force), stdin=subprocess.PIPE, stdout=log,
                                   stderr=subprocess.STDOUT, cwd=PROJECT_ROOT, start_new_session=True,
                                   env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        process.stdin.write(json.dumps(scenario.to_dict(), default=str).encode())
        process.stdin.close()
    except OSError:
        pass                          # it died at once: its log says why (read by the caller)
    return process


def log_tail(runs_dir: Path, run_id: str, lines: int = 6) -> str:
    """The last lines the run's process printed (why it could not start)."""
    try:
        text = (Path(runs_dir) / run_id / LOG_FILE).read_text(errors="replace")
    except FileNotFoundError:
        return ""
    return "\n".join(line for line in text.strip().splitlines()[-lines:] if line.strip())
