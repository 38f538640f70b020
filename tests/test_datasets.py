"""The dataset generators: schemas, determinism across chunkings, market shapes, string modes."""
from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from workloads.datasets import DATASETS, get_dataset
from workloads.datasets._chunks import BLOCK_ROWS
from workloads.datasets.api45 import REPORT_ROW_BYTES, mean_row_bytes
from workloads.datasets.schema import Scale, StringMode

SMALL = Scale(days=2, rows_per_day=20_000, symbols=200)
ODD = Scale(days=1, rows_per_day=20_011, symbols=97, seed=7)


def _concat(chunks: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(chunks, ignore_index=True)


@pytest.fixture(scope="module")
def frames() -> dict[str, pd.DataFrame]:
    """Day 0 of every dataset at the small scale, Arrow strings."""
    return {name: dataset.day_frame(0, SMALL) for name, dataset in DATASETS.items()}


def _clock(series: pd.Series) -> pd.Series:
    """Time of day of a SECOND/TIME/TIMESTAMP column as a timedelta."""
    return series - series.dt.normalize()


# --- registry and schemas ----------------------------------------------------------------------
def test_registry_names_and_unknown_name_message():
    assert list(DATASETS) == ["taq", "level2", "devices", "api45"]
    assert get_dataset("level2") is DATASETS["level2"]
    with pytest.raises(ValueError, match="unknown dataset 'x': choose one of taq, level2, devices, api45"):
        get_dataset("x")


def test_taq_schema_is_the_seed_quotes_table():
    schema = get_dataset("taq").info.schema
    assert [(c.name, c.ddb_type) for c in schema.columns] == [
        ("symbol", "SYMBOL"), ("date", "DATE"), ("time", "SECOND"), ("bid", "DOUBLE"),
        ("ofr", "DOUBLE"), ("bidsiz", "INT"), ("ofrsiz", "INT"), ("mode", "INT"), ("ex", "CHAR"),
        ("mmid", "SYMBOL")]
    assert schema.row_bytes() == 45  # report 003: 45 bytes/row


def test_level2_schema_has_78_columns_in_seed_order():
    schema = get_dataset("level2").info.schema
    names = schema.names
    assert len(names) == 78
    assert names[:17] == ["UpdateTime", "TradeDate", "Market", "SecurityID", "PreCloPrice", "OpenPrice",
                          "HighPrice", "LowPrice", "LastPrice", "TradNumber", "TradVolume", "Turnover",
                          "TotalBidVol", "WAvgBidPri", "TotalAskVol", "WAvgAskPri", "IOPV"]
    assert names[17:27] == [f"AskPrice{i}" for i in range(1, 11)]
    assert names[57:67] == [f"NumOrdersB{i}" for i in range(1, 11)]
    assert names[-1] == "LocalTime"
    types = {c.name: c.ddb_type for c in schema.columns}
    assert types["UpdateTime"] == types["LocalTime"] == "TIME"
    assert types["AskVolume3"] == types["NumOrdersS10"] == "INT"
    assert types["BidPrice10"] == "DOUBLE"


def test_devices_schemas():
    devices = get_dataset("devices")
    assert [(c.name, c.ddb_type) for c in devices.info.schema.columns] == [
        ("time", "TIMESTAMP"), ("device_id", "SYMBOL"), ("battery_level", "INT"),
        ("battery_status", "SYMBOL"), ("battery_temperature", "DOUBLE"), ("bssid", "SYMBOL"),
        ("cpu_avg_1min", "DOUBLE"), ("cpu_avg_5min", "DOUBLE"), ("cpu_avg_15min", "DOUBLE"),
        ("mem_free", "LONG"), ("mem_used", "LONG"), ("rssi", "SHORT"), ("ssid", "SYMBOL")]
    assert devices.info_schema.names == ["device_id", "api_version", "manufacturer", "model", "os_name"]
    assert devices.info.extra["day_from"] == "time"


def test_api45_schema_mix_and_row_bytes(frames):
    schema = get_dataset("api45").info.schema
    assert len(schema.columns) == 45
    assert {c.ddb_type for c in schema.columns} == {"STRING", "INT", "LONG", "SYMBOL", "DOUBLE", "DATE", "TIME"}
    assert len(set(schema.names)) == 45
    assert mean_row_bytes(frames["api45"]) == REPORT_ROW_BYTES


@pytest.mark.parametrize("name", list(DATASETS))
def test_info_columns_exist_with_fitting_types(name):
    info = get_dataset(name).info
    schema = info.schema
    assert info.name == name
    assert schema.column(info.key_column).ddb_type == "SYMBOL"
    assert schema.column(info.date_column).ddb_type in ("DATE", "TIMESTAMP")
    assert schema.column(info.time_column).ddb_type in ("SECOND", "TIME", "TIMESTAMP")
    for column in info.price_columns:
        assert schema.column(column).ddb_type == "DOUBLE"


# --- row counts, chunking, dtypes --------------------------------------------------------------
@pytest.mark.parametrize("name", list(DATASETS))
def test_row_count_and_chunk_sizes(name):
    chunks = list(get_dataset(name).generate_day(0, ODD, chunk_rows=6_000))
    assert [len(c) for c in chunks] == [6_000, 6_000, 6_000, 2_011]
    assert all(list(c.index) == list(range(len(c))) for c in chunks)


@pytest.mark.parametrize("name", list(DATASETS))
@pytest.mark.parametrize("strings", [StringMode.ARROW, StringMode.OBJECT])
def test_chunking_does_not_change_the_data(name, strings):
    dataset = get_dataset(name)
    whole = dataset.day_frame(1, SMALL, strings)
    for chunk_rows in (1_000, 7_777, 19_999):
        pd.testing.assert_frame_equal(_concat(list(dataset.generate_day(1, SMALL, strings, chunk_rows))),
                                      whole, check_exact=True)


@pytest.mark.parametrize("name", list(DATASETS))
def test_chunks_larger_than_a_generation_block(name):
    """Chunks above BLOCK_ROWS are generated block by block and joined: same data."""
    dataset = get_dataset(name)
    scale = Scale(rows_per_day=BLOCK_ROWS * 2 + 3_001, symbols=60)
    joined = next(dataset.generate_day(0, scale, StringMode.CATEGORY, chunk_rows=scale.rows_per_day))
    small = _concat(list(dataset.generate_day(0, scale, StringMode.ARROW, chunk_rows=50_000)))
    strings = {c.name: "str" for c in dataset.info.schema.columns if c.is_string}
    pd.testing.assert_frame_equal(joined.astype(strings), small, check_exact=True)


@pytest.mark.parametrize("name", list(DATASETS))
def test_chunking_does_not_change_category_data(name):
    dataset = get_dataset(name)
    whole = dataset.day_frame(0, ODD, StringMode.ARROW)
    chunks = list(dataset.generate_day(0, ODD, StringMode.CATEGORY, chunk_rows=4_321))
    for chunk in chunks:
        for column in dataset.info.schema.columns:
            if column.is_string:
                assert isinstance(chunk[column.name].dtype, pd.CategoricalDtype)
    joined = dataset.day_frame(0, ODD, StringMode.CATEGORY)
    assert all(isinstance(joined[c.name].dtype, pd.CategoricalDtype)
               for c in dataset.info.schema.columns if c.is_string)
    pd.testing.assert_frame_equal(joined.astype({c.name: "str" for c in dataset.info.schema.columns if c.is_string}),
                                  whole, check_exact=True)


@pytest.mark.parametrize("name", list(DATASETS))
@pytest.mark.parametrize("strings", list(StringMode))
def test_dtypes_follow_the_schema_in_every_string_mode(name, strings):
    dataset = get_dataset(name)
    frame = next(dataset.generate_day(0, ODD, strings, chunk_rows=2_000))
    assert list(frame.columns) == dataset.info.schema.names
    for column in dataset.info.schema.columns:
        expected = column.pandas_dtype(strings)
        assert frame[column.name].dtype == expected, (column.name, frame[column.name].dtype, expected)
        if column.is_string and strings is StringMode.OBJECT:
            assert isinstance(frame[column.name].iloc[0], str)


def test_same_scale_same_data_and_the_seed_matters():
    taq = get_dataset("taq")
    first = taq.day_frame(0, ODD)
    pd.testing.assert_frame_equal(type(taq)().day_frame(0, ODD), first, check_exact=True)
    other = taq.day_frame(0, Scale(rows_per_day=ODD.rows_per_day, symbols=ODD.symbols, seed=8))
    assert not first[["bid", "ofr"]].equals(other[["bid", "ofr"]])


def test_another_process_generates_identical_data():
    scale = Scale(rows_per_day=5_000, symbols=50)
    script = (
        "import json, pandas as pd\n"
        "from workloads.datasets import DATASETS\n"
        "from workloads.datasets.schema import Scale\n"
        f"scale = Scale(rows_per_day={scale.rows_per_day}, symbols={scale.symbols})\n"
        "print(json.dumps({n: int(pd.util.hash_pandas_object(d.day_frame(0, scale)).sum() % 2**62)"
        " for n, d in DATASETS.items()}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    here = {n: int(pd.util.hash_pandas_object(d.day_frame(0, scale)).sum() % 2**62) for n, d in DATASETS.items()}
    assert json.loads(out.stdout) == here


def test_a_negative_seed_is_a_seed_like_any_other():
    frame = get_dataset("taq").day_frame(0, Scale(rows_per_day=1_000, symbols=10, seed=-5))
    assert len(frame) == 1_000


def test_days_differ_and_carry_their_date():
    taq = get_dataset("taq")
    day0, day1 = taq.day_frame(0, SMALL), taq.day_frame(1, SMALL)
    assert set(day0["date"]) == {pd.Timestamp("2007-08-23")}
    assert set(day1["date"]) == {pd.Timestamp("2007-08-24")}
    assert not np.array_equal(day0["bid"].to_numpy(), day1["bid"].to_numpy())


def test_bad_day_index_and_chunk_rows():
    taq = get_dataset("taq")
    with pytest.raises(ValueError, match="day index 2 is outside this scale's 2 day"):
        next(taq.generate_day(2, SMALL))
    with pytest.raises(ValueError, match="chunk rows"):
        next(taq.generate_day(0, SMALL, chunk_rows=0))


# --- calendar ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, first", [("taq", dt.date(2007, 8, 23)), ("level2", dt.date(2019, 9, 10)),
                                         ("devices", dt.date(2016, 11, 15)), ("api45", dt.date(2020, 6, 1))])
