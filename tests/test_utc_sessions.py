"""Times are instants on every engine: a session whose server, database or machine is set to a zone
other than UTC answers a user's suite (its per-minute labels, its day filter) as pandas does. A
PostgreSQL database set to America/New_York, and DuckDB on a machine whose zone is America/New_York,
each with the trades as timestamptz where they live."""
from __future__ import annotations

import io
import os
import time

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from tests.suite_answers import table_suite_answers
from tests.test_user_suites import expected_answers
from tests.trades_file import trades_table
from workloads.datasets.roles import Roles
from workloads.targets.table import add_table_target

ROLES = Roles(time="ts", key="sym", price=("price",), size="qty")
ZONE = "America/New_York"


@pytest.fixture(scope="module")
def trades() -> pa.Table:
    return trades_table(rows=6_000, days=3, symbols=20)


@pytest.fixture
def machine_in_new_york(monkeypatch):
    monkeypatch.setenv("TZ", ZONE)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_postgres_database_in_new_york_answers_the_suite_as_pandas(tmp_path, trades, pg_engine):
    import psycopg
    config = dict(pg_engine.config)
    with psycopg.connect(host=config["host"], port=config["port"], user=config["user"], password=config["password"],
                         dbname=config["database"], autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS tb_new_york")
        admin.execute("CREATE DATABASE tb_new_york")
        admin.execute(f"ALTER DATABASE tb_new_york SET timezone = '{ZONE}'")
    with psycopg.connect(host=config["host"], port=config["port"], user=config["user"], password=config["password"],
                         dbname="tb_new_york", autocommit=True) as con:
        assert con.execute("SHOW timezone").fetchone()[0] == ZONE          # a plain session is in New York
        con.execute("CREATE TABLE trades (ts timestamptz, sym text, price float8, qty bigint, side text, venue text)")
        data = io.BytesIO()
        pacsv.write_csv(trades, data, pacsv.WriteOptions(include_header=False))
        with con.cursor().copy("COPY trades FROM STDIN (FORMAT csv)") as copy:
            copy.write(data.getvalue())
    connection = {**{k: config[k] for k in ("host", "port", "user", "password")}, "database": "tb_new_york"}
    add_table_target("pg_ny", "postgres", f"{config['host']}:{config['port']}/tb_new_york", "trades", ROLES,
                     connection)
    assert table_suite_answers(tmp_path, "pg_ny", connection) == expected_answers(trades.to_pandas())


def test_duckdb_on_a_machine_in_new_york_answers_the_suite_as_pandas(tmp_path, trades, machine_in_new_york):
    import duckdb
    path = tmp_path / "mine.duckdb"
    with duckdb.connect(str(path)) as con:
        assert con.sql("SELECT current_setting('TimeZone')").fetchall()[0][0] == ZONE
        con.register("t", trades)
        con.execute("CREATE TABLE trades AS SELECT * FROM t")
        zoned = con.sql("SELECT typeof(ts) FROM trades LIMIT 1").fetchall()[0][0]
        assert "TZ" in zoned or "TIME ZONE" in zoned, zoned                 # instants, read in a zone
    add_table_target("duck_ny", "duckdb", str(path), "trades", ROLES)
    assert os.environ["TZ"] == ZONE
    assert table_suite_answers(tmp_path, "duck_ny", {}) == expected_answers(trades.to_pandas())


def test_every_local_engine_on_a_machine_in_new_york_answers_an_imports_suite_as_pandas(tmp_path,
                                                                                         machine_in_new_york):
    """An import's layouts (DuckDB, the embedded ClickHouse, the files read through DuckDB) on a
    machine whose zone is New York: the docs suite's minute labels and day filter as pandas has them."""
    from tests.test_user_suites import (DAYS, LOCAL, assert_same_and_right, docs_suite, import_trades,
                                        local_targets)
    from workloads.datasets.schema import Scale
    from workloads.queries import load_suite
    from workloads.queries.verify import verify
    assert time.strftime("%Z") in ("EST", "EDT")
    dataset = import_trades(tmp_path)
    suite = load_suite(str(docs_suite(tmp_path)))
    verdicts = verify(dataset, Scale(days=DAYS, rows_per_day=1, symbols=1), local_targets(tmp_path, LOCAL), [suite])
    assert_same_and_right(verdicts, list(LOCAL))
