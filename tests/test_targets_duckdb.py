"""DuckDB target on a real database file, with real worker processes for the locking rules."""
from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tests.test_targets_files import (stored_order, SCALE, assert_phases, assert_same_rows, assert_string_dtypes,
                                      busiest_key, reference_bars, timed)
from workloads.datasets import get_dataset
from workloads.datasets.schema import StringMode
from workloads.targets import make_target
from workloads.targets.base import TargetError
from workloads.targets.duckdb.dialect import MANIFEST_TABLE, table_name

CHUNK_ROWS = 7_000


@pytest.fixture(scope="module")
def taq():
    return get_dataset("taq")


@pytest.fixture(scope="module")
def db_path(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("duckdb_target") / "data.duckdb"


def config(path: Path, **more) -> dict:
    return {"path": str(path), "chunk_rows": CHUNK_ROWS, "threads": 2, "drop_caches": False, **more}


@pytest.fixture(scope="module")
def prepared(db_path):
    """The layout, and the database file's size just after prepare (later tests add tables)."""
    layout = make_target("duckdb", config(db_path)).prepare("taq", SCALE, StringMode.ARROW)
    return layout, db_path.stat().st_size


@pytest.fixture(scope="module")
def layout(prepared):
    return prepared[0]


@pytest.fixture(scope="module")
def day_frames(taq):
    return [taq.day_frame(i, SCALE, StringMode.OBJECT) for i in range(SCALE.days)]


@pytest.fixture
def target(db_path, layout):
    t = make_target("duckdb", config(db_path))
    t.open(layout)
    yield t
    t.close()




def with_layout_strings(layout, mode: StringMode):
    from dataclasses import replace
    return replace(layout, strings=mode)


# --- prepare --------------------------------------------------------------------------------
def test_prepare_builds_one_table_and_a_manifest(prepared, db_path, taq):
    layout, size_after_prepare = prepared
    table = table_name("taq", SCALE)
    assert layout.rows == SCALE.rows_per_day * SCALE.days and not layout.reused
    assert layout.days == tuple(taq.trading_days(SCALE))
    assert layout.footprint_bytes == size_after_prepare > 0
    with duckdb.connect(str(db_path), read_only=True) as con:
        assert con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] == layout.rows
        types = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns "
                                 "WHERE table_name = ?", [table]).fetchall())
        complete, days = con.execute(f"SELECT complete, days FROM {MANIFEST_TABLE} WHERE table_name = ?",
                                     [table]).fetchone()
    assert types["symbol"] == "VARCHAR" and types["date"] == "DATE" and types["bid"] == "DOUBLE"
    assert complete is True and str(layout.days[0]) in days


def test_second_prepare_is_reused_without_generating(layout, db_path, monkeypatch):
    size = db_path.stat().st_size

    def must_not_generate(*args, **kwargs):
        raise AssertionError("a reused layout must not generate data")
    monkeypatch.setattr(type(get_dataset("taq")), "generate_day", must_not_generate)
    again = make_target("duckdb", config(db_path)).prepare("taq", SCALE, StringMode.CATEGORY)
    assert again.reused and again.rows == layout.rows and again.days == layout.days
    assert again.strings is StringMode.CATEGORY  # one table serves every string mode
    assert db_path.stat().st_size == size


def test_interrupted_prepare_resumes_at_the_missing_day(tmp_path, taq, monkeypatch):
    real = type(taq).generate_day

    def crash_in_second_day(self, day_index, scale, strings=StringMode.ARROW, chunk_rows=1_000_000):
        for n, chunk in enumerate(real(self, day_index, scale, strings, chunk_rows)):
            if day_index == 1 and n == 1:
                raise RuntimeError("simulated crash")
            yield chunk
    monkeypatch.setattr(type(taq), "generate_day", crash_in_second_day)
    path = tmp_path / "crash.duckdb"
    with pytest.raises(RuntimeError, match="simulated crash"):
        make_target("duckdb", config(path)).prepare("taq", SCALE, StringMode.ARROW)
    with duckdb.connect(str(path), read_only=True) as con:  # the half day was rolled back
        assert con.execute(f'SELECT count(*) FROM "{table_name("taq", SCALE)}"').fetchone()[0] \
            == SCALE.rows_per_day

    generated = []

    def record(self, day_index, *args, **kwargs):
        generated.append(day_index)
        yield from real(self, day_index, *args, **kwargs)
    monkeypatch.setattr(type(taq), "generate_day", record)
    layout = make_target("duckdb", config(path)).prepare("taq", SCALE, StringMode.ARROW)
    assert set(generated) == {1}
    assert layout.rows == SCALE.rows_per_day * SCALE.days


