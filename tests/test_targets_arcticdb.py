"""ArcticDB target on a real LMDB store, in both symbol layouts, with real worker processes."""
from __future__ import annotations

import multiprocessing as mp
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from tests.generated_days import record_laid_out_days
from arcticdb import Arctic
from arcticdb.version_store.library import Library

from tests.test_targets_duckdb import stored_order
from tests.test_targets_files import (SCALE, assert_phases, assert_same_rows, assert_string_dtypes,
                                      busiest_key, reference_bars, timed)
from workloads.datasets import get_dataset
from workloads.datasets.schema import Scale, StringMode
from workloads.targets import make_target
from workloads.targets.arcticdb import BARS_ARCTICDB, BARS_PANDAS
from workloads.targets.arcticdb.symbols import MANIFEST_SYMBOL
from workloads.targets.common.bars import minute_bars
from workloads.targets.base import IMPORT_TABLE, TargetError

LAYOUTS = ("day", "instrument")
SMALL = Scale(days=2, rows_per_day=6_000, symbols=12)


def config(folder: Path, symbol_per: str = "day", **more) -> dict:
    return {"uri": f"lmdb://{folder}?map_size=512MB", "symbol_per": symbol_per, "chunk_rows": 7_000,
            "drop_caches": False, **more}


@pytest.fixture(scope="module")
def taq():
    return get_dataset("taq")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("arcticdb_target") / "lmdb"


@pytest.fixture(scope="module")
def prepared(store):
    """The layouts, and each library's symbols just after prepare (later tests add their own)."""
    layouts = {per: make_target("arcticdb", config(store, per)).prepare("taq", SCALE, StringMode.ARROW)
               for per in LAYOUTS}
    symbols = {per: set(Arctic(f"lmdb://{store}")[f"taq_{SCALE.key()}_by_{per}"].list_symbols()) for per in LAYOUTS}
    return layouts, symbols


@pytest.fixture(scope="module")
def layouts(prepared):
    return prepared[0]


@pytest.fixture(scope="module")
def day_frames(taq):
    return [taq.day_frame(i, SCALE, StringMode.OBJECT) for i in range(SCALE.days)]


@pytest.fixture(scope="module")
def duckdb_layout(tmp_path_factory):
    target = make_target("duckdb", {"path": str(tmp_path_factory.mktemp("duck") / "d.duckdb")})
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    target.open(layout)
    yield target, layout
    target.close()


@pytest.fixture(params=LAYOUTS)
def opened(request, store, layouts):
    target = make_target("arcticdb", config(store, request.param))
    target.open(layouts[request.param])
    yield request.param, target, layouts[request.param]
    target.close()


def expected_day(frame: pd.DataFrame, info, symbol_per: str) -> pd.DataFrame:
    """A day symbol keeps the generator's time order; a per-instrument day comes key by key."""
    return frame if symbol_per == "day" else stored_order(frame, info)


# --- prepare --------------------------------------------------------------------------------
def test_prepare_records_the_layout_in_the_manifest(prepared, store, taq):
    layouts, symbols_after_prepare = prepared
    for per, layout in layouts.items():
        assert layout.rows == SCALE.days * SCALE.rows_per_day and not layout.reused
        assert layout.days == tuple(taq.trading_days(SCALE)) and f"a symbol per {per}" in layout.location
        assert layout.keys_sample == tuple(taq.keys(SCALE)[:100]) and layout.footprint_bytes > 0
        lib = Arctic(f"lmdb://{store}")[f"taq_{SCALE.key()}_by_{per}"]
        manifest = lib.read_metadata(MANIFEST_SYMBOL).metadata
        assert manifest["complete"] and manifest["symbol_per"] == per
        assert manifest["content"] == taq.content_id and manifest["scale"]["rows_per_day"] == SCALE.rows_per_day
        assert [e["rows"] for e in manifest["entries"]] == [SCALE.rows_per_day] * SCALE.days
        assert manifest["schema"][0] == ["symbol", "SYMBOL"] and manifest["versions"]["arcticdb"]
        symbols = symbols_after_prepare[per] - {MANIFEST_SYMBOL}
        assert "_side_trades" in symbols                  # TAQ's trades, a symbol beside the days
        symbols -= {"_side_trades"}
        assert symbols == ({"d20070823", "d20070824"} if per == "day" else set(manifest["symbols"]))


