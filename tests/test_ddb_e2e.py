"""DolphinDB end to end: the real client in real worker processes, through the engine and through
the command line, against the wire-protocol test server; every workload, every fault the server
injects, and the node policies on a fake cluster.

Timings measured here are the test server's (Python + DuckDB on this machine), never DolphinDB's.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.ddbserver.fixture import ddb_cluster, ddb_server, ddb_server_factory  # noqa: F401
from workloads.datasets import get_dataset
from workloads.datasets.schema import Scale, StringMode
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore
from workloads.targets.dolphindb import DolphinDBTarget

pytestmark = pytest.mark.timeout(120)
REPO = Path(__file__).resolve().parent.parent
PASSWORD = "123456"
SCALE = Scale(days=2, rows_per_day=5_000, symbols=20)
DAY2_READ = r"date = 2007\.08\.24"            # the measured read of the second day only
WORKLOADS = {                                # params, users
    "read-day": ({}, 1),
    "slice-download": ({"rows_per_user": 600}, 1),
    "upload-sweep": ({"batch_sizes": "100,1000", "rows_per_step": 2_000}, 1),
    "concurrent-append": ({"rows_per_user": 2_000, "batch_rows": 500}, 2),
    "minute-bars": ({}, 1),
    "spread-by-minute": ({}, 1),
    "mapreduce-minute-bars": ({"days": 1}, 1),
    "ols-spread": ({}, 1),
}


def single_config(server, **extra) -> dict:
    return {"host": server.host, "port": server.port, "user": "admin", "password": PASSWORD,
            "timeout": 5, "query_timeout": 30, **extra}


def cluster_profile(cluster, policy: str) -> dict:
    roles = ["controller"] + ["data"] * len(cluster.data_ports)
    return {"name": "fake", "user": "admin", "node_policy": policy,
            "nodes": [{"host": cluster.host, "port": p, "role": r} for p, r in zip(cluster.ports, roles)]}


@pytest.fixture(scope="module")
def prepared(ddb_server):  # noqa: F811
    """The seed table laid out once, so runs (and their faults) start from reused data."""
    layout = DolphinDBTarget(single_config(ddb_server)).prepare("taq", SCALE, StringMode.ARROW)
    assert layout.rows == 10_000
    return layout


@pytest.fixture
def faults(ddb_server):  # noqa: F811
    yield ddb_server.control
    ddb_server.control(reset=True)


def server_rows(server, table: str) -> int:
    import dolphindb as ddb

    names = DolphinDBTarget(single_config(server)).names("taq", SCALE)
    session = ddb.session()
    session.connect(server.host, server.port, "admin", PASSWORD)
    try:
        counts = session.run(f'select count(*) as n from loadTable("{names.db}", "{table}") '
                             "group by date(date) as day")
        return int(counts["n"].sum()) if len(counts) else 0
    finally:
        session.close()


def check_ops(workload: str, records: pd.DataFrame, address: str, days_per_op: int = SCALE.days,
              expect_probes: bool = True) -> None:
    """What every workload's records must show, whichever way it was started."""
    assert records["ok"].all(), records["error"].tolist()
    ops = records[records["kind"] == "measured"]
    probes = records[records["kind"] == "probe"]
    assert len(ops) > 0
    assert (ops["node"] == address).all()
    assert (ops["rows"] > 0).all()
    if workload in ("read-day",):
        assert (ops["rows"] == SCALE.rows_per_day).all()
    if workload in ("spread-by-minute", "ols-spread", "mapreduce-minute-bars"):
        # report 003 states input scanned per second: every day of the layout, 45 bytes a row
        assert (ops["rows"] == days_per_op * SCALE.rows_per_day).all()
        assert (ops["bytes"] == ops["rows"] * 45).all()
    if workload not in ("upload-sweep", "concurrent-append"):
        # the measured operation is the plain session.run; probes split it after the window
        assert ops["server_s"].isna().all() and (len(probes) > 0) == expect_probes
        assert (probes["server_s"] > 0).all() and (probes["transfer_s"] > 0).all()


