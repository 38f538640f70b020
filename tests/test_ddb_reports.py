"""Reports 001 and 004 on the DolphinDB target: suite queries, CSV import and export, footprint,
the devices info table; the real ``dolphindb`` client against the test server.

Every suite query's normalised answer must equal the suite's own DuckDB text run here with DuckDB
over the same generated data (and the pandas version's). Nothing measured here is DolphinDB's: the
test server answers the DolphinDB texts with its own DuckDB SQL (tests/ddbserver/suites.py).
"""
from __future__ import annotations

import re

import dolphindb as ddb
import duckdb
import pandas as pd
import pytest

from tests.ddbserver.fixture import ddb_server, ddb_server_factory  # noqa: F401
from workloads.datasets import get_dataset
from workloads.datasets.base import side_tables
from workloads.datasets.csv_files import csv_files
from workloads.datasets.schema import Scale, StringMode
from workloads.queries import draw_values, load_suite
from workloads.queries import pandas_suite
from workloads.queries.answers import normalise
from workloads.queries.suites import Query
from workloads.targets.dolphindb import quote as q
from workloads.targets.dolphindb import scripts
from workloads.targets.base import IMPORT_TABLE, NotSupported, TargetError
from workloads.targets.dolphindb import DolphinDBTarget

pytestmark = pytest.mark.timeout(120)

TAQ = Scale(days=2, rows_per_day=4000, symbols=20)
DEVICES = Scale(days=2, rows_per_day=2000, symbols=20)
SCALES = {"taq": TAQ, "devices": DEVICES}
SUITES = ("taq001", "taq004", "tick", "devices004")
CASES = [(name, query.id) for name in SUITES for query in load_suite(name).queries]
DUCK_TYPES = {"DATE": "DATE", "SECOND": "TIMESTAMP", "TIME": "TIMESTAMP", "TIMESTAMP": "TIMESTAMP",
              "CHAR": "TINYINT", "SHORT": "SMALLINT", "INT": "INTEGER", "LONG": "BIGINT",
              "DOUBLE": "DOUBLE", "SYMBOL": "VARCHAR", "STRING": "VARCHAR"}


def make_target(server, **extra) -> DolphinDBTarget:
    config = {"host": server.host, "port": server.port, "user": "admin", "password": "123456",
              "timeout": 3, "query_timeout": 20, **extra}
    return DolphinDBTarget(config)


def admin(server) -> ddb.session:
    s = ddb.session()
    s.connect(server.host, server.port, "admin", "123456")
    return s


@pytest.fixture(scope="module")
def laid_out(ddb_server):  # noqa: F811
    """Both datasets laid out on the shared test server, each with an open target."""
    out = {}
    for dataset, scale in SCALES.items():
        target = make_target(ddb_server)
        layout = target.prepare(dataset, scale, StringMode.ARROW)
        target.open(layout, 0)
        out[dataset] = (target, layout)
    yield out
    for target, _ in out.values():
        target.close()


@pytest.fixture(scope="module")
def generated():
    """The generated tables, as the pandas versions read them."""
    taq, devices = get_dataset("taq"), get_dataset("devices")
    return {
        "quotes": pd.concat([taq.day_frame(i, TAQ) for i in range(TAQ.days)], ignore_index=True),
        "trades": taq.trades_frame(TAQ),
        "readings": pd.concat([devices.day_frame(i, DEVICES) for i in range(DEVICES.days)], ignore_index=True),
        "info": devices.info_frame(DEVICES),
    }


@pytest.fixture(scope="module")
def duck(generated):
    """The same tables in DuckDB with the DuckDB target's column types (DATE, TIMESTAMP, TINYINT...)."""
    con = duckdb.connect()
    schemas = {"quotes": get_dataset("taq").info.schema, "readings": get_dataset("devices").info.schema,
               "info": get_dataset("devices").info_schema, "trades": side_tables(get_dataset("taq"))["trades"]}
    for name, frame in generated.items():
        con.register(f"{name}_frame", frame)
        cols = ", ".join(f'CAST("{c.name}" AS {DUCK_TYPES[c.ddb_type]}) AS "{c.name}"' for c in schemas[name].columns)
        con.execute(f"CREATE TABLE {name} AS SELECT {cols} FROM {name}_frame")
    yield con
    con.close()


