"""Times are instants on every engine: a session whose server, database or machine is set to a zone
other than UTC answers a user's suite (its per-minute labels, its day filter) as pandas does. A
PostgreSQL database set to America/New_York, and DuckDB on a machine whose zone is America/New_York,
each with the trades as timestamptz where they live; a ClickHouse server whose zone is
America/New_York (the stand-in, ``tests.chserver``) with the trades as a DateTime64 without a zone
and as one in New York."""
from __future__ import annotations

import base64
import io
import os
import re
import time
import urllib.request
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from tests.chserver.fixture import start_server
from tests.postgres_fixture import database_in_zone
from tests.suite_answers import table_suite_answers
from tests.test_user_suites import docs_suite, expected_answers
from tests.trades_file import trades_table
from workloads.datasets.roles import Roles
from workloads.datasets.schema import Scale
from workloads.queries import load_suite
from workloads.queries.verify import verify
from workloads.targets.table import add_table_target

ROLES = Roles(time="ts", key="sym", price=("price",), size="qty")
ZONE = "America/New_York"


@pytest.fixture(scope="module")
def trades() -> pa.Table:
    return trades_table(rows=6_000, days=3, symbols=20)


CH_TABLES = {"zone_less": "DateTime64(3)", "in_new_york": f"DateTime64(3, '{ZONE}')"}


@pytest.fixture(scope="module")
def ch_new_york(tmp_path_factory, trades):
    """A ClickHouse stand-in whose server zone is New York (``<timezone>`` in a server's config), the
    trades in a table per kind of time column (``CH_TABLES``), as a user of that server makes them."""
    server = start_server(tmp_path_factory.mktemp("chserver_ny") / "data", timezone=ZONE)
    try:
        client = _ch_client(server)
        for table, column in CH_TABLES.items():
            client.command(f"CREATE TABLE {table} (ts {column}, sym LowCardinality(String), price Float64, "
                           "qty Int64, side LowCardinality(String), venue LowCardinality(String)) "
                           "ENGINE = MergeTree PARTITION BY toDate(ts) ORDER BY (sym, ts)")
            client.insert_arrow(table, trades)
        client.close()
        yield server
    finally:
        server.stop()


def _ch_client(server):
    import clickhouse_connect
    return clickhouse_connect.get_client(host=server.host, port=server.port, username="tick",
                                         password=server.users["tick"], query_retries=0)


def _ch_connection(server) -> dict:
    return {"host": server.host, "port": server.port, "user": "tick", "password": server.users["tick"]}


@pytest.fixture
def machine_in_new_york(monkeypatch):
    monkeypatch.setenv("TZ", ZONE)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_postgres_database_in_new_york_answers_the_suite_as_pandas(tmp_path, trades, pg_engine):
    import psycopg
    config = database_in_zone(pg_engine, "tb_new_york", ZONE)
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


def test_the_clickhouse_stand_in_in_new_york_shows_a_time_without_a_zone_in_new_york(ch_new_york, trades):
    """As strict as a server whose <timezone> is New York: a plain session is there, a DateTime64 without a
    zone prints and truncates there, and a request's own session_timezone moves only that request."""
    server = ch_new_york
    first = trades.column("ts")[0].as_py()                 # a pandas Timestamp, 2024-03-04 14:30:15 UTC
    wall = first.astimezone(ZoneInfo(ZONE))
    client = _ch_client(server)
    try:
        assert client.command("SELECT timezone()") == ZONE
        sql = "SELECT toString(min(ts)), toString(date_trunc('minute', min(ts))) FROM zone_less"
        day, second = f"{wall:%Y-%m-%d}", f"{wall:%H:%M:%S}.{wall.microsecond // 1000:03d}"
        assert client.raw_query(sql, fmt="TabSeparated").decode().split() == [day, second, day, f"{wall:%H:%M}:00"]
        minute = client.query_arrow("SELECT date_trunc('minute', min(ts)) AS m FROM zone_less").column("m")
        assert minute.type.tz == ZONE
        on_utc = client.query_arrow("SELECT date_trunc('minute', min(ts)) AS m FROM zone_less",
                                    settings={"session_timezone": "UTC"}).column("m")
        assert on_utc.type.tz == "UTC" and on_utc[0].as_py() == first.floor("min")
        assert client.command("SELECT timezone()") == ZONE                  # the next query: New York again
    finally:
        client.close()
    token = base64.b64encode(f"tick:{server.users['tick']}".encode()).decode()
    for url, zone in ((f"http://{server.host}:{server.port}/", ZONE),
                      (f"http://{server.host}:{server.port}/?session_timezone=UTC", "UTC")):
        request = urllib.request.Request(url, data=b"SELECT timezone()", headers={"Authorization": f"Basic {token}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert (reply.read().decode().strip(), reply.headers["X-ClickHouse-Timezone"]) == (zone, zone)


@pytest.mark.parametrize("table", list(CH_TABLES))
def test_a_clickhouse_server_in_new_york_answers_the_suite_as_pandas(tmp_path, trades, ch_new_york, table):
    connection = _ch_connection(ch_new_york)
    add_table_target(f"ch_{table}", "clickhouse", f"{ch_new_york.host}:{ch_new_york.port}", table, ROLES, connection)
    assert table_suite_answers(tmp_path, f"ch_{table}", connection) == expected_answers(trades.to_pandas())


def test_a_users_own_text_on_a_clickhouse_server_in_new_york_reads_a_time_without_a_zone_on_utc(tmp_path, trades,
                                                                                                ch_new_york):
    """The docs' suite without its ClickHouse texts: ClickHouse runs its plain SQL, ``date_trunc('minute', ts)``
    over a DateTime64 without a zone, whose minutes are UTC's only in a session on UTC."""
    text = docs_suite(tmp_path).read_text(encoding="utf-8")
    plain = re.sub(r'\nclickhouse = """.*?"""', "", text, flags=re.S)
    assert plain.count("clickhouse") == 0 and "date_trunc('minute', {time})" in plain
    path = tmp_path / "plain-suite.toml"
    path.write_text(plain, encoding="utf-8")
    suite = load_suite(str(path))
    connection = _ch_connection(ch_new_york)
    add_table_target("ch_plain", "clickhouse", f"{ch_new_york.host}:{ch_new_york.port}", "zone_less", ROLES,
                     connection)
    verdicts = verify("tbl_ch_plain", Scale(), [("ch_plain", "table", {"name": "ch_plain", **connection})], [suite])
    answers = {qid: verdicts.answers[(suite.name, qid)]["ch_plain"] for _, qid in verdicts.answers}
    assert not {qid: a.error for qid, a in answers.items() if a.error}
    assert {qid: a.fingerprint for qid, a in answers.items()} == expected_answers(trades.to_pandas())
