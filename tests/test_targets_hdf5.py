"""HDF5 target (pandas/PyTables, h5py) on real files, checked against DuckDB's reads of the same data."""
from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest

from tests.generated_days import record_laid_out_days
import tables

from tests.test_targets_files import (assert_phases, assert_same_rows, assert_string_dtypes, busiest_key,
                                      reference_bars, timed)
from workloads.datasets import get_dataset
from workloads.datasets.csv_files import csv_files
from workloads.datasets.csvread import read_csv
from workloads.datasets.schema import Scale, StringMode
from workloads.queries.answers import normalise
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore
from workloads.targets import make_target
from workloads.targets.common.bars import minute_bars
from workloads.targets.base import IMPORT_TABLE, TargetError
from workloads.targets.common.day_files import MANIFEST
from workloads.targets.hdf5.layout import day_node
from workloads.queries.verify import NOT_SUPPORTED, SAME, verify

SCALE = Scale(days=2, rows_per_day=12_000, symbols=30)
CHUNK_ROWS = 5_000      # several generator chunks per day


def config(root: Path, **more) -> dict:
    return {"root": str(root), "chunk_rows": CHUNK_ROWS, "drop_caches": False, **more}


@pytest.fixture(scope="module")
def taq():
    return get_dataset("taq")


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hdf5_target")


@pytest.fixture(scope="module")
def prepared(root):
    """format -> (opened target, layout), prepared once per module."""
    cache = {}

    def get(fmt: str):
        if fmt not in cache:
            target = make_target("hdf5", config(root, format=fmt))
            layout = target.prepare("taq", SCALE, StringMode.ARROW)
            target.open(layout)
            cache[fmt] = (target, layout)
        return cache[fmt]
    return get


def in_mode(layout, mode: StringMode):
    return replace(layout, strings=mode)


# --- prepare --------------------------------------------------------------------------------
def test_prepare_writes_one_file_per_day_with_one_node_and_a_manifest(prepared, root, taq):
    target, layout = prepared("table")
    folder = Path(layout.location)
    assert folder == root / "hdf5" / "taq" / SCALE.key() / "table" / "blosc-lz4-5"
    assert layout.rows == SCALE.days * SCALE.rows_per_day and not layout.reused
    assert layout.keys_sample == tuple(str(k) for k in taq.keys(SCALE)[:100])
    # files only: other tests of the module may have added their append/minute/import folders first
    assert sorted(p.name for p in folder.iterdir() if p.is_file()) == \
        [f"{d}.h5" for d in layout.days] + [MANIFEST, "trades.h5"]               # TAQ's trades beside the days
    with tables.open_file(str(target.day_path(layout, layout.days[0]))) as f:
        table = f.get_node(f"/{day_node(layout.days[0])}/table")
        assert table.nrows == SCALE.rows_per_day
        assert table.colindexed["symbol"] and not table.colindexed["bid"]
        assert table.filters.complib == "blosc:lz4" and table.filters.complevel == 5
    with pd.HDFStore(target.day_path(layout, layout.days[1]), mode="r") as store:   # pandas reads it
        assert store.select(day_node(layout.days[1]), where="symbol == 'MD'")["symbol"].eq("MD").all()
    import json
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["complete"] and manifest["content"] == taq.content_id and manifest["complib"] == "blosc:lz4"
    assert manifest["versions"]["tables"] == tables.__version__ and manifest["versions"]["h5py"] == h5py.__version__
    assert [e["rows"] for e in manifest["entries"]] == [SCALE.rows_per_day] * SCALE.days
    assert layout.footprint_bytes == target.footprint(layout) == sum(e["bytes"] for e in manifest["entries"])


def test_second_prepare_is_reused_in_any_string_mode(prepared, root, monkeypatch):
    target, layout = prepared("table")
    stamps = [p.stat().st_mtime_ns for p in target.day_files(layout)]

    def must_not_generate(*args, **kwargs):
        raise AssertionError("a reused layout must not generate data")
    monkeypatch.setattr(type(get_dataset("taq")), "generate_day", must_not_generate)
    again = make_target("hdf5", config(root)).prepare("taq", SCALE, StringMode.CATEGORY)
    assert again.reused and again.location == layout.location and again.strings is StringMode.CATEGORY
    assert [p.stat().st_mtime_ns for p in target.day_files(layout)] == stamps