def test_trading_days_are_weekdays_from_the_default_start(name, first):
    days = get_dataset(name).trading_days(Scale(days=12))
    calendar = [first + dt.timedelta(days=i) for i in range(20)]
    assert days == [d for d in calendar if d.weekday() < 5][:12]


def test_start_on_a_weekend_moves_to_monday_and_bad_start_is_named():
    assert get_dataset("taq").trading_days(Scale(days=1, start="2007-08-25"))[0] == dt.date(2007, 8, 27)
    with pytest.raises(ValueError, match="start day '2007-13-01' is not a date"):
        get_dataset("taq").trading_days(Scale(start="2007-13-01"))


# --- keys and activity -----------------------------------------------------------------------
# Level-2 snapshots come at most every 3 s per security, so its activity is less skewed.
@pytest.mark.parametrize("name, top_over_median", [("taq", 10), ("level2", 2.5), ("api45", 10)])
def test_keys_are_unique_and_the_first_ones_most_active(name, top_over_median, frames):
    dataset = get_dataset(name)
    keys = dataset.keys(SMALL)
    assert len(keys) == len(set(keys)) == SMALL.symbols
    counts = frames[name][dataset.info.key_column].value_counts().reindex(keys, fill_value=0)
    assert counts.iloc[0] > top_over_median * counts.median()        # skewed, Zipf-like
    assert counts.iloc[:20].mean() > 3 * counts.iloc[-20:].mean()


