"""A user's own data on the embedded and file engines (issue 39, item 2): DuckDB, pickle, Parquet,
Feather, HDF5, ClickHouse (chDB, and a server through the stand-in) and ArcticDB lay out an imported
dataset from its schema, and read-day, slice-download, minute-bars (OHLC and volume) and upload run on
it through the real runner. Every value is checked against the rows the user's file was written from
(``tests/trades_file``), never against what the import stored: timestamps as the same instants to the
nanosecond (each engine here says it keeps ns), bars against pandas on those rows."""
from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.chserver.fixture import ch_server  # noqa: F401  (the ClickHouse stand-in, for the server mode)
from tests.trades_file import trades_table, write_trades_csv
from workloads.datasets.roles import Roles
from workloads.datasets.schema import Scale, StringMode
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario, own_scale
from workloads.targets import make_target

SCALE = own_scale(Scale(days=3))          # an import's scale: its days, nothing a generator would use
ENGINES = ("duckdb", "pickle", "parquet", "feather", "hdf5", "chdb", "clickhouse-server", "arcticdb")
_CLIENTS = {"hdf5": "tables", "chdb": "chdb", "clickhouse-server": "chdb", "arcticdb": "arcticdb",
            "arcticdb-by-instrument": "arcticdb"}


def _kind(engine: str) -> str:
    kinds = {"chdb": "clickhouse", "clickhouse-server": "clickhouse", "arcticdb-by-instrument": "arcticdb"}
    return kinds.get(engine, engine)


def _config(engine: str, root: Path, request) -> dict:
    if engine in _CLIENTS:
        pytest.importorskip(_CLIENTS[engine], reason=f"{engine} needs its client installed (its extra)")
    if engine == "duckdb":
        return {"path": str(root / "d.duckdb")}
    if engine == "chdb":
        return {"path": str(root / "chdb"), "drop_caches": False}
    if engine == "clickhouse-server":
        return request.getfixturevalue("ch_server").config(database=f"user_{uuid.uuid4().hex[:12]}")
    if engine.startswith("arcticdb"):
        return {"uri": f"lmdb://{root / 'lmdb'}?map_size=256MB",
                "symbol_per": "instrument" if engine.endswith("instrument") else "day"}
    return {"root": str(root / "files")}


def _source(rows: int = 6_000) -> pd.DataFrame:
    """The user's rows as written to their file, instants as naive UTC datetime64[ns]."""
    table = trades_table(rows=rows, days=3, symbols=6)
    frame = table.to_pandas()
    frame["ts"] = frame["ts"].dt.tz_convert("UTC").dt.tz_localize(None).astype("datetime64[ns]")
    frame["day"] = frame["ts"].dt.date
    return frame


@pytest.fixture
def trades(tmp_path) -> tuple[str, pd.DataFrame]:
    """The trades file imported as ``imp_trades`` with --key sym --price price --size qty."""
    from workloads.datasets.tick_import import import_source
    csv = write_trades_csv(tmp_path / "trades.csv", trades_table(rows=6_000, days=3, symbols=6))
    dataset = import_source(csv, "trades", Roles(time="ts", key="sym", price=("price",), size="qty"))
    return dataset.info.name, _source()


def _bars(rows: pd.DataFrame, time: str = "ts", price: str = "price", size: str = "qty") -> pd.DataFrame:
    """pandas' own minute bars of one key-day's rows (in time order), written here, not imported."""
    minute = rows[time].dt.floor("min")
    grouped = rows.groupby(minute, sort=True)
    out = pd.DataFrame({"open": grouped[price].first(), "high": grouped[price].max(), "low": grouped[price].min(),
                        "close": grouped[price].last()})
    if size:
        out["volume"] = grouped[size].sum().astype("int64")
    out.index.name = "minute"
    return out.reset_index()


def _sorted(frame: pd.DataFrame, by=("ts", "sym", "qty", "price")) -> pd.DataFrame:
    frame = frame.assign(**{c: frame[c].astype(str) for c in frame.columns if frame[c].dtype.kind not in "iufMb"})
    return frame.sort_values(list(by), kind="stable").reset_index(drop=True)


