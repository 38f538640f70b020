"""The ``mongodb`` dialect of the query suites: a query's text is the name of a function here that
builds its aggregation pipeline (clearer than JSON: comments, shared helpers, no placeholders).

Each function takes the query's values (dates as datetimes at midnight UTC, times of day as
datetimes on 1970-01-01, as the target stores them) and ``names`` (collection of each table the
texts name: ``quotes``/``readings``/``info``) and returns (the table it aggregates, the pipeline).
The pipeline's last stage projects exactly the suite's columns (no ``_id``); the target builds the
frame in the suite's column order.

Operators of MongoDB 4.x that the wire-protocol stand-in used by the tests also runs, wherever
they can say it: time buckets by ``$subtract`` of the milliseconds ``$mod`` the bucket
(``$dateTrunc`` is 5.0+ and the stand-in lacks it); the sample standard deviation from sums
(``$stdDevSamp`` exists in MongoDB but not in the stand-in); pivots as ``$avg`` of ``$cond`` (a
missing value is ignored by ``$avg``).

The tick pack (suite ``tick``): the as-of join as a ``$lookup`` with a pipeline (per trade, its
symbol's quotes of the day at or before its time, the latest by time and arrival ordinal ``_seq``,
one), VWAP by ``$group``, the snapshot by ``$sort`` then ``$group`` with ``$last``, the year-high
by ``$group`` with ``$max``. The rolling mid is a range window of ``$setWindowFields`` (5.0+), as
a MongoDB user writes it: no 4.x stage has a window by time.

The fills d14-d16 have no 4.x form: they use ``$setWindowFields`` (5.0+) with ``$locf`` (5.2+) and
``$linearFill`` (5.3+), as a MongoDB user writes them. A server without them refuses the stage or
the window function; the target turns that refusal into the query's verdict, "this server does not
support $setWindowFields" (``NotSupported``: the server's limit, named from its own error). The
stand-in refuses ``$setWindowFields``; the pipelines' meaning is checked in the tests by evaluating
their window stages as MongoDB documents them against the pandas suite's fills and rolling mid.
"""
from __future__ import annotations

from typing import Any

from workloads.targets.mongodb.dialect import SEQ      # the quotes' arrival ordinal

MS_MINUTE = 60_000
MS_HOUR = 3_600_000


def _bucket(field: str, ms: int) -> dict:
    """A time floored to ``ms`` milliseconds (times are after 1970: the remainder is positive)."""
    return {"$subtract": [f"${field}", {"$mod": [{"$toLong": f"${field}"}, ms]}]}


def _mid() -> dict:
    return {"$divide": [{"$add": ["$bid", "$ofr"]}, 2]}


def _std_samp(n: str, s: str, ss: str) -> dict:
    """sqrt((Σx² - (Σx)²/n) / (n - 1)) from the group's count, sum and sum of squares."""
    return {"$cond": [{"$gt": [f"${n}", 1]},
                      {"$sqrt": {"$max": [0, {"$divide": [
                          {"$subtract": [f"${ss}", {"$divide": [{"$multiply": [f"${s}", f"${s}"]}, f"${n}"]}]},
                          {"$subtract": [f"${n}", 1]}]}]}}, None]}


def _project(*columns: str, **computed: Any) -> dict:
    """The last stage: the suite's columns (``computed`` ones as expressions), no ``_id``."""
    stage: dict[str, Any] = {"_id": 0}
    for name in columns:
        stage[name] = computed.get(name, 1)
    return {"$project": stage}


def _span(v: dict) -> dict:
    return {"time": {"$gte": v["start"], "$lt": v["end"]}}


# --- report 001: taq ----------------------------------------------------------------------------
def taq_first_thousand(v, names):
    cols = ("symbol", "date", "time", "bid", "ofr", "bidsiz", "ofrsiz", "mode", "ex", "mmid")
    return "quotes", [
        {"$match": {"date": v["day"], "symbol": v["symbol"]}},
        {"$sort": {"time": 1, "bid": 1, "ofr": 1, "bidsiz": 1, "ofrsiz": 1, "mode": 1, "ex": 1}},
        {"$limit": 1000}, _project(*cols)]


