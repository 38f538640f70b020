"""File targets (pickle, Parquet, Feather) on real temp files, checked against the generator."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from workloads.datasets import get_dataset
from workloads.datasets.schema import Scale, StringMode
from workloads.targets import TARGETS, make_target, target_kinds
from workloads.targets import files as files_module
from workloads.targets.base import PHASES, TargetError

SCALE = Scale(days=2, rows_per_day=20_000, symbols=40)
CHUNK_ROWS = 7_000  # several chunks per day: exercises chunked writing
FILE_KINDS = ("pickle", "parquet", "feather")
EXT = {"pickle": "pkl", "parquet": "parquet", "feather": "feather"}


# --- helpers shared with test_targets_duckdb ------------------------------------------------
def as_plain(frame: pd.DataFrame, info) -> pd.DataFrame:
    """String columns as Python objects, so frames of any string mode compare by value."""
    out = frame.reset_index(drop=True).copy()
    for col in info.schema.columns:
        if col.is_string:
            out[col.name] = out[col.name].astype(object)
    return out


def assert_same_rows(got: pd.DataFrame, want: pd.DataFrame, info) -> None:
    pd.testing.assert_frame_equal(as_plain(got, info), as_plain(want, info), check_dtype=True)


def assert_same_rows_any_order(got: pd.DataFrame, want: pd.DataFrame, info) -> None:
    """The same rows, each as often, in whatever order: a day read or a slice promises no order
    (README: one meaning per operation)."""
    columns = list(info.schema.names)

    def ordered(frame):
        return as_plain(frame, info).sort_values(columns, kind="stable", na_position="first").reset_index(drop=True)
    assert list(got.columns) == list(want.columns)
    pd.testing.assert_frame_equal(ordered(got), ordered(want), check_dtype=True)


def assert_string_dtypes(frame: pd.DataFrame, info, strings: StringMode) -> None:
    for col in info.schema.columns:
        dtype = frame[col.name].dtype
        if not col.is_string:
            assert str(dtype) == col.pandas_dtype(strings), (col.name, dtype)
        elif strings is StringMode.OBJECT:
            assert dtype == object, (col.name, dtype)
        elif strings is StringMode.CATEGORY:
            assert isinstance(dtype, pd.CategoricalDtype), (col.name, dtype)
        else:
            assert isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow", (col.name, dtype)


def reference_bars(day_frame: pd.DataFrame, info, key: str) -> pd.DataFrame:
    """Bars by an independent route: pandas resample().ohlc() on a time index, empty minutes dropped."""
    bid, ask = info.price_columns
    rows = day_frame[day_frame[info.key_column].astype(object) == key]
    mid = pd.Series(((rows[bid] + rows[ask]) / 2).to_numpy(), index=pd.DatetimeIndex(rows[info.time_column]))
    bars = mid.resample("1min").ohlc().dropna(how="all")
    bars.index.name = "minute"
    return bars.reset_index()


def assert_phases(result, wall_s: float, expected: set[str]) -> None:
    assert set(result.phases) == expected
    assert set(result.phases) <= set(PHASES)
    assert all(v >= 0 for v in result.phases.values()), result.phases
    assert sum(result.phases.values()) <= wall_s


# The phases each format's own call has (pickle.load has none: probes split it into io + decode)
PLAIN_PHASES = {
    ("pickle", "day"): set(), ("pickle", "slice"): {"query"}, ("pickle", "bars"): {"query"},
    ("parquet", "day"): {"read", "decode"}, ("parquet", "slice"): {"read", "decode"},
    ("parquet", "bars"): {"read", "decode", "query"},
    ("feather", "day"): {"read", "decode"}, ("feather", "slice"): {"read", "query", "decode"},
    ("feather", "bars"): {"read", "query", "decode"},
}


def timed(call):
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


# --- fixtures -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def taq():
    return get_dataset("taq")


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("files_targets")


@pytest.fixture(scope="module")
def day_frames(taq):
    return {mode: [taq.day_frame(i, SCALE, mode) for i in range(SCALE.days)] for mode in StringMode}


@pytest.fixture(scope="module")
def prepared(root):
    """(kind, mode) -> (target, first layout), prepared once per module."""
    cache = {}

    def get(kind: str, mode: StringMode):
        if (kind, mode) not in cache:
            target = make_target(kind, {"root": str(root), "chunk_rows": CHUNK_ROWS, "drop_caches": False})
            layout = target.prepare("taq", SCALE, mode)
            target.open(layout)
            cache[kind, mode] = (target, layout)
        return cache[kind, mode]
    return get


def stored_order(frame: pd.DataFrame, info) -> pd.DataFrame:
    """The generator's rows in a table's order: key, then time, ties in arrival order."""
    ordered = frame.assign(_key=frame[info.key_column].astype(object))
    return ordered.sort_values(["_key", info.time_column], kind="stable").drop(columns="_key")


def busiest_key(frame: pd.DataFrame, info) -> str:
    return str(frame[info.key_column].astype(object).value_counts().index[0])


# --- registry -------------------------------------------------------------------------------
def test_registry_knows_every_kind():
    assert set(TARGETS) == {"pickle", "parquet", "feather", "duckdb"}
    assert target_kinds()[len(TARGETS):] == ["dolphindb", "clickhouse", "arcticdb", "hdf5",   # lazily loaded
                                             "questdb", "postgres", "druid", "mongodb"]
    for kind in TARGETS:
        target = make_target(kind, {})
        assert target.kind == kind
        assert set(target.read_phases) <= set(PHASES)


def test_dolphindb_is_registered_lazily_with_a_clear_error_when_unloadable(monkeypatch):
    import workloads.targets as registry
    assert "dolphindb" not in registry.TARGETS and "dolphindb" in target_kinds()
    monkeypatch.setitem(registry.LAZY_TARGETS, "dolphindb", "workloads.targets.no_such_module:Nope")
    with pytest.raises(TargetError, match=r"target 'dolphindb' is unavailable: cannot load "
                                          r"workloads\.targets\.no_such_module:Nope"):
        make_target("dolphindb", {})


def test_registry_rejects_unknown_kind_by_name():
    with pytest.raises(ValueError, match=r"unknown target 'oracle'.*pickle.*dolphindb"):
        make_target("oracle", {})


# --- prepare --------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", FILE_KINDS)
def test_prepare_lays_out_one_file_per_day_with_manifest(kind, prepared, root, taq):
    target, layout = prepared(kind, StringMode.OBJECT)
    folder = root / kind / "taq" / SCALE.key() / "object"
    assert Path(layout.location) == folder
    days = taq.trading_days(SCALE)
    assert layout.days == tuple(days)
    assert sorted(p.name for p in folder.iterdir() if p.is_file()) == sorted(
        [f"{d.isoformat()}.{EXT[kind]}" for d in days] + ["manifest.json", f"trades.{EXT[kind]}"])   # TAQ's trades beside
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["complete"] is True
    assert [e["rows"] for e in manifest["entries"]] == [SCALE.rows_per_day] * SCALE.days
    assert layout.rows == SCALE.rows_per_day * SCALE.days
    assert list(layout.keys_sample) == taq.keys(SCALE)[:len(layout.keys_sample)]
    assert manifest["schema"] == [[c.name, c.ddb_type] for c in taq.info.schema.columns]
    assert manifest["versions"]["pandas"] == pd.__version__
    assert layout.footprint_bytes == target.footprint(layout) == sum(
        (folder / f"{d.isoformat()}.{EXT[kind]}").stat().st_size for d in days)
    assert not layout.reused


@pytest.mark.parametrize("kind", FILE_KINDS)
def test_second_prepare_is_reused_without_generating_or_rewriting(kind, prepared, root, monkeypatch):
    target, first = prepared(kind, StringMode.ARROW)
    files = sorted(Path(first.location).glob(f"*.{EXT[kind]}"))
    mtimes = [p.stat().st_mtime_ns for p in files]

    def must_not_generate(*args, **kwargs):
        raise AssertionError("a reused layout must not generate data")
    monkeypatch.setattr(type(get_dataset("taq")), "generate_day", must_not_generate)
    again = make_target(kind, {"root": str(root)}).prepare("taq", SCALE, StringMode.ARROW)
    assert again.reused
    assert (again.days, again.rows, again.location) == (first.days, first.rows, first.location)
    assert [p.stat().st_mtime_ns for p in files] == mtimes


def test_interrupted_prepare_leaves_no_half_file_and_resumes(tmp_path, taq, monkeypatch):
    real = type(taq).generate_day
    calls = {"n": 0}

    def crash_in_second_day(self, day_index, scale, strings=StringMode.ARROW, chunk_rows=1_000_000):
        for chunk in real(self, day_index, scale, strings, chunk_rows):
            if day_index == 1:
                calls["n"] += 1
                if calls["n"] == 2:
                    raise RuntimeError("simulated crash")
            yield chunk
    monkeypatch.setattr(type(taq), "generate_day", crash_in_second_day)
    target = make_target("parquet", {"root": str(tmp_path), "chunk_rows": CHUNK_ROWS})
    with pytest.raises(RuntimeError, match="simulated crash"):
        target.prepare("taq", SCALE, StringMode.ARROW)
    folder = target.layout_dir("taq", SCALE, StringMode.ARROW)
    days = taq.trading_days(SCALE)
    assert sorted(p.name for p in folder.iterdir()) == sorted(["manifest.json", f"{days[0].isoformat()}.parquet"])
    first_mtime = (folder / f"{days[0].isoformat()}.parquet").stat().st_mtime_ns

    monkeypatch.setattr(type(taq), "generate_day", real)
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    assert layout.rows == SCALE.rows_per_day * SCALE.days and not layout.reused
    assert (folder / f"{days[0].isoformat()}.parquet").stat().st_mtime_ns == first_mtime  # resumed
    target.open(layout)
    assert target.read_day(layout, days[1]).rows == SCALE.rows_per_day


def test_temp_files_of_dead_writers_are_removed_and_live_ones_kept(prepared, root):
    target, layout = prepared("parquet", StringMode.ARROW)
    folder = Path(layout.location)
    exited = subprocess.Popen(["true"])  # a writer that has died: its pid is no longer running
    exited.wait()
    dead_pid = exited.pid
    dead = folder / f".2007-08-23.parquet.{dead_pid}.0badf00d.tmp"
    live = folder / f".2007-08-23.parquet.{os.getpid()}.0c0ffee0.tmp"
    dead.write_bytes(b"half a file")
    live.write_bytes(b"being written")
    try:
        again = make_target("parquet", {"root": str(root)}).prepare("taq", SCALE, StringMode.ARROW)
        assert again.reused
        assert not dead.exists() and live.exists()
    finally:
        live.unlink(missing_ok=True)


# --- reads ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", list(StringMode), ids=lambda m: m.value)
@pytest.mark.parametrize("kind", FILE_KINDS)
def test_read_day_returns_the_generated_day(kind, mode, prepared, day_frames, taq):
    target, layout = prepared(kind, mode)
    for index, day in enumerate(layout.days):
        result, wall = timed(lambda: target.read_day(layout, day))
        assert result.rows == SCALE.rows_per_day
        # logical bytes (45 B a TAQ row) whatever the format; the file's bytes are what was read
        assert result.nbytes == SCALE.rows_per_day * 45
        assert result.wire_bytes == (Path(layout.location) / f"{day.isoformat()}.{EXT[kind]}").stat().st_size
        assert_phases(result, wall, PLAIN_PHASES[(kind, "day")])
        assert_string_dtypes(result.frame, taq.info, mode)
        assert_same_rows(result.frame, day_frames[mode][index], taq.info)
    if kind == "pickle":          # the probe's instrumented read splits the same load
        with target.probe_mode():
            probe, wall = timed(lambda: target.read_day(layout, layout.days[0]))
        assert_phases(probe, wall, {"io", "decode"})
        assert_same_rows(probe.frame, day_frames[mode][0], taq.info)


@pytest.mark.parametrize("kind", FILE_KINDS)
def test_read_slice_holds_only_that_key_and_day(kind, prepared, day_frames, taq):
    info = taq.info
    target, layout = prepared(kind, StringMode.CATEGORY)
    day = layout.days[1]
    want_day = day_frames[StringMode.OBJECT][1]
    for key in (busiest_key(want_day, info), layout.keys_sample[-1]):
        result, wall = timed(lambda: target.read_slice(layout, day, key))
        want = want_day[want_day[info.key_column] == key]
        assert result.rows == len(want)
        assert set(result.frame[info.key_column].astype(object)) <= {key}
        assert set(result.frame[info.date_column].dt.date) <= {day}
        assert_string_dtypes(result.frame, info, StringMode.CATEGORY)
        assert_same_rows(result.frame, want, info)
        assert_phases(result, wall, PLAIN_PHASES[(kind, "slice")])
    assert target.read_slice(layout, day, "NO_SUCH_KEY").rows == 0


@pytest.mark.parametrize("kind", FILE_KINDS)
def test_minute_bars_match_an_independent_pandas_reference(kind, prepared, day_frames, taq):
    target, layout = prepared(kind, StringMode.OBJECT)
    day_frame = day_frames[StringMode.OBJECT][0]
    key = busiest_key(day_frame, taq.info)
    result, wall = timed(lambda: target.minute_bars(layout, layout.days[0], key))
    want = reference_bars(day_frame, taq.info, key)
    assert result.rows == len(want) > 10
    pd.testing.assert_frame_equal(result.frame, want, check_dtype=True)
    assert_phases(result, wall, PLAIN_PHASES[(kind, "bars")])


def test_read_of_a_day_outside_the_layout_names_the_day(prepared):
    import datetime as dt
    target, layout = prepared("pickle", StringMode.OBJECT)
    with pytest.raises(ValueError, match="1999-01-04 is not a trading day"):
        target.read_day(layout, dt.date(1999, 1, 4))


# --- appends --------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", FILE_KINDS)
def test_append_writes_a_new_file_per_batch(kind, prepared, day_frames, taq):
    target, layout = prepared(kind, StringMode.OBJECT)
    day_files = {p: p.stat().st_mtime_ns for p in Path(layout.location).glob(f"*.{EXT[kind]}")}
    before = target.appended_rows(layout, "upload")
    batch = day_frames[StringMode.OBJECT][0].iloc[:1_000]
    for _ in range(3):
        result, wall = timed(lambda: target.append(layout, batch, table="upload"))
        assert result.rows == 1_000 and result.nbytes > 0
        assert_phases(result, wall, {"decode", "io"})
    assert target.appended_rows(layout, "upload") == before + 3_000
    assert len(list(target.append_dir(layout, "upload").glob(f"part-*.{EXT[kind]}"))) >= 3
    assert {p: p.stat().st_mtime_ns for p in day_files} == day_files  # day files untouched
    with pytest.raises(ValueError, match="append table name"):
        target.append(layout, batch, table="../escape")


# --- cold cache -----------------------------------------------------------------------------
def test_drop_cache_applies_fsync_and_fadvise(prepared):
    from workloads.targets.common.cache import resident_bytes
    target, layout = prepared("feather", StringMode.OBJECT)
    assert target.read_day(layout, layout.days[0]).rows == SCALE.rows_per_day  # now cached
    applied = target.drop_cache(layout)  # config drop_caches=False: no system-wide drop
    assert applied == ["fsync", "posix_fadvise(DONTNEED)"]
    residency = [resident_bytes(p) for p in target.day_files(layout)]
    assert residency == [0] * len(residency)        # the kernel (mincore) holds none of their pages
    assert target.read_day(layout, layout.days[0]).rows == SCALE.rows_per_day


# --- disk full ------------------------------------------------------------------------------
@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs (needs root and mount rights); None when the mount is refused."""
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount_point)],
                              capture_output=True, check=False)
        mounted = done.returncode == 0
    except OSError:  # no mount command (macOS, Windows, minimal images)
        mounted = False
    if not mounted:
        yield None
        return
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)


