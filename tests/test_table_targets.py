"""Existing tables benchmarked where they live, read-only (issue 39, item 4): a hive-partitioned Parquet
folder, a DuckDB file's table and a PostgreSQL table run read-day, slice-download and minute-bars through
the real runner (worker processes), and afterwards each table is unchanged (rows and a content hash);
write workloads are refused; bad tables and logins are one line naming the table."""
from __future__ import annotations

import datetime as dt
import hashlib
import io
import re
import socket
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest

from tests.suite_answers import table_suite_answers
from tests.trades_file import trades_table, write_trades_parquet_days
from workloads.datasets.roles import RoleError, Roles
from workloads.datasets.schema import Scale, StringMode
from workloads.results.dataset_size import run_size_text
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.targets.base import TargetError
from workloads.targets.table import TableTarget, add_table_target, describe_table

ROOT = Path(__file__).resolve().parent.parent
ROLES = Roles(time="ts", key="sym", price=("price",), size="qty")
ROWS, DAYS = 6_000, 3
READS = ("read-day", "slice-download", "minute-bars")


@pytest.fixture(scope="module")
def trades() -> pa.Table:
    return trades_table(rows=ROWS, days=DAYS, symbols=8)


def _day_rows(trades: pa.Table) -> dict[dt.date, int]:
    days = pc.cast(pc.floor_temporal(trades.column("ts"), unit="day"), pa.date32()).to_pylist()
    return {d: days.count(d) for d in sorted(set(days))}