def duckdb_answer(con, query: Query, values: dict) -> pd.DataFrame:
    sql = query.text("duckdb").replace("{quotes}", "quotes").replace("{trades}", "trades") \
        .replace("{readings}", "readings").replace("{info}", "info")
    params = {k: v for k, v in values.items() if re.search(rf"\${k}\b", sql)}
    return con.execute(sql, params).df()


def case(name: str, query_id: str, laid_out):
    suite = load_suite(name)
    query = suite.query(query_id)
    target, layout = laid_out[suite.dataset]
    return query, target, layout, draw_values(query, layout.days, layout.keys_sample)


# --- suite queries ---------------------------------------------------------------------------------
@pytest.mark.parametrize("suite,query_id", CASES)
def test_query_answers_as_the_duckdb_text(suite, query_id, laid_out, duck):
    query, target, layout, values = case(suite, query_id, laid_out)
    result = target.run_query(layout, query, values)
    assert result.rows == len(result.frame) and result.node == target.node
    assert result.phases == {}                      # PROTOCOL_DDB: the user's session.run only
    assert list(result.frame.columns) == list(query.columns)     # named as the suite says
    expected = normalise(duckdb_answer(duck, query, values), query.columns)
    pd.testing.assert_frame_equal(normalise(result.frame, query.columns), expected)


@pytest.mark.parametrize("suite,query_id", CASES)
def test_query_answers_as_the_pandas_version(suite, query_id, laid_out, generated):
    query, target, layout, values = case(suite, query_id, laid_out)
    tables = {k: v for k, v in generated.items() if k in ("quotes", "trades")} if layout.dataset == "taq" else \
        {k: v for k, v in generated.items() if k in ("readings", "info")}
    expected = normalise(pandas_suite.run(query.text("pandas"), tables, values), query.columns)
    result = target.run_query(layout, query, values)
    pd.testing.assert_frame_equal(normalise(result.frame, query.columns), expected)


def test_most_answers_have_rows(laid_out):
    """The comparisons above mean something: at this scale nearly every query has an answer."""
    empty = []
    for name, query_id in CASES:
        query, target, layout, values = case(name, query_id, laid_out)
        if target.run_query(layout, query, values).rows == 0:
            empty.append(query_id)
    assert len(empty) <= 3, empty


def test_verify_finds_the_test_server_and_the_local_engines_agree(ddb_server, tmp_path):  # noqa: F811
    """``tickbench verify``'s check with the DolphinDB target beside DuckDB and Parquet."""
    from workloads.queries.verify import SAME, verify

    config = {"host": ddb_server.host, "port": ddb_server.port, "user": "admin", "password": "123456"}
    targets = [("duckdb", "duckdb", {"path": str(tmp_path / "d.duckdb")}),
               ("parquet", "parquet", {"root": str(tmp_path / "files")}), ("dolphindb", "dolphindb", config)]
    for dataset, scale in SCALES.items():
        verdicts = verify(dataset, scale, targets)
        assert verdicts.agree and len(verdicts.queries) >= 7, verdicts.verdicts
        assert all(set(row.values()) == {SAME} for row in verdicts.verdicts.values())


def test_arrow_protocol_times_the_users_to_pandas(ddb_server, laid_out, duck):  # noqa: F811
    query, _, layout, values = case("taq001", "t06", laid_out)
    target = make_target(ddb_server, protocol="ARROW")
    target.open(layout, 0)
    try:
        result = target.run_query(layout, query, values)
    finally:
        target.close()
    assert set(result.phases) == {"decode"} and result.phases["decode"] >= 0
    expected = normalise(duckdb_answer(duck, query, values), query.columns)
    pd.testing.assert_frame_equal(normalise(result.frame, query.columns), expected)