# --- reads ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", list(StringMode), ids=lambda m: m.value)
def test_read_day_returns_the_generated_day_in_each_string_mode(mode, target, layout, day_frames, taq):
    lay = with_layout_strings(layout, mode)
    for index, day in enumerate(lay.days):
        result, wall = timed(lambda: target.read_day(lay, day))
        assert result.rows == SCALE.rows_per_day and result.nbytes > 0
        assert_phases(result, wall, {"query", "decode"})
        assert_string_dtypes(result.frame, taq.info, mode)
        assert_same_rows(result.frame, stored_order(day_frames[index], taq.info), taq.info)


def test_read_slice_holds_only_that_key_and_day(target, layout, day_frames, taq):
    info = taq.info
    lay = with_layout_strings(layout, StringMode.OBJECT)
    want_day = day_frames[0]
    for key in (busiest_key(want_day, info), layout.keys_sample[-1]):
        result, wall = timed(lambda: target.read_slice(lay, lay.days[0], key))
        want = stored_order(want_day[want_day[info.key_column].astype(object) == key], info)
        assert result.rows == len(want)
        assert set(result.frame[info.key_column]) <= {key}
        assert set(result.frame[info.date_column].dt.date) <= {lay.days[0]}
        assert_same_rows(result.frame, want, info)
        assert_phases(result, wall, {"query", "decode"})
    assert target.read_slice(lay, lay.days[0], "NO_SUCH_KEY").rows == 0


def test_slice_parameters_are_bound_not_formatted(target, layout):
    # A key full of SQL must just match nothing.
    assert target.read_slice(layout, layout.days[0], "x' OR '1'='1").rows == 0


def test_minute_bars_match_an_independent_pandas_reference(target, layout, day_frames, taq):
    for index in range(SCALE.days):
        key = busiest_key(day_frames[index], taq.info)
        result, wall = timed(lambda: target.minute_bars(layout, layout.days[index], key))
        want = reference_bars(day_frames[index], taq.info, key)
        assert result.rows == len(want) > 10
        pd.testing.assert_frame_equal(result.frame, want, check_dtype=True)
        assert_phases(result, wall, {"query", "decode"})


def test_drop_cache_reopens_and_lists_what_it_did(target, layout):
    assert target.drop_process_cache(layout) == ["duckdb reconnect"]
    assert target.drop_cache(layout) == ["fsync", "posix_fadvise(DONTNEED)"]
    assert target.read_day(layout, layout.days[0]).rows == SCALE.rows_per_day


# --- appends --------------------------------------------------------------------------------
def test_append_adds_rows_to_the_layouts_append_table(target, layout, day_frames):
    before = target.appended_rows(layout)
    batch = day_frames[0].iloc[:500]
    result, wall = timed(lambda: target.append(layout, batch))
    assert result.rows == 500 and result.nbytes > 0
    assert_phases(result, wall, {"decode", "query"})
    assert result.extra["lock_retries"] == 0 and result.extra["serialised"] is True
    assert target.appended_rows(layout) == before + 500
    target.append(layout, batch, table="upload")  # a named table is created on first use
    assert target.row_count(layout, "upload") == 500
    assert target.row_count(layout) == layout.rows  # the day table is untouched