def test_interrupted_prepare_leaves_no_half_file_and_resumes(tmp_path, taq, monkeypatch):
    real = type(taq).generate_day

    def crash_in_second_day(self, day_index, scale, strings=StringMode.ARROW, chunk_rows=1_000_000):
        for n, chunk in enumerate(real(self, day_index, scale, strings, chunk_rows)):
            if day_index == 1 and n == 1:
                raise RuntimeError("simulated crash")
            yield chunk
    monkeypatch.setattr(type(taq), "generate_day", crash_in_second_day)
    target = make_target("hdf5", config(tmp_path))
    with pytest.raises(RuntimeError, match="simulated crash"):
        target.prepare("taq", SCALE, StringMode.ARROW)
    folder = target.layout_dir("taq", SCALE)
    assert sorted(p.name for p in folder.iterdir()) == [f"{taq.trading_days(SCALE)[0]}.h5", MANIFEST]

    monkeypatch.undo()
    generated, trades = record_laid_out_days(monkeypatch, taq)
    layout = make_target("hdf5", config(tmp_path)).prepare("taq", SCALE, StringMode.ARROW)
    assert set(generated) == {1} and layout.rows == SCALE.days * SCALE.rows_per_day and not layout.reused
    assert len(trades) == 1                  # the trades, drawn once the days are complete


def test_bad_config_and_a_missing_layout_are_clear_errors(tmp_path, prepared):
    _, layout = prepared("table")
    with pytest.raises(TargetError, match="format 'tree': choose table or fixed"):
        make_target("hdf5", {"root": str(tmp_path), "format": "tree"}).prepare("taq", SCALE, StringMode.ARROW)
    with pytest.raises(TargetError, match="complib 'snappy'"):
        make_target("hdf5", {"root": str(tmp_path), "complib": "snappy"}).describe()
    with pytest.raises(TargetError, match="is missing: prepare the target first"):
        make_target("hdf5", {"root": str(tmp_path)}).open(replace(layout, location=str(tmp_path / "gone")))


# --- reads: the same frames as DuckDB's ---------------------------------------------------------
@pytest.mark.parametrize("fmt", ["table", "fixed"])
@pytest.mark.parametrize("mode", list(StringMode), ids=lambda m: m.value)
def test_read_day_equals_duckdbs_read(fmt, mode, prepared, duck, taq):
    target, layout = prepared(fmt)
    duck_target, duck_layout = duck
    for day in layout.days:
        result, wall = timed(lambda: target.read_day(in_mode(layout, mode), day))
        assert result.rows == SCALE.rows_per_day and result.wire_bytes == target.day_path(layout, day).stat().st_size
        assert_phases(result, wall, {"read", "decode"})
        assert_string_dtypes(result.frame, taq.info, mode)
        want = duck_target.read_day(in_mode(duck_layout, mode), day).frame
        assert_same_rows(result.frame, want, taq.info)


def test_whole_day_readers_follow_the_compressor(tmp_path, taq, duck):
    """zlib days are read by h5py, the rest by PyTables (module doc); both give DuckDB's frame."""
    duck_target, duck_layout = duck
    for complib, reader in (("zlib", "h5py"), ("none", "PyTables Table.read")):
        target = make_target("hdf5", config(tmp_path, complib=complib, complevel=1))
        layout = target.prepare("taq", SCALE, StringMode.OBJECT)
        assert target.describe()["day_reader"] == reader
        got = target.read_day(layout, layout.days[1]).frame
        assert_same_rows(got, duck_target.read_day(in_mode(duck_layout, StringMode.OBJECT), layout.days[1]).frame,
                         taq.info)


@pytest.mark.parametrize("fmt", ["table", "fixed"])
def test_read_slice_equals_duckdbs_slice(fmt, prepared, duck, taq):
    target, layout = prepared(fmt)
    duck_target, duck_layout = duck
    day = layout.days[0]
    for key in (layout.keys_sample[0], layout.keys_sample[-1]):
        result, wall = timed(lambda: target.read_slice(layout, day, key))
        want = duck_target.read_slice(duck_layout, day, key).frame
        assert result.rows == len(want) > 0 and set(result.frame["symbol"]) == {key}
        assert_same_rows(result.frame, want, taq.info)
        # table: PyTables' where reads the key's rows only; fixed: the day, filtered by pandas
        assert_phases(result, wall, {"read", "decode"} if fmt == "table" else {"read", "decode", "query"})
        assert (result.wire_bytes is None) == (fmt == "table")
    assert target.read_slice(layout, day, "NO_SUCH_KEY_AT_ALL").rows == 0
    assert target.read_slice(layout, day, "x' OR '1'='1").rows == 0     # a value, never an expression


