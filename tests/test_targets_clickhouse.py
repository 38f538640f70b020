"""ClickHouse target in both of its engines: embedded chDB on a real data folder, and a server
through clickhouse-connect against the stand-in (``tests/chserver``: the real ClickHouse engine,
chDB, behind a small HTTP front in a process of its own). Checked against the generator and
against DuckDB; real worker processes for chDB's one-process-per-folder rule."""
from __future__ import annotations

import multiprocessing as mp
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from tests.generated_days import record_laid_out_days

import chdb  # noqa: F401,E402 - the test extra installs both: a missing one fails here, never skips
import clickhouse_connect  # noqa: F401,E402

from tests.chserver.fixture import ch_server  # noqa: E402,F401 (the stand-in server fixture)
from tests.test_targets_files import (assert_phases, assert_same_rows_any_order, assert_string_dtypes,  # noqa: E402
                                      busiest_key, reference_bars, timed)
from workloads.datasets import get_dataset  # noqa: E402
from workloads.datasets.csv_files import csv_files  # noqa: E402
from workloads.datasets.csvread import read_csv  # noqa: E402
from workloads.datasets.schema import Scale, StringMode  # noqa: E402
from workloads.queries.answers import normalise  # noqa: E402
from workloads.local_engines.base import free_port  # noqa: E402
from workloads.targets import MissingClient, make_target  # noqa: E402
from workloads.targets.base import IMPORT_TABLE, TargetError  # noqa: E402
from workloads.targets.clickhouse.dialect import SEQ, table_name  # noqa: E402
from workloads.queries.verify import SAME, verify  # noqa: E402

SCALE = Scale(days=2, rows_per_day=20_000, symbols=40)
CHUNK_ROWS = 7_000           # several batches per day: exercises the per-day load and its OPTIMIZE
MODES = ("embedded", "server")
LOOPBACK = "127.0.0.1"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("chdb_target") / "data"


def config_for(mode: str, folder: Path, server, **more) -> dict:
    if mode == "embedded":
        return {"path": str(folder), "chunk_rows": CHUNK_ROWS, "drop_caches": False, **more}
    return server.config(chunk_rows=CHUNK_ROWS, **more)


@pytest.fixture(scope="module")
def layouts(folder, ch_server):
    """mode -> (config, layout), each laid out once per module; no session is kept."""
    out = {}
    for mode in MODES:
        config = config_for(mode, folder, ch_server)
        target = make_target("clickhouse", config)
        out[mode] = (config, target.prepare("taq", SCALE, StringMode.ARROW))
        target.close()
    return out


@pytest.fixture(params=MODES)
def opened(request, layouts):
    config, layout = layouts[request.param]
    target = make_target("clickhouse", config)
    target.open(layout)
    yield request.param, target, layout
    target.close()


# --- the module and its clients ---------------------------------------------------------------
def test_the_module_imports_neither_client_until_a_backend_needs_it():
    code = ("import sys, workloads.targets.clickhouse as m; t = m.ClickHouseTarget({'path': '/nonexistent'}); "
            "s = m.ClickHouseTarget({'host': '127.0.0.1'}); print('chdb' in sys.modules, 'clickhouse_connect' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout.split()
    assert out == ["False", "False"]


def test_a_missing_client_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "chdb", None)
    monkeypatch.setitem(sys.modules, "chdb.session", None)
    with pytest.raises(MissingClient, match=r"install tickbench\[clickhouse\]") as caught:
        make_target("clickhouse", {"path": str(tmp_path / "ch")}).prepare("taq", SCALE, StringMode.ARROW)
    assert caught.value.library == "chdb"
    monkeypatch.setitem(sys.modules, "clickhouse_connect", None)
    with pytest.raises(MissingClient, match=r"install tickbench\[clickhouse\]") as caught:
        make_target("clickhouse", {"host": LOOPBACK, "port": free_port()}).prepare("taq", SCALE, StringMode.ARROW)
    assert caught.value.library == "clickhouse_connect"


