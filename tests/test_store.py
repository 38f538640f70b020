import json

import duckdb
import pytest

from workloads.records import OpRecord
from workloads.store import SCHEMA_VERSION, ResultsStore, StoreError

SCENARIO = {"name": "t", "dataset": "taq", "target": "duckdb", "workload": "read-day",
            "users": [1, 2], "cache": "warm"}


def _record(step, worker, seq, total, ok=True, rows=100):
    return OpRecord(step, worker, seq, "read_day", seq * total, total, None, total * 0.25, None, None,
                    total * 0.75, rows if ok else 0, rows * 45 if ok else 0, ok, "" if ok else "boom", "")


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
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(store_module.MIGRATIONS, 2, "ALTER TABLE runs ADD COLUMN tags VARCHAR")
    store = store_module.ResultsStore(path)
    assert store.schema_version == 2
    assert (tmp_path / "r.v1.bak.duckdb").exists()
    assert "tags" in [r[0] for r in store._query("DESCRIBE runs")]
    store.close()
    cols = [r[0] for r in duckdb.connect(str(tmp_path / "r.v1.bak.duckdb")).execute("DESCRIBE runs").fetchall()]
    assert "tags" not in cols


def test_figures_come_from_stored_records_exactly(tmp_path):
    store = ResultsStore(tmp_path / "r.duckdb")
    store.create_run("r1", SCENARIO, {"host": "h"})
    store.add_step("r1", 0, 2, "2 users", {})
    totals = [0.01 * (i + 1) for i in range(100)]
    store.add_ops("r1", [_record(0, i % 2, i, t) for i, t in enumerate(totals)] + [_record(0, 0, 999, 5.0, ok=False)])
    store.finish_step("r1", 0, 10.0, "completed", ["fsync"])
    figures = store.step_figures("r1").iloc[0]
    assert figures["ops"] == 100 and figures["errors"] == 1
    assert figures["rows_per_s"] == pytest.approx(100 * 100 / 10.0)
    assert figures["p50_s"] == pytest.approx(0.505)          # exact, interpolated
    assert figures["p99_s"] == pytest.approx(0.9901)
    assert figures["decode_s"] == pytest.approx(sum(totals) / 100 * 0.75)
    assert figures["cache_methods"] == "fsync"


def test_abandoned_runs_are_marked_aborted(tmp_path):
    store = ResultsStore(tmp_path / "r.duckdb")
    store.create_run("r1", SCENARIO, {})
    store.create_run("r2", SCENARIO, {})
    store.finish_run("r2", "completed")
    assert store.mark_abandoned_runs() == 1
    assert store.run("r1")["status"] == "aborted"
    assert store.run("r2")["status"] == "completed"


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
    paths = store.export_run("r1", tmp_path / "out", fmt)
    names = sorted(p.name for p in paths)
    assert names == sorted(f"r1_{n}.{fmt}" for n in ("run", "steps", "workers", "ops", "resources"))
    ops_path = next(p for p in paths if "_ops." in p.name)
    ops = pd.read_csv(ops_path) if fmt == "csv" else pd.read_parquet(ops_path)
    assert len(ops) == 7 and set(ops["seq"]) == set(range(7))


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
