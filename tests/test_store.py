import json
import socket
import subprocess
import sys
from pathlib import Path

import duckdb
import psutil
import pytest

from workloads.results.exports import export_run
from workloads.results.figures import step_figures
from workloads.run.records import OpRecord
from workloads.results.catalog_folder import SCHEMA_VERSION
from workloads.results.dead_runs import HostProcess, host_process
from workloads.results.store import ResultsStore, StoreError

SCENARIO = {"name": "t", "dataset": "taq", "target": "duckdb", "workload": "read-day",
            "users": [1, 2], "cache": "warm"}


def _record(step, worker, seq, total, ok=True, rows=100, kind="measured"):
    return OpRecord(step=step, worker=worker, seq=seq, op="read_day", t_start=seq * total, total_s=total,
                    rows=rows if ok else 0, bytes=rows * 45 if ok else 0, ok=ok, kind=kind,
                    query_s=total * 0.25, decode_s=total * 0.75, error="" if ok else "boom")


def test_a_new_catalog_records_its_format(tmp_path):
    store = ResultsStore(tmp_path / "results")
    assert store.schema_version == SCHEMA_VERSION == 3
    assert json.loads((tmp_path / "results" / "catalog.json").read_text()) == {"format": 3}
    assert store.runs().empty and store.ops("x").empty and store.resources("x").empty


def test_a_newer_catalog_is_refused_clearly(tmp_path):
    ResultsStore(tmp_path / "results").close()
    (tmp_path / "results" / "catalog.json").write_text('{"format": 99}')
    with pytest.raises(StoreError, match="newer Tickbench"):
        ResultsStore(tmp_path / "results")


def _legacy_file(path, version):
    """A results file as Tickbench wrote it before the catalog: a finished run and one left running."""
    from workloads.results.migration import _V2_COLUMNS
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute(LEGACY_V1_SCHEMA)
    if version == 2:
        con.execute("ALTER TABLE steps RENAME COLUMN duration_s TO window_s")
        for table, columns in _V2_COLUMNS.items():
            for name, kind in columns.items():
                con.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
    con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(version)])
    for run_id, status in (("old-done", "completed"), ("old-running", "running")):
        con.execute("INSERT INTO runs (run_id, name, created_at, status, dataset, target, workload, users, "
                    "cache, scenario, environment, message) VALUES (?, 'n', now()::TIMESTAMP, ?, 'taq', "
                    "'duckdb', 'read-day', '1', 'warm', ?, '{}', '')", [run_id, status, json.dumps(SCENARIO)])
    con.execute("INSERT INTO steps (run_id, step, users, label, params, started_at, "
                f"{'duration_s' if version == 1 else 'window_s'}, status, cache_methods) "
                "VALUES ('old-done', 0, 1, '1 user', '{}', now()::TIMESTAMP, 2.0, 'completed', '')")
    for seq in range(6):
        con.execute("INSERT INTO ops (run_id, step, worker, seq, op, t_start, total_s, io_s, query_s, server_s, "
                    "transfer_s, decode_s, rows, bytes, ok, error, node) VALUES ('old-done', 0, 0, ?, 'read_day', "
                    "?, 0.25, NULL, 0.1, NULL, NULL, 0.15, 1000, 45000, true, '', '')", [seq, seq * 0.3])
    con.execute("INSERT INTO resources VALUES ('old-done', 0.5, 90.0, 1000, 0, 0)")
    con.close()


LEGACY_V1_SCHEMA = """
CREATE TABLE runs (run_id VARCHAR PRIMARY KEY, name VARCHAR, created_at TIMESTAMP, finished_at TIMESTAMP,
    status VARCHAR, dataset VARCHAR, target VARCHAR, workload VARCHAR, users VARCHAR, cache VARCHAR,
    scenario JSON, environment JSON, layout JSON, message VARCHAR);
CREATE TABLE steps (run_id VARCHAR, step INTEGER, users INTEGER, label VARCHAR, params JSON,
    started_at TIMESTAMP, duration_s DOUBLE, status VARCHAR, cache_methods VARCHAR);
CREATE TABLE workers (run_id VARCHAR, step INTEGER, worker INTEGER, pid INTEGER, node VARCHAR,
    state VARCHAR, error VARCHAR, exitcode INTEGER);
CREATE TABLE ops (run_id VARCHAR, step INTEGER, worker INTEGER, seq INTEGER, op VARCHAR,
    t_start DOUBLE, total_s DOUBLE, io_s DOUBLE, query_s DOUBLE, server_s DOUBLE,
    transfer_s DOUBLE, decode_s DOUBLE, rows BIGINT, bytes BIGINT, ok BOOLEAN, error VARCHAR, node VARCHAR);
CREATE TABLE resources (run_id VARCHAR, t DOUBLE, cpu_percent DOUBLE, rss_bytes BIGINT,
    read_bytes_per_s DOUBLE, write_bytes_per_s DOUBLE);
"""