def _tree_hash(path: Path) -> str:
    """Every file's name, size, mtime and bytes under ``path``: any write shows."""
    digest = hashlib.sha256()
    for item in sorted([path] if path.is_file() else path.rglob("*")):
        if item.is_file():
            stat = item.stat()
            digest.update(f"{item.relative_to(path.parent)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
            digest.update(item.read_bytes())
    return digest.hexdigest()


def _run_reads(name: str, config: dict, tmp_path: Path, want_day_rows: dict[dt.date, int]) -> None:
    """The three read workloads through the runner, in worker processes; each says what it read."""
    store = ResultsStore(tmp_path / "results")
    try:
        for workload in READS:
            params = {"rows_per_user": 500} if workload == "slice-download" else {}
            result = Runner(Scenario(dataset=f"tbl_{name}", target="table", target_config={"name": name, **config},
                                     workload=workload, users=(1,), params=params,
                                     operations=0 if workload == "slice-download" else DAYS), store).run()
            assert result.status == "completed", (workload, result.message)
            ops = store.ops(result.run_id, kinds=("measured",))
            assert ops["ok"].all() and (ops["rows"] > 0).all(), workload
            if workload == "read-day":          # day 1, 2, 3: each its own rows, no other day's
                assert list(ops["rows"]) == list(want_day_rows.values())
                run = store.run(result.run_id)
                layout = run["layout"]
                assert [str(d) for d in layout["days"]] == [str(d) for d in want_day_rows]
                # the keys a table holds are those its last day's sample named, and said so
                assert layout["size"]["keys_sampled"] and layout["size"]["keys"] >= len(layout["keys_sample"])
                assert f"at least {layout['size']['keys']:,} keys (in a sample of its last day)" in run_size_text(run)
        for workload in ("upload-sweep", "concurrent-append", "import"):
            with pytest.raises(ValueError, match=f"table:{name}|read in place"):
                Runner(Scenario(dataset=f"tbl_{name}", target="table",
                                target_config={"name": name, "target_key": f"table:{name}", **config},
                                workload=workload, users=(1,), operations=1), store)
    finally:
        store.close()


def _refuses_writes(name: str, config: dict) -> None:
    target = TableTarget({"name": name, **config})
    layout = target.prepare(f"tbl_{name}", Scale(), StringMode.ARROW)
    for call in (lambda: target.append(layout, trades_table(rows=10).to_pandas()),
                 lambda: target.clear_table(layout),
                 lambda: target.import_csv(layout, Path("x.csv"), layout.days[0])):
        with pytest.raises(TargetError, match=f"table:{name} is read-only"):
            call()


# --- Parquet, a hive folder -----------------------------------------------------------------------
def test_a_hive_parquet_folder_is_benchmarked_in_place_and_left_unchanged(tmp_path, trades):
    lake = write_trades_parquet_days(tmp_path / "lake", trades)
    before = _tree_hash(lake)
    add_table_target("lake", "parquet", str(lake), "", ROLES)
    _run_reads("lake", {}, tmp_path, _day_rows(trades))
    _refuses_writes("lake", {})
    assert _tree_hash(lake) == before


def test_parquet_days_come_from_statistics_and_a_slice_is_its_key_day(tmp_path, trades):
    lake = write_trades_parquet_days(tmp_path / "lake", trades)
    add_table_target("lake", "parquet", str(lake), "", ROLES)
    target = TableTarget({"name": "lake"})
    layout = target.prepare("tbl_lake", Scale(), StringMode.ARROW)
    assert list(layout.days) == list(_day_rows(trades)) and layout.rows == ROWS
    target.open(layout)
    try:
        day, key = layout.days[1], layout.keys_sample[0]
        got = target.read_slice(layout, day, key).frame
        frame = trades.to_pandas()
        want = frame[(frame["ts"].dt.date == day) & (frame["sym"] == key)]
        assert len(got) == len(want) > 0 and set(got["sym"]) == {key}
        bars = target.minute_bars(layout, day, key).frame
        assert bars["volume"].sum() == want["qty"].sum()
        assert bars["high"].max() == want["price"].max() and bars["low"].min() == want["price"].min()
    finally:
        target.close()


def _pg_load(con, table: str, frame) -> None:
    """``frame``'s rows into PostgreSQL's ``table`` by COPY, then its statistics."""
    data = io.BytesIO()
    pacsv.write_csv(frame, data, pacsv.WriteOptions(include_header=False))
    with con.cursor().copy(f"COPY {table} FROM STDIN (FORMAT csv)") as copy:
        copy.write(data.getvalue())
    con.execute(f"ANALYZE {table}")


def _record_fetches(monkeypatch, source) -> list[str]:
    """Every SQL text a table source sends, in order, while the test runs."""
    asked: list[str] = []
    fetch = source.fetch
    monkeypatch.setattr(source, "fetch", lambda self, sql: asked.append(sql) or fetch(self, sql))
    return asked


# --- DuckDB, a file's table ---------------------------------------------------------------------------
def _duckdb_file(path, frame):
    """A DuckDB file holding ``frame`` as its table ``trades``."""
    import duckdb
    with duckdb.connect(str(path)) as con:
        con.register("t", frame)
        con.execute("CREATE TABLE trades AS SELECT * FROM t")
    return path


def test_a_duckdb_files_table_is_benchmarked_in_place_and_left_unchanged(tmp_path, trades):
    path = _duckdb_file(tmp_path / "mine.duckdb", trades)
    before = _tree_hash(path)
    add_table_target("mine", "duckdb", str(path), "trades", ROLES)
    _run_reads("mine", {}, tmp_path, _day_rows(trades))
    _refuses_writes("mine", {})
    assert _tree_hash(path) == before


# --- bad input: one line naming the table --------------------------------------------------------------
def test_bad_tables_are_one_line_naming_the_table(tmp_path, trades):
    import duckdb
    path = tmp_path / "mine.duckdb"
    with duckdb.connect(str(path)) as con:
        con.register("t", trades)
        con.execute("CREATE TABLE trades AS SELECT * FROM t")
        con.execute("CREATE TABLE empty AS SELECT * FROM t LIMIT 0")
    cases = [(("duckdb", str(path), "nosuch", ROLES), r"duckdb table nosuch at .*mine.duckdb: no such table"),
             (("duckdb", str(path), "empty", ROLES), r"table empty .*: the table has no rows"),
             (("duckdb", str(path), "trades", Roles(time="when")), r"table trades .*: no column 'when' for the time"),
             (("duckdb", str(path), "trades", Roles(time="sym")), r"column 'sym' is SYMBOL, the time role needs"),
             (("parquet", str(tmp_path / "none"), "", ROLES), r"Parquet .*none: no such file or folder")]
    for args, message in cases:
        with pytest.raises((TargetError, RoleError), match=message) as caught:
            add_table_target("bad", *args)
        assert "\n" not in str(caught.value)
    assert not (tmp_path / "home" / "tables" / "bad.json").exists()


# --- PostgreSQL ---------------------------------------------------------------------------------------------
def _pg(pg_engine, **changes):
    import psycopg
    config = {**pg_engine.config, **changes}
    return psycopg.connect(host=config["host"], port=config["port"], user=config["user"],
                           password=config["password"], dbname=config["database"], autocommit=True)


@pytest.fixture(scope="module")
def pg_trades(pg_engine, trades):
    """A user's own table: ``trades`` (timestamptz, text, float8, bigint...) with an index on its time."""
    with _pg(pg_engine) as con:
        con.execute("DROP TABLE IF EXISTS trades, empty_trades")
        con.execute("CREATE TABLE trades (ts timestamptz, sym text, price float8, qty bigint, side text, venue text)")
        con.execute("CREATE INDEX ON trades (ts)")
        con.execute("CREATE TABLE empty_trades (LIKE trades)")
        _pg_load(con, "trades", trades)
        con.execute("DROP ROLE IF EXISTS reader_without_select")
        con.execute("CREATE ROLE reader_without_select LOGIN PASSWORD 'nope-secret'")
    return "trades"


def _pg_state(pg_engine) -> tuple[int, str]:
    with _pg(pg_engine) as con:
        return con.execute("SELECT count(*), md5(string_agg(t::text, '|' ORDER BY t::text)) FROM trades t").fetchone()


def _pg_connection(pg_engine, **changes) -> dict:
    config = {**pg_engine.config, **changes}
    return {k: config[k] for k in ("host", "port", "user", "password", "database")}


def test_a_postgres_table_is_benchmarked_in_place_and_left_unchanged(pg_trades, pg_engine, tmp_path, trades):
    before = _pg_state(pg_engine)
    assert before[0] == ROWS
    connection = _pg_connection(pg_engine)
    location = f"{connection['host']}:{connection['port']}/{connection['database']}"
    add_table_target("pgtrades", "postgres", location, "trades", ROLES, connection)
    _run_reads("pgtrades", connection, tmp_path, _day_rows(trades))
    _refuses_writes("pgtrades", connection)
    assert _pg_state(pg_engine) == before


def test_postgres_bad_input_is_one_line_naming_the_table_or_server(pg_trades, pg_engine):
    good = _pg_connection(pg_engine)
    location = f"{good['host']}:{good['port']}"
    with socket.socket() as free:                 # a loopback port nobody listens on
        free.bind(("127.0.0.1", 0))
        closed_port = free.getsockname()[1]
    cases = [("nosuch", good, r"postgres table nosuch at .*: no such table"),
             ("empty_trades", good, r"table empty_trades .*: the table has no rows"),
             ("trades", {**good, "user": "reader_without_select", "password": "nope-secret"},
              r"table trades .*: user 'reader_without_select' may not read it"),
             ("trades", {**good, "password": "wrong"}, r"authentication failed"),
             ("trades", {**good, "port": closed_port}, r"connection refused")]
    for table, connection, message in cases:
        with pytest.raises(TargetError, match=message) as caught:
            add_table_target("bad", "postgres", location, table, ROLES, connection)
        assert "\n" not in str(caught.value)


def test_postgres_days_are_index_lookups_never_a_scan_of_the_table(pg_trades, pg_engine, monkeypatch):
    """Every question that lists the days is answered from the time column's index: its plan scans no heap."""
    from workloads.targets.table.sql import PostgresSource
    asked = _record_fetches(monkeypatch, PostgresSource)
    connection = _pg_connection(pg_engine)
    add_table_target("plan", "postgres", "x", "trades", ROLES, connection)
    target = TableTarget({"name": "plan", **connection})
    asked.clear()
    layout = target.prepare("tbl_plan", Scale(), StringMode.ARROW)
    lookups = [sql for sql in asked if sql.startswith("SELECT min(")]
    assert len(lookups) == len(layout.days) + 1             # one per day found, and one that finds none
    with _pg(pg_engine) as con:
        for sql in lookups:
            plan = "\n".join(row[0] for row in con.execute("EXPLAIN " + sql).fetchall())
            assert "Index Only Scan" in plan and "Seq Scan" not in plan, plan


def test_the_postgres_session_refuses_writes_whatever_is_sent(pg_trades, pg_engine):
    """Belt and braces: the reader's own session is read-only on the server."""
    from workloads.datasets.tables import load_table
    connection = _pg_connection(pg_engine)
    add_table_target("ro", "postgres", f"{connection['host']}:{connection['port']}", "trades", ROLES, connection)
    from workloads.targets.table import open_source
    source = open_source(load_table("ro"), connection)
    try:
        with pytest.raises(TargetError, match="read-only transaction"):
            source.fetch("DELETE FROM trades RETURNING ts")
    finally:
        source.close()
    assert _pg_state(pg_engine)[0] == ROWS


def test_describe_table_lists_columns_for_a_dialog(pg_trades, pg_engine):
    """PostgreSQL keeps microseconds: finer than a millisecond TIMESTAMP, so NANOTIMESTAMP."""
    columns = describe_table("postgres", "x", "trades", _pg_connection(pg_engine))
    assert [(n, t) for n, t, _ in columns] == [("ts", "NANOTIMESTAMP"), ("sym", "SYMBOL"), ("price", "DOUBLE"),
                                               ("qty", "LONG"), ("side", "SYMBOL"), ("venue", "SYMBOL")]


# --- the command line ----------------------------------------------------------------------------------------
def _tickbench(*args: str, home: Path, stdin: str = "", **env_more: str) -> subprocess.CompletedProcess:
    env = {"TICKBENCH_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200", **env_more}
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=180,
                          env=env, cwd=ROOT, input=stdin)


