"""The read-day workload's ``columns`` parameter (report 000 read a day with every column and again
"without the two string columns"): resolved against the dataset's schema, read by every target its
own way (a select list, ``columns=``, a projection, a second pickle per day), with rows, logical
bytes and wire bytes of the columns actually returned; and the real runner with it."""
from __future__ import annotations

import datetime as dt
import os
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from workloads.datasets import get_dataset
from workloads.datasets.schema import Column, Scale, Schema, StringMode
from workloads.operations import get_workload
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore
from workloads.targets import make_target
from workloads.targets.base import TargetError
from workloads.targets.common.columns import column_schema, normalise_spec, resolve_columns
from workloads.targets.common.sizes import rows_bytes

SCALE = Scale(days=2, rows_per_day=6_000, symbols=20)
TAQ = get_dataset("taq").info.schema
NO_STRINGS = ("date", "time", "bid", "ofr", "bidsiz", "ofrsiz", "mode", "ex")
LISTED = "ofr, symbol,time"                     # in no particular order, one string column
LISTED_COLUMNS = ("symbol", "time", "ofr")      # what it resolves to: the schema's order

# (id, kind, extra config): every embedded target, and each reader path of those that have several
EMBEDDED = (
    ("pickle", "pickle", {}),
    ("parquet", "parquet", {}),
    ("feather", "feather", {}),
    ("duckdb", "duckdb", {}),
    ("clickhouse", "clickhouse", {}),
    ("arcticdb-day", "arcticdb", {"symbol_per": "day"}),
    ("arcticdb-instrument", "arcticdb", {"symbol_per": "instrument"}),
    ("hdf5-pytables", "hdf5", {"format": "table"}),
    ("hdf5-h5py", "hdf5", {"format": "table", "complib": "zlib", "complevel": 1}),
    ("hdf5-fixed", "hdf5", {"format": "fixed"}),
)
RUNNER_KINDS = ("pickle", "parquet", "feather", "duckdb", "clickhouse", "arcticdb-day", "hdf5-pytables")


def embedded_config(kind: str, folder: Path, extra: dict) -> dict:
    if kind in ("pickle", "parquet", "feather", "hdf5"):
        return {"root": str(folder), "drop_caches": False, **extra}
    if kind == "duckdb":
        return {"path": str(folder / "d.duckdb"), "threads": 1}
    if kind == "clickhouse":
        return {"path": str(folder / "chdb"), "drop_caches": False}
    return {"uri": f"lmdb://{folder / 'lmdb'}?map_size=256MB", "drop_caches": False, **extra}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """id -> (kind, config, layout), laid out once per module by a target closed afterwards (so a
    worker process of the runner can take chDB's folder or DuckDB's file)."""
    cache: dict[str, tuple[str, dict, object]] = {}
    ids = {case[0]: case for case in EMBEDDED}

    def get(case_id: str):
        if case_id not in cache:
            _, kind, extra = ids[case_id]
            config = embedded_config(kind, tmp_path_factory.mktemp(case_id), extra)
            target = make_target(kind, config)
            try:
                layout = target.prepare("taq", SCALE, StringMode.ARROW)
            finally:
                target.close()
            cache[case_id] = (kind, config, layout)
        return cache[case_id]
    return get


def as_plain(frame: pd.DataFrame) -> pd.DataFrame:
    """String columns as Python objects, so reads in any string representation compare by value."""
    out = frame.reset_index(drop=True).copy()
    for name in out.columns:
        if name in TAQ.names and TAQ.column(name).is_string:
            out[name] = out[name].astype(object)
    return out


def check_part(part, full, columns: tuple[str, ...]) -> None:
    """``part`` holds exactly ``columns``, equal to ``full``'s, counted in their own bytes."""
    assert list(part.frame.columns) == list(columns)
    pd.testing.assert_frame_equal(as_plain(part.frame), as_plain(full.frame[list(columns)]))
    assert part.rows == full.rows == SCALE.rows_per_day
    assert part.nbytes == rows_bytes(part.rows, column_schema(TAQ, columns)) < full.nbytes
    if part.wire_bytes is not None and full.wire_bytes is not None:
        assert part.wire_bytes <= full.wire_bytes


# --- the parameter ----------------------------------------------------------------------------------------
def test_the_parameter_takes_all_without_strings_or_a_list_and_resolves_in_the_schemas_order():
    workload = get_workload("read-day")
    (param,) = workload.params
    assert (param.name, param.default, param.kind, param.choices) == ("columns", "all", "choice",
                                                                      ("all", "without strings"))
    assert workload.validate({}) == {"columns": "all"}
    assert workload.validate({"columns": " Without  Strings "}) == {"columns": "without strings"}
    assert workload.validate({"columns": LISTED}) == {"columns": "ofr,symbol,time"}
    assert workload.validate({"columns": ["bid", "ofr"]}) == {"columns": "bid,ofr"}
    assert resolve_columns("all", TAQ) is None
    assert resolve_columns("without strings", TAQ) == NO_STRINGS          # report 000: symbol and mmid out
    assert resolve_columns(LISTED, TAQ) == LISTED_COLUMNS
    assert resolve_columns(",".join(reversed(TAQ.names)), TAQ) is None    # every column: the whole read
    level2 = get_dataset("level2").info.schema
    assert set(level2.names) - set(resolve_columns("without strings", level2)) == {"Market", "SecurityID"}


