"""DolphinDB's per-query partition limit (maxPartitionNumPerQuery, 65,536 by default; S02039), on
the wire test server that now refuses as a real server does: report 002's full-size layout (1,250
days x 8,000 symbols in 128 key ranges) is prepared on a default cluster, its database holds the
dataset's days only (no pre-made future days), and a table in place whose scheme is over the limit
is found, counted and read window by window of days."""
from __future__ import annotations

import dataclasses
import datetime as dt

import dolphindb as ddb
import numpy as np
import pandas as pd
import pytest

from workloads.datasets import get_dataset
from workloads.datasets.roles import Roles
from workloads.datasets.schema import Scale, StringMode
from workloads.reproduce.catalog import REPORT_002
from workloads.targets import make_target
from workloads.targets.dolphindb.partition_limit import day_windows
from workloads.targets.table import TableTarget, add_table_target

S02039 = r"The number of partitions \[(\d+)\] relevant to the query is too large.*RefId:S02039"


def _session(server) -> ddb.session:
    session = ddb.session()
    session.connect(server.host, server.port, "admin", "123456")
    return session


def _wide_table(server, path: str, first: str, last: str, bounds: int) -> None:
    """A COMPO table, VALUE by day over ``first``..``last`` x RANGE by symbol in ``bounds - 1``
    ranges, holding ten rows on each of three days."""
    symbols = [f"S{i:03d}" for i in range(bounds - 1)] + ["ZZZZ"]
    session = _session(server)
    try:
        session.run(f'dbDate = database("", VALUE, {first}..{last})\n'
                    f'dbKey = database("", RANGE, symbol([{", ".join(repr(s).replace(chr(39), chr(34)) for s in symbols)}]))\n'
                    f'db = database("{path}", COMPO, [dbDate, dbKey], engine="OLAP", atomic="CHUNK")')
        session.run(f'db = database("{path}")\n'
                    'schemaTable = table(1:0, ["ts", "sym", "price", "qty"], [NANOTIMESTAMP, SYMBOL, DOUBLE, LONG])\n'
                    'pt = db.createPartitionedTable(schemaTable, "trades", ["ts", "sym"])')
        days = pd.to_datetime(["2023-06-01", "2023-06-02", "2025-12-30"])
        frame = pd.DataFrame({"ts": np.repeat(days, 10) + pd.to_timedelta(np.tile(np.arange(10), 3), "min"),
                              "sym": np.tile(["S000", "S001"], 15), "price": np.arange(30, dtype=float),
                              "qty": np.arange(30, dtype="int64")})
        session.run(f'tableInsert{{loadTable("{path}", "trades")}}', frame)
    finally:
        session.close()


def test_day_windows_cover_every_day_once_and_stay_under_the_limit():
    first, last = dt.date(2020, 1, 1), dt.date(2025, 12, 31)
    windows = day_windows(first, last, 128)
    assert windows[0][0] == first and windows[-1][1] == last
    assert all(b - a == dt.timedelta(days=511) for a, b in windows[:-1])        # 512 days x 128 = 65,536
    assert all(nxt[0] - prev[1] == dt.timedelta(days=1) for prev, nxt in zip(windows, windows[1:]))
    assert day_windows(first, first + dt.timedelta(days=9), 100_000) == [
        (first + dt.timedelta(days=i), first + dt.timedelta(days=i)) for i in range(10)]   # one day at least


def test_the_stand_in_refuses_a_query_over_the_limit_as_a_real_server_does(ddb_server):
    _wide_table(ddb_server, "dfs://limit_probe", "2020.01.01", "2025.12.31", 31)   # 2,192 days x 30 = 65,760
    session = _session(ddb_server)
    try:
        with pytest.raises(RuntimeError, match=S02039) as refused:
            session.run('exec count(*) from loadTable("dfs://limit_probe", "trades")')
        assert "[65760]" in str(refused.value)
        with pytest.raises(RuntimeError, match=S02039):    # a condition on another column prunes nothing
            session.run('exec count(*) from loadTable("dfs://limit_probe", "trades") where price > 1')
        assert session.run('exec count(*) from loadTable("dfs://limit_probe", "trades") where '
                           'ts between 2020.01.01T00:00:00.000000000 : 2024.12.31T23:59:59.999999999') == 20
        assert session.run('exec count(*) from loadTable("dfs://limit_probe", "trades") where sym = "S000"') == 15
    finally:
        session.run('dropDatabase("dfs://limit_probe")')
        session.close()


