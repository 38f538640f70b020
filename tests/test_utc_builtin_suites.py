"""The built-in suites (report 001's taq001, report 004's taq004 and the tick pack) answer alike under
sessions whose zone is not UTC: a PostgreSQL database set to America/New_York, a ClickHouse server
whose zone is New York (the stand-in, ``tests.chserver``) and DuckDB on a machine in New York, each
beside the Parquet files read by pandas, which no zone reaches."""
from __future__ import annotations

import time

import pytest

from tests.chserver.fixture import start_server
from tests.postgres_fixture import database_in_zone
from workloads.datasets.schema import Scale
from workloads.queries import load_suite
from workloads.queries.verify import SAME, verify

ZONE = "America/New_York"
SCALE = Scale(days=2, rows_per_day=3_000, symbols=30)
SUITES = ("taq001", "taq004", "tick")


def _assert_alike(tmp_path, label: str, kind: str, config: dict) -> None:
    targets = [("parquet", "parquet", {"root": str(tmp_path / "files")}), (label, kind, config)]
    verdicts = verify("taq", SCALE, targets, [load_suite(name) for name in SUITES])
    wrong = {q: (row[label], verdicts.answers[key][label].error) for key, row in verdicts.verdicts.items()
             for q in [key[1]] if row[label] != SAME}
    assert not wrong, wrong
    assert len(verdicts.queries) >= 19          # every query of the three suites


def test_a_postgres_database_in_new_york(tmp_path, pg_engine):
    _assert_alike(tmp_path, "postgres", "postgres", database_in_zone(pg_engine, "tb_builtin_ny", ZONE))


def test_a_clickhouse_server_in_new_york(tmp_path):
    server = start_server(tmp_path / "chdata", timezone=ZONE)
    try:
        _assert_alike(tmp_path, "clickhouse", "clickhouse", server.config())
    finally:
        server.stop()


def test_duckdb_on_a_machine_in_new_york(tmp_path, monkeypatch):
    monkeypatch.setenv("TZ", ZONE)
    time.tzset()
    try:
        assert time.strftime("%Z") in ("EST", "EDT")
        _assert_alike(tmp_path, "duckdb", "duckdb", {"path": str(tmp_path / "ny.duckdb")})
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.fixture(autouse=True)
def _utc_after(monkeypatch):
    yield
    time.tzset()