def test_cli_add_table_then_run_it_and_refuse_a_write(tmp_path, trades):
    lake = write_trades_parquet_days(tmp_path / "lake", trades)
    home = tmp_path / "home"
    added = _tickbench("targets", "add-table", "lake", "--kind", "parquet", "--location", str(lake),
                       "--time", "ts", "--key", "sym", "--price", "price", "--size", "qty", home=home)
    assert added.returncode == 0, added.stderr
    assert "table:lake" in added.stdout and "tbl_lake" in added.stdout
    ran = _tickbench("run", "--target", "table:lake", "--workload", "minute-bars", "--operations", "3", home=home)
    assert ran.returncode == 0 and "completed" in ran.stdout, ran.stdout + ran.stderr
    refused = _tickbench("run", "--target", "table:lake", "--workload", "concurrent-append", home=home)
    assert refused.returncode != 0
    assert refused.stderr.strip().count("\n") == 0 and "read in place" in refused.stderr
    bad = _tickbench("targets", "add-table", "x", "--kind", "parquet", "--location", str(lake), "--time", "qty",
                     home=home)
    assert bad.returncode == 2 and "column 'qty' is LONG, the time role needs" in bad.stderr


# --- QuestDB ------------------------------------------------------------------------------------------------
def _qdb(questdb_server):
    import psycopg
    c = questdb_server.config
    return psycopg.connect(host=c["host"], port=c["port"], user=c["user"], password=c["password"],
                           dbname=c.get("database") or "qdb", autocommit=True)


def _qdb_state(questdb_server) -> tuple[int, str]:
    with _qdb(questdb_server) as con:
        rows = con.execute("SELECT * FROM qtrades ORDER BY ts, sym, price, qty").fetchall()
    return len(rows), hashlib.sha256(repr(rows).encode()).hexdigest()


def test_a_questdb_table_is_benchmarked_in_place_and_left_unchanged(questdb_server, tmp_path, trades):
    frame = trades.to_pandas()
    frame["ts"] = frame["ts"].dt.tz_convert(None).dt.floor("us")
    with _qdb(questdb_server) as con:
        con.execute("DROP TABLE IF EXISTS qtrades")
        con.execute("CREATE TABLE qtrades (ts TIMESTAMP, sym SYMBOL, price DOUBLE, qty LONG, side SYMBOL, "
                    "venue SYMBOL) TIMESTAMP(ts) PARTITION BY DAY BYPASS WAL")
        with con.cursor() as cur:
            cur.executemany("INSERT INTO qtrades VALUES (%s, %s, %s, %s, %s, %s)",
                            [tuple(r) for r in frame.itertuples(index=False)])
    before = _qdb_state(questdb_server)
    assert before[0] == ROWS
    c = questdb_server.config
    connection = {k: c[k] for k in ("host", "port", "user", "password", "http_port") if k in c}
    add_table_target("qtrades", "questdb", f"{c['host']}:{c['port']}", "qtrades", ROLES, connection)
    _run_reads("qtrades", connection, tmp_path, _day_rows(trades))
    _refuses_writes("qtrades", connection)
    assert _qdb_state(questdb_server) == before


# --- ClickHouse (the stand-in: the real engine, chDB, behind ClickHouse's HTTP interface) ------------------
from tests.chserver.fixture import ch_server  # noqa: E402,F401


def _ch(ch_server, user: str = "tick"):
    import clickhouse_connect
    return clickhouse_connect.get_client(host=ch_server.host, port=ch_server.port, username=user,
                                         password=ch_server.users[user], query_retries=0)


def _ch_state(ch_server) -> tuple[int, int]:
    """Rows and an order-free hash of every row's every column."""
    client = _ch(ch_server)
    try:
        return tuple(client.query("SELECT count(), sum(cityHash64(*)) FROM chtrades").result_rows[0])
    finally:
        client.close()


