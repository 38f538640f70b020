"""A terminal of 80 columns: ``tickbench runs`` shows every run id whole (it is copied from there) and
``tickbench show`` every figure whole, a figure a line."""
from __future__ import annotations

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


def test_runs_and_show_read_whole_at_80_columns(tmp_path):
    done = _tickbench(tmp_path, "run", "--workload", "noop", "--users", "1,2", "--operations", "40")
    assert done.returncode == 0, done.stderr
    run_id = re.search(r"run (\d{8}-\d{6}-[0-9a-f]{4}): completed", done.stdout).group(1)
    listed = _tickbench(tmp_path, "runs")
    assert listed.returncode == 0 and run_id in listed.stdout, listed.stdout
    assert max(len(line) for line in listed.stdout.splitlines()) <= 80
    shown = _tickbench(tmp_path, "show", run_id)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    tables = [line for line in lines if set(line) & set("│┃┏┗┌└")]          # prose wraps in the terminal itself
    assert max(len(line) for line in tables) <= 80 and not any("…" in line for line in lines), shown.stdout
    p50 = [line for line in lines if re.search(r"│ p50 ms\s+│\s+[\d.,]+ │", line)]
    assert len(p50) == 2, shown.stdout                          # one per step, its value whole


def test_a_refused_value_keeps_its_quotes_and_help_names_the_demo(tmp_path):
    refused = _tickbench(tmp_path, "run", "--cache", "lukewarm")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1] == "tickbench: error: cache must be one of warm, cold, not 'lukewarm'"
    helped = _tickbench(tmp_path, "--help")
    assert "tickbench demo" in " ".join(helped.stdout.split())