# --- layout -----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_prepare_lays_out_a_mergetree_partitioned_by_day_ordered_by_symbol_and_time(mode, layouts):
    config, layout = layouts[mode]
    target = make_target("clickhouse", config)
    table = table_name("taq", SCALE)
    assert layout.rows == SCALE.rows_per_day * SCALE.days and not layout.reused and layout.footprint_bytes > 0
    assert layout.days == tuple(get_dataset("taq").trading_days(SCALE))
    found = target.sql_rows("SELECT partition_key, sorting_key, engine FROM system.tables "
                            "WHERE database = 'tickbench' AND name = {t:String}", {"t": table})[0]
    assert found == {"partition_key": "date", "sorting_key": f"symbol, time, {SEQ}", "engine": "MergeTree"}
    types = {r["name"]: r["type"] for r in target.sql_rows(
        "SELECT name, type FROM system.columns WHERE database = 'tickbench' AND table = {t:String}", {"t": table})}
    assert types == {"symbol": "LowCardinality(String)", "date": "Date", "time": "DateTime64(0, 'UTC')",
                     "bid": "Float64", "ofr": "Float64", "bidsiz": "Int32", "ofrsiz": "Int32", "mode": "Int32",
                     "ex": "Int8", "mmid": "LowCardinality(String)", SEQ: "UInt32"}
    parts = target.sql_rows("SELECT partition, count() AS n FROM system.parts WHERE active AND "
                            "database = 'tickbench' AND table = {t:String} GROUP BY partition ORDER BY partition",
                            {"t": table})
    assert [p["n"] for p in parts] == [1, 1]            # one part per day after the load's OPTIMIZE
    assert target.row_count(layout) == layout.rows
    target.close()


@pytest.mark.parametrize("mode", MODES)
def test_second_prepare_is_reused_without_generating(mode, layouts, monkeypatch):
    config, layout = layouts[mode]

    def must_not_generate(*args, **kwargs):
        raise AssertionError("a reused layout must not generate data")
    monkeypatch.setattr(type(get_dataset("taq")), "generate_day", must_not_generate)
    again = make_target("clickhouse", config).prepare("taq", SCALE, StringMode.CATEGORY)
    assert again.reused and again.rows == layout.rows and again.days == layout.days
    assert again.strings is StringMode.CATEGORY  # one table serves every string mode


def test_interrupted_prepare_resumes_at_the_missing_day(tmp_path, monkeypatch):
    taq = get_dataset("taq")
    real, real_trades = type(taq).generate_day, type(taq).trades_frame
    drawing = []                 # the trades (laid out first) draw every day's quotes: no crash there

    def trades(self, *args, **kwargs):
        drawing.append(True)
        try:
            return real_trades(self, *args, **kwargs)
        finally:
            drawing.pop()

    def crash_in_second_day(self, day_index, scale, strings=StringMode.ARROW, chunk_rows=1_000_000):
        for n, chunk in enumerate(real(self, day_index, scale, strings, chunk_rows)):
            if day_index == 1 and n == 1 and not drawing:
                raise RuntimeError("simulated crash")
            yield chunk
    monkeypatch.setattr(type(taq), "generate_day", crash_in_second_day)
    monkeypatch.setattr(type(taq), "trades_frame", trades)
    config = config_for("embedded", tmp_path / "crash", None)
    with pytest.raises(RuntimeError, match="simulated crash"):
        make_target("clickhouse", config).prepare("taq", SCALE, StringMode.ARROW)
    monkeypatch.undo()
    generated, _ = record_laid_out_days(monkeypatch, taq)
    target = make_target("clickhouse", config)
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    assert set(generated) == {1}                        # the first day was kept, the half day reloaded
    assert layout.rows == target.row_count(layout) == SCALE.rows_per_day * SCALE.days


# --- reads ------------------------------------------------------------------------------------
@pytest.mark.parametrize("strings", list(StringMode), ids=lambda m: m.value)
def test_read_day_gives_back_duckdbs_frame_in_each_string_mode(strings, opened, duck, day_frames):
    mode, target, layout = opened
    duck_target, duck_layout = duck
    info = get_dataset("taq").info
    lay = replace(layout, strings=strings)
    for index, day in enumerate(lay.days):
        result, wall = timed(lambda: target.read_day(lay, day))
        assert result.rows == SCALE.rows_per_day and result.nbytes == SCALE.rows_per_day * 45
        assert_phases(result, wall, {"query", "decode"} if mode == "embedded" else {"decode"})
        assert_string_dtypes(result.frame, info, strings)
        assert_same_rows_any_order(result.frame, duck_target.read_day(replace(duck_layout, strings=strings), day).frame,
                                   info)
        assert_same_rows_any_order(result.frame, day_frames[index], info)
        assert_string_dtypes(result.frame, info, strings)