@pytest.fixture(scope="module")
def ch_trades(ch_server, trades):
    """A user's ClickHouse table as its practitioners make one: by day, sorted by (symbol, time)."""
    client = _ch(ch_server)
    try:
        client.command("DROP TABLE IF EXISTS chtrades")
        client.command("DROP TABLE IF EXISTS chtrades_empty")
        columns = ("ts DateTime64(9, 'UTC'), sym LowCardinality(String), price Float64, qty Int64, "
                   "side LowCardinality(String), venue LowCardinality(String)")
        client.command(f"CREATE TABLE chtrades ({columns}) ENGINE = MergeTree PARTITION BY toDate(ts) "
                       "ORDER BY (sym, ts)")
        client.command(f"CREATE TABLE chtrades_empty ({columns}) ENGINE = MergeTree ORDER BY ts")
        client.insert_arrow("chtrades", trades)
    finally:
        client.close()
    return "chtrades"


def _ch_connection(ch_server, **changes) -> dict:
    return {"host": ch_server.host, "port": ch_server.port, "user": "tick", "password": ch_server.users["tick"],
            **changes}


def test_a_clickhouse_table_is_benchmarked_in_place_and_left_unchanged(ch_trades, ch_server, tmp_path, trades):
    before = _ch_state(ch_server)
    assert before[0] == ROWS
    connection = _ch_connection(ch_server)
    add_table_target("chtrades", "clickhouse", f"{ch_server.host}:{ch_server.port}", "chtrades", ROLES, connection)
    _run_reads("chtrades", connection, tmp_path, _day_rows(trades))
    _refuses_writes("chtrades", connection)
    assert _ch_state(ch_server) == before


def test_clickhouse_days_keys_and_bars_are_the_tables(ch_trades, ch_server, trades):
    connection = _ch_connection(ch_server)
    add_table_target("chk", "clickhouse", f"{ch_server.host}:{ch_server.port}", "chtrades", ROLES, connection)
    target = TableTarget({"name": "chk", **connection})
    layout = target.prepare("tbl_chk", Scale(), StringMode.ARROW)
    assert list(layout.days) == list(_day_rows(trades)) and layout.rows == ROWS
    assert layout.footprint_bytes > 0 and set(layout.keys_sample) <= set(trades.column("sym").to_pylist())
    target.open(layout)
    try:
        day, key = layout.days[-1], layout.keys_sample[0]
        frame = trades.to_pandas()
        want = frame[(frame["ts"].dt.date == day) & (frame["sym"] == key)].sort_values("ts")
        got = target.read_slice(layout, day, key).frame
        assert len(got) == len(want) > 0 and set(got["sym"]) == {key}
        bars = target.minute_bars(layout, day, key).frame
        reference = want.groupby(want["ts"].dt.floor("min"))["price"].agg(["first", "max", "min", "last"])
        assert (reference["first"] != reference["last"]).any()      # open and close can be told apart
        assert bars[["open", "high", "low", "close"]].to_numpy().tolist() == reference.to_numpy().tolist()
        assert bars["volume"].sum() == want["qty"].sum()
    finally:
        target.close()


def test_clickhouse_days_come_from_its_parts_min_max_never_a_read_of_rows(ch_trades, ch_server, monkeypatch):
    """A table partitioned by toDate(ts): every lookup that finds a day is answered by the parts' min/max
    (the _minmax_count_projection), and the one that finds none reads no part."""
    from workloads.targets.table.servers import ClickHouseSource
    asked = _record_fetches(monkeypatch, ClickHouseSource)
    connection = _ch_connection(ch_server)
    add_table_target("chplan", "clickhouse", "x", "chtrades", ROLES, connection)
    asked.clear()
    layout = TableTarget({"name": "chplan", **connection}).prepare("tbl_chplan", Scale(), StringMode.ARROW)
    lookups = [sql for sql in asked if sql.startswith("SELECT min(")]
    assert len(lookups) == len(layout.days) + 1
    client = _ch(ch_server)
    try:
        plans = ["\n".join(r[0] for r in client.query("EXPLAIN indexes = 1 " + sql).result_rows) for sql in lookups]
    finally:
        client.close()
    assert all("_minmax_count_projection" in plan for plan in plans[:-1]), plans
    assert re.search(r"Parts: 0/", plans[-1]) or "_minmax_count_projection" in plans[-1], plans[-1]


def test_clickhouse_bad_input_is_one_line_naming_the_table_or_server(ch_trades, ch_server):
    good = _ch_connection(ch_server)
    location = f"{ch_server.host}:{ch_server.port}"
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        closed_port = free.getsockname()[1]
    cases = [("nosuch", good, r"clickhouse table nosuch at .*: no such table"),
             ("chtrades_empty", good, r"table chtrades_empty .*: the table has no rows"),
             ("chtrades", {**good, "password": "wrong"}, r"authentication failed for user 'tick'"),
             ("chtrades", {**good, "port": closed_port}, r"connection refused")]
    for table, connection, message in cases:
        with pytest.raises(TargetError, match=message) as caught:
            add_table_target("bad", "clickhouse", location, table, ROLES, connection)
        assert "\n" not in str(caught.value)
    columns = describe_table("clickhouse", location, "chtrades", good)
    assert [(n, t) for n, t, _ in columns][:4] == [("ts", "NANOTIMESTAMP"), ("sym", "SYMBOL"), ("price", "DOUBLE"),
                                                   ("qty", "LONG")]


# --- DolphinDB (the stand-in: DolphinDB's wire protocol and the target's scripts, in DuckDB) ---------------
DDB_ALL_DAYS = "ts between 2024.03.01T00:00:00.000000000 : 2024.03.31T23:59:59.999999999"


def _ddb(ddb_server, password: str = "123456"):
    from workloads.targets.dolphindb.cluster import ClusterProfile, open_session
    profile = ClusterProfile.single(ddb_server.host, ddb_server.port, "admin", password)
    return open_session(profile, profile.data_nodes[0], metadata=True)