def taq_valid_count(v, names):
    return "quotes", [
        {"$match": {"date": v["day"], "symbol": {"$in": list(v["symbols"])}, "bid": {"$gt": 0},
                    "$expr": {"$gt": ["$ofr", "$bid"]}}},
        {"$group": {"_id": None, "n": {"$sum": 1}}}, _project("n")]


def taq_spread_sum(v, names):
    return "quotes", [
        {"$match": {"date": v["day"]}},
        {"$group": {"_id": "$symbol", "spread": {"$sum": {"$subtract": ["$ofr", "$bid"]}}}},
        {"$sort": {"spread": 1}}, _project("symbol", "spread", symbol="$_id")]


def taq_hourly_spread(v, names):
    return "quotes", [
        {"$match": {"date": v["day"], "bid": {"$gt": 0}, "$expr": {"$gt": ["$ofr", "$bid"]}}},
        {"$group": {"_id": {"$hour": "$time"},
                    "spread": {"$avg": {"$divide": [{"$subtract": ["$ofr", "$bid"]}, {"$add": ["$ofr", "$bid"]}]}}}},
        _project("hour", "spread", hour="$_id")]


def taq_gap(v, names):
    return "quotes", [
        {"$match": {"date": v["day"], "bid": {"$gt": 0}, "$expr": {"$gt": ["$ofr", "$bid"]}}},
        {"$group": {"_id": "$symbol", "hi": {"$max": "$ofr"}, "lo": {"$min": "$bid"}}},
        _project("symbol", "gap", symbol="$_id", gap={"$subtract": ["$hi", "$lo"]})]


def taq_max_bid(v, names):
    return "quotes", [
        {"$match": {"date": v["day"]}},
        {"$group": {"_id": {"symbol": "$symbol", "date": "$date"}, "mx": {"$max": "$bid"},
                    "size": {"$sum": "$bidsiz"}}},
        {"$match": {"size": {"$gt": 0}}},
        {"$sort": {"_id.symbol": 1, "_id.date": 1}},
        _project("symbol", "date", "mx", symbol="$_id.symbol", date="$_id.date")]


def taq_max_mid(v, names):
    return "quotes", [
        {"$match": {"date": v["day"]}},
        {"$group": {"_id": {"symbol": "$symbol", "date": "$date"}, "mx": {"$max": {"$add": ["$ofr", "$bid"]}}}},
        _project("symbol", "date", "mx", symbol="$_id.symbol", date="$_id.date", mx={"$divide": ["$mx", 2.0]})]


# --- report 004: taq ----------------------------------------------------------------------------
def taq_first_after(v, names):
    return "quotes", [
        {"$match": {"date": v["day"], "symbol": v["symbol"], "time": {"$gte": v["start"]}}},
        {"$sort": {"time": 1, "bid": 1, "ofr": 1, "bidsiz": 1, "ofrsiz": 1}},
        {"$limit": 1}, _project("time", "bid", "ofr", "bidsiz", "ofrsiz")]


def taq_hour_window(v, names):
    return "quotes", [
        {"$match": {"date": v["day"], "symbol": v["symbol"], "time": {"$gte": v["start"], "$lte": v["end"]}}},
        _project("time", "bid", "ofr", "ex")]


def taq_bid_stats(v, names):
    return "quotes", [
        {"$group": {"_id": None, "n": {"$sum": 1}, "avg_bid": {"$avg": "$bid"}, "max_bid": {"$max": "$bid"},
                    "min_bid": {"$min": "$bid"}, "s": {"$sum": "$bid"}, "ss": {"$sum": {"$multiply": ["$bid", "$bid"]}}}},
        _project("n", "avg_bid", "max_bid", "min_bid", "std_bid", std_bid=_std_samp("n", "s", "ss"))]


def taq_ten_minutes(v, names):
    return "quotes", [
        {"$match": {"date": v["day"]}},
        {"$group": {"_id": _bucket("time", 10 * MS_MINUTE), "n": {"$sum": 1},
                    "avg_spread": {"$avg": {"$subtract": ["$ofr", "$bid"]}}}},
        _project("bucket", "n", "avg_spread", bucket="$_id")]


