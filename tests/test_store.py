import json
import socket
import subprocess
import sys

import duckdb
import psutil
import pytest

from workloads.exports import export_run
from workloads.figures import step_figures
from workloads.records import OpRecord
from workloads.store import (MIGRATIONS, SCHEMA_VERSION, HostProcess, ResultsStore, StoreError,
                             host_process)

SCENARIO = {"name": "t", "dataset": "taq", "target": "duckdb", "workload": "read-day",
            "users": [1, 2], "cache": "warm"}


def _record(step, worker, seq, total, ok=True, rows=100, kind="measured"):
    return OpRecord(step=step, worker=worker, seq=seq, op="read_day", t_start=seq * total, total_s=total,
                    rows=rows if ok else 0, bytes=rows * 45 if ok else 0, ok=ok, kind=kind,
                    query_s=total * 0.25, decode_s=total * 0.75, error="" if ok else "boom")


def test_new_file_gets_current_schema_version(tmp_path):
    store = ResultsStore(tmp_path / "r.duckdb")
    assert store.schema_version == SCHEMA_VERSION


def test_newer_schema_is_refused_clearly(tmp_path):
    path = tmp_path / "r.duckdb"
    ResultsStore(path).close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    con.close()
    with pytest.raises(StoreError, match="newer Tickbench"):
        ResultsStore(path)


def test_migration_from_older_version_backs_up_first(tmp_path, monkeypatch):
    import workloads.store as store_module
    path = tmp_path / "r.duckdb"
    ResultsStore(path).close()
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setitem(store_module.MIGRATIONS, SCHEMA_VERSION + 1, ["ALTER TABLE runs ADD COLUMN tags VARCHAR"])
    store = store_module.ResultsStore(path)
    assert store.schema_version == SCHEMA_VERSION + 1
    backup = tmp_path / f"r.v{SCHEMA_VERSION}.bak.duckdb"
    assert backup.exists()
    assert "tags" in [r[0] for r in store.query("DESCRIBE runs")]
    store.close()
    cols = [r[0] for r in duckdb.connect(str(backup)).execute("DESCRIBE runs").fetchall()]
    assert "tags" not in cols


def _version_1_file(path):
    """A results file as Tickbench wrote it with schema 1: a finished run and one left running."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    for statement in MIGRATIONS[1]:
        con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    for run_id, status in (("old-done", "completed"), ("old-running", "running")):
        con.execute("INSERT INTO runs VALUES (?, 'n', now()::TIMESTAMP, NULL, ?, 'taq', 'duckdb', "
                    "'read-day', '1', 'warm', ?, '{}', NULL, '')", [run_id, status, json.dumps(SCENARIO)])
    con.execute("INSERT INTO steps VALUES ('old-done', 0, 1, '1 user', '{}', now()::TIMESTAMP, 2.0, "
                "'completed', '')")
    for seq in range(6):
        con.execute("INSERT INTO ops VALUES ('old-done', 0, 0, ?, 'read_day', ?, 0.25, NULL, 0.1, NULL, "
                    "NULL, 0.15, 1000, 45000, true, '', '')", [seq, seq * 0.3])
    con.close()


def test_a_version_1_file_is_migrated_with_a_backup_and_keeps_opening(tmp_path):
    path = tmp_path / "r.duckdb"
    _version_1_file(path)
    store = ResultsStore(path)
    assert store.schema_version == SCHEMA_VERSION == 2
    assert (tmp_path / "r.v1.bak.duckdb").exists()
    # its records read back as measured operations, its step duration as the window
    figures = step_figures(store, "old-done").iloc[0]
    assert figures["ops"] == 6 and figures["window_s"] == 2.0
    assert figures["rows_per_s"] == pytest.approx(6 * 1000 / 2.0)
    assert figures["query_s"] == pytest.approx(0.1) and figures["phase_source"] == "measured"
    assert set(store.ops("old-done")["kind"]) == {"measured"}
    # a version-1 run left running cannot be running any more: no such program can open the file
    assert store.aborted_on_open == 1 and store.run("old-running")["status"] == "aborted"
    store.close()
    assert ResultsStore(path).schema_version == 2               # opens again, nothing to migrate


def test_figures_come_from_stored_records_exactly(tmp_path):
    store = ResultsStore(tmp_path / "r.duckdb")
    store.create_run("r1", SCENARIO, {"host": "h"})
    store.add_step("r1", 0, 2, "2 users", {})
    totals = [0.01 * (i + 1) for i in range(100)]
    store.add_ops("r1", [_record(0, i % 2, i, t) for i, t in enumerate(totals)] + [_record(0, 0, 999, 5.0, ok=False)])
    store.finish_step("r1", 0, 10.0, "completed", ["fsync"])
    store.add_ops("r1", [_record(0, w, 0, 3.0, kind="warmup") for w in range(2)]
                  + [_record(0, 0, i, 0.2, kind="probe") for i in range(3)])
    figures = step_figures(store, "r1").iloc[0]
    assert figures["ops"] == 100 and figures["errors"] == 1     # warm-ups and probes are not counted
    assert figures["rows_per_s"] == pytest.approx(100 * 100 / 10.0)
    assert figures["p50_s"] == pytest.approx(0.505)          # exact, interpolated
    assert figures["p99_s"] == pytest.approx(0.9901)
    # phases from the probes, the step's only phase split once there are any
    assert figures["decode_s"] == pytest.approx(0.2 * 0.75) and figures["decode_n"] == 3
    assert figures["phase_source"] == "probe"
    assert figures["first_op_s"] == pytest.approx(3.0) and figures["first_ops"] == 2
    assert figures["cache_methods"] == "fsync"


def _finished_process() -> HostProcess:
    """A process of this machine that has ended (its pid may be reused later: the start time tells)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    started = psutil.Process(child.pid).create_time()
    child.wait()
    return HostProcess(socket.gethostname(), child.pid, started)