def test_tickers_look_like_tickers():
    keys = get_dataset("taq").keys(Scale(symbols=3_000))
    assert all(k.isascii() and k.isupper() and k.isalpha() and 1 <= len(k) <= 5 for k in keys)
    assert get_dataset("taq").keys(Scale(symbols=50)) == keys[:50]  # more symbols extend the list


# --- TAQ ---------------------------------------------------------------------------------------
def test_taq_quotes(frames):
    q = frames["taq"]
    assert (q["bid"] > 0).all() and (q["bid"] < q["ofr"]).all()
    cents = q[["bid", "ofr"]].to_numpy() * 100
    assert np.allclose(cents, np.round(cents))
    spread = q["ofr"] / q["bid"] - 1
    assert spread.median() < 0.01
    clock = _clock(q["time"])
    assert clock.min() >= pd.Timedelta("09:30:00") and clock.max() <= pd.Timedelta("15:59:59")
    assert q["time"].is_monotonic_increasing
    assert (q["time"].dt.floor("s") == q["time"]).all()  # SECOND resolution
    assert (q["bidsiz"] >= 1).all() and (q["ofrsiz"] >= 1).all() and q["bidsiz"].median() <= 5
    assert set(q["ex"].map(chr)) <= set("TPNZBICDXAMWQ") and q["ex"].nunique() > 8
    assert set(q["mode"]) <= {12, 1, 2, 3, 4, 6, 10} and (q["mode"] == 12).mean() > 0.7
    assert q["mmid"].str.fullmatch(r"[A-Z]{4}").all()