def test_a_query_without_a_dolphindb_text_is_not_supported(laid_out):
    target, layout = laid_out["taq"]
    query = Query(id="x1", category="c", description="d", params={}, columns=("n",), days="all",
                  texts={"duckdb": "SELECT count(*) AS n FROM {quotes}"}, )
    with pytest.raises(NotSupported):
        target.run_query(layout, query, {})


def test_a_placeholder_that_is_neither_table_nor_parameter_is_refused(laid_out):
    target, layout = laid_out["taq"]
    query = Query(id="x2", category="c", description="d", params={}, columns=("n",), days="all",
                  texts={"dolphindb": "select count(*) as n from {nowhere}"})
    with pytest.raises(TargetError, match="nowhere"):
        target.run_query(layout, query, {})
    with pytest.raises(TargetError, match="literal"):
        target.query_script(layout, load_suite("taq001").query("t01"), {"day": object(), "symbol": "A"})


def test_parameters_cannot_break_out_of_their_literals(ddb_server, laid_out):  # noqa: F811
    target, layout = laid_out["taq"]
    query = load_suite("taq001").query("t01")
    day, symbol = layout.days[0], layout.keys_sample[0]
    breakout = f'{symbol}" or 1 == 1 or symbol = "'
    script = target.query_script(layout, query, {"day": day, "symbol": breakout})
    assert script.count("\n") == 0 and '\\"' in script
    assert target.run_query(layout, query, {"day": day, "symbol": breakout}).rows == 0
    # the same text pasted unquoted would have widened the filter to the whole day: the test can fail
    pasted = query.text("dolphindb").replace("{quotes}", scripts.load(target.names("taq", TAQ), "quotes")) \
        .replace("{day}", q.date(day)).replace("{symbol}", f'"{breakout}"')
    s = admin(ddb_server)
    try:
        assert len(s.run(pasted)) == min(1000, TAQ.rows_per_day)
    finally:
        s.close()
    newline = f"{symbol}\nselect * from t"
    script = target.query_script(layout, query, {"day": day, "symbol": newline})
    assert "\n" not in script and "\\n" in script
    assert target.run_query(layout, query, {"day": day, "symbol": newline}).rows == 0
    count = load_suite("taq001").query("t02")
    alone = target.run_query(layout, count, {"day": day, "symbols": [symbol]}).frame["n"].iloc[0]
    values = {"day": day, "symbols": [symbol, 'x"], "y']}
    assert alone > 0 and target.run_query(layout, count, values).frame["n"].iloc[0] == alone


# --- the tick pack's DolphinDB: aj, tmsum, bar, as the manual says (tests/ddbserver/timeseries.py) -----
def tick_session(ddb_server, laid_out):  # noqa: F811
    """An admin session with ``trades`` and ``quotes`` of day 0 in variables (in their row order)."""
    _, layout = laid_out["taq"]
    db, day = TARGET_DB(laid_out), q.date(layout.days[0])
    s = admin(ddb_server)
    s.run(f'trades0 = select symbol, time, price from loadTable("{db}", "trades") where date = {day}\n'
          f'quotes0 = select symbol, time, bid from loadTable("{db}", "quotes") where date = {day}')
    return s, db, day


def TARGET_DB(laid_out) -> str:  # noqa: N802
    target, _ = laid_out["taq"]
    return target.names("taq", TAQ).db


def test_aj_names_the_right_tables_time_by_its_variable(ddb_server, laid_out):  # noqa: F811
    """The manual's result columns: the left's, the right's last matching column as
    <right>_<column>, then its other columns (the other matching columns not repeated)."""
    s, _, _ = tick_session(ddb_server, laid_out)
    try:
        joined = s.run("select * from aj(trades0, quotes0, `symbol`time)")
        assert list(joined.columns) == ["symbol", "time", "price", "quotes0_time", "bid"]
        assert len(joined) > 100 and (joined["quotes0_time"] == joined["time"]).all()   # each at its quote
    finally:
        s.close()