def taq_hourly_mid_pivot(v, names):
    hours = {f"h{h:02d}": {"$avg": {"$cond": [{"$eq": [{"$hour": "$time"}, h]}, _mid(), None]}}
             for h in range(9, 16)}
    return "quotes", [
        {"$match": {"date": v["day"], "symbol": {"$in": list(v["symbols"])}}},
        {"$group": {"_id": "$symbol", **hours}},
        _project("symbol", *hours, symbol="$_id")]


def taq_most_quoted(v, names):
    return "quotes", [
        {"$group": {"_id": "$symbol", "n": {"$sum": 1}, "total_size": {"$sum": {"$add": ["$bidsiz", "$ofrsiz"]}}}},
        {"$sort": {"n": -1, "_id": 1}}, {"$limit": 10},
        _project("symbol", "n", "total_size", symbol="$_id")]


def taq_wide_spreads(v, names):
    return "quotes", [
        {"$match": {"date": v["day"], "bid": {"$gt": 0},
                    "$expr": {"$gt": [{"$divide": [{"$subtract": ["$ofr", "$bid"]}, _mid()]}, 0.00123]}}},
        {"$group": {"_id": "$ex", "n": {"$sum": 1}}},
        _project("ex", "n", ex="$_id")]


# --- report 004: devices ------------------------------------------------------------------------
def devices_latest(v, names):
    cols = ("time", "device_id", "battery_level", "battery_status", "cpu_avg_1min", "mem_free", "ssid")
    return "readings", [
        {"$match": {"device_id": v["device"], "time": {"$gte": v["since"], "$lte": v["at"]}}},
        {"$sort": {"time": -1}}, {"$limit": 1}, _project(*cols)]


def devices_day_series(v, names):
    return "readings", [
        {"$match": {"device_id": v["device"], **_span(v)}},
        _project("time", "battery_level", "battery_temperature", "cpu_avg_1min", "rssi")]


def devices_window(v, names):
    return "readings", [
        {"$match": {"device_id": v["device"], **_span(v)}},
        _project("time", "battery_level", "cpu_avg_1min", "cpu_avg_5min", "mem_used")]


def devices_low_battery(v, names):
    return "readings", [
        {"$match": {**_span(v), "battery_level": {"$lt": 10}, "battery_status": "discharging"}},
        _project("time", "device_id", "battery_level", "battery_temperature")]


def devices_cpu_stats(v, names):
    return "readings", [
        {"$match": _span(v)},
        {"$group": {"_id": None, "n": {"$sum": 1}, "avg_cpu": {"$avg": "$cpu_avg_1min"},
                    "sum_cpu": {"$sum": "$cpu_avg_1min"}, "max_cpu": {"$max": "$cpu_avg_1min"},
                    "min_cpu": {"$min": "$cpu_avg_1min"},
                    "ss": {"$sum": {"$multiply": ["$cpu_avg_1min", "$cpu_avg_1min"]}}}},
        _project("n", "avg_cpu", "sum_cpu", "max_cpu", "min_cpu", "std_cpu",
                 std_cpu=_std_samp("n", "sum_cpu", "ss"))]


def devices_hourly_cpu(v, names):
    return "readings", [
        {"$match": _span(v)},
        {"$group": {"_id": _bucket("time", MS_HOUR), "avg_cpu": {"$avg": "$cpu_avg_1min"},
                    "max_cpu": {"$max": "$cpu_avg_1min"}}},
        _project("hour", "avg_cpu", "max_cpu", hour="$_id")]


def devices_battery_buckets(v, names):
    return "readings", [
        {"$match": {"device_id": v["device"], **_span(v)}},
        {"$group": {"_id": _bucket("time", 10 * MS_MINUTE), "avg_battery": {"$avg": "$battery_level"}}},
        _project("bucket", "avg_battery", bucket="$_id")]


def devices_by_model(v, names):
    # per device first (a day's readings), then one $lookup per device into the info collection
    return "readings", [
        {"$match": _span(v)},
        {"$group": {"_id": "$device_id", "n": {"$sum": 1}, "battery": {"$sum": "$battery_level"}}},
        {"$lookup": {"from": names["info"], "localField": "_id", "foreignField": "device_id", "as": "info"}},
        {"$unwind": "$info"},
        {"$group": {"_id": {"model": "$info.model", "os_name": "$info.os_name"}, "n": {"$sum": "$n"},
                    "battery": {"$sum": "$battery"}}},
        _project("model", "os_name", "n", "avg_battery", model="$_id.model", os_name="$_id.os_name",
                 avg_battery={"$divide": ["$battery", "$n"]})]