# --- the engine ------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_every_workload_through_the_engine(ddb_server, prepared, tmp_path, workload):  # noqa: F811
    params, users = WORKLOADS[workload]
    store = ResultsStore(tmp_path / "results")
    writes_bars = workload == "mapreduce-minute-bars"     # then only the measured operations write them
    scenario = Scenario(dataset="taq", scale=SCALE, target="dolphindb", target_config=single_config(ddb_server),
                        workload=workload, params=params, users=(users,), operations=2,
                        warmup_ops=0 if writes_bars else 1, probe_ops=0 if writes_bars else 2)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id)
    check_ops(workload, ops, f"{ddb_server.host}:{ddb_server.port}", params.get("days") or SCALE.days,
              expect_probes=not writes_bars)
    if workload == "concurrent-append":
        assert ops.loc[ops["kind"] == "measured", "rows"].sum() == 2 * 2_000
    if workload == "mapreduce-minute-bars":   # one day per operation: day 1, then day 2
        taq = get_dataset("taq")
        frames = [taq.day_frame(i, SCALE) for i in range(SCALE.days)]
        expected = sum(f.groupby(["symbol", f["time"].dt.floor("min")]).ngroups for f in frames)
        # the step starts from an emptied table (earlier runs' bars do not pile up)
        assert server_rows(ddb_server, "quotes_minute") == expected
    assert "password" not in store.run(result.run_id)["scenario"]["target_config"]
    store.close()


@pytest.mark.slow
def test_a_fault_mid_run_keeps_what_was_measured(ddb_server, prepared, tmp_path, faults):  # noqa: F811
    store = ResultsStore(tmp_path / "results")
    scenario = Scenario(dataset="taq", scale=SCALE, target="dolphindb", target_config=single_config(ddb_server),
                        workload="read-day", users=(1,), operations=500)
    runner = Runner(scenario, store)
    box: list = []
    thread = threading.Thread(target=lambda: box.append(runner.run()))
    thread.start()
    deadline = time.monotonic() + 60
    while runner.snapshot().ops_done < 3 and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    faults(error_match=r"^select \* from loadTable", error_message="Out of memory on node1")
    thread.join(60)
    result = box[0]
    assert result.status == "completed" and "stopped after 5 failed operations" in result.message
    assert "Out of memory on node1" in result.message and "Traceback" not in result.message
    ops = store.ops(result.run_id, kinds=("measured",))
    good, bad = ops[ops["ok"]], ops[~ops["ok"]]
    assert len(good) >= 3 and (good["rows"] == SCALE.rows_per_day).all()
    assert len(bad) == 5 and bad["error"].str.contains("answered: Out of memory on node1").all()
    assert good["seq"].max() < bad["seq"].min()     # the records before the fault are all there
    stored = store.run(result.run_id)
    assert stored["status"] == "completed" and "Out of memory" in stored["message"]
    workers = store.workers(result.run_id)
    assert workers["state"].tolist() == ["failed"] and "Out of memory" in workers["error"].iloc[0]
    store.close()


# --- node policies on the fake cluster -------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("policy", ["round_robin", "one"])
def test_node_policy_spreads_workers_and_records_their_nodes(ddb_cluster, tmp_path, policy):  # noqa: F811
    store = ResultsStore(tmp_path / "results")
    config = {"profile": cluster_profile(ddb_cluster, policy), "password": PASSWORD, "timeout": 5}
    scenario = Scenario(dataset="taq", scale=SCALE, target="dolphindb", target_config=config,
                        workload="read-day", users=(3,), operations=2)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    data = [f"{ddb_cluster.host}:{p}" for p in ddb_cluster.data_ports]
    expected = data if policy == "round_robin" else data[:1] * 3
    workers = store.workers(result.run_id)
    assert workers.sort_values("worker")["node"].tolist() == expected
    ops = store.ops(result.run_id, kinds=("measured",))
    assert ops["ok"].all() and len(ops) == 6
    assert {w: set(g) for w, g in ops.groupby("worker")["node"]} == {i: {n} for i, n in enumerate(expected)}
    store.close()


# --- the command line ------------------------------------------------------------------------------
def tickbench(tmp_path: Path, *args: str, password: str | None = PASSWORD,
              timeout: float = 90) -> tuple[subprocess.CompletedProcess, ResultsStore | None]:
    env = {"TICKBENCH_HOME": str(tmp_path / "home"), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "QT_QPA_PLATFORM": "offscreen", "COLUMNS": "200"}
    results = default_results(tmp_path / "home")
    cmd = [sys.executable, "-m", "app", "run", "--target", "dolphindb",
           "--dataset", "taq", "--days", str(SCALE.days), "--rows-per-day", str(SCALE.rows_per_day),
           "--symbols", str(SCALE.symbols), "--user", "admin", *args]
    if password is not None:
        cmd += ["--password", password]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO,
                          stdin=subprocess.DEVNULL)
    return done, (ResultsStore(results) if results.exists() else None)


def default_results(home: Path) -> Path:
    """Where the app keeps its results under ``TICKBENCH_HOME=home``, as the app itself says."""
    from unittest import mock

    from workloads.paths import default_results_path

    with mock.patch.dict(os.environ, {"TICKBENCH_HOME": str(home)}):
        return default_results_path()