@pytest.mark.parametrize("kind", FILE_KINDS)
def test_disk_full_is_a_clear_error_and_leaves_no_partial_file(kind, tiny_disk, tmp_path, monkeypatch):
    if tiny_disk is not None:
        root = tiny_disk  # a real full file system
    else:  # no mount rights: a full disk cannot be made, so make file writes fail as they would
        root = tmp_path / "root"
        monkeypatch.setattr(files_module, "open", _open_failing_after(32 * 1024), raising=False)
    target = make_target(kind, {"root": str(root), "chunk_rows": CHUNK_ROWS})
    with pytest.raises(TargetError, match=r"disk full while writing .*\.(pkl|parquet|feather): \d+ MB free"):
        target.prepare("taq", SCALE, StringMode.OBJECT)
    folder = target.layout_dir("taq", SCALE, StringMode.OBJECT)
    names = sorted(p.name for p in folder.iterdir())
    assert not any(name.endswith(".tmp") for name in names), names  # the partial temp file is gone
    assert not any(name.endswith(f".{EXT[kind]}") for name in names), names  # nothing looks cached


def _open_failing_after(limit: int):
    """``open`` whose binary writers raise ENOSPC once ``limit`` bytes were written."""
    import builtins

    class FullFile:
        def __init__(self, f):
            self._f, self._written = f, 0

        def write(self, data):
            self._written += len(data)
            if self._written > limit:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return self._f.write(data)

        def __getattr__(self, name):
            return getattr(self._f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._f.close()

    def fake_open(path, mode="r", *args, **kwargs):
        f = builtins.open(path, mode, *args, **kwargs)
        return FullFile(f) if "w" in mode else f
    return fake_open


@pytest.mark.parametrize("kind", FILE_KINDS)
@pytest.mark.parametrize("dataset", ["level2", "devices", "api45"])
def test_other_datasets_read_back_by_day_and_key(dataset, kind, tmp_path):
    ds = get_dataset(dataset)
    info = ds.info
    scale = Scale(days=1, rows_per_day=3_000, symbols=20)
    target = make_target(kind, {"root": str(tmp_path)})
    layout = target.prepare(dataset, scale, StringMode.ARROW)
    target.open(layout)
    day_frame = ds.day_frame(0, scale, StringMode.ARROW)
    assert_same_rows(target.read_day(layout, layout.days[0]).frame, day_frame, info)
    key = busiest_key(day_frame, info)
    got = target.read_slice(layout, layout.days[0], key).frame
    assert_same_rows(got, day_frame[day_frame[info.key_column].astype(object) == key], info)
    bars = target.minute_bars(layout, layout.days[0], key).frame
    pd.testing.assert_frame_equal(bars, reference_bars(day_frame, info, key))