def _ddb_state(ddb_server) -> tuple[int, str]:
    session = _ddb(ddb_server)
    try:
        rows = session.run('exec count(*) from loadTable("dfs://mine", "trades")')
        frame = session.run(f'select * from loadTable("dfs://mine", "trades") where {DDB_ALL_DAYS}')
    finally:
        session.close()
    text = frame.sort_values(list(frame.columns)).to_csv(index=False)
    return int(rows), hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def ddb_trades(ddb_server, trades):
    """A user's DFS table as DolphinDB's manual makes one: VALUE by day, RANGE by symbol (COMPO)."""
    frame = trades.to_pandas()
    frame["ts"] = frame["ts"].dt.tz_convert(None)
    session = _ddb(ddb_server)
    try:
        session.run('dbDate = database("", VALUE, 2024.03.01..2024.03.31)\n'
                    'dbKey = database("", RANGE, symbol(["A", "S004", "ZZZZ"]))\n'
                    'db = database("dfs://mine", COMPO, [dbDate, dbKey], engine="OLAP", atomic="CHUNK")')
        for table in ("trades", "empty"):
            session.run('db = database("dfs://mine")\n'
                        'schemaTable = table(1:0, ["ts", "sym", "price", "qty", "side", "venue"], '
                        '[NANOTIMESTAMP, SYMBOL, DOUBLE, LONG, SYMBOL, STRING])\n'
                        f'pt = db.createPartitionedTable(schemaTable, "{table}", ["ts", "sym"])')
        session.run('tableInsert{loadTable("dfs://mine", "trades")}', frame)
    finally:
        session.close()
    return "dfs://mine/trades"


def _ddb_connection(ddb_server, **changes) -> dict:
    return {"host": ddb_server.host, "port": ddb_server.port, "user": "admin", "password": "123456", **changes}


def test_a_dolphindb_dfs_table_is_benchmarked_in_place_and_left_unchanged(ddb_trades, ddb_server, tmp_path, trades):
    before = _ddb_state(ddb_server)
    assert before[0] == ROWS
    connection = _ddb_connection(ddb_server)
    location = f"{ddb_server.host}:{ddb_server.port}"
    add_table_target("ddbtrades", "dolphindb", location, ddb_trades, ROLES, connection)
    _run_reads("ddbtrades", connection, tmp_path, _day_rows(trades))
    _refuses_writes("ddbtrades", connection)
    assert _ddb_state(ddb_server) == before


def test_dolphindb_schema_days_slice_and_bars_are_the_tables(ddb_trades, ddb_server, trades):
    connection = _ddb_connection(ddb_server)
    location = f"{ddb_server.host}:{ddb_server.port}"
    assert [(n, t) for n, t, _ in describe_table("dolphindb", location, ddb_trades, connection)] == [
        ("ts", "NANOTIMESTAMP"), ("sym", "SYMBOL"), ("price", "DOUBLE"), ("qty", "LONG"), ("side", "SYMBOL"),
        ("venue", "STRING")]             # the table's own types: an Arrow string would say SYMBOL
    add_table_target("ddbk", "dolphindb", location, ddb_trades, ROLES, connection)
    target = TableTarget({"name": "ddbk", **connection})
    layout = target.prepare("tbl_ddbk", Scale(), StringMode.ARROW)
    assert list(layout.days) == list(_day_rows(trades)) and layout.rows == ROWS and layout.footprint_bytes > 0
    target.open(layout)
    try:
        day, key = layout.days[1], layout.keys_sample[0]
        frame = trades.to_pandas()
        want = frame[(frame["ts"].dt.date == day) & (frame["sym"] == key)].sort_values("ts")
        got = target.read_slice(layout, day, key).frame
        assert len(got) == len(want) > 0 and set(got["sym"]) == {key}
        assert len(target.read_day(layout, day, ("ts", "price")).frame) == _day_rows(trades)[day]
        bars = target.minute_bars(layout, day, key).frame
        reference = want.groupby(want["ts"].dt.floor("min"))["price"].agg(["first", "max", "min", "last"])
        assert (reference["first"] != reference["last"]).any()
        assert bars[["open", "high", "low", "close"]].to_numpy().tolist() == reference.to_numpy().tolist()
        assert bars["volume"].sum() == want["qty"].sum()
    finally:
        target.close()


def test_a_dolphindb_dimension_table_finds_its_days_from_each_next_days_first_instant(ddb_trades, ddb_server,
                                                                                      trades):
    """A dimension table has no day partition to list or prune by: its days are found by asking,
    from each next day's first instant, for the first time at or after it (day 1, 2, 3 in turn,
    none skipped or repeated), and a day's read is that day's rows."""
    frame = trades.to_pandas()
    frame["ts"] = frame["ts"].dt.tz_convert(None)
    session = _ddb(ddb_server)
    try:
        session.run('db = database("dfs://mine")\n'
                    'schemaTable = table(1:0, ["ts", "sym", "price", "qty", "side", "venue"], '
                    '[NANOTIMESTAMP, SYMBOL, DOUBLE, LONG, SYMBOL, STRING])\n'
                    'db.createTable(schemaTable, "flat")')
        session.run('tableInsert{loadTable("dfs://mine", "flat")}', frame)
    finally:
        session.close()
    connection = _ddb_connection(ddb_server)
    add_table_target("ddbflat", "dolphindb", f"{ddb_server.host}:{ddb_server.port}", "dfs://mine/flat", ROLES,
                     connection)
    target = TableTarget({"name": "ddbflat", **connection})
    layout = target.prepare("tbl_ddbflat", Scale(), StringMode.ARROW)
    assert list(layout.days) == list(_day_rows(trades)) and len(layout.days) >= 3 and layout.rows == ROWS
    target.open(layout)
    try:
        for day in layout.days:
            assert len(target.read_day(layout, day, ("ts", "price")).frame) == _day_rows(trades)[day]
    finally:
        target.close()


def test_dolphindb_bad_input_is_one_line_naming_the_table_or_server(ddb_trades, ddb_server):
    good = _ddb_connection(ddb_server)
    location = f"{ddb_server.host}:{ddb_server.port}"
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        closed_port = free.getsockname()[1]
    cases = [("dfs://mine/nosuch", good, r"dolphindb table dfs://mine/nosuch at .*: no such table"),
             ("dfs://mine/empty", good, r"table dfs://mine/empty .*: the table has no rows"),
             ("trades", good, r"name the table as dfs://DATABASE/TABLE"),
             ("dfs://mine/trades", {**good, "password": "wrong"}, r"DolphinDB at .*(password|login|authenticat)"),
             ("dfs://mine/trades", {**good, "port": closed_port}, r"DolphinDB at .*refused")]
    for table, connection, message in cases:
        with pytest.raises(TargetError, match=message) as caught:
            add_table_target("bad", "dolphindb", location, table, ROLES, connection)
        assert "\n" not in str(caught.value)