def test_second_prepare_is_reused_without_generating(layouts, store, monkeypatch):
    def must_not_generate(*args, **kwargs):
        raise AssertionError("a reused layout must not generate data")
    monkeypatch.setattr(type(get_dataset("taq")), "generate_day", must_not_generate)
    for per in LAYOUTS:
        again = make_target("arcticdb", config(store, per)).prepare("taq", SCALE, StringMode.CATEGORY)
        assert again.reused and again.rows == layouts[per].rows and again.strings is StringMode.CATEGORY


@pytest.mark.parametrize("symbol_per", LAYOUTS)
def test_interrupted_prepare_resumes_at_the_missing_day(symbol_per, tmp_path, taq, monkeypatch):
    real_generate, real_append_batch = type(taq).generate_day, Library.append_batch

    def crash_in_second_day(self, day_index, scale, strings=StringMode.ARROW, chunk_rows=1_000_000):
        for n, chunk in enumerate(real_generate(self, day_index, scale, strings, chunk_rows)):
            if day_index == 1 and n == 1:      # per day: after the day symbol's first chunk
                raise RuntimeError("simulated crash")
            yield chunk

    def half_then_crash(self, payloads, *args, **kwargs):   # per instrument: half the keys appended
        if any(p.data.index[0].day == 24 for p in payloads):
            real_append_batch(self, payloads[: len(payloads) // 2], *args, **kwargs)
            raise RuntimeError("simulated crash")
        return real_append_batch(self, payloads, *args, **kwargs)
    if symbol_per == "day":
        monkeypatch.setattr(type(taq), "generate_day", crash_in_second_day)
    else:
        monkeypatch.setattr(Library, "append_batch", half_then_crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        make_target("arcticdb", config(tmp_path, symbol_per, chunk_rows=2_000)).prepare("taq", SMALL, StringMode.ARROW)
    monkeypatch.undo()

    generated, trades = record_laid_out_days(monkeypatch, taq)
    target = make_target("arcticdb", config(tmp_path, symbol_per))
    layout = target.prepare("taq", SMALL, StringMode.OBJECT)
    assert set(generated) == {1} and layout.rows == SMALL.days * SMALL.rows_per_day
    assert len(trades) == 1                  # the trades, drawn once the days are complete
    target.open(layout)
    want = expected_day(taq.day_frame(1, SMALL, StringMode.OBJECT), taq.info, symbol_per)
    assert_same_rows(target.read_day(layout, layout.days[1]).frame, want, taq.info)


def test_a_malformed_uri_or_layout_choice_is_a_clear_error(tmp_path, layouts):
    for uri in ("foo://bar", "lmdb://", "s3://", "/just/a/folder"):
        with pytest.raises(TargetError, match="ArcticDB URI"):
            make_target("arcticdb", {"uri": uri})
    with pytest.raises(TargetError, match="symbol_per 'week'"):
        make_target("arcticdb", {"uri": f"lmdb://{tmp_path}", "symbol_per": "week"})
    make_target("arcticdb", {"uri": "s3s://s3.example.invalid:bucket?access=KEY&secret=SECRET"})  # accepted...
    described = make_target("arcticdb", {"uri": "s3s://s3.example.invalid:bucket?secret=SECRET"}).describe()
    assert "SECRET" not in str(described)                                                       # ...never recorded
    with pytest.raises(TargetError, match="does not exist: prepare"):
        make_target("arcticdb", config(tmp_path / "absent")).open(layouts["day"])


# --- reads ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", list(StringMode), ids=lambda m: m.value)
def test_read_day_returns_the_generated_day_in_each_string_mode(mode, opened, day_frames, taq):
    per, target, layout = opened
    lay = replace(layout, strings=mode)
    for index, day in enumerate(lay.days):
        result, wall = timed(lambda: target.read_day(lay, day))
        assert result.rows == SCALE.rows_per_day and result.nbytes == SCALE.rows_per_day * 45
        want = {"read"} | ({"decode"} if mode is StringMode.CATEGORY else set()) | \
            ({"query"} if per == "instrument" else set())
        assert_phases(result, wall, want)
        assert_string_dtypes(result.frame, taq.info, mode)
        assert_same_rows(result.frame, expected_day(day_frames[index], taq.info, per), taq.info)


def test_a_day_holds_the_same_rows_as_duckdbs(opened, duckdb_layout, taq):
    per, target, layout = opened
    duck, duck_layout = duckdb_layout
    got = target.read_day(layout, layout.days[1]).frame
    want = duck.read_day(duck_layout, duck_layout.days[1]).frame
    assert list(got.columns) == list(want.columns)
    if per == "day":  # DuckDB's order is (key, time, arrival); a day symbol is in time order
        got = stored_order(got, taq.info)
    assert_same_rows(got, want, taq.info)


def test_read_slice_holds_only_that_key_and_day(opened, day_frames, taq):
    per, target, layout = opened
    info = taq.info
    for key in (busiest_key(day_frames[1], info), layout.keys_sample[-1]):
        result, wall = timed(lambda: target.read_slice(layout, layout.days[1], key))
        frame = day_frames[1]
        assert_same_rows(result.frame, frame[frame[info.key_column] == key], info)
        assert_phases(result, wall, {"read"})
    assert target.read_slice(layout, layout.days[0], "NO_SUCH_KEY").rows == 0


@pytest.mark.parametrize("bars_by", [BARS_ARCTICDB, BARS_PANDAS])
def test_minute_bars_equal_pandas_minute_bars_on_the_same_rows(bars_by, store, layouts, day_frames, taq):
    info = taq.info
    for per in LAYOUTS:
        target = make_target("arcticdb", config(store, per, bars_by=bars_by))
        assert target.describe()["bars_by"] == bars_by
        for index, day in enumerate(layouts[per].days):
            frame = day_frames[index]
            for key in (busiest_key(frame, info), layouts[per].keys_sample[-1]):
                result = target.minute_bars(layouts[per], day, key)
                rows = frame[frame[info.key_column] == key].reset_index(drop=True)
                pd.testing.assert_frame_equal(result.frame, minute_bars(rows, "time", "bid", "ofr"))
                pd.testing.assert_frame_equal(result.frame, reference_bars(frame, info, key))
                assert result.extra["bars_by"] == bars_by and result.rows > 10
        assert target.minute_bars(layouts[per], layouts[per].days[0], "NO_SUCH_KEY").rows == 0


def test_drop_cache_reopens_and_lists_what_it_did(opened):
    _, target, layout = opened
    assert target.drop_process_cache(layout) == ["arcticdb reopen"]
    assert target.drop_cache(layout) == ["fsync", "posix_fadvise(DONTNEED)"]
    assert target.read_day(layout, layout.days[0]).rows == SCALE.rows_per_day


def test_footprint_counts_the_layouts_symbols_and_the_import(opened, tmp_path):
    per, target, layout = opened
    main = target.footprint_detail(layout)
    assert 0 < main.bytes < target.footprint(layout) and main.replicas == 1 and main.columns == {}
    assert "get_sizes_by_symbol" in main.method
    target.export_csv(layout, layout.days[0], tmp_path / "day.csv")
    target.import_csv(layout, tmp_path / "day.csv", layout.days[0])     # an import to clear, whatever ran before
    target.clear_table(layout, IMPORT_TABLE)
    assert target.footprint_detail(layout, IMPORT_TABLE).bytes == 0      # its tombstone keys are no table's
    target.import_csv(layout, tmp_path / "day.csv", layout.days[0])
    imported = target.footprint_detail(layout, IMPORT_TABLE).bytes
    assert 0.5 * main.bytes / SCALE.days < imported < 2 * main.bytes / SCALE.days


# --- writes ---------------------------------------------------------------------------------
def test_append_adds_rows_to_the_scratch_symbol(opened, day_frames):
    _, target, layout = opened
    target.clear_table(layout)
    batch = day_frames[0].iloc[:500]
    for _ in range(2):  # the same rows twice: a row-numbered symbol takes repeated timestamps
        result, wall = timed(lambda: target.append(layout, batch))
        assert result.rows == 500 and result.extra["serialised"] is True
        assert_phases(result, wall, {"query"})
    assert target.appended_rows(layout) == 1_000
    target.append(layout, batch.astype({"symbol": "category"}), table="upload")
    assert target.appended_rows(layout, "upload") == 500
    target.clear_table(layout, "upload")
    assert target.appended_rows(layout, "upload") == 0
    assert target.read_day(layout, layout.days[0]).rows == SCALE.rows_per_day  # the days untouched


def test_import_then_export_round_trips_the_day(opened, tmp_path, taq):
    per, target, layout = opened
    target.clear_table(layout, IMPORT_TABLE)
    exported = target.export_csv(layout, layout.days[1], tmp_path / "out.csv")
    assert exported.rows == SCALE.rows_per_day and exported.wire_bytes == (tmp_path / "out.csv").stat().st_size
    assert set(exported.phases) == {"read", "io"} | ({"query"} if per == "instrument" else set())
    for _ in range(2):  # a day imported again replaces itself
        imported = target.import_csv(layout, tmp_path / "out.csv", layout.days[1])
        assert imported.rows == SCALE.rows_per_day and set(imported.phases) == {"read", "io"}
    assert target.imported_rows(layout) == SCALE.rows_per_day
    original = stored_order(target.read_day(layout, layout.days[1]).frame, taq.info)
    lib = target._lib(layout)
    back = pd.concat([lib.read(s).data for s in sorted(lib.list_symbols()) if s.startswith("_import_")])
    assert_same_rows(stored_order(back.reset_index(drop=True), taq.info), original, taq.info)


# --- report 003 against DuckDB ----------------------------------------------------------------
def test_report_003_computations_equal_duckdbs(opened, duckdb_layout):
    _, target, layout = opened
    duck, duck_layout = duckdb_layout
    pd.testing.assert_frame_equal(target.spread_by_minute(layout).frame,
                                  duck.spread_by_minute(duck_layout).frame, check_dtype=False)
    pd.testing.assert_frame_equal(target.ols_spread(layout).frame, duck.ols_spread(duck_layout).frame,
                                  check_exact=False, rtol=1e-9)
    target.clear_table(layout, "minute")
    bars = target.mapreduce_minute_bars(layout)
    duck.clear_table(duck_layout, "minute")
    assert bars.extra["bars"] == duck.mapreduce_minute_bars(duck_layout).extra["bars"] == target.minute_rows(layout)
    assert set(bars.phases) >= {"read", "query", "io"}


# --- several real processes -----------------------------------------------------------------
def _append_in_process(folder: str, layout, batches: int, rows: int, barrier, results) -> None:
    target = make_target("arcticdb", config(Path(folder)))
    frame = get_dataset("taq").day_frame(0, layout.scale, StringMode.ARROW).iloc[:rows]
    target.open(layout)
    barrier.wait(timeout=60)
    turns = []
    for _ in range(batches):
        extra = target.append(layout, frame, table="concurrent").extra
        turns.append((extra["turn_taken"], extra["turn_released"]))
    target.close()
    results.put(turns)


def test_appends_from_two_processes_take_turns_and_all_land(store, layouts):
    layout, batches, rows = layouts["day"], 8, 200
    ctx = mp.get_context("spawn")
    results, barrier = ctx.Queue(), ctx.Barrier(2)
    procs = [ctx.Process(target=_append_in_process, args=(str(store), layout, batches, rows, barrier, results))
             for _ in range(2)]
    for p in procs:
        p.start()
    held = sorted(turn for _ in procs for turn in results.get(timeout=120))
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert all(later[0] >= earlier[1] for earlier, later in zip(held, held[1:]))  # one writer at a time
    target = make_target("arcticdb", config(store))
    assert target.appended_rows(layout, "concurrent") == 2 * batches * rows   # none lost


def test_workers_through_the_runner(tmp_path):
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    store = ResultsStore(tmp_path / "results")
    target_config = config(tmp_path / "lmdb", "instrument")
    for workload, params in (("concurrent-append", {"rows_per_user": 2_000, "batch_rows": 250}),
                             ("minute-bars", {}), ("read-day", {})):
        scenario = Scenario(dataset="taq", scale=SMALL, target="arcticdb", target_config=target_config,
                            workload=workload, params=params, users=(2,), cache="cold" if workload == "read-day"
                            else "warm", operations=2)
        result = Runner(scenario, store).run()
        assert result.status == "completed", result.message
    target = make_target("arcticdb", target_config)
    layout = target.prepare("taq", SMALL, StringMode.ARROW)
    assert target.appended_rows(layout) == 2 * 2_000
    store.close()


# --- the query suites agree with DuckDB and Parquet ------------------------------------------
@pytest.mark.parametrize("dataset, suite", [("taq", "taq001"), ("taq", "taq004"), ("devices", "devices004")])
def test_query_suites_answer_as_duckdb_and_parquet_do(dataset, suite, tmp_path):
    from workloads.queries.suites import load_suite
    from workloads.queries.verify import SAME, verify

    targets = [("duckdb", "duckdb", {"path": str(tmp_path / "d.duckdb")}),
               ("parquet", "parquet", {"root": str(tmp_path / "files")}),
               ("arcticdb day", "arcticdb", config(tmp_path / "lmdb", "day")),
               ("arcticdb instrument", "arcticdb", config(tmp_path / "lmdb", "instrument"))]
    verdicts = verify(dataset, SMALL, targets, [load_suite(suite)])
    for query, row in verdicts.verdicts.items():
        assert set(row.values()) == {SAME}, (query, row, verdicts.answers[query])