def test_aj_takes_the_last_of_the_right_rows_at_one_time(ddb_server, laid_out, generated):  # noqa: F811
    """The manual: of several right rows at the matched time, the last. Quotes by 10-minute bar
    joined to themselves: each row gets its symbol's last bid of its bar."""
    s, _, _ = tick_session(ddb_server, laid_out)
    _, layout = laid_out["taq"]
    try:
        got = s.run("bars0 = select symbol, bar(time, 600) as time, bid from quotes0\n"
                    "select symbol, time, bid, bars0_bid from aj(bars0, bars0, `symbol`time)")
    finally:
        s.close()
    quotes = generated["quotes"]
    quotes = quotes[quotes["date"] == pd.Timestamp(layout.days[0])]
    bar = quotes["time"].dt.floor("600s")
    last = quotes.groupby([quotes["symbol"], bar], observed=True)["bid"].transform("last")
    want = pd.DataFrame({"symbol": quotes["symbol"], "time": bar, "bid": quotes["bid"], "last": last})
    assert (want["bid"] != want["last"]).mean() > 0.5                   # the first would differ
    columns = ("symbol", "time", "bid", "last")
    pd.testing.assert_frame_equal(normalise(got, columns), normalise(want, columns))


@pytest.mark.parametrize("script, refusal", [
    ("select * from aj(trades0, (select * from quotes0 order by time desc), `symbol`time)", "not sorted by time"),
    ('select * from aj(trades0, loadTable("{db}", "quotes"), `symbol`time)', "cannot be a DFS table"),
    ('select * from aj(loadTable("{db}", "trades"), loadTable("{db}", "quotes"), `symbol`time)',
     "partitioning column"),
    ("select symbol, tmsum(time, price, 60s) as s from (select * from trades0 order by time desc) "
     "context by symbol", "non-strictly increasing"),
])
def test_what_the_manual_requires_is_refused(ddb_server, laid_out, script, refusal):  # noqa: F811
    """An unsorted right table (DolphinDB: "unexpected results"), a DFS right table with an
    in-memory left, a partitioned table whose partitioning columns are not all matched before
    the last, a T that goes back in a group: refused, never answered leniently."""
    s, db, _ = tick_session(ddb_server, laid_out)
    try:
        with pytest.raises(RuntimeError, match=refusal):
            s.run(script.format(db=db))
    finally:
        s.close()


def test_aj_of_the_partitioned_tables_matched_by_every_partitioning_column(ddb_server, laid_out):  # noqa: F811
    """Both DFS tables, matched by date and symbol then time: the suite text's answer."""
    s, db, day = tick_session(ddb_server, laid_out)
    target, layout = laid_out["taq"]
    try:
        direct = s.run(f'select symbol, time, price, size, bid, ofr from aj(loadTable("{db}", "trades"), '
                       f'loadTable("{db}", "quotes"), `date`symbol`time) where date = {day}')
    finally:
        s.close()
    query = load_suite("tick").query("asof-join")
    text = target.run_query(layout, query, {"day": layout.days[0]}).frame
    pd.testing.assert_frame_equal(normalise(direct, query.columns), normalise(text, query.columns))


def test_tmsum_sums_the_rows_up_to_each_one_in_its_window(ddb_server, laid_out, generated):  # noqa: F811
    """Ties in T: each row's window ends at the row itself (the manual's example: tmsum(1 1 3,
    5 2 4, 3) is 5 7 11). With T the 10-minute bar and a window of 1 (second), the running sum
    within each symbol's bar, in time (then arrival) order."""
    s, db, day = tick_session(ddb_server, laid_out)
    _, layout = laid_out["taq"]
    try:
        got = s.run(f'select symbol, time, tmsum(bar(time, 600), bidsiz, 1) as s from loadTable("{db}", "quotes") '
                    f'where date = {day} context by symbol csort time')
    finally:
        s.close()
    quotes = generated["quotes"]
    quotes = quotes[quotes["date"] == pd.Timestamp(layout.days[0])]
    bar = quotes["time"].dt.floor("600s")
    want = quotes.assign(s=quotes.groupby([quotes["symbol"], bar], observed=True)["bidsiz"].cumsum())
    assert (want["s"] != want["bidsiz"]).mean() > 0.5               # most rows share their bar
    columns = ("symbol", "time", "s")
    pd.testing.assert_frame_equal(normalise(got, columns), normalise(want[list(columns)], columns))