def last_run(store: ResultsStore) -> dict:
    return store.run(store.runs()["run_id"].iloc[0])


@pytest.mark.slow
@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_every_workload_through_the_command_line(ddb_server, prepared, tmp_path, workload):  # noqa: F811
    params, users = WORKLOADS[workload]
    args = ["--node", f"{ddb_server.host}:{ddb_server.port}", "--workload", workload,
            "--users", str(users), "--operations", "2"]
    for name, value in params.items():
        args += ["--param", f"{name}={value}"]
    done, store = tickbench(tmp_path, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert f"{workload} · dolphindb · taq" in done.stdout and "completed" in done.stdout.splitlines()[-1]
    run = last_run(store)
    assert run["status"] == "completed" and run["workload"] == workload
    config = run["scenario"]["target_config"]
    assert "password" not in config and config["profile"]["nodes"][0]["port"] == ddb_server.port
    check_ops(workload, store.ops(run["run_id"]), f"{ddb_server.host}:{ddb_server.port}",
              params.get("days") or SCALE.days)
    store.close()


@pytest.mark.slow
def test_command_line_round_robin_over_the_cluster(ddb_cluster, tmp_path):  # noqa: F811
    nodes = [f"{ddb_cluster.host}:{ddb_cluster.port}:controller"] + \
            [f"{ddb_cluster.host}:{p}" for p in ddb_cluster.data_ports]
    args = [a for n in nodes for a in ("--node", n)]
    done, store = tickbench(tmp_path, *args, "--node-policy", "round_robin", "--workload", "minute-bars",
                            "--users", "3", "--operations", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    run = last_run(store)
    data = [f"{ddb_cluster.host}:{p}" for p in ddb_cluster.data_ports]
    assert store.workers(run["run_id"]).sort_values("worker")["node"].tolist() == data
    assert sorted(store.ops(run["run_id"], kinds=("measured",))["node"]) == sorted(data)
    store.close()


# --- faults, as the command line shows them and the results file keeps them ----------------------
def assert_clear(done: subprocess.CompletedProcess, *phrases: str) -> None:
    text = done.stdout + done.stderr
    assert "Traceback" not in text and 'File "' not in text
    flat = " ".join(text.split())          # rich may wrap long lines
    for phrase in phrases:
        assert phrase in flat, text


@pytest.mark.slow
@pytest.mark.parametrize("fault,password,phrase", [
    ({}, "wrong", "The user name or password is incorrect"),
    ({"refuse_login": True}, PASSWORD, "The user name or password is incorrect"),
    ({"not_initialised": True}, PASSWORD, "not initialised"),
])
def test_login_faults_fail_the_run_with_one_clear_line(ddb_server, prepared, tmp_path, faults,  # noqa: F811
                                                       fault, password, phrase):
    if fault:
        faults(**fault)
    done, store = tickbench(tmp_path, "--node", f"{ddb_server.host}:{ddb_server.port}", "--workload", "read-day",
                            password=password)
    assert done.returncode == 1
    assert_clear(done, phrase, "failed")
    assert any(line.startswith("run ") and ": failed" in line for line in done.stdout.splitlines())
    run = last_run(store)                                       # the run record is kept
    assert run["status"] == "failed" and phrase in run["message"]
    assert f"{ddb_server.port}" in run["message"]              # names the node
    store.close()


@pytest.mark.slow
@pytest.mark.parametrize("fault,phrase", [
    ({"close_match": DAY2_READ}, "connection lost"),
    ({"delay": 4.0, "delay_match": DAY2_READ}, "reply timed out"),
    ({"error_match": DAY2_READ, "error_message": "Disk /hdd2 is full"}, "answered: Disk /hdd2 is full"),
])
def test_faults_during_operations_are_recorded_and_shown(ddb_server, prepared, tmp_path, faults,  # noqa: F811
                                                          fault, phrase):
    # read-day alternates days: the 1st and 3rd reads (day 1) work, the 2nd (day 2) meets the fault
    scenario = tmp_path / "slow.toml"
    Scenario(name="faults", target="dolphindb", target_config={"timeout": 3, "query_timeout": 1.5}).save_toml(scenario)
    faults(**fault)
    done, store = tickbench(tmp_path, "--scenario", str(scenario), "--node", f"{ddb_server.host}:{ddb_server.port}",
                            "--workload", "read-day", "--operations", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_clear(done, "1 operation failed", phrase, "completed")
    run = last_run(store)
    ops = store.ops(run["run_id"], kinds=("measured",)).sort_values("seq")
    assert ops["ok"].tolist() == [True, False, True]             # reconnected after the fault
    assert (ops[ops["ok"]]["rows"] == SCALE.rows_per_day).all()
    assert phrase in ops["error"].iloc[1] and "Traceback" not in ops["error"].iloc[1]
    assert run["status"] == "completed"
    store.close()


@pytest.mark.slow
def test_a_silent_server_times_out_with_a_clear_message(ddb_server_factory, tmp_path):  # noqa: F811
    silent = ddb_server_factory("--silent")
    scenario = tmp_path / "quick.toml"
    Scenario(name="silent", target="dolphindb", target_config={"timeout": 1}).save_toml(scenario)
    started = time.monotonic()
    done, store = tickbench(tmp_path, "--scenario", str(scenario), "--node", f"{silent.host}:{silent.port}",
                            "--workload", "read-day")
    assert time.monotonic() - started < 30
    assert done.returncode == 1
    assert_clear(done, "timed out", f"{silent.port}")
    run = last_run(store)
    assert run["status"] == "failed" and "timed out" in run["message"]
    store.close()


# --- the command line's DolphinDB flags, without a server -------------------------------------------
def ddb_args(*flags: str):
    from app.cli.main import build_parser

    return build_parser().parse_args(["run", "--target", "dolphindb", *flags])


def test_flags_build_a_profile_and_ask_for_the_password_once():
    from app.cli.ddb_options import dolphindb_config

    asked = []
    one = dolphindb_config(ddb_args("--node", "db1:8848", "--user", "quant"), {},
                           lambda user: asked.append(user) or "pw")
    assert one["profile"]["nodes"] == [{"host": "db1", "port": 8848, "role": "single"}]
    assert one["profile"]["name"] == "db1:8848" and one["password"] == "pw" and asked == ["quant"]
    many = dolphindb_config(ddb_args("--node", "c:8900:controller", "--node", "d1:8848", "--node", "[::1]:8849",
                                     "--node-policy", "round-robin", "--protocol", "arrow",
                                     "--password", "x", "--db-prefix", "dfs://lab"),
                            {"protocol": "PICKLE", "timeout": 4, "host": "old"}, lambda user: pytest.fail("asked"))
    profile = many["profile"]
    assert [(n["host"], n["port"], n["role"]) for n in profile["nodes"]] == [
        ("c", 8900, "controller"), ("d1", 8848, "data"), ("::1", 8849, "data")]
    assert (profile["node_policy"], profile["protocol"], profile["compress"]) == ("round_robin", "ARROW", False)
    assert many["timeout"] == 4 and many["db_prefix"] == "dfs://lab" and many["password"] == "x"
    assert "protocol" not in many and "host" not in many          # the flag beat the file's override
    target = DolphinDBTarget(many)
    assert target.profile.protocol == "ARROW" and target.profile.entry.address == "c:8900"
    assert [n.port for n in target.profile.data_nodes] == [8848, 8849]     # the controller serves no query


@pytest.mark.parametrize("flags,message", [
    ((), "needs a node: give --node HOST:PORT"),
    (("--node", "db1"), "--node 'db1' is not HOST:PORT"),
    (("--node", "db1:port"), "--node 'db1:port': port 'port' is not a number"),
    (("--node", "db1:0"), "port 0 is not between 1 and 65535"),
    (("--node", "db1:8848:boss"), "role 'boss' is not one of"),
    (("--node", "::1:8848"), "is not HOST:PORT"),
    (("--node", "db1:8848", "--protocol", "arrow", "--compress"), "compression works only with the DDB protocol"),
    (("--node", "db1:8848", "--protocol", "pickle", "--compress"), "compression works only with the DDB protocol"),
    (("--node", "[::1]8848"), "write an IPv6 address as [address]:PORT"),
    (("--node", "db1:8848", "--protocol", "json"), "--protocol 'JSON' is not one of DDB, PICKLE, ARROW"),
    (("--node", "db1:8848", "--node-policy", "fastest"), "--node-policy 'fastest' is not one of"),
    (("--node", "db1:8848", "--db-prefix", "tickbench"), "--db-prefix: database path 'tickbench' is not valid"),
    (("--node", "db1:8848", "--user", " "), "--user must not be empty"),
])
def test_bad_flags_name_what_is_wrong(flags, message):
    from app.cli.ddb_options import dolphindb_config

    with pytest.raises(ValueError) as caught:
        dolphindb_config(ddb_args(*flags, "--password", "x"), {}, lambda user: "x")
    assert message in str(caught.value)
