"""A terminal of 80 columns: ``tickbench runs`` shows every run id whole (it is copied from there) and
``tickbench show`` every figure whole, a figure a line."""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tickbench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "app", "--results", str(tmp_path / "r"), *args], capture_output=True,
                          text=True, timeout=300, env=env, cwd=ROOT)


def test_runs_and_show_read_whole_at_80_columns(tmp_path, monkeypatch):
    import app.cli.results as cli_results
    from rich.console import Console

    from workloads.results.store import ResultsStore
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    store = ResultsStore(tmp_path / "r")
    try:
        run_id = Runner(Scenario(workload="noop", users=(1, 2), operations=40), store).run().run_id
    finally:
        store.close()
    narrow = Console(width=80, record=True, force_terminal=False)         # a terminal of 80 columns
    monkeypatch.setattr(cli_results, "console", narrow)
    args = argparse.Namespace(results=tmp_path / "r", run_id=run_id)
    assert cli_results.cmd_runs(args) == 0
    listed = narrow.export_text()
    assert run_id in listed and max(len(line) for line in listed.splitlines()) <= 80, listed
    assert "completed · noop on duckdb" in listed, listed                 # words whole, not cut into pieces
    assert cli_results.cmd_show(args) == 0
    lines = narrow.export_text().splitlines()
    tables = [line for line in lines if set(line) & set("│┃┏┗┌└")]          # prose wraps in the terminal itself
    assert max(len(line) for line in tables) <= 80 and not any("…" in line for line in lines), lines
    p50 = [line for line in lines if re.search(r"│ p50 ms\s+│\s+[\d.,]+ │", line)]
    assert len(p50) == 2, lines                                   # one per step, its value whole


def test_a_refused_value_keeps_its_quotes_and_help_names_the_demo(tmp_path):
    refused = _tickbench(tmp_path, "run", "--cache", "lukewarm")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1] == "tickbench: error: cache must be one of warm, cold, not 'lukewarm'"
    helped = _tickbench(tmp_path, "--help")
    assert "tickbench demo" in " ".join(helped.stdout.split())