def test_bar_keeps_the_type_of_its_column(ddb_server, laid_out):  # noqa: F811
    s, _, _ = tick_session(ddb_server, laid_out)
    try:
        bars = s.run("select bar(time, 300) as b, int(bar(time, 5m)) as n from trades0")
    finally:
        s.close()
    assert str(bars["b"].dtype).startswith("datetime64")          # a SECOND, as the client gives it
    seconds = (bars["b"] - bars["b"].dt.normalize()).dt.total_seconds()
    assert (seconds == bars["n"]).all() and (bars["n"] % 300 == 0).all()


def test_trades_are_partitioned_as_the_quotes(ddb_server, laid_out):  # noqa: F811
    target, layout = laid_out["taq"]
    names = target.names("taq", TAQ)
    s = admin(ddb_server)
    try:
        chunks = {t: int(s.run(scripts.footprint_detail(names, t))["chunks"].iloc[0]) for t in ("quotes", "trades")}
        assert s.run(scripts.count_rows(names, "trades")) == len(get_dataset("taq").trades_frame(TAQ))
    finally:
        s.close()
    assert chunks["trades"] > TAQ.days and chunks["trades"] <= chunks["quotes"]      # (day, symbol range) pairs


# --- side table --------------------------------------------------------------------------------------
def test_devices_info_is_a_dimension_table_loaded_once(ddb_server, laid_out):  # noqa: F811
    target, layout = laid_out["devices"]
    names = target.names("devices", DEVICES)
    info = get_dataset("devices").info_frame(DEVICES)
    s = admin(ddb_server)
    try:
        frame = s.run(f'select * from loadTable("{names.db}", "info")')
        assert list(frame.columns) == list(info.columns) and len(frame) == len(info) == DEVICES.symbols
        assert sorted(frame["device_id"]) == sorted(info["device_id"])
        assert make_target(ddb_server).prepare("devices", DEVICES, StringMode.ARROW).reused
        s.run(scripts.truncate(names, "info"))              # an incomplete info table is loaded again
        again = make_target(ddb_server).prepare("devices", DEVICES, StringMode.ARROW)
        assert not again.reused
        assert s.run(scripts.count_rows(names, "info")) == len(info)
    finally:
        s.close()


# --- import -----------------------------------------------------------------------------------------
def server_day(server, db: str, table: str, where: str = "") -> pd.DataFrame:
    s = admin(server)
    try:
        return s.run(f'select * from loadTable("{db}", "{table}")' + (f" where {where}" if where else ""))
    finally:
        s.close()


def same_rows(a: pd.DataFrame, b: pd.DataFrame) -> None:
    cols = list(b.columns)
    left = a[cols].astype({c: "object" for c in cols}).sort_values(cols).reset_index(drop=True)
    right = b[cols].astype({c: "object" for c in cols}).sort_values(cols).reset_index(drop=True)
    pd.testing.assert_frame_equal(left, right, check_dtype=False)


@pytest.mark.parametrize("dataset", ["taq", "devices"])
def test_import_lands_every_row_once_per_step(dataset, ddb_server, laid_out, tmp_path):  # noqa: F811
    target, layout = laid_out[dataset]
    scale = SCALES[dataset]
    names, cols = target.names(dataset, scale), target.columns(dataset)
    files = csv_files(dataset, scale, root=tmp_path)
    for _ in range(2):                                  # two steps: cleared in between, not doubled
        target.clear_table(layout, IMPORT_TABLE)
        for file in files:
            result = target.import_csv(layout, file.path, file.day)
            assert result.rows == file.rows == scale.rows_per_day
            assert result.wire_bytes == file.bytes == file.path.stat().st_size
            assert result.extra["queryable_s"] == 0.0 and result.nbytes > 0
        assert len(server_day(ddb_server, names.db, names.imports)) == scale.days * scale.rows_per_day
    ds = get_dataset(dataset)
    day = server_day(ddb_server, names.db, names.imports, scripts.day_filter(cols, layout.days[1]))
    same_rows(day, ds.day_frame(1, scale, StringMode.OBJECT))
    target.clear_table(layout, IMPORT_TABLE)
    assert len(server_day(ddb_server, names.db, names.imports)) == 0