def test_disk_full_while_loading_is_a_clear_error(tmp_path):
    import subprocess
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(tiny)],
                                 capture_output=True, check=False).returncode == 0
    except OSError:
        mounted = False
    if not mounted:
        pytest.skip("needs a small tmpfs (root with mount rights) to fill a disk for real")
    try:
        target = make_target("duckdb", config(tiny / "full.duckdb"))
        with pytest.raises(TargetError, match=r"disk full while writing .*full\.duckdb: \d+ MB free"):
            target.prepare("taq", SCALE, StringMode.ARROW)
    finally:
        subprocess.run(["umount", str(tiny)], check=False)


def test_reading_a_missing_database_names_the_file(tmp_path, layout):
    target = make_target("duckdb", {"path": str(tmp_path / "absent.duckdb")})
    with pytest.raises(TargetError, match=r"absent\.duckdb does not exist: prepare"):
        target.open(layout)


# --- several real processes -----------------------------------------------------------------
def _read_in_process(path: str, layout, barrier, results) -> None:
    target = make_target("duckdb", {"path": path, "threads": 1})
    target.open(layout)             # read-only open
    barrier.wait(timeout=60)        # both processes now hold the file at once
    rows = target.read_day(layout, layout.days[0]).rows
    barrier.wait(timeout=60)
    target.close()
    results.put(rows)


def _append_in_process(path: str, layout, batches: int, rows: int, barrier, results) -> None:
    target = make_target("duckdb", {"path": path, "threads": 1})
    frame = get_dataset("taq").day_frame(0, layout.scale, StringMode.ARROW).iloc[:rows]
    target.open(layout)
    barrier.wait(timeout=60)
    turns = []
    for _ in range(batches):
        extra = target.append(layout, frame, table="concurrent").extra
        turns.append((extra["turn_asked"], extra["turn_taken"], extra["turn_released"], extra["lock_wait_s"]))
    results.put(turns)