def devices_hourly_pivot(v, names):
    hours = {f"h{h:02d}": {"$avg": {"$cond": [{"$eq": [{"$hour": "$time"}, h]}, "$cpu_avg_1min", None]}}
             for h in range(24)}
    return "readings", [
        {"$match": {"device_id": {"$in": list(v["devices"])}, **_span(v)}},
        {"$group": {"_id": "$device_id", **hours}},
        _project("device_id", *hours, device_id="$_id")]


def devices_sample(v, names):
    return "readings", [
        {"$match": {"device_id": {"$regex": "00$"}, **_span(v)}},
        {"$group": {"_id": "$device_id", "avg_battery": {"$avg": "$battery_level"},
                    "avg_cpu": {"$avg": "$cpu_avg_1min"}}},
        _project("device_id", "avg_battery", "avg_cpu", device_id="$_id")]


def devices_drained(v, names):
    return "readings", [
        {"$match": {**_span(v), "battery_level": {"$lt": 10}}},
        {"$group": {"_id": "$device_id", "min_battery": {"$min": "$battery_level"}}},
        _project("device_id", "min_battery", device_id="$_id")]


def devices_busiest(v, names):
    return "readings", [
        {"$match": _span(v)},
        {"$group": {"_id": "$device_id", "avg_cpu": {"$avg": "$cpu_avg_1min"}}},
        {"$sort": {"avg_cpu": -1, "_id": 1}}, {"$limit": 10},
        _project("device_id", "avg_cpu", device_id="$_id")]


def devices_memory_by_network(v, names):
    return "readings", [
        {"$match": _span(v)},
        {"$group": {"_id": {"ssid": "$ssid", "battery_status": "$battery_status"}, "n": {"$sum": 1},
                    "avg_mem_free": {"$avg": "$mem_free"}}},
        _project("ssid", "battery_status", "n", "avg_mem_free", ssid="$_id.ssid",
                 battery_status="$_id.battery_status")]


def devices_value_fill(v, names):
    return "readings", [
        {"$match": {"device_id": v["device"], **_span(v)}},
        _project("time", "level", level={"$cond": [{"$eq": [{"$mod": ["$battery_level", 3]}, 0]}, -1,
                                                   "$battery_level"]})]


# --- report 004: devices fills (MongoDB 5.0+ $setWindowFields; $locf 5.2+, $linearFill 5.3+) ------
def _gappy(v) -> list[dict]:
    """A device's readings of the span with every level divisible by 3 made null (the suite's gaps)."""
    return [{"$match": {"device_id": v["device"], **_span(v)}},
            {"$project": {"_id": 0, "time": 1,
                          "level": {"$cond": [{"$eq": [{"$mod": ["$battery_level", 3]}, 0]}, None,
                                              "$battery_level"]}}}]


def devices_ffill(v, names):
    """Forward fill: the last known level in time order ($locf); leading gaps stay null."""
    return "readings", [
        *_gappy(v),
        {"$setWindowFields": {"sortBy": {"time": 1}, "output": {"level": {"$locf": "$level"}}}},
        _project("time", "level")]


def devices_bfill(v, names):
    """Backward fill: $locf in reverse time order carries the next known level back; trailing gaps
    stay null."""
    return "readings", [
        *_gappy(v),
        {"$setWindowFields": {"sortBy": {"time": -1}, "output": {"level": {"$locf": "$level"}}}},
        _project("time", "level")]


def devices_linear_fill(v, names):
    """Linear fill between the known levels around a gap, by row position as the other dialects do
    (pandas' ``interpolate``; SQL's row_number), not by time: ``$linearFill`` interpolates along its
    sortBy field, so the rows are numbered in time order first ($documentNumber). Gaps before the
    first and after the last known level stay null; levels as doubles."""
    return "readings", [
        *_gappy(v),
        {"$setWindowFields": {"sortBy": {"time": 1}, "output": {"row": {"$documentNumber": {}}}}},
        {"$setWindowFields": {"sortBy": {"row": 1}, "output": {"level": {"$linearFill": "$level"}}}},
        _project("time", "level", level={"$toDouble": "$level"})]