def test_import_reads_the_servers_folder_when_configured(ddb_server, laid_out, tmp_path):  # noqa: F811
    _, layout = laid_out["taq"]
    file = csv_files("taq", TAQ, root=tmp_path / "client")[0]
    server_dir = tmp_path / "server"
    server_dir.mkdir()
    lines = file.path.read_text().splitlines(keepends=True)
    (server_dir / file.path.name).write_text("".join(lines[:11]))       # the header and 10 rows
    target = make_target(ddb_server, csv_dir_on_server=str(server_dir))
    target.clear_table(layout, IMPORT_TABLE)
    result = target.import_csv(layout, file.path, file.day)
    assert result.rows == 10 and result.wire_bytes == file.bytes       # the server's copy, our size
    # rows are counted after the timed load: a count that cannot run says so and counts none
    uncounted = target.import_csv(layout, file.path, file.day)
    target.close()
    assert uncounted.rows == 0 and "count_error" in uncounted.extra
    target.clear_table(layout, IMPORT_TABLE)
    missing = make_target(ddb_server, csv_dir_on_server=str(tmp_path / "nowhere"))
    with pytest.raises(TargetError, match="nowhere"):
        missing.import_csv(layout, file.path, file.day)
    missing.close()


# --- export -----------------------------------------------------------------------------------------
def read_dolphindb_csv(path, schema) -> pd.DataFrame:
    text = pd.read_csv(path, dtype=str, keep_default_na=False)
    out = {}
    for col in schema.columns:
        values = text[col.name]
        if col.ddb_type == "DATE":
            out[col.name] = pd.to_datetime(values, format="%Y.%m.%d")
        elif col.ddb_type == "SECOND":
            out[col.name] = pd.to_datetime("1970.01.01 " + values, format="%Y.%m.%d %H:%M:%S")
        elif col.ddb_type == "TIMESTAMP":
            out[col.name] = pd.to_datetime(values, format="%Y.%m.%dT%H:%M:%S.%f")
        elif col.ddb_type == "CHAR":
            out[col.name] = values.map(ord).astype("int8")
        elif col.is_string:
            out[col.name] = values
        else:
            out[col.name] = pd.to_numeric(values)
    return pd.DataFrame(out)


@pytest.mark.parametrize("dataset", ["taq", "devices"])
def test_export_writes_the_day_as_dolphindb_text(dataset, laid_out, tmp_path):
    target, layout = laid_out[dataset]
    scale, ds = SCALES[dataset], get_dataset(dataset)
    path = tmp_path / "export" / f"{layout.days[0].isoformat()}.csv"
    path.parent.mkdir()
    result = target.export_csv(layout, layout.days[0], path)
    assert result.rows == scale.rows_per_day and result.wire_bytes == path.stat().st_size > 0
    header = path.read_text().split("\n", 1)[0]
    assert header.replace('"', "").split(",") == ds.info.schema.names
    back = read_dolphindb_csv(path, ds.info.schema)
    same_rows(back, ds.day_frame(0, scale, StringMode.OBJECT))
    again = target.export_csv(layout, layout.days[0], path)          # rewritten: its size again
    assert again.wire_bytes == path.stat().st_size


def test_export_to_a_folder_only_the_server_sees_has_no_local_size(ddb_server, laid_out, tmp_path):  # noqa: F811
    _, layout = laid_out["taq"]
    server_dir = tmp_path / "server"
    server_dir.mkdir()
    target = make_target(ddb_server, csv_dir_on_server=str(server_dir))
    local = tmp_path / "client" / "day.csv"
    try:
        result = target.export_csv(layout, layout.days[1], local)
        assert result.wire_bytes is None and not local.exists()
        assert (server_dir / "day.csv").stat().st_size > 0 and result.rows == TAQ.rows_per_day
    finally:
        target.close()


