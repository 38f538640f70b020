"""The target's reads sent as plain scripts (as a user calls ``s.run(query)``), the MEASURED
template's per-node share, and ``truncate`` of a DFS table, with the REAL client."""
from __future__ import annotations

import datetime as dt

import dolphindb as ddb
import dolphindb.settings as keys
import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from tests.ddbserver.fixture import ddb_cluster, ddb_server  # noqa: F401
from workloads.targets.dolphindb import scripts

pytestmark = pytest.mark.timeout(60)

DAYS = [dt.date(2007, 8, 23), dt.date(2007, 8, 24)]
SYMBOLS = ["AAPL", "IBM", "MSFT"]
COLS = scripts.Columns(
    names=("date", "time", "symbol", "bid", "ofr", "bidsiz", "ofrsiz"),
    types=("DATE", "SECOND", "SYMBOL", "DOUBLE", "DOUBLE", "INT", "INT"),
    date="date", date_type="DATE", key="symbol", time="time", time_type="SECOND", bid="bid", ask="ofr")
PREFIX = f"{scripts.RESULT_VAR} = "


def names_for(db: str) -> scripts.Names:
    return scripts.Names(db=db, table="quotes", append="quotes_append", minute="quotes_minute")


def connect(server, port=None) -> ddb.session:
    s = ddb.session()
    assert s.connect(server.host, port or server.port, "admin", "123456",
                     timeout=dt.timedelta(seconds=5), netTimeout=dt.timedelta(seconds=20))
    return s