# --- the tick pack: quotes and trades -------------------------------------------------------------
def tick_asof_join(v, names):
    """Each trade of the day with its symbol's last quote at or before its time (the latest by
    time, then by arrival): one ``$lookup`` sub-pipeline per trade, the day an equality and the
    trade's symbol and time through ``let``, which the quotes' (date, symbol, time, _seq) index
    serves on MongoDB 5.0+. A trade without a prior quote keeps null bid and offer."""
    return "trades", [
        {"$match": {"date": v["day"]}},
        {"$lookup": {"from": names["quotes"], "let": {"symbol": "$symbol", "time": "$time"},
                     "pipeline": [
                         {"$match": {"date": v["day"], "$expr": {"$and": [{"$eq": ["$symbol", "$$symbol"]},
                                                                          {"$lte": ["$time", "$$time"]}]}}},
                         {"$sort": {"time": -1, SEQ: -1}}, {"$limit": 1},
                         {"$project": {"_id": 0, "bid": 1, "ofr": 1}}],
                     "as": "quote"}},
        {"$unwind": {"path": "$quote", "preserveNullAndEmptyArrays": True}},
        _project("symbol", "time", "price", "size", "bid", "ofr", bid="$quote.bid", ofr="$quote.ofr")]


def tick_vwap(v, names):
    """Per symbol and bucket of ``minutes`` (its start in seconds of the day), the uncorrected
    trades' count, volume and volume-weighted price."""
    width = int(v["minutes"]) * MS_MINUTE
    ms = {"$toLong": "$time"}
    bucket = {"$divide": [{"$subtract": [ms, {"$mod": [ms, width]}]}, 1000]}
    return "trades", [
        {"$match": {"date": v["day"], "corr": 0}},
        {"$group": {"_id": {"symbol": "$symbol", "bucket": bucket}, "trades": {"$sum": 1},
                    "volume": {"$sum": "$size"}, "value": {"$sum": {"$multiply": ["$price", "$size"]}}}},
        _project("symbol", "bucket", "trades", "volume", "vwap", symbol="$_id.symbol", bucket="$_id.bucket",
                 vwap={"$divide": ["$value", "$volume"]})]


def tick_snapshot(v, names):
    """Each symbol's last quote at or before ``at`` (by time, then arrival): sorted along the
    (date, symbol, time, _seq) index, then ``$last`` of each field per symbol."""
    fields = ("time", "bid", "ofr", "bidsiz", "ofrsiz")
    return "quotes", [
        {"$match": {"date": v["day"], "time": {"$lte": v["at"]}}},
        {"$sort": {"symbol": 1, "time": 1, SEQ: 1}},
        {"$group": {"_id": "$symbol", **{f: {"$last": f"${f}"} for f in fields}}},
        _project("symbol", *fields, symbol="$_id")]


def tick_year_high_bid(v, names):
    return "quotes", [
        {"$group": {"_id": "$symbol", "high": {"$max": "$bid"}}},
        _project("symbol", "high", symbol="$_id")]


def tick_rolling_mid(v, names):
    """The mid's moving average over the last ``seconds`` at each second a symbol quoted: sums of
    mids and counts per second, then a range window of ``[-(seconds - 1), 0]`` seconds on the time
    (``$setWindowFields``, MongoDB 5.0+; the seconds are whole, so this is the other dialects'
    (t - seconds, t])."""
    window = {"range": [-(int(v["seconds"]) - 1), 0], "unit": "second"}
    return "quotes", [
        {"$match": {"date": v["day"], "symbol": {"$in": list(v["symbols"])}}},
        {"$group": {"_id": {"symbol": "$symbol", "time": {"$dateTrunc": {"date": "$time", "unit": "second"}}},
                    "mids": {"$sum": _mid()}, "quotes": {"$sum": 1}}},
        {"$setWindowFields": {"partitionBy": "$_id.symbol", "sortBy": {"_id.time": 1}, "output": {
            "window_mids": {"$sum": "$mids", "window": window},
            "window_quotes": {"$sum": "$quotes", "window": window}}}},
        _project("symbol", "time", "mid_avg", symbol="$_id.symbol", time="$_id.time",
                 mid_avg={"$divide": ["$window_mids", "$window_quotes"]})]