def test_a_day_read_and_a_slice_ask_the_engine_for_no_order_but_bars_for_minute_order(opened, monkeypatch):
    """README, one meaning per operation: no engine is made to sort a day or a slice; bars are by minute."""
    _, target, layout = opened
    sent = []
    with target._conn() as (con, _):
        real = con.arrow
        monkeypatch.setattr(type(con), "arrow", lambda self, sql, params=None: (sent.append(sql), real(sql, params))[1])
    day, key = layout.days[0], layout.keys_sample[0]
    target.read_day(layout, day)
    target.read_slice(layout, day, key)
    target.minute_bars(layout, day, key)
    assert len(sent) == 3
    assert "ORDER BY" not in sent[0].upper() and "ORDER BY" not in sent[1].upper()
    assert sent[2].upper().rstrip().split("ORDER BY")[-1].split("\n")[0].strip() == "MINUTE"


def test_read_slice_holds_only_that_key_and_day(opened, day_frames):
    _, target, layout = opened
    info = get_dataset("taq").info
    lay = replace(layout, strings=StringMode.OBJECT)
    for key in (busiest_key(day_frames[0], info), layout.keys_sample[-1]):
        got = target.read_slice(lay, lay.days[0], key).frame
        want = day_frames[0][day_frames[0][info.key_column].astype(object) == key]
        assert_same_rows_any_order(got, want, info)
    assert target.read_slice(lay, lay.days[0], "NO_SUCH_KEY").rows == 0
    assert target.read_slice(lay, lay.days[0], "x' OR '1'='1").rows == 0        # bound, not formatted
    assert target.read_slice(lay, lay.days[0], "a\\b\tc").rows == 0


def test_minute_bars_match_an_independent_pandas_reference(opened, day_frames):
    """First/last quote of a minute by arrival among equal times: resample().ohlc() on the
    generated rows agrees to the bit."""
    _, target, layout = opened
    info = get_dataset("taq").info
    for index in range(SCALE.days):
        key = busiest_key(day_frames[index], info)
        result = target.minute_bars(layout, layout.days[index], key)
        want = reference_bars(day_frames[index], info, key)
        assert result.rows == len(want) > 10
        pd.testing.assert_frame_equal(result.frame, want, check_dtype=True)


def test_minute_bars_come_from_the_engine_in_the_frames_unit(opened, monkeypatch):
    # asked in seconds, every read converted its minutes to nanoseconds on the client (~0.1 ms of a
    # 5 ms read, the hand-written call's whole gap); ClickHouse gives them in nanoseconds as cheaply
    import workloads.targets.clickhouse.reads as reads

    _, target, layout = opened
    units = []
    convert = reads.frame_from_arrow
    monkeypatch.setattr(reads, "frame_from_arrow",
                        lambda table, strings: units.append(table.schema.field("minute").type.unit) or
                        convert(table, strings))
    bars = target.minute_bars(layout, layout.days[0], layout.keys_sample[0])
    assert units == ["ns"] and str(bars.frame["minute"].dtype) == "datetime64[ns]"


def test_times_lose_their_zone_in_place_without_a_cast_of_the_table(opened, monkeypatch):
    # a cast of the whole table (its other columns cast to themselves, one compute call each) cost
    # a 5 ms slice ~1 % beside the hand-written call; the zone-less view of the same values is free
    import pyarrow.compute as pc

    from workloads.targets.clickhouse.dialect import naive_times

    _, target, layout = opened
    with target._conn() as (con, _facts):
        arrow = con.arrow(f"SELECT * FROM {target.fq(target.table(layout))} LIMIT 100")
    zoned = [f.name for f in arrow.schema if pa.types.is_timestamp(f.type) and f.type.tz]
    assert zoned
    casts = []
    cast = pc.cast
    monkeypatch.setattr(pc, "cast", lambda *a, **k: casts.append(a) or cast(*a, **k))
    naive = naive_times(arrow)
    assert casts == []
    for name in zoned:
        assert naive.schema.field(name).type.tz is None
        assert naive.column(name).cast(pa.int64()).equals(arrow.column(name).cast(pa.int64()))
    assert naive.drop_columns(zoned).equals(arrow.drop_columns(zoned))