# --- a suite the user writes, on the table where it lives ------------------------------------------------------
def test_the_docs_suite_answers_as_pandas_on_parquet_and_duckdb_tables_in_place(tmp_path, trades):
    import duckdb
    from tests.test_user_suites import expected_answers
    expected = expected_answers(trades.to_pandas())
    lake = write_trades_parquet_days(tmp_path / "lake", trades)
    add_table_target("lake", "parquet", str(lake), "", ROLES)
    path = tmp_path / "mine.duckdb"
    with duckdb.connect(str(path)) as con:
        con.register("t", trades)
        con.execute("CREATE TABLE trades AS SELECT * FROM t")
    add_table_target("mine", "duckdb", str(path), "trades", ROLES)
    before = _tree_hash(path)
    assert table_suite_answers(tmp_path, "lake", {}) == expected
    assert table_suite_answers(tmp_path, "mine", {}) == expected
    from tests.test_user_suites import docs_suite
    store = ResultsStore(tmp_path / "results")
    try:                                      # and as the query-suite workload, in a worker process
        result = Runner(Scenario(dataset="tbl_mine", target="table", target_config={"name": "mine"},
                                 workload="query-suite", users=(1,),
                                 params={"suite": str(docs_suite(tmp_path)), "repetitions": 2}), store).run()
        assert result.status == "completed", result.message
        ops = store.ops(result.run_id, kinds=("measured",))
        assert len(ops) == 10 and ops["ok"].all() and set(ops["op"]) >= {"volume", "venues", "minute_range"}
    finally:
        store.close()
    assert _tree_hash(path) == before


def test_the_docs_suite_answers_as_pandas_on_server_tables_in_place(tmp_path, trades, pg_trades, pg_engine,
                                                                    ch_trades, ch_server, ddb_trades, ddb_server):
    from tests.test_user_suites import expected_answers
    expected = expected_answers(trades.to_pandas())
    servers = {"postgres": ("trades", _pg_connection(pg_engine)),
               "clickhouse": ("chtrades", _ch_connection(ch_server)),
               "dolphindb": (ddb_trades, _ddb_connection(ddb_server))}
    for kind, (table, connection) in servers.items():
        add_table_target(f"s_{kind}", kind, f"{connection['host']}:{connection['port']}", table, ROLES, connection)
        assert table_suite_answers(tmp_path, f"s_{kind}", connection) == expected, kind


@pytest.mark.parametrize("kind", ["clickhouse", "dolphindb"])
def test_cli_adds_a_server_table_with_its_password_from_stdin_and_runs_it(kind, tmp_path, request, trades):
    """The password goes in on stdin (never into the saved file); a run finds it in the kind's variable."""
    if kind == "clickhouse":
        request.getfixturevalue("ch_trades")
        server, table, user, password = request.getfixturevalue("ch_server"), "chtrades", "tick", "s3cret"
        variable = "TICKBENCH_CLICKHOUSE_PASSWORD"
    else:
        table = request.getfixturevalue("ddb_trades")
        server, user, password, variable = request.getfixturevalue("ddb_server"), "admin", "123456", \
            "TICKBENCH_DDB_PASSWORD"
    home = tmp_path / "home"
    added = _tickbench("targets", "add-table", "cli", "--kind", kind, "--location", f"{server.host}:{server.port}",
                       "--table", table, "--user", user, "--time", "ts", "--key", "sym", "--price", "price",
                       "--password-stdin", home=home, stdin=password + "\n")
    assert added.returncode == 0, added.stdout + added.stderr
    assert password not in (home / "tables" / "cli.json").read_text()
    ran = _tickbench("run", "--target", "table:cli", "--workload", "slice-download", "--operations", "2",
                     home=home, **{variable: password})
    assert ran.returncode == 0 and "completed" in ran.stdout, ran.stdout + ran.stderr
    wrong = _tickbench("targets", "add-table", "cli2", "--kind", kind, "--location", f"{server.host}:{server.port}",
                       "--table", table, "--user", user, "--time", "ts", "--password-stdin", home=home,
                       stdin="wrong\n")
    assert wrong.returncode == 2 and wrong.stderr.strip().count("\n") == 0, wrong.stderr


# --- a date column and a time-of-day column (issue 39: the time role's other form) --------------------------
DATED_ROLES = Roles(time="day", time_of_day="tod", key="sym", price=("price",), size="qty")


@pytest.fixture(scope="module")
def dated(trades) -> pa.Table:
    """The trades with ``ts`` split into a DATE ``day`` and a TIME ``tod`` (UTC, to the microsecond)."""
    import pandas as pd
    frame = trades.to_pandas()
    instant = frame.pop("ts").dt.tz_convert("UTC").dt.tz_localize(None).dt.floor("us")
    frame.insert(0, "tod", instant.dt.time)
    frame.insert(0, "day", instant.dt.date)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    assert table.schema.field("day").type == pa.date32() and table.schema.field("tod").type == pa.time64("us")
    assert not pd.Series(list(zip(frame["day"], frame["tod"], frame["sym"]))).duplicated().any()
    return table


def _dated_day_rows(dated: pa.Table) -> dict[dt.date, int]:
    days = dated.column("day").to_pylist()
    return {d: days.count(d) for d in sorted(set(days))}


def _pandas_bars(rows):
    """One key-day's bars by pandas alone: the date plus the time of day floored to the minute."""
    import pandas as pd
    instant = pd.to_datetime(rows["day"].astype(str) + " " + rows["tod"].astype(str), format="ISO8601")
    rows = rows.assign(instant=instant).sort_values("instant", kind="stable")
    minute = rows["instant"].dt.floor("min")
    bars = rows.groupby(minute)["price"].agg(["first", "max", "min", "last"])
    bars.columns = ["open", "high", "low", "close"]
    bars["volume"] = rows.groupby(minute)["qty"].sum()
    bars.index.name = "minute"
    return bars.reset_index()