def test_a_bad_list_is_refused_with_the_names_a_user_can_pick():
    workload = get_workload("read-day")
    with pytest.raises(ValueError, match="empty name"):
        workload.validate({"columns": "bid,,ofr"})
    with pytest.raises(ValueError, match="bid named more than once"):
        workload.validate({"columns": "bid, bid"})
    with pytest.raises(ValueError) as raised:
        resolve_columns("bid,Symbol,spread", TAQ, "taq")
    message = str(raised.value)
    assert "taq has no column 'Symbol', 'spread'" in message
    assert "its columns are symbol, date, time, bid, ofr, bidsiz, ofrsiz, mode, ex, mmid" in message
    with pytest.raises(ValueError, match="no column 'spread'"):
        column_schema(TAQ, ("bid", "spread"), "taq")           # what a target's read_day checks


def test_without_strings_on_a_dataset_without_string_columns_says_so():
    # every built-in dataset has string columns (checked here); an imported one uses their schemas
    for name in ("taq", "level2", "devices", "api45"):
        assert any(c.is_string for c in get_dataset(name).info.schema.columns), name
    numbers = Schema((Column("time", "TIMESTAMP"), Column("value", "DOUBLE")))
    with pytest.raises(ValueError, match='"without strings" leaves nothing out: sensors has no string '
                                         r"\(SYMBOL/STRING\) column; its columns are time, value"):
        resolve_columns("without strings", numbers, "sensors")
    only_strings = Schema((Column("a", "SYMBOL"), Column("b", "STRING")))
    with pytest.raises(ValueError, match="leaves no column: every column of words is a string"):
        resolve_columns("without strings", only_strings, "words")
    assert normalise_spec(None) == normalise_spec("") == "all"


# --- the embedded targets -------------------------------------------------------------------------------
@pytest.mark.parametrize("case_id", [case[0] for case in EMBEDDED])
def test_a_day_read_without_strings_and_a_list_gives_just_those_columns(case_id, prepared):
    kind, config, layout = prepared(case_id)
    target = make_target(kind, config)
    target.open(layout)
    try:
        day = layout.days[1]
        full = target.read_day(layout, day)
        for spec in ("without strings", LISTED):
            columns = resolve_columns(spec, TAQ, "taq")
            target.prepare_columns(layout, columns)
            part = target.read_day(layout, day, columns)
            check_part(part, full, columns)
            assert set(part.phases) <= set(full.phases) | {"query"}     # the same parts, for fewer columns
            if kind == "pickle":
                with target.probe_mode():
                    probe = target.read_day(layout, day, columns)
                assert set(probe.phases) == {"io", "decode"}
    finally:
        target.close()


def test_pickle_reads_a_second_file_per_day_written_once_before(prepared):
    kind, config, layout = prepared("pickle")
    target = make_target(kind, config)
    target.open(layout)
    columns = resolve_columns("without strings", TAQ)
    folder = target.columns_dir(layout, columns)
    day = layout.days[0]
    if folder.exists():                                  # laid out by another test of this module
        for path in folder.iterdir():
            path.unlink()
    with pytest.raises(TargetError, match="call prepare_columns first"):
        target.read_day(layout, day, columns)
    target.prepare_columns(layout, columns)
    files = {d: folder / f"{d.isoformat()}.pkl" for d in layout.days}
    assert all(p.is_file() for p in files.values())
    written = {d: p.stat().st_mtime_ns for d, p in files.items()}
    target.prepare_columns(layout, columns)               # reused: nothing written again
    assert {d: p.stat().st_mtime_ns for d, p in files.items()} == written
    day_file = target.day_path(layout, day)
    later = max(written.values()) + 1_000_000_000
    os.utime(day_file, ns=(later, later))                 # the day file is newer: its copy is rebuilt
    target.prepare_columns(layout, columns)
    assert files[day].stat().st_mtime_ns > written[day] and files[layout.days[1]].stat().st_mtime_ns == written[layout.days[1]]
    result = target.read_day(layout, day, columns)
    # the timed call is pickle.load of that file: its size is what was read
    assert result.wire_bytes == files[day].stat().st_size < day_file.stat().st_size
    assert list(result.frame.columns) == list(columns)