@pytest.mark.parametrize("fmt", ["table", "fixed"])
def test_minute_bars_equal_pandas_bars_of_the_days_rows(fmt, prepared, taq):
    target, layout = prepared(fmt)
    day_frame = taq.day_frame(0, SCALE, StringMode.OBJECT)
    key = busiest_key(day_frame, taq.info)
    result, wall = timed(lambda: target.minute_bars(layout, layout.days[0], key))
    rows = day_frame[day_frame["symbol"] == key]
    pd.testing.assert_frame_equal(result.frame, minute_bars(rows, "time", "bid", "ofr"))
    pd.testing.assert_frame_equal(result.frame, reference_bars(day_frame, taq.info, key))
    assert result.rows > 10
    assert_phases(result, wall, {"read", "decode", "query"})


def test_drop_cache_evicts_the_day_files(prepared):
    from workloads.targets.common.cache import resident_bytes
    target, layout = prepared("table")
    assert target.read_day(layout, layout.days[0]).rows == SCALE.rows_per_day
    assert target.drop_cache(layout) == ["fsync", "posix_fadvise(DONTNEED)"]
    residency = [resident_bytes(p) for p in target.day_files(layout)]
    assert residency == [0] * len(residency)        # the kernel (mincore) holds none of their pages
    assert target.read_day(layout, layout.days[0]).rows == SCALE.rows_per_day


# --- writes ------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["table", "fixed"])
def test_append_writes_a_part_file_per_batch_and_clear_empties_it(fmt, prepared, taq):
    target, layout = prepared(fmt)
    batch = taq.day_frame(0, SCALE, StringMode.ARROW).iloc[:700]
    target.clear_table(layout)
    result, wall = timed(lambda: target.append(layout, batch))
    assert result.rows == 700 and result.nbytes == 700 * taq.info.schema.row_bytes()
    assert_phases(result, wall, {"io"})
    target.append(layout, batch.iloc[:300])
    target.append(layout, batch, table="upload")
    assert target.appended_rows(layout) == 1_000 and target.appended_rows(layout, "upload") == 700
    part = next(target.append_dir(layout).glob("part-*.h5"))
    assert len(pd.read_hdf(part, "append")) in (700, 300)
    target.clear_table(layout)
    assert target.appended_rows(layout) == 0 and target.appended_rows(layout, "upload") == 700
    assert target.read_day(layout, layout.days[0]).rows == SCALE.rows_per_day   # day files untouched
    with pytest.raises(ValueError, match="append table name"):
        target.append(layout, batch, table="../escape")


def test_disk_full_is_a_clear_error_and_leaves_no_partial_file(tmp_path):
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(tiny)],
                                 capture_output=True, check=False).returncode == 0
    except OSError:
        mounted = False
    if not mounted:
        pytest.skip("needs a small tmpfs (root with mount rights) to fill a disk for real")
    try:
        target = make_target("hdf5", config(tiny, complib="none"))
        with pytest.raises(TargetError, match=r"disk full while writing .*\.h5: \d+ MB free"):
            target.prepare("taq", SCALE, StringMode.ARROW)
        names = [p.name for p in target.layout_dir("taq", SCALE).iterdir()]
        assert not any(n.endswith(".tmp") or n.endswith(".h5") for n in names), names
    finally:
        subprocess.run(["umount", str(tiny)], check=False)


# --- report 003: the same answers as DuckDB's SQL ------------------------------------------------
def test_report_003_computations_equal_duckdbs(prepared, duck):
    target, layout = prepared("table")
    duck_target, duck_layout = duck
    spread, wall = timed(lambda: target.spread_by_minute(layout))
    want = duck_target.spread_by_minute(duck_layout).frame
    assert spread.rows == len(want) > 100
    np.testing.assert_allclose(spread.frame["avgSpread"], want["avgSpread"], rtol=1e-9)
    assert (spread.frame["minute"].to_numpy() == want["minute"].to_numpy()).all()
    assert_phases(spread, wall, {"read", "decode", "query"})
    ols = target.ols_spread(layout).frame
    np.testing.assert_allclose(ols[["beta", "stdError", "tstat"]].to_numpy(),
                               duck_target.ols_spread(duck_layout).frame[["beta", "stdError", "tstat"]].to_numpy(),
                               rtol=1e-6)
    target.clear_table(layout, "minute")
    bars = target.mapreduce_minute_bars(layout, layout.days[:1])
    duck_target.clear_table(duck_layout, "minute")
    duck_target.open(duck_layout)
    assert bars.extra["bars"] == duck_target.mapreduce_minute_bars(duck_layout, layout.days[:1]).extra["bars"]
    duck_target.open(duck_layout)
    assert target.minute_rows(layout) == bars.extra["bars"] and set(bars.phases) == {"read", "decode", "query", "io"}
    target.clear_table(layout, "minute")
    assert target.minute_rows(layout) == 0


