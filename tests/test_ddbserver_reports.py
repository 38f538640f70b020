"""The test server's side of reports 001 and 004, in process: the DolphinDB query subset it
answers (tests/ddbserver/dsql.py, suites.py) and its text files (textio.py), each checked against
values worked out by hand from DolphinDB's documentation."""
from __future__ import annotations

import numpy as np
import pytest

from tests.ddbserver import codec as c
from tests.ddbserver.dsql import parse_statement, split_statements
from tests.ddbserver.store import Database, Store
from tests.ddbserver.suites import SuiteQueries
from tests.ddbserver.syntax import ScriptError, parse_date
from tests.ddbserver.textio import load_text, save_text

DB = "dfs://t"
LOAD = f'loadTable("{DB}", "q")'


def vec(ddb_type, values):
    if ddb_type in c.STRINGISH:
        return c.Vector(ddb_type, np.array(values, dtype=object))
    return c.Vector(ddb_type, np.array(values, dtype=c.NUMPY_OF[ddb_type]))


@pytest.fixture
def server():
    store = Store()
    store.create_database(Database(DB, parse_date("2020.01.01"), parse_date("2020.01.31"), ["A", "M", "ZZ"]))
    cols = [("sym", c.SYMBOL), ("date", c.DATE), ("time", c.SECOND), ("px", c.DOUBLE), ("n", c.INT)]
    store.create_table(DB, "q", cols, ["date", "sym"])
    d1, d2 = parse_date("2020.01.02"), parse_date("2020.01.03")
    table = c.Table("q", {
        "sym": vec(c.SYMBOL, ["A", "B", "A", "N", "B", "A"]),
        "date": vec(c.DATE, [d1, d1, d1, d1, d2, d2]),
        "time": vec(c.SECOND, [34200, 34260, 37800, 39600, 34200, 36000]),      # 09:30 09:31 10:30 11:00
        "px": vec(c.DOUBLE, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        "n": vec(c.INT, [1, c.INT_NULL, 3, c.INT_NULL, c.INT_NULL, 9]),
    })
    store.insert(store.dfs_table(DB, "q"), table, store.databases[DB])
    return store, SuiteQueries(store), {}


def run(server, script):
    _, suites, variables = server
    out = suites.run(variables, script)
    return out[0] if out else None


def column(table, name):
    return table.columns[name].values.tolist()


def test_group_keys_come_first_and_aliases_name_columns(server):
    t = run(server, f"select count(*) as k, avg(px) as mean from {LOAD} group by sym")
    assert list(t.columns) == ["sym", "k", "mean"]
    assert column(t, "sym") == ["A", "B", "N"] and column(t, "k") == [3, 2, 1]
    assert column(t, "mean") == [pytest.approx(10 / 3), 3.5, 4.0]
    t = run(server, f"select max(px) from {LOAD} group by date")
    assert list(t.columns) == ["date", "max_px"] and t.columns["date"].type == c.DATE


def test_having_keeps_the_groups_whose_aggregate_passes(server):
    # n is NULL for every B and N row: their sums are NULL, and NULL > 0 is false
    t = run(server, f"select max(px) as mx from {LOAD} group by sym having sum(n) > 0")
    assert column(t, "sym") == ["A"] and column(t, "mx") == [6.0]
    t = run(server, f"select max(px) as mx from {LOAD} group by sym having count(*) > 1, max(px) < 6")
    assert column(t, "sym") == ["B"]
    with pytest.raises(ScriptError, match="having"):
        run(server, f"select max(px) as mx from {LOAD} group by sym having px > 1")


def test_where_conditions_with_dolphindb_literals(server):
    t = run(server, f"select px from {LOAD} where date = 2020.01.02, time between 09:30:00 : 10:30:00, "
                    f'sym in ["A", "N"]')
    assert column(t, "px") == [1.0, 3.0]
    with pytest.raises(ScriptError, match="compare"):
        run(server, f"select px from {LOAD} where date = 09:30:00")
    with pytest.raises(ScriptError, match="integers"):
        run(server, f"select n / 2 as h from {LOAD}")


def test_order_limit_top_and_nulls_sort_first(server):
    t = run(server, f"select top 2 sym, n from {LOAD} order by n, px desc")
    assert column(t, "n")[:2] == [c.INT_NULL, c.INT_NULL] and column(t, "sym") == ["B", "N"]
    t = run(server, f"select avg(px) as a from {LOAD} group by sym order by a desc limit 1")
    assert column(t, "sym") == ["N"]


def test_bar_hour_minute_and_pivot_by_a_string_column(server):
    t = run(server, f"select count(*) as k from {LOAD} group by bar(time, 3600) as b")
    assert column(t, "b") == [32400, 36000, 39600] and t.columns["b"].type == c.SECOND
    t = run(server, f"select count(*) as k from {LOAD} group by minute(time) as m")
    assert t.columns["m"].type == c.MINUTE and column(t, "m")[0] == 570
    script = (f'h = select sym, "h" + lpad(string(hour(time)), 2, "0") as hh, px from {LOAD}\n'
              "select avg(px) from h pivot by sym, hh")
    t = run(server, script)
    assert list(t.columns) == ["sym", "h09", "h10", "h11"]
    assert column(t, "h09") == [1.0, 3.5, c.NULLS[c.DOUBLE]]       # B: 2 and 5; N: no 9 o'clock quote
    with pytest.raises(ScriptError, match="string"):
        run(server, f"h = select sym, hour(time) as hh, px from {LOAD}\nselect avg(px) from h pivot by sym, hh")


def test_fills_follow_the_tables_row_order(server):
    base = f"g = select px, n from {LOAD} order by px\n"              # 1, null, 3, null, null, 9
    assert column(run(server, base + "select ffill(n) as v from g"), "v") == [1, 1, 3, 3, 3, 9]
    assert column(run(server, base + "select bfill(n) as v from g"), "v") == [1, 3, 3, 9, 9, 9]
    assert column(run(server, base + "select nullFill(n, -1) as v from g"), "v") == [1, -1, 3, -1, -1, 9]
    assert column(run(server, base + "select lfill(n) as v from g"), "v") == [1, 2, 3, 5, 7, 9]
    # lfill of an integral vector stays integral (1 NULL NULL 6 -> 1 3 4 6 in DolphinDB's manual)
    gaps = f"g = select px, iif(n == 3, int(), n) as n from {LOAD} order by px\n"   # 1, 4 nulls, 9
    assert column(run(server, gaps + "select lfill(n) as v from g"), "v") == [1, 3, 4, 6, 7, 9]
    # ...and leaves the NULLs before the first value (and after the last) as they are
    lead = f"g = select px, iif(n == 1, double(), double(n)) as n from {LOAD} order by px\n"
    values = column(run(server, lead + "select lfill(n) as v from g"), "v")
    assert values[:2] == [c.NULLS[c.DOUBLE]] * 2 and values[2:] == [3.0, 5.0, 7.0, 9.0]
    with pytest.raises(ScriptError, match="one type"):
        run(server, f"select iif(n == 1, double(), n) as v from {LOAD}")


def test_exec_of_one_aggregate_is_a_scalar_and_select_star_keeps_columns(server):
    value = run(server, f"exec count(*) from {LOAD} where date = 2020.01.03")
    assert isinstance(value, c.Scalar) and value.value == 2
    t = run(server, f"select * from {LOAD} where sym like \"%N\"")
    assert list(t.columns) == ["sym", "date", "time", "px", "n"] and column(t, "px") == [4.0]


def test_equi_join_with_a_dimension_table(server):
    store = server[0]
    store.create_table(DB, "info", [("sym", c.SYMBOL), ("kind", c.SYMBOL)], [])
    store.insert(store.dfs_table(DB, "info"), c.Table("info", {"sym": vec(c.SYMBOL, ["A", "B"]),
                                                               "kind": vec(c.SYMBOL, ["x", "y"])}))
    t = run(server, f'select count(*) as k from ej({LOAD}, loadTable("{DB}", "info"), "sym") group by kind')
    assert column(t, "kind") == ["x", "y"] and column(t, "k") == [3, 2]


def test_scripts_are_one_statement_per_line():
    assert split_statements("select 1 from t\nx = select a from t") is not None
    assert split_statements("select a\nfrom t") is None
    assert split_statements("version()") is None
    with pytest.raises(ScriptError):
        parse_statement("select a from t where")


def test_text_files_round_trip_in_dolphindb_formats(server, tmp_path):
    store = server[0]
    path = tmp_path / "d.csv"
    table = run(server, f"select * from {LOAD}")
    save_text(table, str(path))
    lines = path.read_text().splitlines()
    assert lines[0].replace('"', "") == "sym,date,time,px,n"
    assert lines[1].replace('"', "") == "A,2020.01.02,09:30:00,1,1" and lines[2].endswith(",")
    cols = [(n, t) for n, t in store.dfs_table(DB, "q").columns]
    rows = load_text(store, DB, "copy", ["date", "sym"], str(path), ",", cols)
    assert rows == 6
    back = run(server, f'select * from loadTable("{DB}", "copy")')
    for name in ("sym", "date", "time", "px", "n"):
        assert column(back, name) == column(table, name)
    path.write_text("sym,date,time,px,n\nA,2020.02.30,09:30:00,1,1\n")
    with pytest.raises(ScriptError, match="loadTextEx"):
        load_text(store, DB, "copy", ["date", "sym"], str(path), ",", cols)


def test_text_files_timestamps_and_chars(tmp_path):
    store = Store()
    store.create_database(Database(DB, parse_date("2016.11.15"), parse_date("2016.11.30"), ["A", "ZZ"]))
    cols = [("time", c.TIMESTAMP), ("k", c.SYMBOL), ("ex", c.CHAR), ("r", c.SHORT)]
    path = tmp_path / "t.csv"
    path.write_text("time,k,ex,r\n2016.11.15T00:00:01.250,B,T,-40\n2016.11.16T23:59:59.999,C,,7\n")
    assert load_text(store, DB, "r", ["time", "k"], str(path), ",", cols) == 2
    t = SuiteQueries(store).run({}, f'select * from loadTable("{DB}", "r")')[0]
    assert column(t, "time") == [1479168001250, 1479340799999]
    assert column(t, "ex") == [ord("T"), c.NULLS[c.CHAR]] and column(t, "r") == [-40, 7]
    save_text(t, str(tmp_path / "out.csv"))
    assert (tmp_path / "out.csv").read_text().splitlines()[1].replace('"', "") == "2016.11.15T00:00:01.250,B,T,-40"