def test_embedded_reads_report_the_folders_turn(layouts):
    config, layout = layouts["embedded"]
    target = make_target("clickhouse", config)
    target.open(layout)
    first = target.read_day(layout, layout.days[0]).extra
    second = target.read_day(layout, layout.days[0]).extra
    assert first["session"] == "opened" and first["open_s"] > 0 and first["lock_wait_s"] >= 0
    assert second["session"] == "held" and second["open_s"] == 0          # alone: the session is kept
    target.close()
    per_op = make_target("clickhouse", {**config, "session": "per_operation"})
    per_op.open(layout)
    extras = [per_op.read_day(layout, layout.days[0]).extra for _ in range(2)]
    assert [e["session"] for e in extras] == ["opened", "opened"] and all("close_s" in e for e in extras)
    per_op.close()


def test_server_reads_split_their_phases_in_probe_operations(layouts):
    config, layout = layouts["server"]
    target = make_target("clickhouse", config)
    target.open(layout)
    assert {"read_day", "minute_bars", "ols_spread"} <= target.probed_ops
    plain = target.read_day(layout, layout.days[0])
    with target.probe_mode():
        probe, wall = timed(lambda: target.read_day(layout, layout.days[0]))
    assert_phases(probe, wall, {"server", "transfer", "decode"})
    assert probe.extra["server_time"] == "X-ClickHouse-Summary elapsed_ns" and probe.wire_bytes > 0
    pd.testing.assert_frame_equal(probe.frame, plain.frame)
    with target.probe_mode():
        ols = target.ols_spread(layout)
    assert set(ols.phases) == {"server", "transfer", "decode"} and ols.rows == 2
    target.close()


def _pace(server, think_s: float = 0.0, send_bps: float = 0.0) -> None:
    import urllib.request
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/_pace?think_s={think_s}&send_bps={send_bps}",
                                timeout=10) as reply:
        assert reply.status == 200


def test_a_probe_books_the_servers_known_think_time_as_server_and_its_paced_reply_as_transfer(layouts, ch_server):
    """Against a server that thinks 0.4 s more than its query (and says so in elapsed_ns) and
    sends its reply at a rate that takes 0.6 s: the probe's server phase holds the thinking, its
    transfer the sending, and the bytes it counts are the reply's."""
    config, layout = layouts["server"]
    target = make_target("clickhouse", config)
    target.open(layout)
    try:
        day = layout.days[0]
        with target.probe_mode():
            unpaced = target.read_day(layout, day)
        size, think, sending = unpaced.wire_bytes, 0.4, 0.6
        _pace(ch_server, think, size / sending)
        try:
            with target.probe_mode():
                probe, wall = timed(lambda: target.read_day(layout, day))
        finally:
            _pace(ch_server)
        assert probe.wire_bytes == size
        pd.testing.assert_frame_equal(probe.frame, unpaced.frame)
        server, transfer = probe.phases["server"], probe.phases["transfer"]
        assert server >= think, probe.phases                      # the thinking is the server's
        assert transfer >= sending - 0.05, probe.phases           # the paced reply is transfer (one 20 ms chunk early)
        assert server + transfer + probe.phases["decode"] <= wall
    finally:
        target.close()


# --- writes, import, export, footprint ---------------------------------------------------------
def test_append_adds_rows_to_the_layouts_append_table(opened, day_frames):
    _, target, layout = opened
    before = target.appended_rows(layout)
    batch = day_frames[0].iloc[:500]
    result, wall = timed(lambda: target.append(layout, batch))
    assert result.rows == 500 and result.nbytes == 500 * 45
    assert_phases(result, wall, {"decode", "query"})
    assert target.appended_rows(layout) == before + 500
    target.append(layout, batch, table="upload_test")        # a named table is created on first use
    assert target.row_count(layout, "upload_test") == 500
    assert target.row_count(layout) == layout.rows            # the day table is untouched
    target.clear_table(layout)
    assert target.appended_rows(layout) == 0