@pytest.mark.parametrize("version", [1, 2])
def test_an_old_results_file_moves_into_the_catalog_once_and_is_kept(tmp_path, version):
    old = tmp_path / "results.duckdb"
    _legacy_file(old, version)
    store = ResultsStore(tmp_path / "results")          # the app's default: the file beside it is found
    assert store.migrated == 2 and not old.exists() and (tmp_path / "results.duckdb.migrated").exists()
    # its records read back as measured operations, its step duration as the window
    figures = step_figures(store, "old-done").iloc[0]
    assert figures["ops"] == 6 and figures["window_s"] == 2.0
    assert figures["rows_per_s"] == pytest.approx(6 * 1000 / 2.0)
    assert figures["query_s"] == pytest.approx(0.1) and figures["phase_source"] == "measured"
    assert set(store.ops("old-done")["kind"]) == {"measured"} and len(store.resources("old-done")) == 1
    # a run left running without its process recorded cannot be running any more
    assert store.aborted_on_open == 1 and store.run("old-running")["status"] == "aborted"
    store.close()
    again = ResultsStore(tmp_path / "results")
    assert again.migrated == 0 and sorted(again.runs()["run_id"]) == ["old-done", "old-running"]


def test_an_old_file_named_directly_opens_as_the_catalog_beside_it(tmp_path):
    _legacy_file(tmp_path / "mine.duckdb", 2)
    store = ResultsStore(tmp_path / "mine.duckdb")
    assert store.path == tmp_path / "mine" and store.migrated == 2


def test_a_reader_never_waits_for_the_writer_and_sees_records_as_they_land(tmp_path):
    """Another process writes a run while this one reads: no lock, every read sees whole parts."""
    import textwrap
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
        from workloads.results.store import ResultsStore
        from tests.test_store import SCENARIO, _record
        store = ResultsStore({str(tmp_path / "results")!r})
        store.create_run("live", SCENARIO, {{}})
        store.add_step("live", 0, 1, "1 user", {{}})
        for part in range(40):
            store.add_ops("live", [_record(0, 0, part * 10 + i, 0.01) for i in range(10)])
            time.sleep(0.02)
        store.finish_step("live", 0, 1.0, "completed", [])
        store.finish_run("live", "completed")
    """)])
    reader = ResultsStore(tmp_path / "results")
    counts = []
    while writer.poll() is None:
        ops = reader.ops("live")
        assert len(ops) % 10 == 0 and (ops.empty or ops["seq"].max() == len(ops) - 1)
        counts.append(len(ops))
    assert writer.returncode == 0
    assert len(reader.ops("live")) == 400 and reader.run("live")["status"] == "completed"
    assert any(0 < c < 400 for c in counts), counts          # it read while the writer wrote
    assert [p.name for p in (tmp_path / "results" / "runs" / "live").iterdir() if "ops" in p.name] == ["ops.parquet"]


def test_figures_come_from_stored_records_exactly(tmp_path):
    store = ResultsStore(tmp_path / "results")
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
    path = tmp_path / "results"
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
    store = ResultsStore(tmp_path / "results")
    store.create_run("20260101-abcd", SCENARIO, {"cpu": "x"})
    assert store.run("20260101")["environment"] == {"cpu": "x"}
    with pytest.raises(StoreError, match="no run 'nope'"):
        store.run("nope")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_writes_every_table(tmp_path, fmt):
    import pandas as pd
    store = ResultsStore(tmp_path / "results")
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
    store = ResultsStore(tmp_path / "results")
    for rid in ("a", "b"):
        store.create_run(rid, SCENARIO, {})
        store.add_step(rid, 0, 1, "1 user", {})
        store.add_ops(rid, [_record(0, 0, 0, 0.1)])
    store.delete_run("a")
    assert list(store.runs()["run_id"]) == ["b"]
    assert store.ops("a").empty and len(store.ops("b")) == 1


def test_published_figures_are_queryable_beside_runs(tmp_path):
    from workloads.results.references import load_references
    store = ResultsStore(tmp_path / "results")
    refs = store.references()
    assert len(refs) == len(load_references()) > 100
    row = refs[(refs["experiment"] == "slice-download") & refs["series"].str.endswith(", 8 nodes")
               & (refs["unit"] == "M rows/s") & (refs["x"] == "128 users")]
    assert row["value"].tolist() == [36.5]
    store.close()
    assert len(ResultsStore(tmp_path / "results").references()) == len(refs)   # replaced, not doubled


def test_a_run_stored_before_open_loops_reads_with_no_intended_starts(tmp_path):
    """Runs whose record parts predate the ``intended_s`` column (and steps without ``rate``) still
    read, their figures whole, the new columns NULL."""
    import pyarrow.parquet as pq
    from workloads.results.run_files import RunFolder

    store = ResultsStore(tmp_path / "results")
    store.create_run("old", SCENARIO, {})
    store.add_step("old", 0, 1, "1 user", {})
    store.add_ops("old", [_record(0, 0, i, 0.1 * (i + 1)) for i in range(6)])
    store.finish_step("old", 0, 1.0, "completed", [])
    store.finish_run("old", "completed")
    folder = store.run_folder("old")
    store.close()
    for part in RunFolder(folder).ops_files():
        pq.write_table(pq.read_table(part).drop_columns(["intended_s"]), part)   # as an older Tickbench wrote it
    again = ResultsStore(tmp_path / "results")
    ops = again.ops("old")
    assert len(ops) == 6 and ops["intended_s"].isna().all()
    figures = step_figures(again, "old").iloc[0]
    assert figures.ops == 6 and figures.p50_s == pytest.approx(0.35) and figures.latency_p99_s != figures.latency_p99_s
    again.close()