# --- footprint -------------------------------------------------------------------------------------
def test_footprint_detail_of_the_seed_and_import_tables(laid_out, tmp_path):
    target, layout = laid_out["taq"]
    seed = target.footprint_detail(layout)
    assert seed.bytes == layout.footprint_bytes > 0 and seed.replicas == 1 and seed.columns == {}
    assert "getTabletsMeta" in seed.method and "per-column" in seed.method
    target.clear_table(layout, IMPORT_TABLE)
    file = csv_files("taq", TAQ, root=tmp_path)[0]
    target.import_csv(layout, file.path, file.day)
    imported = target.footprint_detail(layout, IMPORT_TABLE)
    assert 0 < imported.bytes < seed.bytes and imported.replicas == 1
    target.clear_table(layout, IMPORT_TABLE)
    assert target.footprint_detail(layout, IMPORT_TABLE).bytes == 0


def test_footprint_counts_replicas(ddb_server_factory):  # noqa: F811
    small = Scale(days=1, rows_per_day=600, symbols=6)
    sizes = {}
    for replicas in (1, 2):
        server = ddb_server_factory("--replicas", str(replicas))
        target = make_target(server)
        layout = target.prepare("taq", small, StringMode.ARROW)
        sizes[replicas] = target.footprint_detail(layout)
        assert sizes[replicas].replicas == replicas
    assert sizes[2].bytes == 2 * sizes[1].bytes > 0


def test_clear_and_footprint_of_an_empty_import_table(ddb_server):  # noqa: F811
    small = Scale(days=1, rows_per_day=300, symbols=3)
    target = make_target(ddb_server)
    layout = target.prepare("taq", small, StringMode.ARROW)     # creates the import table, empty
    target.clear_table(layout, IMPORT_TABLE)                # nothing to empty: no error
    empty = target.footprint_detail(layout, IMPORT_TABLE)
    assert empty.bytes == 0 and empty.replicas is None


# --- through the runner: worker processes and the real client -----------------------------------
@pytest.mark.slow
def test_report_workloads_run_on_dolphindb_through_the_runner(ddb_server, tmp_path):  # noqa: F811
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore
    from workloads.run.records import OK
    from workloads.results.suite_figures import query_figures, run_footprints

    store = ResultsStore(tmp_path / "results")
    config = {"host": ddb_server.host, "port": ddb_server.port, "user": "admin", "password": "123456"}

    def run(target, target_config, workload, params=None, users=(1,)):
        scenario = Scenario(dataset="taq", scale=TAQ, target=target, target_config=target_config,
                            workload=workload, params=params or {}, users=users)
        result = Runner(scenario, store).run()
        assert result.status == "completed", result.message
        return result

    imported = run("dolphindb", config, "import", users=(1, 2))
    assert list(imported.figures["rows"]) == [TAQ.days * TAQ.rows_per_day] * 2
    assert imported.figures["wire_mb_per_s"].notna().all()
    footprints = run_footprints(store, imported.run_id)
    assert footprints["layout"]["bytes"] > 0 and footprints["layout"]["replicas"] == 1
    assert set(footprints["steps"]) == {0, 1} and footprints["steps"][1]["csv_ratio"] > 0
    exported = run("dolphindb", config, "export", users=(2,))
    assert exported.figures["rows"].iloc[0] == TAQ.days * TAQ.rows_per_day
    suite = {"suite": "taq001", "repetitions": 2}
    on_ddb = query_figures(store, run("dolphindb", config, "query-suite", suite).run_id)
    on_duck = query_figures(store, run("duckdb", {"path": str(tmp_path / "d.duckdb")}, "query-suite", suite).run_id)
    assert (on_ddb["status"] == OK).all() and (on_ddb["runs"] == 2).all()
    assert list(on_ddb["fingerprint"]) == list(on_duck["fingerprint"])
    store.close()