def test_import_loads_every_csv_row_as_generated(opened):
    _, target, layout = opened
    files = csv_files("taq", SCALE)
    target.clear_table(layout, IMPORT_TABLE)
    results = [target.import_csv(layout, f.path, f.day) for f in files]
    assert [r.rows for r in results] == [f.rows for f in files] == [SCALE.rows_per_day] * 2
    assert [r.wire_bytes for r in results] == [f.bytes for f in files]
    imported = pd.DataFrame(target.sql_rows(f"SELECT * FROM {target.fq(target.import_table(layout))}"))
    generated = pd.concat([get_dataset("taq").day_frame(i, SCALE) for i in range(2)], ignore_index=True)
    columns = tuple(generated.columns)
    imported["date"] = pd.to_datetime(imported["date"])
    imported["time"] = pd.to_datetime(imported["time"]).dt.tz_localize(None)
    assert normalise(imported[list(columns)], columns).equals(normalise(generated, columns))
    footprint = target.footprint_detail(layout, IMPORT_TABLE)
    assert footprint.bytes > 0 and set(footprint.columns) == set(columns)    # no arrival column here
    target.clear_table(layout, IMPORT_TABLE)
    assert target.footprint_detail(layout, IMPORT_TABLE).bytes == 0


def test_export_writes_the_day_that_reads_back_equal(opened, tmp_path):
    _, target, layout = opened
    path = tmp_path / "day.csv"
    result = target.export_csv(layout, layout.days[1], path)
    assert result.rows == SCALE.rows_per_day and result.wire_bytes == path.stat().st_size > 0
    columns = tuple(get_dataset("taq").info.schema.names)
    assert normalise(read_csv(path, "taq"), columns).equals(normalise(get_dataset("taq").day_frame(1, SCALE), columns))
    head = path.read_text().splitlines()[1].split(",")
    assert head[1] == '"2007-08-24"' and len(head[2]) == len('"09:30:07"') and len(head[8]) == 3   # ISO, letter


def test_footprint_per_column_adds_up(opened):
    _, target, layout = opened
    footprint = target.footprint_detail(layout)
    names = set(get_dataset("taq").info.schema.names)
    assert set(footprint.columns) == names | {SEQ} and footprint.replicas == 1
    assert 0 < sum(footprint.columns.values()) <= footprint.bytes == target.footprint(layout)
    assert footprint.columns["bid"] > footprint.columns["ex"]
    assert footprint.columns["symbol"] < footprint.columns["bid"]    # LowCardinality: a dictionary


# --- report 003 ----------------------------------------------------------------------------------
def test_report_003_computations_equal_duckdbs(opened, duck):
    _, target, layout = opened
    duck_target, duck_layout = duck
    pd.testing.assert_frame_equal(target.spread_by_minute(layout).frame,
                                  duck_target.spread_by_minute(duck_layout).frame, rtol=1e-9)
    ols = target.ols_spread(layout)
    pd.testing.assert_frame_equal(ols.frame, duck_target.ols_spread(duck_layout).frame, rtol=1e-6)
    assert ols.extra["observations"] > 0
    target.clear_table(layout, "minute")
    bars = target.mapreduce_minute_bars(layout, layout.days[:1])
    assert bars.frame["bars"].iloc[0] == duck_target.mapreduce_minute_bars(duck_layout, layout.days[:1]).frame["bars"].iloc[0]
    assert target.row_count(layout, target.minute_table(layout)) == bars.extra["bars"] > 0