# --- reports 001 and 004: import, export, footprint ----------------------------------------------
def test_import_then_export_round_trips_the_csv(prepared, tmp_path):
    target, layout = prepared("table")
    target.clear_table(layout, IMPORT_TABLE)
    assert target.footprint_detail(layout, IMPORT_TABLE).bytes == 0
    files = csv_files("taq", SCALE)
    for file in files:
        result = target.import_csv(layout, file.path, file.day)
        assert result.rows == file.rows and result.wire_bytes == file.bytes
        assert set(result.phases) == {"read", "io"} and result.extra["queryable_s"] > 0
    imported = pd.concat([pd.read_hdf(target.import_dir(layout) / f"{f.day}.h5", day_node(f.day)) for f in files],
                         ignore_index=True)
    columns = tuple(imported.columns)
    generated = pd.concat([get_dataset("taq").day_frame(i, SCALE) for i in range(SCALE.days)], ignore_index=True)
    assert normalise(imported, columns).equals(normalise(generated, columns))
    imported_fp = target.footprint_detail(layout, IMPORT_TABLE)
    assert imported_fp.bytes == sum(p.stat().st_size for p in target.import_dir(layout).glob("*.h5")) > 0

    out = tmp_path / "day.csv"
    result = target.export_csv(layout, layout.days[1], out)
    assert result.rows == SCALE.rows_per_day and result.wire_bytes == out.stat().st_size
    assert set(result.phases) == {"read", "decode", "io"}
    assert normalise(read_csv(out, "taq"), columns).equals(normalise(get_dataset("taq").day_frame(1, SCALE), columns))
    assert out.read_text().splitlines()[1].split(",")[1].strip('"').startswith("2007.08.")   # the dataset's CSV style
    target.clear_table(layout, IMPORT_TABLE)
    assert target.footprint_detail(layout, IMPORT_TABLE).bytes == 0


def test_footprint_detail_counts_the_files(prepared):
    target, layout = prepared("table")
    footprint = target.footprint_detail(layout)
    assert footprint.bytes == sum(p.stat().st_size for p in target.day_files(layout)) == layout.footprint_bytes
    assert footprint.columns == {} and footprint.replicas == 1 and "file sizes" in footprint.method


# --- every engine, the same answer -----------------------------------------------------------------
@pytest.mark.parametrize("dataset, scale", [("taq", Scale(days=2, rows_per_day=8_000, symbols=20)),
                                            ("devices", Scale(days=2, rows_per_day=8_000, symbols=80))])
def test_suites_agree_with_duckdb_and_parquet(tmp_path, dataset, scale):
    targets = [("duckdb", "duckdb", {"path": str(tmp_path / "d.duckdb"), "threads": 1}),
               ("parquet", "parquet", {"root": str(tmp_path / "files")}),
               ("hdf5", "hdf5", {"root": str(tmp_path / "files")})]
    verdicts = verify(dataset, scale, targets)
    suites = {suite for suite, _ in verdicts.queries}
    assert suites == ({"taq001", "taq004", "tick"} if dataset == "taq" else {"devices004"})
    assert verdicts.agree, {k: v for k, v in verdicts.verdicts.items() if v["hdf5"] != SAME}
    assert all(row["hdf5"] in (SAME, NOT_SUPPORTED) for row in verdicts.verdicts.values())
    assert sum(row["hdf5"] == SAME for row in verdicts.verdicts.values()) == len(verdicts.queries)
    assert all(row["hdf5"] == row["parquet"] for row in verdicts.verdicts.values())   # pandas on both


# --- several worker processes through the runner --------------------------------------------------
@pytest.mark.parametrize("workload, params, cache", [
    ("concurrent-append", {"rows_per_user": 3_000, "batch_rows": 1_000}, "warm"),
    ("slice-download", {"rows_per_user": 1_000}, "cold"),
])
def test_two_worker_processes_through_the_runner(tmp_path, workload, params, cache):
    store = ResultsStore(tmp_path / "results")
    scale = Scale(days=2, rows_per_day=10_000, symbols=20)
    scenario = Scenario(dataset="taq", scale=scale, target="hdf5", target_config=config(tmp_path / "files"),
                        workload=workload, params=params, users=(2,), operations=2, cache=cache)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id)
    assert ops["ok"].all() and (ops["rows"] > 0).all() and set(ops["worker"]) == {0, 1}
    if workload == "concurrent-append":
        assert result.figures["rows"].iloc[0] == 2 * 3_000
        target = make_target("hdf5", config(tmp_path / "files"))
        layout = target.prepare("taq", scale, StringMode.ARROW)
        assert target.appended_rows(layout) >= 2 * 3_000       # every worker's parts landed whole
    store.close()