def _of_day(values) -> list:
    """Times of day as ``datetime.time``, whether a client gives them so or as 1970-01-01 instants."""
    return [v.time() if hasattr(v, "time") else v for v in values]


def _dated_reads_are_pandas(name: str, config: dict, dated: pa.Table, minutes_of_day: bool = False) -> None:
    """Every day's rows, a slice of each day and its minute bars equal what pandas picks from the same rows
    (``minutes_of_day``: the bars' minute is the time of day's, as DolphinDB's ``minute(t)`` gives it)."""
    import numpy as np
    import pandas as pd
    target = TableTarget({"name": name, **config})
    layout = target.prepare(f"tbl_{name}", Scale(), StringMode.ARROW)
    assert list(layout.days) == list(_dated_day_rows(dated)) and layout.keys_sample
    frame = dated.to_pandas()
    target.open(layout)
    try:
        for day in layout.days:
            key = layout.keys_sample[0]
            got = target.read_day(layout, day).frame
            assert len(got) == (frame["day"] == day).sum() and set(pd.to_datetime(got["day"]).dt.date) == {day}
            want = frame[(frame["day"] == day) & (frame["sym"] == key)].sort_values("tod")
            got = target.read_slice(layout, day, key).frame
            got = got.assign(day=pd.to_datetime(got["day"]).dt.date).sort_values("tod")
            assert len(got) == len(want) > 0
            assert _of_day(got["tod"]) == list(want["tod"])
            for column in ("sym", "price", "qty"):
                assert list(got[column]) == list(want[column]), column
            bars = target.minute_bars(layout, day, key).frame
            expected = _pandas_bars(want)
            assert len(bars) == len(expected) > 1
            if minutes_of_day:
                assert _of_day(pd.to_datetime(bars["minute"])) == list(expected["minute"].dt.time)
            else:
                assert (pd.to_datetime(bars["minute"]).to_numpy("datetime64[ns]")
                        == expected["minute"].to_numpy("datetime64[ns]")).all()
            for column in ("open", "high", "low", "close", "volume"):
                assert np.allclose(bars[column].astype(float), expected[column].astype(float)), column
    finally:
        target.close()


def test_a_parquet_folder_with_a_date_and_a_time_of_day_is_read_in_place(tmp_path, dated):
    import pyarrow.parquet as pq
    lake = tmp_path / "dated"
    lake.mkdir()
    half = dated.num_rows // 2                  # two files of row groups, one spanning two days
    pq.write_table(dated.slice(0, half), lake / "a.parquet", row_group_size=700)
    pq.write_table(dated.slice(half), lake / "b.parquet", row_group_size=700)
    before = _tree_hash(lake)
    add_table_target("datedlake", "parquet", str(lake), "", DATED_ROLES)
    _run_reads("datedlake", {}, tmp_path, _dated_day_rows(dated))
    _dated_reads_are_pandas("datedlake", {}, dated)
    assert _tree_hash(lake) == before


def test_a_duckdb_table_with_a_date_and_a_time_of_day_is_read_in_place(tmp_path, dated, monkeypatch):
    from workloads.targets.table.sql import DuckDBSource
    path = _duckdb_file(tmp_path / "dated.duckdb", dated)
    before = _tree_hash(path)
    add_table_target("datedduck", "duckdb", str(path), "trades", DATED_ROLES)
    asked = _record_fetches(monkeypatch, DuckDBSource)
    _dated_reads_are_pandas("datedduck", {}, dated)
    lookups = [sql for sql in asked if sql.startswith('SELECT min("day")')]
    assert len(lookups) == len(_dated_day_rows(dated)) + 1       # one bounded lookup per day, one finding none
    assert all("WHERE \"day\" >= DATE '" in sql for sql in lookups[1:])
    _run_reads("datedduck", {}, tmp_path, _dated_day_rows(dated))
    assert _tree_hash(path) == before


def test_a_postgres_table_with_a_date_and_a_time_of_day_is_read_in_place(pg_engine, dated, tmp_path, monkeypatch):
    from workloads.targets.table.sql import PostgresSource
    with _pg(pg_engine) as con:
        con.execute("DROP TABLE IF EXISTS dated_trades")
        con.execute("CREATE TABLE dated_trades (day date, tod time, sym text, price float8, qty bigint, "
                    "side text, venue text)")
        con.execute("CREATE INDEX ON dated_trades (day)")
        _pg_load(con, "dated_trades", dated)

    def state():
        with _pg(pg_engine) as con:
            return con.execute("SELECT count(*), md5(string_agg(t::text, '|' ORDER BY t::text)) "
                               "FROM dated_trades t").fetchone()

    before = state()
    assert before[0] == ROWS
    connection = _pg_connection(pg_engine)
    add_table_target("datedpg", "postgres", "x", "dated_trades", DATED_ROLES, connection)
    asked = _record_fetches(monkeypatch, PostgresSource)
    _dated_reads_are_pandas("datedpg", connection, dated)
    lookups = [sql for sql in asked if sql.startswith('SELECT min("day")')]
    assert len(lookups) == len(_dated_day_rows(dated)) + 1
    with _pg(pg_engine) as con:                 # each lookup is the date column's index, never the heap
        for sql in lookups:
            plan = "\n".join(row[0] for row in con.execute("EXPLAIN " + sql).fetchall())
            assert "Index Only Scan" in plan and "Seq Scan" not in plan, plan
    _run_reads("datedpg", connection, tmp_path, _dated_day_rows(dated))
    assert state() == before