# --- cold cache ------------------------------------------------------------------------------------
def test_cold_cache_drops_what_each_engine_allows(layouts):
    config, layout = layouts["embedded"]
    target = make_target("clickhouse", config)
    from workloads.targets.common.cache import resident_bytes_of
    target.open(layout)
    target.read_day(layout, layout.days[0])
    assert target.drop_process_cache(layout)[:2] == ["SYSTEM DROP MARK CACHE", "SYSTEM DROP UNCOMPRESSED CACHE"]
    applied = target.drop_cache(layout)       # the folder's files: shared by every user's process
    assert "posix_fadvise(DONTNEED)" in applied and "drop_caches" not in applied
    assert target.data_files(layout) and resident_bytes_of(target.data_files(layout)) == 0
    target.close()
    config, layout = layouts["server"]
    server = make_target("clickhouse", config)
    assert "SYSTEM DROP MARK CACHE" in server.drop_cache(layout)     # a server's caches: the shared clear
    assert server.drop_process_cache(layout) == [] and server.data_files(layout) == []
    server.close()


# --- every query of reports 001 and 004, every engine the same answer -----------------------------
@pytest.mark.slow
@pytest.mark.parametrize("dataset, scale", [("taq", Scale(days=2, rows_per_day=20_000, symbols=30)),
                                            ("devices", Scale(days=2, rows_per_day=40_000, symbols=400))])
def test_every_suite_query_answers_as_duckdb_embedded_and_through_a_server(dataset, scale, tmp_path, ch_server):
    verdicts = verify(dataset, scale, [
        ("duckdb", "duckdb", {"path": str(tmp_path / "d.duckdb")}),
        ("parquet", "parquet", {"root": str(tmp_path / "files")}),
        ("chdb", "clickhouse", {"path": str(tmp_path / "ch")}),
        ("server", "clickhouse", ch_server.config(database=f"verify_{dataset}")),
    ])
    differing = {key: {label: (answer.status, answer.rows, answer.error, answer.preview.get("head", [])[:3])
                       for label, answer in verdicts.answers[key].items()}
                 for key, row in verdicts.verdicts.items() if set(row.values()) != {SAME}}
    assert verdicts.queries and not differing, differing       # each differing answer's first rows, to see why


def test_every_dataset_reads_back_by_day_and_key(tmp_path):
    for dataset in ("level2", "devices", "api45"):
        ds = get_dataset(dataset)
        info = ds.info
        scale = Scale(days=2, rows_per_day=3_000, symbols=20)
        target = make_target("clickhouse", config_for("embedded", tmp_path / "all", None))
        layout = target.prepare(dataset, scale, StringMode.OBJECT)
        target.open(layout)
        try:
            day_frame = ds.day_frame(1, scale, StringMode.OBJECT)
            day = target.read_day(layout, layout.days[1])
            assert day.rows == len(day_frame)
            assert_same_rows_any_order(day.frame, day_frame, info)
            key = busiest_key(day_frame, info)
            bars = target.minute_bars(layout, layout.days[1], key).frame
            pd.testing.assert_frame_equal(bars, reference_bars(day_frame, info, key))
        finally:
            target.close()


# --- a server that cannot be used -------------------------------------------------------------------
def test_a_refused_port_is_a_clear_error(capfd):
    target = make_target("clickhouse", {"host": LOOPBACK, "port": free_port(), "timeout": 2})
    with pytest.raises(TargetError, match=r"ClickHouse at 127\.0\.0\.1:\d+: connection refused") as caught:
        target.prepare("taq", SCALE, StringMode.ARROW)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__     # no client traceback
    assert "Traceback" not in capfd.readouterr().err and len(str(caught.value).splitlines()) == 1


def test_a_wrong_password_is_a_clear_error(ch_server):
    target = make_target("clickhouse", {**ch_server.config(), "password": "wrong"})
    with pytest.raises(TargetError, match=r"authentication failed for user 'tick' \(wrong password"):
        target.prepare("taq", SCALE, StringMode.ARROW)
    with pytest.raises(TargetError, match="port 'http' is not a number"):
        make_target("clickhouse", {"host": LOOPBACK, "port": "http"})


def test_the_stand_in_names_itself_and_reports_the_engines_version(ch_server, layouts):
    config, _ = layouts["server"]
    described = make_target("clickhouse", config).describe()
    assert described["mode"] == "server" and described["server_version"].count(".") == 3
    assert "test stand-in" in described["server_display_name"]


