"""Bad input and rude endings, as a user meets them (issue 23, the command line's half): each case
gets one clear line on standard error and an exit code other than 0, never a traceback, and loses
nothing that was measured. The real CLI in a subprocess wherever the behaviour is the CLI's."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _env(home: Path) -> dict[str, str]:
    return {"TICKBENCH_HOME": str(home), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen",
            "COLUMNS": "200", "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


def tickbench(*args: str, home: Path, timeout: float = 240, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, input=stdin,
                          timeout=timeout, env=_env(home), cwd=ROOT)


def one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> str:
    """The one line a refused command prints; it must name every fragment."""
    assert result.returncode not in (0, None), result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def _run_folders(home: Path) -> list[Path]:
    return sorted(p for p in (home / "results.duckdb" / "runs").glob("*") if p.is_dir())


# --- (6) Ctrl-C and SIGTERM on the plain `tickbench run` cancel as --live does -----------------

@pytest.mark.parametrize("sig, group", [(signal.SIGINT, True), (signal.SIGTERM, False)],
                         ids=["ctrl-c-to-the-terminal-group", "sigterm-to-the-run"])
def test_a_signal_cancels_the_plain_run_and_keeps_its_records(tmp_path, sig, group):
    proc = subprocess.Popen([sys.executable, "-m", "app", "run", "--workload", "noop", "--users", "2",
                             "--duration", "120"], cwd=ROOT, env=_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    # the workers are measuring once records reach the run's folder
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(f.glob("ops/*.parquet") for f in _run_folders(tmp_path)):
        time.sleep(0.5)
    time.sleep(1.0)
    (os.killpg if group else os.kill)(proc.pid, sig)    # Ctrl-C reaches every process of the terminal's group
    out, err = proc.communicate(timeout=90)
    assert "Traceback" not in err and "IndexError" not in err, err
    assert proc.returncode == 1, err
    folder, = _run_folders(tmp_path)
    run = json.loads((folder / "run.json").read_text())
    assert run["status"] == "cancelled", run
    steps = json.loads((folder / "steps.json").read_text())
    assert [s["status"] for s in steps] == ["cancelled"]
    workers = json.loads((folder / "workers.json").read_text())
    assert [w["state"] for w in workers] == ["cancelled", "cancelled"], workers
    assert f"run {run['run_id']}: cancelled" in out
    shown = tickbench("show", run["run_id"], home=tmp_path)
    assert shown.returncode == 0 and "cancelled" in shown.stdout
    ops = tickbench("export", run["run_id"], "--format", "parquet", "--out", str(tmp_path / "x"), home=tmp_path)
    assert ops.returncode == 0, ops.stderr
    import pandas as pd
    assert (pd.read_parquet(tmp_path / "x" / f"{run['run_id']}_ops.parquet")["kind"] == "measured").sum() > 0
    leftovers = [p.name for p in folder.rglob("*") if p.name.startswith(".") or p.suffix in (".tmp", ".part")]
    assert not leftovers, leftovers
