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


# --- (8) sizes validated before anything starts ------------------------------------------------

@pytest.mark.parametrize("args, fragments", [
    (["--duration", "nan"], ["--duration", "finite", "nan"]),
    (["--duration", "inf"], ["--duration", "finite", "inf"]),
    (["--duration", "-1"], ["--duration", "above 0"]),
    (["--duration", "0"], ["--duration", "above 0"]),
    (["--users", "100000"], ["users: 100,000", "of memory", "--force"]),
    (["--workload", "read-day", "--operations", "1", "--days", "100000", "--rows-per-day", "1000000000"],
     ["rows per day", "in memory", "of disk", "GB", "--force"]),
    (["--workload", "read-day", "--operations", "1", "--days", "3000", "--rows-per-day", "100000000"],
     ["days x rows per day: 3,000 x 100,000,000", "TB of disk", "--force"]),
    (["--operations", "-2"], ["must not be negative"]),
    (["--days", "0"], ["days must be at least 1"]),
])
def test_sizes_beyond_meaning_or_the_machine_are_refused_before_anything_starts(tmp_path, args, fragments):
    result = tickbench("run", "--workload", "noop", *args, home=tmp_path, timeout=60)
    one_line_error(result, *fragments)
    assert not _run_folders(tmp_path)                   # nothing started, nothing stored


def test_the_engine_checks_sizes_for_the_window_too_and_force_goes_past_them():
    from workloads.datasets.schema import Scale
    from workloads.limits import TooBig, check_machine, machine_problems
    from workloads.params import Param
    from workloads.scenario import Scenario

    for duration in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite"):
            Scenario(workload="noop", duration_s=duration)
    with pytest.raises(ValueError, match="finite"):
        Param("x", "Rows", "float", 1.0, minimum=0).coerce("nan")
    big = Scenario(users=(64,), scale=Scale(days=5, rows_per_day=20_000_000), target_config={"root": "/"})
    problems = machine_problems(big, memory=2 * 2**30, disk=2**30)
    assert any("users: 64" in p and "enough for 20" in p for p in problems), problems
    assert any("of disk" in p for p in problems) and any("in memory" in p for p in problems), problems
    assert machine_problems(Scenario(users=(2,), scale=Scale(days=1, rows_per_day=10_000)),
                            memory=2 * 2**30, disk=2**30) == []
    with pytest.raises(TooBig, match="--force"):
        check_machine(Scenario(users=(10**6,)))
    check_machine(Scenario(users=(10**6,)), force=True)
    # users spread over Dask hosts do not need this machine's memory
    assert machine_problems(Scenario(users=(400,), scheduler="tcp://127.0.0.1:1"), memory=2**30, disk=2**40) == []


# --- (9) one line instead of a traceback -------------------------------------------------------

@pytest.mark.parametrize("toml, fragments", [
    ('days = "x"\n', ["days", "unknown scenario key"]),
    ('[scale]\ndays = "x"\n', ["scale.days", "expected a whole number", "str"]),
    ('users = "lots"\n', ["users", "expected a list of whole numbers"]),
    ('users = [1, "x"]\n', ["users", "expected a list of whole numbers"]),
    ('operations = 2.5\n', ["operations", "expected a whole number", "float"]),
    ('duration_s = "10"\n', ["duration_s", "expected a number", "str"]),
    ('target = 3\n', ["target", "expected text", "int"]),
    ('params = 3\n', ["params", "expected a table"]),
    ('warmup = 1\n', ["unknown scenario key(s): warmup"]),
    ('duration_s = nan\n', ["duration", "finite"]),
    ('users = [\n', ["not a valid scenario file"]),
])
def test_a_scenario_file_of_wrong_types_is_one_line_naming_file_key_and_type(tmp_path, toml, fragments):
    path = tmp_path / "bad.toml"
    path.write_text('workload = "noop"\n' + toml)
    result = tickbench("run", "--scenario", str(path), home=tmp_path, timeout=60)
    one_line_error(result, "bad.toml", *fragments)


def test_one_number_of_users_in_a_scenario_file_is_one_step_of_that_many(tmp_path):
    from workloads.scenario import Scenario
    path = tmp_path / "one.toml"
    path.write_text('workload = "noop"\nusers = 4\n')
    assert Scenario.load_toml(path).users == (4,)
    path.write_text('workload = "noop"\nusers = "1,2"\n')
    assert Scenario.load_toml(path).users == (1, 2)


def test_a_missing_scenario_file_is_one_line(tmp_path):
    one_line_error(tickbench("run", "--scenario", str(tmp_path / "nope.toml"), home=tmp_path, timeout=60),
                   "nope.toml", "no such scenario file")