def _same_rows(got: pd.DataFrame, want: pd.DataFrame, columns=("ts", "sym", "price", "qty", "side", "venue")) -> None:
    assert list(got.columns) == list(columns)
    got, want = _sorted(got), _sorted(want[list(columns)])
    assert len(got) == len(want)
    assert got["ts"].dtype == "datetime64[ns]"
    # the same instants, to the nanosecond
    assert (got["ts"].astype("int64").to_numpy() == want["ts"].astype("int64").to_numpy()).all()
    pd.testing.assert_frame_equal(got.drop(columns="ts"), want.drop(columns="ts"), check_dtype=False)


@pytest.mark.parametrize("engine", ENGINES + ("arcticdb-by-instrument",))
def test_the_trades_read_back_as_the_file_holds_them_and_bars_add_volume(engine, trades, tmp_path, request):
    dataset, source = trades
    target = make_target(_kind(engine), _config(engine, tmp_path, request))
    layout = target.prepare(dataset, SCALE, StringMode.ARROW)
    assert target.describe()["time_precision"] == "ns"
    assert [str(d) for d in layout.days] == ["2024-03-04", "2024-03-05", "2024-03-06"]
    assert layout.rows == len(source)
    target.open(layout, 0)
    try:
        for day in layout.days:
            rows = source[source["day"] == day]
            _same_rows(target.read_day(layout, day).frame, rows)
            for key in ("S000", "S003"):
                key_rows = rows[rows["sym"] == key]
                _same_rows(target.read_slice(layout, day, key).frame, key_rows)
                bars = target.minute_bars(layout, day, key).frame
                want = _bars(key_rows)
                assert list(bars.columns) == ["minute", "open", "high", "low", "close", "volume"]
                assert str(bars["volume"].dtype) == "int64" and len(bars) == len(want) > 100
                pd.testing.assert_frame_equal(bars.astype({"minute": "datetime64[ns]"}), want, check_dtype=False)
        target.prepare_columns(layout, ("ts", "qty"))     # pickle: a file of those columns (the workload's step)
        part = target.read_day(layout, layout.days[0], ("ts", "qty")).frame
        assert list(part.columns) == ["ts", "qty"] and len(part) == (source["day"] == layout.days[0]).sum()
    finally:
        target.close()


@pytest.mark.parametrize("engine", ENGINES)
def test_the_four_workloads_run_on_the_trades_through_the_runner(engine, trades, tmp_path, request):
    dataset, source = trades
    config = _config(engine, tmp_path, request)
    keys = sorted(source["sym"].unique())
    day_rows = set(source.groupby("day").size())
    slice_rows = set(source.groupby(["day", "sym"]).size())
    bar_rows = {len(_bars(g)) for _, g in source.groupby(["day", "sym"])}
    assert len(keys) == 6
    store = ResultsStore(tmp_path / "results")
    runs = [("read-day", {}, day_rows), ("slice-download", {"rows_per_user": 2_000}, slice_rows),
            ("minute-bars", {}, bar_rows), ("upload-sweep", {"batch_sizes": [400], "rows_per_step": 1_200}, {400})]
    for workload, params, allowed in runs:
        scenario = Scenario(dataset=dataset, scale=SCALE, target=_kind(engine), target_config=config,
                            workload=workload, params=params, operations=4, warmup_ops=0, probe_ops=1)
        result = Runner(scenario, store).run()
        assert result.status == "completed", f"{workload}: {result.message}"
        ops = store.ops(result.run_id, kinds=("measured",))
        assert len(ops) and ops["ok"].all(), ops["error"].tolist()
        assert set(ops["rows"]) <= allowed, (workload, sorted(set(ops["rows"]) - allowed))
    assert ops["rows"].sum() == 1_200                      # the upload's rows, every one
    store.close()
    target = make_target(_kind(engine), config)
    layout = target.prepare(dataset, SCALE, StringMode.ARROW)
    assert layout.reused and layout.rows == len(source)