def test_taq_activity_is_busier_at_open_and_close(frames):
    minutes = (_clock(frames["taq"]["time"]) // pd.Timedelta("1min")).value_counts()
    open_minute, close_minute = minutes[9 * 60 + 30], minutes[15 * 60 + 59]
    midday = minutes[12 * 60 + 30]
    assert open_minute > 2 * midday and close_minute > 1.5 * midday


def test_taq_price_paths_are_continuous_per_symbol(frames):
    q = frames["taq"]
    top = q[q["symbol"] == get_dataset("taq").keys(SMALL)[0]]
    mid = (top["bid"] + top["ofr"]) / 2
    step = (mid.pct_change().abs()).dropna()
    assert step.quantile(0.99) < 0.01  # no jumps between consecutive quotes of one symbol
    assert mid.max() / mid.min() < 1.3  # a day's range, not noise around zero


# --- level 2 -------------------------------------------------------------------------------------
def test_level2_book_shape(frames):
    f = frames["level2"]
    ask = f[[f"AskPrice{i}" for i in range(1, 11)]].to_numpy()
    bid = f[[f"BidPrice{i}" for i in range(1, 11)]].to_numpy()
    assert (np.diff(ask, axis=1) > 0).all() and (np.diff(bid, axis=1) < 0).all()
    assert (bid[:, 0] < ask[:, 0]).all() and (bid > 0).all()
    volumes = f[[f"{side}Volume{i}" for side in ("Ask", "Bid") for i in range(1, 11)]].to_numpy()
    assert (volumes > 0).all() and (volumes % 100 == 0).all()
    assert (f[[f"NumOrdersB{i}" for i in range(1, 11)]].to_numpy() >= 1).all()
    assert (f["WAvgBidPri"] <= f["BidPrice1"]).all() and (f["WAvgAskPri"] >= f["AskPrice1"]).all()
    assert (f["TotalBidVol"] >= f[[f"BidVolume{i}" for i in range(1, 11)]].sum(axis=1)).all()
    assert (f["IOPV"] == 0).all()


def test_level2_sessions_ids_and_limits(frames):
    f = frames["level2"]
    clock = _clock(f["UpdateTime"])
    morning = (clock >= pd.Timedelta("09:30:00")) & (clock < pd.Timedelta("11:30:00"))
    afternoon = (clock >= pd.Timedelta("13:00:00")) & (clock < pd.Timedelta("15:00:00"))
    assert (morning | afternoon).all() and morning.any() and afternoon.any()
    assert f["UpdateTime"].is_monotonic_increasing
    assert (f["LocalTime"] > f["UpdateTime"]).all()
    assert f["SecurityID"].str.fullmatch(r"\d{6}").all()
    expected_market = np.where(f["SecurityID"].str.startswith("6"), "SH", "SZ")
    assert (f["Market"].to_numpy() == expected_market).all()
    assert (f["LastPrice"] <= (f["PreCloPrice"] * 1.1).round(2) + 1e-9).all()
    assert (f["LastPrice"] >= (f["PreCloPrice"] * 0.9).round(2) - 1e-9).all()
    assert (f["LowPrice"] <= f["LastPrice"]).all() and (f["LastPrice"] <= f["HighPrice"]).all()


def test_level2_running_totals_never_go_back(frames):
    f = frames["level2"]
    for _, one in f.groupby("SecurityID", observed=True):
        for column in ("TradNumber", "TradVolume", "Turnover", "HighPrice"):
            assert one[column].is_monotonic_increasing, column
        assert one["LowPrice"].is_monotonic_decreasing
        assert one["OpenPrice"].nunique() == 1 and one["PreCloPrice"].nunique() == 1
    assert f["TradVolume"].max() > 0


# --- devices -----------------------------------------------------------------------------------
def test_devices_readings(frames):
    r = frames["devices"]
    devices = get_dataset("devices").keys(SMALL)
    per_point = r.groupby("time")["device_id"].nunique()
    assert (per_point == SMALL.symbols).all()            # 20,000 rows / 200 devices = 100 full points
    assert len(per_point) == SMALL.rows_per_day // SMALL.symbols
    gaps = per_point.index.to_series().diff().dropna().unique()
    assert list(gaps) == [pd.Timedelta(days=1) / len(per_point)]  # evenly spread over the day
    assert r["time"].dt.normalize().unique().tolist() == [pd.Timestamp("2016-11-15")]
    assert set(r["device_id"]) == set(devices) and devices[0] == "demo000000"
    assert r["battery_level"].between(0, 100).all()
    assert set(r["battery_status"]) <= {"discharging", "charging", "full"}
    assert r["rssi"].between(-100, -20).all()
    totals = (r["mem_free"] + r["mem_used"]).groupby(r["device_id"]).nunique()
    assert (totals == 1).all()
    assert (r["cpu_avg_1min"].std() > r["cpu_avg_15min"].std())
    assert r["bssid"].str.fullmatch(r"([0-9A-F]{2}:){5}[0-9A-F]{2}").all()


def test_devices_info_table():
    devices = get_dataset("devices")
    for strings in StringMode:
        info = devices.info_frame(SMALL, strings)
        assert info["device_id"].astype(str).tolist() == devices.keys(SMALL)
        assert list(info.columns) == devices.info_schema.names
        assert all(info[c.name].dtype == c.pandas_dtype(strings) for c in devices.info_schema.columns)
    info = devices.info_frame(SMALL)
    assert info["model"].nunique() > 3 and info["os_name"].nunique() > 3


# --- api45 -----------------------------------------------------------------------------------------
def test_api45_blotter(frames):
    b = frames["api45"]
    assert b["order_id"].is_unique and b["client_order_id"].is_unique and b["venue_order_id"].is_unique
    assert b["order_time"].is_monotonic_increasing
    assert (b["filled_qty"] <= b["order_qty"]).all()
    assert (b["filled_qty"] + b["leaves_qty"] <= b["order_qty"]).all()
    assert (b["bid"] < b["ask"]).all()
    assert (b["settle_date"] - b["trade_date"]).dt.days.isin([2, 4]).all()  # T+2 business days
    assert b["venue_order_id"].str[:4].equals(b["exchange"].astype(str))
    assert ((b["status"] == "REJECTED") == (b["reject_code"] != 0)).all()
    assert (b["notional"] == (b["filled_qty"] * b["avg_price"]).round(2)).all()


def _levels_from_the_whole_prefix(rng, base, daily_vol, day_index):
    """The daily walk's definition: the prefix of days drawn in one go and summed."""
    shocks = rng.standard_normal((day_index + 1, 2, len(base)))
    log_close = np.log(base) + np.cumsum(daily_vol * shocks[:, 0] - daily_vol ** 2 / 2, axis=0)
    previous = np.exp(log_close[-2]) if day_index else base.astype(np.float64)
    return previous, previous * np.exp(0.25 * daily_vol * shocks[-1, 1]), np.exp(log_close[-1])


def test_the_daily_walk_continued_day_by_day_is_the_whole_prefix_bit_for_bit():
    from workloads.datasets._shapes import daily_levels
    rng = np.random.default_rng(1)
    base, vol = rng.uniform(5, 50, 300), rng.uniform(0.01, 0.05, 300)
    for day in (0, 1, 2, 5, 30, 3, 0, 40, 39, 100):      # forward, back (the walk starts again), forward
        want = _levels_from_the_whole_prefix(np.random.default_rng(7), base, vol, day)
        got = daily_levels(np.random.default_rng(7), base, vol, day)
        assert all(np.array_equal(w, g) for w, g in zip(want, got)), day
    other = daily_levels(np.random.default_rng(8), base, vol, 100)     # another seed: another walk
    assert not np.array_equal(other[2], got[2])