def test_parquet_wire_bytes_are_the_columns_chunks_and_category_strings_stay_dictionaries(prepared):
    kind, config, layout = prepared("parquet")
    target = make_target(kind, config)
    target.open(layout)
    day = layout.days[0]
    full = target.read_day(layout, day)
    narrow = target.read_day(layout, day, ("bid",))
    assert narrow.wire_bytes < full.wire_bytes / 4       # one column chunk of ten, and the footer
    category = replace(layout, strings=StringMode.CATEGORY)
    part = target.read_day(category, day, LISTED_COLUMNS)
    assert isinstance(part.frame["symbol"].dtype, pd.CategoricalDtype)
    check_part(part, full, LISTED_COLUMNS)


def test_an_unknown_column_given_to_a_target_names_it(prepared):
    for case_id in ("duckdb", "parquet"):
        kind, config, layout = prepared(case_id)
        target = make_target(kind, config)
        target.open(layout)
        try:
            with pytest.raises(ValueError, match="taq has no column 'spread'; its columns are symbol, date"):
                target.read_day(layout, layout.days[0], ("bid", "spread"))
        finally:
            target.close()


# --- the runner -----------------------------------------------------------------------------------------
@pytest.fixture
def store(tmp_path):
    s = ResultsStore(tmp_path / "results")
    yield s
    s.close()


@pytest.mark.parametrize("case_id", RUNNER_KINDS)
def test_the_runner_reads_days_without_strings(case_id, prepared, store):
    kind, config, layout = prepared(case_id)
    scenario = Scenario(dataset="taq", scale=SCALE, target=kind, target_config=config, workload="read-day",
                        params={"columns": "without strings"}, users=(1,), operations=2, probe_ops=1)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id)
    measured = ops[ops["kind"] == "measured"]
    assert len(measured) == 2 and measured["ok"].all()
    assert (measured["rows"] == SCALE.rows_per_day).all()
    assert (measured["bytes"] == SCALE.rows_per_day * 37).all()     # TAQ's 45 B/row less two symbols
    if kind == "pickle":      # the second pickles' sizes, and probes splitting their load
        folder = make_target(kind, config).columns_dir(layout, NO_STRINGS)
        sizes = {(folder / f"{d.isoformat()}.pkl").stat().st_size for d in layout.days}
        assert set(measured["wire_bytes"]) <= sizes
        probes = ops[ops["kind"] == "probe"]
        assert len(probes) == 1 and probes["io_s"].notna().all() and probes["decode_s"].notna().all()


def test_a_list_the_dataset_does_not_have_fails_the_run_before_any_worker_starts(prepared, store):
    kind, config, _ = prepared("pickle")
    scenario = Scenario(dataset="taq", scale=SCALE, target=kind, target_config=config, workload="read-day",
                        params={"columns": "bid,spread"}, users=(1,), operations=1)
    result = Runner(scenario, store).run()
    assert result.status == "failed"
    assert "taq has no column 'spread'" in result.message
    assert store.workers(result.run_id).empty and store.ops(result.run_id).empty


# --- server targets -------------------------------------------------------------------------------------
def read_parts(target, layout, day: dt.date) -> None:
    """Measured and probe reads of some columns: just those, equal to the whole day's, fewer bytes
    on the wire where the target knows them."""
    full = target.read_day(layout, day)
    with target.probe_mode():
        full_probe = target.read_day(layout, day)
    for spec in ("without strings", LISTED):
        columns = resolve_columns(spec, TAQ, "taq")
        target.prepare_columns(layout, columns)
        part = target.read_day(layout, day, columns)
        check_part(part, full, columns)
        assert set(part.phases) == set(full.phases)
        if part.wire_bytes is not None:
            assert part.wire_bytes < full.wire_bytes
        with target.probe_mode():
            probe = target.read_day(layout, day, columns)
        check_part(probe, full, columns)
        assert set(probe.phases) == set(full_probe.phases)
        if probe.wire_bytes is not None:
            assert probe.wire_bytes < full_probe.wire_bytes


def test_dolphindb_sends_a_select_list(ddb_server):
    config = {"host": ddb_server.host, "port": ddb_server.port, "user": "admin", "password": "123456",
              "chunk_rows": 7_000, "timeout": 3, "query_timeout": 20}
    target = make_target("dolphindb", config)
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    target.open(layout, 0)
    try:
        read_parts(target, layout, layout.days[0])
        with target.probe_mode():
            probe = target.read_day(layout, layout.days[0], NO_STRINGS)
        assert set(probe.phases) == {"server", "transfer", "decode"}
        with pytest.raises(ValueError, match="has no column 'spread'"):
            target.read_day(layout, layout.days[0], ("spread",))
    finally:
        target.close()




@pytest.mark.parametrize("kind", ["questdb", "postgres", "mongodb"])
def test_server_targets_select_only_the_columns(kind, request):
    server = {"questdb": "questdb_server", "postgres": "pg_engine", "mongodb": "mongo_server"}[kind]
    engine = request.getfixturevalue(server)
    config = {**engine.config, "chunk_rows": 7_000, "batch_rows": 7_000}
    target = make_target(kind, config)
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    target.close()
    target = make_target(kind, config)
    target.open(layout)
    try:
        read_parts(target, layout, layout.days[1])
    finally:
        target.close()
