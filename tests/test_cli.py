"""The command line, run as a user would: a real process, real files."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from workloads.queries.verify import suites_of

TAQ_QUERIES = sum(len(s.queries) for s in suites_of("taq"))  # every TAQ suite's, the tick pack's too


def tickbench(*args: str, home: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {"TICKBENCH_HOME": str(home), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen",
           "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=Path(__file__).resolve().parent.parent)


@pytest.mark.parametrize("args, message", [
    (["run", "--users", "1,x"], "--users takes whole numbers"),
    (["run", "--workload", "nope"], "unknown workload 'nope'"),
    (["run", "--target", "oracle"], "unknown target"),
    (["run", "--cache", "lukewarm"], "cache must be one of"),
    (["run", "--param", "rows_per_user"], "--param takes NAME=VALUE"),
    (["run", "--days", "many"], "invalid int value"),
    (["show", "no-such-run"], "no run 'no-such-run'"),
    (["verify", "--dataset", "level2"], "the suites run on taq or devices"),
    (["verify", "--suite", "devices004"], "runs on another dataset than taq"),
    (["verify", "--suite", "nope"], "unknown query suite 'nope'"),
])
def test_bad_arguments_get_one_clear_line_and_exit_2(tmp_path, args, message):
    result = tickbench(*args, home=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.stderr


def test_run_then_list_show_and_export(tmp_path):
    result = tickbench("run", "--target", "pickle", "--dataset", "taq", "--days", "2",
                       "--rows-per-day", "20000", "--symbols", "40", "--workload", "read-day",
                       "--users", "1,2", "--operations", "3", "--cache", "cold", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "rows/s" in result.stdout and "io ms" in result.stdout and "decode ms" in result.stdout
    run_id = result.stdout.strip().splitlines()[-1].split()[1].rstrip(":")
    listing = tickbench("runs", home=tmp_path)
    assert run_id in listing.stdout and "completed" in listing.stdout
    shown = tickbench("show", run_id, home=tmp_path)
    assert shown.returncode == 0 and "2 users" in shown.stdout
    out = tmp_path / "export"
    exported = tickbench("export", run_id, "--format", "parquet", "--out", str(out), home=tmp_path)
    assert exported.returncode == 0, exported.stderr
    ops = pd.read_parquet(out / f"{run_id}_ops.parquet")
    # measured 3 + 6, one warm-up per worker, and two io/decode probes per worker (pickle)
    assert ops["kind"].value_counts().to_dict() == {"measured": 9, "probe": 6, "warmup": 3}
    assert (ops["rows"] == 20000).all() and (ops["wire_bytes"] > 0).all()
    assert ops.loc[ops["kind"] == "measured", "io_s"].isna().all()    # the plain pickle.load: no split
    assert ops.loc[ops["kind"] == "probe", "io_s"].notna().all()
    steps = pd.read_parquet(out / f"{run_id}_steps.parquet")
    assert set(steps["cache_methods"].iloc[0].split(",")) >= {"fsync", "posix_fadvise(DONTNEED)"}
    # `show`: the first operation of a fresh worker stands apart from the steady figures
    assert "first op ms" in shown.stdout and "probe ops" in shown.stdout
    first = ops[(ops["kind"] == "warmup") & (ops["step"] == 0)]["total_s"].iloc[0]
    p50 = ops[(ops["kind"] == "measured") & (ops["step"] == 0)]["total_s"].median()
    step_line = next(line for line in shown.stdout.splitlines() if line.startswith("│ 1 user"))
    assert f"{first * 1000:,.1f}" in step_line and f"{p50 * 1000:,.1f}" in step_line


def test_a_killed_run_is_listed_as_aborted(tmp_path):
    import os
    import signal
    import time

    import psutil

    env = {"TICKBENCH_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    proc = subprocess.Popen([sys.executable, "-m", "app", "run", "--workload", "noop", "--duration", "120"],
                            cwd=Path(__file__).resolve().parent.parent, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run = psutil.Process(proc.pid)
    deadline = time.monotonic() + 60
    while not run.children() and time.monotonic() < deadline:   # a worker runs: so does the run
        time.sleep(0.1)
    workers = run.children(recursive=True)
    assert workers, "the run never started a worker"
    time.sleep(1.0)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    gone, alive = psutil.wait_procs(workers, timeout=15)        # orphaned workers leave on their own
    assert not alive, f"workers outlived the killed run: {[p.pid for p in alive]}"
    listing = tickbench("runs", home=tmp_path)
    assert listing.returncode == 0, listing.stderr
    row = next(line for line in listing.stdout.splitlines() if "noop" in line)
    assert "aborted" in row and "running" not in row
    run_id = row.split("│")[1].strip()
    shown = tickbench("show", run_id, home=tmp_path)
    assert f"pid {proc.pid}" in shown.stdout and "aborted" in shown.stdout


def test_global_results_option_before_the_subcommand(tmp_path):
    results = tmp_path / "elsewhere.duckdb"
    ran = tickbench("--results", str(results), "run", "--workload", "noop", "--operations", "20",
                    home=tmp_path)
    assert ran.returncode == 0, ran.stderr
    listing = tickbench(f"--results={results}", "runs", home=tmp_path)
    assert "noop" in listing.stdout
    default_listing = tickbench("runs", home=tmp_path)
    assert "noop" not in default_listing.stdout


def test_every_subcommand_is_routed_to_the_command_line():
    from app import __main__ as entry
    from app.cli.main import COMMANDS

    assert set(COMMANDS) <= entry.COMMANDS
    assert all(entry._subcommand([name]) == name for name in COMMANDS)
    assert entry._subcommand(["--theme", "dark"]) is None


SMALL = ("--days", "2", "--rows-per-day", "20000", "--symbols", "30")


def test_verify_compares_every_local_engine(tmp_path):
    result = tickbench("verify", *SMALL, home=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "t07" in result.stdout and "q07" in result.stdout
    assert f"Every target answered every query alike ({TAQ_QUERIES} queries)" in result.stdout
    for line in [l for l in result.stdout.splitlines() if "│ t0" in l or "│ q0" in l]:
        assert line.count("same") == 7, line     # duckdb, the 3 files, clickhouse, arcticdb, hdf5


def test_verify_shows_differing_answers_and_unreachable_targets(tmp_path):
    import socket

    suites = tmp_path / "queries"
    suites.mkdir()
    (suites / "skewed.toml").write_text(
        'dataset = "taq"\n[[query]]\nid = "spread"\ncategory = "c"\ndescription = "d"\n'
        'params = { day = "day:-1" }\ncolumns = ["symbol", "spread"]\ndays = "day"\n'
        'duckdb = "SELECT symbol, sum(ofr - bid) * 2 AS spread FROM {quotes} WHERE date = $day GROUP BY symbol"\n'
        'pandas = "taq_spread_sum"\ndolphindb = "select sum(ofr - bid) as spread from {quotes} group by symbol"\n')
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = tickbench("verify", "--suite", "skewed", "--targets", "parquet,duckdb,dolphindb", *SMALL,
                       "--node", f"127.0.0.1:{port}", "--password", "x", home=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "spread answers differ" in result.stdout
    assert "parquet (30 rows)" in result.stdout and "duckdb (30 rows)" in result.stdout
    assert "spread on dolphindb" in result.stdout and str(port) in result.stdout


def test_show_prints_queries_and_footprints(tmp_path):
    ran = tickbench("run", "--target", "duckdb", "--workload", "query-suite", "--param", "suite=taq001",
                    "--param", "repetitions=2", *SMALL, home=tmp_path)
    assert ran.returncode == 0, ran.stderr
    run_id = ran.stdout.strip().splitlines()[-1].split()[1].rstrip(":")
    shown = tickbench("show", run_id, home=tmp_path).stdout
    assert "Queries · 1 user" in shown and "7 answered, 0 not supported, 0 failed" in shown
    assert "geometric mean" in shown and "Bytes on disk per column" in shown
    ran = tickbench("run", "--target", "parquet", "--workload", "import", "--users", "1,2", *SMALL, home=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "wire MB/s" in ran.stdout
    run_id = ran.stdout.strip().splitlines()[-1].split()[1].rstrip(":")
    shown = tickbench("show", run_id, home=tmp_path).stdout
    assert "Imported table after step 2" in shown and "the disk bytes" in shown
    assert "[file sizes, column chunks from the Parquet footers]" in shown