# --- several real processes on one chDB folder ------------------------------------------------------
def _read_in_process(config: dict, layout, operations: int, barrier, results) -> None:
    target = make_target("clickhouse", {**config, "lock_timeout_s": 60})
    target.open(layout)
    barrier.wait(timeout=60)
    extras = [target.read_day(layout, layout.days[0]).extra for _ in range(operations)]
    target.close()
    results.put(extras)


def _switches(thread: threading.Thread) -> int:
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    return sum(int(line.split()[1]) for line in status.splitlines() if "ctxt_switches:" in line)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads a thread's context switches from /proc")
def test_a_held_sessions_watcher_never_wakes_while_nobody_waits(layouts):
    # it polled for a waiting process every 2 ms while the session was idle and once beside each
    # operation: its wake-ups took the GIL beside a single user's reads (a 5 ms slice ~1 % slower
    # than the hand-written call); it sleeps until a waiting process rings its doorbell
    config, layout = layouts["embedded"]
    target = make_target("clickhouse", config)
    target.open(layout)
    target.read_slice(layout, layout.days[0], layout.keys_sample[0])      # the session held, watched
    watcher = target._backend._watcher
    assert watcher.is_alive()
    time.sleep(0.05)                                                       # asleep in its wait by now
    before = _switches(watcher)
    for _ in range(20):
        target.read_slice(layout, layout.days[0], layout.keys_sample[0])
    time.sleep(0.2)                                                        # and idle
    assert _switches(watcher) - before <= 1
    target.close()
    watcher.join(5)
    assert not watcher.is_alive()                                          # closing stops it


