"""Cold reads of a table where it lives: a file table (a DuckDB file) has its OS cache and DuckDB's buffer
pool emptied before each cold operation, and says so, with the file left as it was; a table on a server,
whose caches no client may empty, is refused cold in one line before anything starts."""
from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pytest

from tests.trades_file import trades_table
from workloads.datasets.roles import Roles
from workloads.results.figures import cleared_by_step, step_figures
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.targets.table import add_table_target

ROLES = Roles(time="ts", key="sym", price=("price",), size="qty")


def test_a_duckdb_files_table_reads_cold_with_what_was_cleared_said(tmp_path):
    path = tmp_path / "mine.duckdb"
    with duckdb.connect(str(path)) as con:
        con.register("t", trades_table(rows=6_000, days=3, symbols=20))
        con.execute("CREATE TABLE trades AS SELECT * FROM t")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    add_table_target("coldfile", "duckdb", str(path), "trades", ROLES)
    store = ResultsStore(tmp_path / "results")
    try:
        result = Runner(Scenario(dataset="tbl_coldfile", target="table", target_config={"name": "coldfile"},
                                 workload="read-day", users=(1,), operations=3, cache="cold"), store).run()
        assert result.status == "completed", result.message
        figures = step_figures(store, result.run_id).iloc[0]
        assert figures["ops"] == 3 and figures["cold_ops"] == 3          # every measured read was cold
        (words, count), = cleared_by_step(store, result.run_id)[0]
        assert count == 3 and "page cache" in words and "engine" in words, words
    finally:
        store.close()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_a_table_on_a_server_is_refused_cold_in_one_line(tmp_path, pg_engine):
    import psycopg
    config = dict(pg_engine.config)
    with psycopg.connect(host=config["host"], port=config["port"], user=config["user"], password=config["password"],
                         dbname=config["database"], autocommit=True) as con:
        con.execute("DROP TABLE IF EXISTS cold_trades")
        con.execute("CREATE TABLE cold_trades (ts timestamptz, sym text, price float8, qty bigint)")
        con.execute("INSERT INTO cold_trades VALUES ('2024-03-04 10:00+00', 'A', 1.5, 10)")
    connection = {k: config[k] for k in ("host", "port", "user", "password", "database")}
    add_table_target("pgcold", "postgres", f"{config['host']}:{config['port']}/{config['database']}", "cold_trades",
                     ROLES, connection)
    store = ResultsStore(tmp_path / "results")
    try:
        with pytest.raises(ValueError) as refused:
            Runner(Scenario(dataset="tbl_pgcold", target="table", target_config={"name": "pgcold", **connection},
                            workload="read-day", users=(1,), operations=3, cache="cold"), store)
        assert str(refused.value).startswith("table:pgcold lives on a postgres server")
        assert "--cache warm" in str(refused.value) and not list(Path(tmp_path / "results").rglob("run.json"))
    finally:
        store.close()