def test_a_clickhouse_table_with_a_date_and_a_time_of_day_is_read_in_place(ch_server, dated, tmp_path, monkeypatch):
    """A Date and a Time64(6), partitioned by the date: its days are the parts' min/max, never a read of rows."""
    from workloads.targets.table.servers import ClickHouseSource
    client = _ch(ch_server)
    try:
        client.command("DROP TABLE IF EXISTS chdated")
        client.command("CREATE TABLE chdated (day Date, tod Time64(6), sym LowCardinality(String), price Float64, "
                       "qty Int64, side LowCardinality(String), venue LowCardinality(String)) ENGINE = MergeTree "
                       "PARTITION BY day ORDER BY (sym, day, tod)")
        client.insert_arrow("chdated", dated)
    finally:
        client.close()

    def state() -> tuple[int, int]:
        client = _ch(ch_server)
        try:
            return tuple(client.query("SELECT count(), sum(cityHash64(*)) FROM chdated").result_rows[0])
        finally:
            client.close()

    before = state()
    assert before[0] == ROWS
    connection = _ch_connection(ch_server)
    add_table_target("datedch", "clickhouse", f"{ch_server.host}:{ch_server.port}", "chdated", DATED_ROLES,
                     connection)
    asked = _record_fetches(monkeypatch, ClickHouseSource)
    _dated_reads_are_pandas("datedch", connection, dated)
    lookups = [sql for sql in asked if sql.startswith('SELECT min("day")')]
    assert len(lookups) == len(_dated_day_rows(dated)) + 1
    assert all("WHERE \"day\" >= toDate('" in sql for sql in lookups[1:])
    client = _ch(ch_server)
    try:
        plans = ["\n".join(r[0] for r in client.query("EXPLAIN indexes = 1 " + sql).result_rows) for sql in lookups]
    finally:
        client.close()
    assert all("_minmax_count_projection" in plan for plan in plans[:-1]), plans
    _run_reads("datedch", connection, tmp_path, _dated_day_rows(dated))
    assert state() == before


def test_a_dolphindb_table_with_a_date_and_a_time_is_read_in_place(ddb_server, dated, tmp_path, monkeypatch):
    """DolphinDB's TAQ shape: a DATE and a TIME (milliseconds), VALUE by date and RANGE by symbol."""
    import dolphindb.settings as keys
    import pandas as pd
    from workloads.targets.dolphindb.frames import typed_frame
    from workloads.targets.table.dolphindb import DolphinDBSource
    tod = pc.cast(pc.cast(dated.column("tod"), pa.time32("ms"), safe=False), pa.time64("us"))
    dated = dated.set_column(dated.schema.get_field_index("tod"), "tod", tod)     # TIME keeps milliseconds
    frame = dated.to_pandas()
    frame["day"] = pd.to_datetime(frame["day"].astype(str))
    frame["tod"] = pd.to_datetime("1970-01-01 " + frame["tod"].astype(str), format="ISO8601")
    session = _ddb(ddb_server)
    try:
        session.run('dbDate = database("", VALUE, 2024.03.01..2024.03.31)\n'
                    'dbKey = database("", RANGE, symbol(["A", "S004", "ZZZZ"]))\n'
                    'db = database("dfs://dated", COMPO, [dbDate, dbKey], engine="OLAP", atomic="CHUNK")')
        session.run('db = database("dfs://dated")\n'
                    'schemaTable = table(1:0, ["day", "tod", "sym", "price", "qty", "side", "venue"], '
                    '[DATE, TIME, SYMBOL, DOUBLE, LONG, SYMBOL, STRING])\n'
                    'pt = db.createPartitionedTable(schemaTable, "trades", ["day", "sym"])')
        session.run('tableInsert{loadTable("dfs://dated", "trades")}',
                    typed_frame(frame, {"day": keys.DT_DATE, "tod": keys.DT_TIME, "sym": keys.DT_SYMBOL,
                                        "side": keys.DT_SYMBOL}))
    finally:
        session.close()

    def state() -> tuple[int, str]:
        session = _ddb(ddb_server)
        try:
            rows = session.run('exec count(*) from loadTable("dfs://dated", "trades")')
            found = session.run('select * from loadTable("dfs://dated", "trades") '
                                'where day between 2024.03.01 : 2024.03.31')
        finally:
            session.close()
        text = found.sort_values(list(found.columns)).to_csv(index=False)
        return int(rows), hashlib.sha256(text.encode()).hexdigest()

    before = state()
    assert before[0] == ROWS
    connection = _ddb_connection(ddb_server)
    add_table_target("datedddb", "dolphindb", f"{ddb_server.host}:{ddb_server.port}", "dfs://dated/trades",
                     DATED_ROLES, connection)
    asked: list[str] = []
    run = DolphinDBSource.run
    monkeypatch.setattr(DolphinDBSource, "run", lambda self, script: asked.append(script) or run(self, script))
    _dated_reads_are_pandas("datedddb", connection, dated, minutes_of_day=True)
    lookups = [text for text in asked if text.startswith("exec min(day)")]
    assert len(lookups) == len(_dated_day_rows(dated)) + 1           # one bounded lookup per day, one finding none
    day = r"\d{4}\.\d\d\.\d\d"        # each a window of days under the partition limit (S02039)
    assert all(re.search(rf" where day between {day} : {day}$", text) for text in lookups), lookups
    _run_reads("datedddb", connection, tmp_path, _dated_day_rows(dated))
    assert state() == before


def test_a_date_and_a_time_of_day_on_questdb_is_refused_in_one_line_naming_the_table():
    with pytest.raises(TargetError) as caught:
        add_table_target("datedelse", "questdb", "127.0.0.1:1", "trades", DATED_ROLES,
                         {"host": "127.0.0.1", "port": 1})
    text = str(caught.value)
    assert "\n" not in text and "trades" in text and text.startswith("questdb table ")
    assert ("read in place on Parquet, DuckDB, PostgreSQL, ClickHouse and DolphinDB tables; give a timestamp "
            "column") in text


def test_cli_add_table_takes_a_time_of_day(tmp_path, dated):
    import pyarrow.parquet as pq
    path = tmp_path / "dated.parquet"
    pq.write_table(dated, path)
    home = tmp_path / "home"
    added = _tickbench("targets", "add-table", "dated", "--kind", "parquet", "--location", str(path),
                       "--time", "day", "--time-of-day", "tod", "--key", "sym", "--price", "price", home=home)
    assert added.returncode == 0, added.stderr
    assert "time day + tod" in added.stdout
    ran = _tickbench("run", "--target", "table:dated", "--workload", "minute-bars", "--operations", "3", home=home)
    assert ran.returncode == 0 and "completed" in ran.stdout, ran.stdout + ran.stderr