def test_processes_take_turns_on_the_folder_and_report_the_wait(layouts):
    config, layout = layouts["embedded"]
    holder = make_target("clickhouse", config)       # this process keeps its session, idle...
    holder.open(layout)
    assert holder.read_day(layout, layout.days[0]).extra["session"] == "opened"
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_read_in_process, args=(config, layout, 4, barrier, results)) for _ in range(2)]
    for p in procs:
        p.start()
    extras = [results.get(timeout=180) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert holder._backend._session is None          # ...and handed it over when the workers asked
    turns = sorted((e["turn_taken"], e["turn_released"]) for ops in extras for e in ops if e["session"] == "opened"
                   and "turn_released" in e)
    assert all(later[0] >= earlier[1] for earlier, later in zip(turns, turns[1:]))   # one at a time
    waits = [e["lock_wait_s"] for ops in extras for e in ops]
    assert max(waits) > 0 and all(e["serialised"] for ops in extras for e in ops)
    holder.close()


@pytest.mark.slow
def test_runner_reads_with_two_users_on_one_folder_and_probes_a_server(tmp_path, layouts, ch_server):
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    store = ResultsStore(tmp_path / "results")
    for config, workload in ((layouts["embedded"][0], "read-day"), (layouts["server"][0], "minute-bars")):
        scenario = Scenario(dataset="taq", scale=SCALE, target="clickhouse", target_config=config,
                            workload=workload, users=(1, 2), operations=3)
        result = Runner(scenario, store).run()
        assert result.status == "completed", result.message
        ops = store.ops(result.run_id, ("measured", "probe"))
        assert ops["ok"].all() and len(ops[ops["kind"] == "measured"]) == 3 * 3
        probes = ops[ops["kind"] == "probe"]
        if workload == "minute-bars":
            assert len(probes) and probes["server_s"].notna().all() and probes["transfer_s"].notna().all()
        else:
            assert probes.empty
    store.close()


def test_stop_during_a_five_second_query_cancels_every_user_without_a_failure(tmp_path, layouts, ch_server):
    """Users inside a query the server takes 5 s over are killed ``CANCEL_GRACE_S`` after Stop:
    the run and every user read "cancelled", none "failed" or "killed by SIGKILL"."""
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    store = ResultsStore(tmp_path / "results")
    scenario = Scenario(dataset="taq", scale=SCALE, target="clickhouse", target_config=layouts["server"][0],
                        workload="read-day", users=(2,), operations=0, duration_s=60.0, warmup_ops=0,
                        probe_ops=0)
    runner = Runner(scenario, store)
    outcome: dict = {}
    thread = threading.Thread(target=lambda: outcome.setdefault("result", runner.run()))
    thread.start()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and list(runner.snapshot().workers.values()) != ["running"] * 2:
            time.sleep(0.05)
        assert list(runner.snapshot().workers.values()) == ["running"] * 2
        # paced only now: the run's own checks before the users start would take 5 s a query too
        _pace(ch_server, think_s=5.0)
        time.sleep(1.0)                       # inside their first 5-second query
        runner.cancel()
        thread.join(60)
    finally:
        _pace(ch_server)
        if thread.is_alive():                 # a failed wait above must not leave the run going
            runner.cancel()
            thread.join(60)
    assert outcome["result"].status == "cancelled"
    users = store.workers(outcome["result"].run_id)
    assert list(users["state"]) == ["cancelled", "cancelled"], users[["state", "error"]]
    assert list(users["exitcode"]) == [-9, -9]         # cut short inside the query, not between two
    assert not users["error"].str.contains("SIGKILL|killed|failed").any(), list(users["error"])
    store.close()


@pytest.mark.parametrize("compress", [True, "zstd", False])
def test_the_stand_in_speaks_what_clickhouse_connect_sends(ch_server, compress):
    """Native inserts (lz4 / zstd / plain bodies), query_df, escaped parameters, a multipart form."""
    import datetime as dt

    import clickhouse_connect

    client = clickhouse_connect.get_client(host=LOOPBACK, port=ch_server.port, username="tick",
                                           password=ch_server.users["tick"], compress=compress)
    try:
        client.command("CREATE TABLE IF NOT EXISTS default.speaks (a String, b Int32, t DateTime64(3, 'UTC')) "
                       "ENGINE = MergeTree ORDER BY a")
        client.command("TRUNCATE TABLE default.speaks")
        client.insert("default.speaks", [["x", 1, dt.datetime(2020, 1, 1, 1, 2, 3)], ["y\t'z", 2, dt.datetime(2020, 1, 2)]],
                      column_names=["a", "b", "t"])
        client.insert_df("default.speaks", pd.DataFrame({"a": ["w"], "b": [3], "t": [pd.Timestamp("2020-01-03")]}))
        frame = client.query_df("SELECT * FROM default.speaks WHERE a != {skip:String} ORDER BY b",
                                parameters={"skip": "y\t'z"})
        assert frame["a"].tolist() == ["x", "w"] and frame["t"].iloc[0] == pd.Timestamp("2020-01-01 01:02:03")
        long = {f"p{i}": "v" * 2000 for i in range(5)}           # too long for a URL: sent as a form
        assert client.query("SELECT " + ", ".join(f"length({{p{i}:String}})" for i in range(5)),
                            parameters=long).result_rows == [(2000,) * 5]
    finally:
        client.close()


def test_embedded_reads_write_their_values_as_the_literals_a_user_types(layouts):
    """chDB reads write the day and key into the SQL (bound parameters cost a slice ~2 %): text
    quoted and escaped, integers bare, a date as its ISO text; what that does not cover
    stays bound. Either way chDB reads back the very values."""
    import datetime as dt
    from workloads.targets.clickhouse.dialect import with_literals

    values = {"s": "x'y\\z é✓", "i": -2147483648, "d": dt.date(2007, 8, 23)}
    sql = "SELECT {s:String} AS s, {i:Int32} AS i, toDate('2007-08-23') = {d:Date} AS same_day"
    assert with_literals(sql, values) == "SELECT 'x\\'y\\\\z é✓' AS s, -2147483648 AS i, toDate('2007-08-23') = '2007-08-23' AS same_day"
    assert with_literals("SELECT {t:DateTime64(6)} AS t", {"t": dt.datetime(2007, 8, 23, 9, 30)}) is None
    assert with_literals("SELECT {n:String} AS n", {"n": "a\0b"}) is None
    assert with_literals("SELECT {d:Date}, {t:Array(String)}", {"d": dt.date(2007, 8, 23), "t": ["a"]}) is None
    config, layout = layouts["embedded"]
    target = make_target("clickhouse", config)
    target.open(layout)
    try:
        with target._conn() as (con, _):
            row = con.rows(sql, values)[0]
    finally:
        target.close()
    assert row == {"s": "x'y\\z é✓", "i": -2147483648, "same_day": True}