def _odd_file(path: Path) -> Path:
    """A file whose names need quoting (spaces, capitals, a reserved word), a BOOL and a SHORT, no key."""
    source = _source(rows=3_000)
    table = pa.table({"Trade Time": pa.array(source["ts"].to_numpy(), pa.timestamp("ns")),
                      "PRICE": source["price"].to_numpy(), "Size": source["qty"].to_numpy().astype("int32"),
                      "select": source["sym"].tolist(), "is buy": (source["side"] == "B").to_numpy(),
                      "lot": (source["qty"] // 100).to_numpy().astype("int16")})
    pq.write_table(table, path)
    return path


@pytest.mark.parametrize("engine", ENGINES)
def test_a_dataset_without_a_key_and_with_odd_names_reads_back_in_time_order(engine, tmp_path, request):
    from workloads.datasets import get_dataset
    from workloads.datasets.tick_import import import_source
    source = pq.read_table(_odd_file(tmp_path / "odd.parquet")).to_pandas()
    dataset = import_source(tmp_path / "odd.parquet", "odd", Roles(time="Trade Time")).info.name
    assert get_dataset(dataset).info.key_column == ""
    target = make_target(_kind(engine), _config(engine, tmp_path, request))
    layout = target.prepare(dataset, SCALE, StringMode.ARROW)
    target.open(layout, 0)
    try:
        for day in layout.days:
            want = source[source["Trade Time"].dt.date == day].reset_index(drop=True)
            got = target.read_day(layout, day).frame
            assert list(got.columns) == list(source.columns)
            if _kind(engine) != "clickhouse":   # a day read promises no order; these read their stored one
                assert got["Trade Time"].is_monotonic_increasing
            got = got.sort_values("Trade Time", kind="stable").reset_index(drop=True)
            assert (got["Trade Time"].astype("int64").to_numpy() == want["Trade Time"].astype("int64").to_numpy()).all()
            pd.testing.assert_frame_equal(got.drop(columns="Trade Time"), want.drop(columns="Trade Time"),
                                          check_dtype=False)
        with pytest.raises(ValueError, match=r"^dataset 'imp_odd' has no key column: a slice needs one"):
            target.read_slice(layout, layout.days[0], "S000")
    finally:
        target.close()
    if engine == "arcticdb":     # a symbol per key needs a key: refused in one line, nothing written
        from workloads.targets.base import TargetError
        by_key = make_target("arcticdb", {**_config(engine, tmp_path, request), "symbol_per": "instrument"})
        with pytest.raises(TargetError, match=r"^imp_odd has no key column: ArcticDB's symbol per instrument"):
            by_key.prepare(dataset, SCALE, StringMode.ARROW)


def _pair_file(path: Path) -> pd.DataFrame:
    """Quotes with a DATE and a time-of-day pair (as TAQ's), an INT key, a DOUBLE size and one column of
    each other type; written as Parquet, returned in the DataFrame convention (a time of day on 1970-01-01)."""
    rng = np.random.default_rng(11)
    n = 4_000
    tod = np.concatenate([np.sort(rng.integers(9 * 3600_000, 16 * 3600_000, n // 2)) for _ in range(2)]) * 10**6
    days = np.repeat(np.array(["2024-03-04", "2024-03-05"], dtype="datetime64[D]"), n // 2)
    table = pa.table({"Date": pa.array(days, pa.date32()), "Time": pa.array(tod, pa.time64("ns")),
                      "Id": rng.integers(1, 6, n).astype("int32"), "Bid": rng.normal(100, 1, n).round(2),
                      "Ask": rng.normal(100.1, 1, n).round(2), "Qty": (rng.random(n) * 10).round(3),
                      "ok": rng.random(n) < 0.5, "lot": rng.integers(0, 9, n).astype("int16"),
                      "px32": rng.random(n).astype("float32"), "Note": rng.choice(["a", "bb", "c c"], n),
                      "sec": pa.array((tod // 10**9).astype("int32"), pa.time32("s"))})
    pq.write_table(table, path)
    frame = table.to_pandas()
    frame["Date"] = pd.to_datetime(days).astype("datetime64[ns]")
    frame["Time"] = pd.Timestamp(0) + pd.to_timedelta(tod)
    frame["sec"] = pd.Timestamp(0) + pd.to_timedelta((tod // 10**9) * 10**9)
    return frame


@pytest.mark.parametrize("engine", ENGINES)
def test_a_date_and_time_of_day_pair_with_an_integer_key_and_every_type(engine, tmp_path, request):
    from workloads.datasets import get_dataset
    from workloads.datasets.tick_import import import_source
    source = _pair_file(tmp_path / "pair.parquet")
    roles = Roles(time="Date", time_of_day="Time", key="Id", price=("Bid", "Ask"), size="Qty")
    chosen = {"Note": "STRING", "sec": "SECOND"}       # as the user sets them in the import's type list
    dataset = import_source(tmp_path / "pair.parquet", "pair", roles, types=chosen).info.name
    types = {c.name: c.ddb_type for c in get_dataset(dataset).info.schema.columns}
    assert types == {"Date": "DATE", "Time": "TIME", "Id": "INT", "Bid": "DOUBLE", "Ask": "DOUBLE", "Qty": "DOUBLE",
                     "ok": "BOOL", "lot": "SHORT", "px32": "FLOAT", "Note": "STRING", "sec": "SECOND"}
    target = make_target(_kind(engine), _config(engine, tmp_path, request))
    layout = target.prepare(dataset, Scale(days=2), StringMode.ARROW)
    order = ["Date", "Time", "Id", "Bid", "Ask"]
    target.open(layout, 0)
    try:
        for day in layout.days:
            rows = source[source["Date"].dt.date == day]
            got = target.read_day(layout, day).frame
            assert list(got.columns) == list(source.columns) and len(got) == len(rows) == 2_000
            got = got.sort_values(order, kind="stable").reset_index(drop=True)
            want = rows.sort_values(order, kind="stable").reset_index(drop=True)
            pd.testing.assert_frame_equal(got.astype({"Note": str}), want.astype({"Note": str}), check_dtype=False)
            key_rows = rows[rows["Id"] == 3]
            assert len(target.read_slice(layout, day, "3").frame) == len(key_rows) > 300
            bars = target.minute_bars(layout, day, "3").frame
            want = _bars(key_rows.assign(mid=(key_rows["Bid"] + key_rows["Ask"]) / 2), "Time", "mid", "")
            want["volume"] = key_rows.groupby(key_rows["Time"].dt.floor("min"), sort=True)["Qty"].sum().to_numpy()
            assert str(bars["volume"].dtype) == "float64"
            pd.testing.assert_frame_equal(bars.astype({"minute": "datetime64[ns]"}), want, check_dtype=False)
    finally:
        target.close()


@pytest.mark.parametrize("engine", ["duckdb", "parquet"])
def test_the_import_workloads_csv_keeps_the_nanoseconds(engine, trades, tmp_path, request):
    """The import workload's CSV files of a NANOTIMESTAMP (ISO text to the ns) load back as the same
    instants: DuckDB's own CSV reader (CAST to TIMESTAMP_NS), and the shared parser the files use."""
    import duckdb
    from workloads.datasets.csv_files import csv_files
    dataset, source = trades
    target = make_target(engine, _config(engine, tmp_path, request))
    layout = target.prepare(dataset, SCALE, StringMode.ARROW)
    first = csv_files(dataset, SCALE, tmp_path / "csv")[0]
    assert target.import_csv(layout, first.path, first.day).rows == first.rows
    target.close()
    if engine == "duckdb":
        with duckdb.connect(str(tmp_path / "d.duckdb"), read_only=True) as con:
            got = con.execute(f'SELECT ts FROM "{target.import_table(layout)}"').df()
    else:
        got = pq.read_table(target.import_dir(layout)).to_pandas()
    want = source.loc[source["day"] == first.day, "ts"].astype("int64").sort_values().to_numpy()
    assert (got["ts"].astype("datetime64[ns]").astype("int64").sort_values().to_numpy() == want).all()