def test_report_002_full_size_layout_prepares_on_a_default_cluster(ddb_server):
    """The download experiment's report size (1,250 days, 8,000 symbols in 128 key ranges) with its
    rows per day and symbols cut to what a test loads, keeping its partitions: 1,250 days x 128
    ranges (128 symbols still cut 128, one a range; 8,000 symbols' price paths would take minutes to draw)."""
    full = REPORT_002.experiment("download").sizes["report"].scale
    assert (full.days, full.symbols) == (1250, 8000)
    scale = dataclasses.replace(full, rows_per_day=200, symbols=128)
    target = make_target("dolphindb", {"host": ddb_server.host, "port": ddb_server.port, "user": "admin",
                                       "password": "123456", "db_prefix": "dfs://tb_limit"})
    layout = target.prepare("taq", scale, StringMode.ARROW)
    days = get_dataset("taq").trading_days(scale)
    assert layout.rows == 1250 * 200 and list(layout.days) == list(days)
    again = target.prepare("taq", scale, StringMode.ARROW)    # reused: the side table (trades) is counted
    assert again.reused and again.rows == layout.rows
    names = target.names("taq", scale)
    session = _session(ddb_server)
    try:
        domain = session.run(f'schema(loadTable("{names.db}", "{names.table}")).partitionSchema')[0]
        assert (pd.Timestamp(min(domain)).date(), pd.Timestamp(max(domain)).date()) == (days[0], days[-1])
        assert len(session.run(f'schema(loadTable("{names.db}", "{names.table}")).partitionSchema[1]')) == 129
        with pytest.raises(RuntimeError, match=S02039):          # the whole-table count it must not send
            session.run(f'exec count(*) from loadTable("{names.db}", "{names.table}")')
    finally:
        session.run(f'dropDatabase("{names.db}")')
        session.close()


def test_a_table_in_place_over_the_limit_is_found_and_counted_by_windows(ddb_server):
    _wide_table(ddb_server, "dfs://wide", "2020.01.01", "2025.12.31", 31)
    connection = {"host": ddb_server.host, "port": ddb_server.port, "user": "admin", "password": "123456"}
    try:
        saved = add_table_target("wide", "dolphindb", f"{ddb_server.host}:{ddb_server.port}", "dfs://wide/trades",
                                 Roles(time="ts", key="sym", price=("price",), size="qty"), connection)
        target = TableTarget({"name": saved.name, **connection})
        layout = target.prepare(saved.dataset, Scale(), StringMode.ARROW)
        assert list(layout.days) == [dt.date(2023, 6, 1), dt.date(2023, 6, 2), dt.date(2025, 12, 30)]
        assert layout.rows == 30
    finally:
        session = _session(ddb_server)
        session.run('dropDatabase("dfs://wide")')
        session.close()


def test_a_dimension_table_in_place_is_found_and_counted_in_one_query(ddb_server):
    """No scheme to window by (a dimension table is one partition): one query each, as before."""
    session = _session(ddb_server)
    try:
        session.run('dbDate = database("", VALUE, 2024.03.01..2024.03.31)\n'
                    'dbKey = database("", RANGE, symbol(["A", "ZZZZ"]))\n'
                    'db = database("dfs://dims", COMPO, [dbDate, dbKey], engine="OLAP", atomic="CHUNK")')
        session.run('db = database("dfs://dims")\n'
                    'schemaTable = table(1:0, ["ts", "sym", "price", "qty"], [NANOTIMESTAMP, SYMBOL, DOUBLE, LONG])\n'
                    'db.createTable(schemaTable, "trades")')
        frame = pd.DataFrame({"ts": pd.to_datetime(["2024-03-04 10:00", "2024-03-05 10:00"]), "sym": ["A1", "B2"],
                              "price": [1.0, 2.0], "qty": np.array([1, 2], dtype="int64")})
        session.run('tableInsert{loadTable("dfs://dims", "trades")}', frame)
        connection = {"host": ddb_server.host, "port": ddb_server.port, "user": "admin", "password": "123456"}
        saved = add_table_target("dims", "dolphindb", f"{ddb_server.host}:{ddb_server.port}", "dfs://dims/trades",
                                 Roles(time="ts", key="sym", price=("price",), size="qty"), connection)
        layout = TableTarget({"name": saved.name, **connection}).prepare(saved.dataset, Scale(), StringMode.ARROW)
        assert list(layout.days) == [dt.date(2024, 3, 4), dt.date(2024, 3, 5)] and layout.rows == 2
    finally:
        session.run('dropDatabase("dfs://dims")')
        session.close()