def _run_processes(target_fn, args_per_process) -> list:
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    barrier = ctx.Barrier(len(args_per_process))
    procs = [ctx.Process(target=target_fn, args=(*args, barrier, results)) for args in args_per_process]
    for p in procs:
        p.start()
    out = [results.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return out


def test_two_processes_read_the_file_at_once_read_only(db_path, layout):
    rows = _run_processes(_read_in_process, [(str(db_path), layout), (str(db_path), layout)])
    assert rows == [SCALE.rows_per_day, SCALE.rows_per_day]


def test_appends_from_two_processes_are_serialised_and_all_land(db_path, layout):
    batches, rows = 6, 300
    turns = _run_processes(_append_in_process, [(str(db_path), layout, batches, rows)] * 2)
    held = sorted((taken, released) for process in turns for _, taken, released, _ in process)
    # one writer at a time: every turn starts after the one before it ended
    assert all(later[0] >= earlier[1] for earlier, later in zip(held, held[1:]))
    # started together, appends asked while the other process held the file, and waited for it
    a, b = turns
    blocked = [(asked, wait, other_released) for mine, others in ((a, b), (b, a))
               for asked, _, _, wait in mine for _, other_taken, other_released, _ in others
               if other_taken <= asked < other_released]
    assert blocked, "no append ever found the file taken by the other process"
    assert all(wait >= other_released - asked - 0.005 for asked, wait, other_released in blocked)
    target = make_target("duckdb", config(db_path))
    assert target.row_count(layout, "concurrent") == 2 * batches * rows
    target.close()


class _QueueHolder:
    """Holds the Tickbench writer queue of a DuckDB file, as another appending process would."""

    def __init__(self, db_path: Path):
        import fcntl
        import os
        self._fd = os.open(f"{db_path}.writers.lock", os.O_CREAT | os.O_RDWR)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def close(self) -> None:
        import os
        os.close(self._fd)


@pytest.mark.parametrize("holder_kind", ["duckdb-writer", "writer-queue"])
def test_an_append_waits_for_the_writer_and_reports_the_wait(holder_kind, db_path, layout):
    if holder_kind == "writer-queue":
        pytest.importorskip("fcntl")
    # Another writer holds the file: a program with DuckDB open, or a Tickbench process's turn.
    holder = duckdb.connect(str(db_path)) if holder_kind == "duckdb-writer" else _QueueHolder(db_path)
    ctx = mp.get_context("spawn")
    results, trying = ctx.Queue(), ctx.Event()
    child = ctx.Process(target=_append_once, args=(str(db_path), layout, trying, results))
    child.start()
    assert trying.wait(timeout=120)        # the child is about to open the file...
    time.sleep(0.5)                        # ...and must wait for half a second
    holder.close()
    extra, query_s = results.get(timeout=120)
    child.join(timeout=60)
    assert child.exitcode == 0
    assert 0.3 < extra["lock_wait_s"] <= query_s
    if holder_kind == "duckdb-writer":
        assert extra["lock_retries"] > 0   # DuckDB refused the open, we retried
    else:
        assert extra["queue_polls"] > 0 and extra["lock_retries"] == 0  # queued, never refused


def _append_once(path: str, layout, trying, results) -> None:
    target = make_target("duckdb", {"path": path, "threads": 1})
    frame = get_dataset("taq").day_frame(0, layout.scale, StringMode.ARROW).iloc[:100]
    trying.set()
    result = target.append(layout, frame, table="waited")
    results.put((result.extra, result.phases["query"]))


def test_a_lock_held_too_long_is_a_clear_error(db_path, layout, day_frames):
    holder = duckdb.connect(str(db_path))
    try:
        ctx = mp.get_context("spawn")
        results = ctx.Queue()
        child = ctx.Process(target=_append_expecting_timeout, args=(str(db_path), layout, results))
        child.start()
        message = results.get(timeout=120)
        child.join(timeout=60)
    finally:
        holder.close()
    assert "stayed locked by another process" in message and "one writing process" in message


def _append_expecting_timeout(path: str, layout, results) -> None:
    target = make_target("duckdb", {"path": path, "lock_timeout_s": 0.3})
    frame = get_dataset("taq").day_frame(0, layout.scale, StringMode.ARROW).iloc[:10]
    try:
        target.append(layout, frame)
        results.put("no error")
    except TargetError as exc:
        results.put(str(exc))


# --- every dataset --------------------------------------------------------------------------
@pytest.mark.parametrize("dataset", ["taq", "level2", "devices", "api45"])
def test_every_dataset_reads_back_by_day_and_key(dataset, tmp_path):
    from workloads.datasets.schema import Scale
    ds = get_dataset(dataset)
    info = ds.info
    scale = Scale(days=2, rows_per_day=3_000, symbols=20)
    target = make_target("duckdb", config(tmp_path / "all.duckdb"))
    layout = target.prepare(dataset, scale, StringMode.OBJECT)
    target.open(layout)
    try:
        day_frame = ds.day_frame(1, scale, StringMode.OBJECT)
        day = target.read_day(layout, layout.days[1])
        assert day.rows == len(day_frame)  # devices: the day is the date of its "time" stamps
        key = busiest_key(day_frame, info)
        got = target.read_slice(layout, layout.days[1], key).frame
        want = stored_order(day_frame[day_frame[info.key_column].astype(object) == key], info)
        assert_same_rows(got, want, info)
        bars = target.minute_bars(layout, layout.days[1], key).frame
        pd.testing.assert_frame_equal(bars, reference_bars(day_frame, info, key))
    finally:
        target.close()


def test_each_call_leaves_the_connection_ready_for_the_next_read(target, layout, tmp_path):
    """DuckDB 2 keeps a connection busy until a result is read to its end: every call that returns
    one row (a count, an INSERT's, a COPY's) reads it to the end, so a read can follow on the same
    connection (a map-reduce then a day read failed with "unfinished result" before)."""
    day = layout.days[0]
    calls = [lambda: target.mapreduce_minute_bars(layout, layout.days[:1]),
             lambda: target.export_csv(layout, day, tmp_path / "day.csv"),
             lambda: target.row_count(layout),
             lambda: target.read_day(layout, day)]
    for call in calls:
        call()
        assert target.read_day(layout, day).rows == SCALE.rows_per_day
        assert len(target.read_slice(layout, day, layout.keys_sample[0]).frame) > 0