def quotes(rows_per_day: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    parts = []
    for day in DAYS:
        bid = np.round(rng.uniform(20, 30, rows_per_day), 2)
        parts.append(pd.DataFrame({
            "date": pd.Timestamp(day),
            "time": pd.to_datetime("1970-01-01") + pd.to_timedelta(
                np.sort(rng.integers(9 * 3600 + 1800, 16 * 3600, rows_per_day)), unit="s"),
            "symbol": rng.choice(SYMBOLS, rows_per_day),
            "bid": bid,
            "ofr": bid + np.round(rng.uniform(0.01, 0.5, rows_per_day), 2),
            "bidsiz": rng.integers(1, 50, rows_per_day).astype("int32"),
            "ofrsiz": rng.integers(1, 50, rows_per_day).astype("int32"),
        }))
    frame = pd.concat(parts, ignore_index=True)
    object.__setattr__(frame, "__DolphinDB_Type__", {"date": keys.DT_DATE, "time": keys.DT_SECOND,
                                                     "symbol": keys.DT_SYMBOL})
    return frame


def lay_out(s: ddb.session, names: scripts.Names, frame: pd.DataFrame) -> None:
    schema = list(zip(COLS.names, COLS.types))
    s.run(scripts.create_database(names, DAYS[0], DAYS[-1] + dt.timedelta(days=10), ["A", "M", "ZZZZ"]))
    for table in (names.table, names.append):
        s.run(scripts.create_table(names, table, schema, [COLS.date, COLS.key]))
    s.run(scripts.create_table(names, names.minute, scripts.minute_table_columns(COLS), [COLS.date, COLS.key]))
    assert s.run(scripts.insert_function(names, names.table), frame) == len(frame)


@pytest.fixture(scope="module")
def laid_out(ddb_server):  # noqa: F811
    names, frame = names_for("dfs://srv_reads"), quotes()
    s = connect(ddb_server)
    if not s.run(scripts.exists_database(names)):
        lay_out(s, names, frame)
    s.close()
    return names, frame


@pytest.fixture
def session(ddb_server):  # noqa: F811
    s = connect(ddb_server)
    yield s
    s.close()


def plain(body: list[str]) -> str:
    """The read as a user would send it: the last line without its ``tickbench_res = ``."""
    assert body[-1].startswith(PREFIX)
    return "\n".join(body[:-1] + [body[-1][len(PREFIX):]])


def measured(s: ddb.session, body: list[str], name: str = "reads_res") -> pd.DataFrame:
    assert s.run(scripts.measured(name, body)) >= 0
    try:
        return s.run(scripts.fetch(name))
    finally:
        s.run(scripts.drop_shared(name))


def bodies(names: scripts.Names) -> dict[str, list[str]]:
    return {
        "select_day": scripts.select_day(names, COLS, DAYS[0]),
        "select_slice": scripts.select_slice(names, COLS, DAYS[1], "IBM"),
        "minute_bars": scripts.minute_bars(names, COLS, DAYS[0], "AAPL"),
        "spread": scripts.spread_by_minute(names, COLS, DAYS[0], DAYS[1]),
        "ols": scripts.ols_spread(names, COLS, DAYS[0], DAYS[1], "bidsiz", "ofrsiz"),
    }


@pytest.mark.parametrize("shape", ["select_day", "select_slice", "minute_bars", "spread", "ols"])
def test_a_plain_read_answers_what_the_measured_one_shares(laid_out, session, shape):
    names, frame = laid_out
    body = bodies(names)[shape]
    got = session.run(plain(body))
    assert isinstance(got, pd.DataFrame) and len(got) > 0
    assert_frame_equal(got, measured(session, body))
    assert session.run(f'defined("{scripts.RESULT_VAR}", SHARED)') is False   # nothing shared
    if shape == "select_day":
        day = frame[frame["date"] == pd.Timestamp(DAYS[0])]
        assert got["bid"].tolist() == day["bid"].tolist() and got["symbol"].tolist() == day["symbol"].tolist()
    if shape == "select_slice":
        assert set(got["symbol"]) == {"IBM"}
        assert len(got) == ((frame["date"] == pd.Timestamp(DAYS[1])) & (frame["symbol"] == "IBM")).sum()
    if shape == "minute_bars":
        rows = frame[(frame["date"] == pd.Timestamp(DAYS[0])) & (frame["symbol"] == "AAPL")]
        mid = (rows["bid"] + rows["ofr"]) / 2
        by_minute = mid.groupby(rows["time"].dt.floor("min"))
        assert len(got) == by_minute.ngroups
        assert got["open"].tolist() == pytest.approx(by_minute.first().tolist())
        assert got["high"].tolist() == pytest.approx(by_minute.max().tolist())


def test_a_plain_map_reduce_appends_its_bars_and_returns_the_count(laid_out, session):
    names, frame = laid_out
    body = scripts.mapreduce_minute_bars(names, COLS, DAYS[0], DAYS[1])
    minute = scripts.Names(db=names.db, table=names.minute, append=names.append, minute=names.minute)

    def stored() -> int:
        counts = session.run(scripts.rows_per_day(minute, COLS, DAYS[0], DAYS[-1]))
        return int(counts["n"].sum()) if len(counts) else 0

    before = stored()
    got = session.run(plain(body))
    expected = frame.groupby([frame["symbol"], frame["date"], frame["time"].dt.floor("min")]).ngroups
    assert list(got.columns) == ["bars"] and got["bars"].tolist() == [expected]
    assert stored() == before + expected
    assert_frame_equal(measured(session, body), got)
    assert stored() == before + 2 * expected


def test_plain_reads_keep_the_servers_errors(laid_out, session):
    missing = names_for("dfs://srv_reads_missing")
    with pytest.raises(RuntimeError, match=r"The database \[dfs://srv_reads_missing\] does not exist"):
        session.run(plain(scripts.select_day(missing, COLS, DAYS[0])))
    with pytest.raises(RuntimeError, match="Syntax Error"):
        session.run("select * from quotes")                           # not one of the target's reads


def test_measured_result_is_shared_on_the_node_that_ran_it(ddb_cluster):  # noqa: F811
    one, two = (connect(ddb_cluster, p) for p in ddb_cluster.data_ports[:2])
    names = names_for("dfs://srv_reads_cluster")
    try:
        lay_out(one, names, quotes(50))
        assert two.run(scripts.exists_database(names)) is True         # DFS stays cluster-wide
        one.run(scripts.measured("reads_node", scripts.select_day(names, COLS, DAYS[1])))
        assert two.run('defined("reads_node", SHARED)') is False
        with pytest.raises(RuntimeError, match="Cannot recognize the token reads_node"):
            two.run(scripts.fetch("reads_node"))
        assert len(one.run(scripts.fetch("reads_node"))) == 50
        assert len(two.run(plain(scripts.select_day(names, COLS, DAYS[1])))) == 50   # plain reads run anywhere
    finally:
        one.run(scripts.drop_shared("reads_node"))
        one.close()
        two.close()


def test_truncate_empties_a_dfs_table_and_keeps_its_schema(laid_out, session):
    names, frame = laid_out
    append = scripts.Names(db=names.db, table=names.append, append=names.append, minute=names.minute)
    chunk = frame.iloc[:40].copy()
    object.__setattr__(chunk, "__DolphinDB_Type__", frame.__DolphinDB_Type__)
    assert session.run(scripts.insert_function(names, names.append), chunk) == 40
    assert session.run(scripts.rows_per_day(append, COLS, DAYS[0], DAYS[-1]))["n"].sum() == 40
    assert session.run(f'truncate("{names.db}", "{names.append}")') is None
    assert session.run(scripts.rows_per_day(append, COLS, DAYS[0], DAYS[-1])).empty
    assert session.run(scripts.exists_table(names, names.append)) is True
    assert session.run(scripts.insert_function(names, names.append), chunk) == 40   # schema kept
    assert session.run(scripts.rows_per_day(append, COLS, DAYS[0], DAYS[-1]))["n"].sum() == 40
    assert session.run(scripts.rows_per_day(names, COLS, DAYS[0], DAYS[-1]))["n"].sum() == len(frame)  # other tables untouched
    with pytest.raises(RuntimeError, match=r"Can't find the table \[nope\]"):
        session.run(f'truncate("{names.db}", "nope")')
    session.run(f'truncate("{names.db}", "{names.append}")')