def test_runs_whose_process_died_are_marked_aborted_when_the_file_opens(tmp_path):
    path = tmp_path / "r.duckdb"
    store = ResultsStore(path)
    store.create_run("dead", SCENARIO, {}, _finished_process())
    store.create_run("alive", SCENARIO, {}, host_process())             # this very process
    store.create_run("elsewhere", SCENARIO, {}, HostProcess("another-machine", 1, 0.0))
    me = host_process()
    store.create_run("reused-pid", SCENARIO, {}, HostProcess(me.host, me.pid, me.started - 3600))
    store.create_run("done", SCENARIO, {}, _finished_process())
    store.finish_run("done", "completed")
    store.close()
    store = ResultsStore(path)
    assert store.aborted_on_open == 2
    dead = store.run("dead")
    assert dead["status"] == "aborted" and f"pid {dead['host_pid']}" in dead["message"]
    assert store.run("reused-pid")["status"] == "aborted"              # same pid, another start time
    assert store.run("alive")["status"] == "running"
    assert store.run("elsewhere")["status"] == "running"               # cannot be checked from here
    assert store.run("done")["status"] == "completed"


def test_run_lookup_by_prefix_and_unknown_run(tmp_path):
    store = ResultsStore(tmp_path / "r.duckdb")
    store.create_run("20260101-abcd", SCENARIO, {"cpu": "x"})
    assert store.run("20260101")["environment"] == {"cpu": "x"}
    with pytest.raises(StoreError, match="no run 'nope'"):
        store.run("nope")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_writes_every_table(tmp_path, fmt):
    import pandas as pd
    store = ResultsStore(tmp_path / "r.duckdb")
    store.create_run("r1", SCENARIO, {})
    store.add_step("r1", 0, 1, "1 user", {})
    store.add_ops("r1", [_record(0, 0, i, 0.1) for i in range(7)])
    store.finish_step("r1", 0, 1.0, "completed", [])
    store.add_ops("r1", [_record(0, 0, 0, 0.3, kind="warmup")])
    paths = export_run(store, "r1", tmp_path / "out", fmt)
    names = sorted(p.name for p in paths)
    assert names == sorted(f"r1_{n}.{fmt}" for n in ("run", "steps", "workers", "ops", "resources"))
    ops_path = next(p for p in paths if "_ops." in p.name)
    ops = pd.read_csv(ops_path) if fmt == "csv" else pd.read_parquet(ops_path)
    assert len(ops) == 8 and set(ops["seq"]) == set(range(7))
    assert sorted(ops["kind"].unique()) == ["measured", "warmup"]       # kinds told apart
    steps_path = next(p for p in paths if "_steps." in p.name)
    steps = pd.read_csv(steps_path) if fmt == "csv" else pd.read_parquet(steps_path)
    assert steps["ops"].tolist() == [7] and steps["window_s"].tolist() == [1.0]


def test_delete_run_removes_all_its_rows(tmp_path):
    store = ResultsStore(tmp_path / "r.duckdb")
    for rid in ("a", "b"):
        store.create_run(rid, SCENARIO, {})
        store.add_step(rid, 0, 1, "1 user", {})
        store.add_ops(rid, [_record(0, 0, 0, 0.1)])
    store.delete_run("a")
    assert list(store.runs()["run_id"]) == ["b"]
    assert store.ops("a").empty and len(store.ops("b")) == 1


def test_published_figures_are_queryable_beside_runs(tmp_path):
    from workloads.references import load_references
    store = ResultsStore(tmp_path / "r.duckdb")
    refs = store.references()
    assert len(refs) == len(load_references()) > 100
    row = refs[(refs["experiment"] == "slice-download") & refs["series"].str.endswith(", 8 nodes")
               & (refs["unit"] == "M rows/s") & (refs["x"] == "128 users")]
    assert row["value"].tolist() == [36.5]
    store.close()
    assert len(ResultsStore(tmp_path / "r.duckdb").references()) == len(refs)   # replaced, not doubled
