"""The suites' queries in pandas, as a user of the file targets would write them.

Each function takes the tables the query reads (``quotes``; ``readings`` and ``info``), already
restricted to the day files the query needs, and the parameter values; it returns the suite's
columns in order. Times of day compare on seconds since midnight (TAQ ``time`` is a time on
1970-01-01, as the datasets hold it).
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pandas as pd

FUNCTIONS: dict[str, Callable[..., pd.DataFrame]] = {}


def query(function: Callable[..., pd.DataFrame]) -> Callable[..., pd.DataFrame]:
    FUNCTIONS[function.__name__] = function
    return function


ONE_DAY = "tickbench_one_day"     # a frame's attrs key: the one day all its rows are known to be of


def one_day(frame: pd.DataFrame, day: dt.date) -> pd.DataFrame:
    """Mark ``frame`` as holding rows of ``day`` only (a day's own file, read as its user reads it),
    so the queries take it as it is instead of scanning its dates to find that out."""
    frame.attrs[ONE_DAY] = pd.Timestamp(day).date().isoformat()     # text: Arrow keeps attrs as JSON
    return frame


def _on_day(q: pd.DataFrame, day: dt.date) -> pd.DataFrame:
    """The rows of ``day``: a frame marked as that day's (``one_day``), or found to hold it only, as
    it is (a mask would copy every column for nothing); else the rows masked."""
    stamp = pd.Timestamp(day)
    if q.attrs.get(ONE_DAY) == stamp.date().isoformat() or _only_day(q["date"], stamp):
        return q
    return q[q["date"] == stamp]


def _only_day(dates: pd.Series, stamp: pd.Timestamp) -> bool:
    """Whether every date is ``stamp``: two passes over the column (2.4 ms of a 1 M-row day, 4 %
    of an as-of join), which a marked frame is spared."""
    return bool(len(dates)) and dates.min() == stamp == dates.max()


def _seconds(times: pd.Series) -> pd.Series:
    return (times - times.dt.normalize()).dt.total_seconds()


def _on_1970(value: dt.time) -> pd.Timestamp:
    """A time of day as the datasets hold one: a time on 1970-01-01."""
    return pd.Timestamp(dt.datetime.combine(dt.date(1970, 1, 1), value))


def _tod(value: dt.time) -> float:
    return value.hour * 3600 + value.minute * 60 + value.second


def _rel_spread(q: pd.DataFrame) -> pd.Series:
    return (q["ofr"] - q["bid"]) / ((q["ofr"] + q["bid"]) / 2)


# --- report 001 on TAQ (the report's own queries) --------------------------------------------------
@query
def taq_first_thousand(quotes, day, symbol):
    q = _on_day(quotes, day)
    q = q[q["symbol"] == symbol]
    order = ["time", "bid", "ofr", "bidsiz", "ofrsiz", "mode", "ex"]
    return q.sort_values(order, kind="stable").head(1000)[
        ["symbol", "date", "time", "bid", "ofr", "bidsiz", "ofrsiz", "mode", "ex", "mmid"]]


@query
def taq_valid_count(quotes, day, symbols):
    q = _on_day(quotes, day)
    return pd.DataFrame({"n": [int((q["symbol"].isin(symbols) & (q["bid"] > 0) & (q["ofr"] > q["bid"])).sum())]})


@query
def taq_spread_sum(quotes, day):
    q = _on_day(quotes, day)
    out = (q["ofr"] - q["bid"]).groupby(q["symbol"], observed=True).sum().rename("spread").reset_index()
    return out.sort_values("spread")[["symbol", "spread"]]


@query
def taq_hourly_spread(quotes, day):
    q = _on_day(quotes, day)
    q = q[(q["bid"] > 0) & (q["ofr"] > q["bid"])]
    spread = (q["ofr"] - q["bid"]) / (q["ofr"] + q["bid"])
    out = spread.groupby(q["time"].dt.hour.rename("hour")).mean().rename("spread")
    return out.reset_index()[["hour", "spread"]]


@query
def taq_gap(quotes, day):
    q = _on_day(quotes, day)
    q = q[(q["bid"] > 0) & (q["ofr"] > q["bid"])]
    out = q.groupby("symbol", observed=True).agg(mx=("ofr", "max"), mn=("bid", "min"))
    return out.assign(gap=out["mx"] - out["mn"]).reset_index()[["symbol", "gap"]]


@query
def taq_max_bid(quotes, day):
    q = _on_day(quotes, day)
    out = q.groupby(["symbol", "date"], observed=True).agg(mx=("bid", "max"), size=("bidsiz", "sum"))
    out = out[out["size"] > 0].reset_index().sort_values(["symbol", "date"])
    return out[["symbol", "date", "mx"]]


@query
def taq_max_mid(quotes, day):
    q = _on_day(quotes, day)
    out = (q["ofr"] + q["bid"]).groupby([q["symbol"], q["date"]], observed=True).max() / 2.0
    return out.rename("mx").reset_index()[["symbol", "date", "mx"]]


# --- report 004's categories on TAQ -------------------------------------------------------------
@query
def taq_first_after(quotes, day, symbol, start):
    q = _on_day(quotes, day)
    q = q[(q["symbol"] == symbol) & (_seconds(q["time"]) >= _tod(start))]
    cols = ["time", "bid", "ofr", "bidsiz", "ofrsiz"]
    return q[cols].sort_values(cols).head(1)


@query
def taq_symbol_range(quotes, day, symbol, start, end):
    q = _on_day(quotes, day)
    seconds = _seconds(q["time"])
    q = q[(q["symbol"] == symbol) & (seconds >= _tod(start)) & (seconds <= _tod(end))]
    return q[["time", "bid", "ofr", "ex"]]


@query
def taq_bid_stats(quotes):
    bid = quotes["bid"]
    return pd.DataFrame({"n": [len(bid)], "avg_bid": [bid.mean()], "max_bid": [bid.max()],
                         "min_bid": [bid.min()], "std_bid": [bid.std(ddof=1)]})


@query
def taq_ten_minutes(quotes, day):
    q = _on_day(quotes, day)
    q = q.assign(bucket=q["time"].dt.floor("10min"), spread=q["ofr"] - q["bid"])
    out = q.groupby("bucket").agg(n=("spread", "size"), avg_spread=("spread", "mean"))
    return out.reset_index()[["bucket", "n", "avg_spread"]]


@query
def taq_pivot(quotes, day, symbols):
    q = _on_day(quotes, day)
    q = q[q["symbol"].isin(symbols)]
    q = q.assign(hour=q["time"].dt.hour, mid=(q["bid"] + q["ofr"]) / 2)
    wide = q.pivot_table(index="symbol", columns="hour", values="mid", aggfunc="mean", observed=True)
    wide = wide.reindex(columns=range(9, 16))
    wide.columns = [f"h{h:02d}" for h in wide.columns]
    return wide.reset_index()


@query
def taq_most_quoted(quotes):
    q = quotes.assign(size=quotes["bidsiz"].astype("int64") + quotes["ofrsiz"])
    out = q.groupby("symbol", observed=True).agg(n=("size", "size"), total_size=("size", "sum")).reset_index()
    return out.sort_values(["n", "symbol"], ascending=[False, True]).head(10)[["symbol", "n", "total_size"]]


@query
def taq_wide_spreads(quotes, day):
    q = _on_day(quotes, day)
    q = q[(q["bid"] > 0) & (_rel_spread(q) > 0.00123)]
    return q.groupby("ex").size().rename("n").reset_index()[["ex", "n"]]


# --- report 004 on devices ----------------------------------------------------------------------
def _between(r: pd.DataFrame, start: dt.datetime, end: dt.datetime) -> pd.DataFrame:
    return r[(r["time"] >= pd.Timestamp(start)) & (r["time"] < pd.Timestamp(end))]


@query
def devices_latest(readings, device, at, since):
    r = readings[(readings["device_id"] == device) & (readings["time"] >= pd.Timestamp(since))
                 & (readings["time"] <= pd.Timestamp(at))]
    cols = ["time", "device_id", "battery_level", "battery_status", "cpu_avg_1min", "mem_free", "ssid"]
    return r.sort_values("time", ascending=False).head(1)[cols]


@query
def devices_one_day(readings, device, start, end):
    r = _between(readings[readings["device_id"] == device], start, end)
    return r[["time", "battery_level", "battery_temperature", "cpu_avg_1min", "rssi"]]


@query
def devices_window(readings, device, start, end):
    r = _between(readings[readings["device_id"] == device], start, end)
    return r[["time", "battery_level", "cpu_avg_1min", "cpu_avg_5min", "mem_used"]]


@query
def devices_low_discharging(readings, start, end):
    r = _between(readings, start, end)
    r = r[(r["battery_level"] < 10) & (r["battery_status"] == "discharging")]
    return r[["time", "device_id", "battery_level", "battery_temperature"]]


@query
def devices_cpu_stats(readings, start, end):
    cpu = _between(readings, start, end)["cpu_avg_1min"]
    return pd.DataFrame({"n": [len(cpu)], "avg_cpu": [cpu.mean()], "sum_cpu": [cpu.sum()],
                         "max_cpu": [cpu.max()], "min_cpu": [cpu.min()], "std_cpu": [cpu.std(ddof=1)]})


@query
def devices_hourly(readings, start, end):
    r = _between(readings, start, end)
    out = r.assign(hour=r["time"].dt.floor("h")).groupby("hour")["cpu_avg_1min"].agg(["mean", "max"])
    return out.reset_index().set_axis(["hour", "avg_cpu", "max_cpu"], axis=1)


@query
def devices_ten_minutes(readings, device, start, end):
    r = _between(readings[readings["device_id"] == device], start, end)
    out = r.assign(bucket=r["time"].dt.floor("10min")).groupby("bucket")["battery_level"].mean()
    return out.reset_index().set_axis(["bucket", "avg_battery"], axis=1)


@query
def devices_by_model(readings, info, start, end):
    r = _between(readings, start, end).merge(info, on="device_id")
    out = r.groupby(["model", "os_name"], observed=True)["battery_level"].agg(["size", "mean"])
    return out.reset_index().set_axis(["model", "os_name", "n", "avg_battery"], axis=1)


@query
def devices_pivot(readings, devices, start, end):
    r = _between(readings[readings["device_id"].isin(devices)], start, end)
    wide = r.assign(hour=r["time"].dt.hour).pivot_table(index="device_id", columns="hour", values="cpu_avg_1min",
                                                        aggfunc="mean", observed=True)
    wide = wide.reindex(columns=range(24))
    wide.columns = [f"h{h:02d}" for h in wide.columns]
    return wide.reset_index()


@query
def devices_sample(readings, start, end):
    r = _between(readings, start, end)
    r = r[r["device_id"].astype(str).str.endswith("00")]
    out = r.groupby("device_id", observed=True).agg(avg_battery=("battery_level", "mean"),
                                                    avg_cpu=("cpu_avg_1min", "mean"))
    return out.reset_index()


@query
def devices_low_last_hour(readings, start, end):
    r = _between(readings, start, end)
    r = r[r["battery_level"] < 10]
    return r.groupby("device_id", observed=True)["battery_level"].min().rename("min_battery").reset_index()


@query
def devices_top_cpu(readings, start, end):
    r = _between(readings, start, end)
    out = r.groupby("device_id", observed=True)["cpu_avg_1min"].mean().rename("avg_cpu").reset_index()
    return out.sort_values(["avg_cpu", "device_id"], ascending=[False, True]).head(10)


@query
def devices_by_network(readings, start, end):
    r = _between(readings, start, end)
    out = r.groupby(["ssid", "battery_status"], observed=True)["mem_free"].agg(["size", "mean"])
    return out.reset_index().set_axis(["ssid", "battery_status", "n", "avg_mem_free"], axis=1)


def _gappy(readings: pd.DataFrame, device: str, start, end) -> pd.DataFrame:
    r = _between(readings[readings["device_id"] == device], start, end).sort_values("time")
    level = r["battery_level"].astype("float64")
    return pd.DataFrame({"time": r["time"].to_numpy(), "level": level.where(level % 3 != 0).to_numpy()})


@query
def devices_ffill(readings, device, start, end):
    s = _gappy(readings, device, start, end)
    return s.assign(level=s["level"].ffill())


@query
def devices_bfill(readings, device, start, end):
    s = _gappy(readings, device, start, end)
    return s.assign(level=s["level"].bfill())


@query
def devices_linear_fill(readings, device, start, end):
    s = _gappy(readings, device, start, end)
    return s.assign(level=s["level"].interpolate(method="linear", limit_area="inside"))


@query
def devices_value_fill(readings, device, start, end):
    s = _gappy(readings, device, start, end)
    return s.assign(level=s["level"].fillna(-1))


# --- the tick pack (resources/queries/tick.toml): quotes and trades ----------------------------------
@query
def tick_asof_join(quotes, trades, day):
    q = _on_day(quotes, day)[["symbol", "time", "bid", "ofr"]].sort_values("time", kind="stable")
    t = _on_day(trades, day)[["symbol", "time", "price", "size"]].sort_values("time", kind="stable")
    out = pd.merge_asof(t, q, on="time", by="symbol", direction="backward")
    return out[["symbol", "time", "price", "size", "bid", "ofr"]]


@query
def tick_vwap(trades, day, minutes):
    t = _on_day(trades, day)
    t = t[t["corr"] == 0]
    width = minutes * 60
    bucket = (_seconds(t["time"]) // width * width).astype("int64").rename("bucket")
    size = t["size"].astype("int64")
    grouped = pd.DataFrame({"symbol": t["symbol"], "bucket": bucket, "size": size,
                            "value": t["price"] * size}).groupby(["symbol", "bucket"], observed=True)
    out = grouped.agg(trades=("size", "size"), volume=("size", "sum"), value=("value", "sum")).reset_index()
    out["vwap"] = out["value"] / out["volume"]
    return out[["symbol", "bucket", "trades", "volume", "vwap"]]


@query
def tick_snapshot(quotes, day, at):
    q = _on_day(quotes, day)
    q = q[q["time"] <= _on_1970(at)]
    # the store keeps a day's rows by (symbol, time, arrival): each symbol's last row is its last quote
    return q.groupby("symbol", observed=True, sort=False).tail(1)[["symbol", "time", "bid", "ofr", "bidsiz", "ofrsiz"]]


@query
def tick_year_high_bid(quotes):
    return quotes.groupby("symbol", observed=True)["bid"].max().rename("high").reset_index()[["symbol", "high"]]


@query
def tick_rolling_mid(quotes, day, symbols, seconds):
    q = _on_day(quotes, day)
    q = q[q["symbol"].isin(symbols)]
    per_second = (pd.DataFrame({"symbol": q["symbol"].astype(object), "time": q["time"].dt.floor("s"),
                                "mids": (q["bid"] + q["ofr"]) / 2})
                  .groupby(["symbol", "time"]).agg(mids=("mids", "sum"), quotes=("mids", "size"))
                  .reset_index().sort_values(["symbol", "time"], ignore_index=True))
    # the window (t - seconds, t] of each symbol's seconds; groups come back in the frame's order
    rolled = per_second.groupby("symbol", sort=False).rolling(f"{seconds}s", on="time")[["mids", "quotes"]].sum()
    return per_second[["symbol", "time"]].assign(mid_avg=rolled["mids"].to_numpy() / rolled["quotes"].to_numpy())


def arguments(name: str) -> tuple[str, ...]:
    """What the query's function takes: the tables it reads and its parameters."""
    try:
        function = FUNCTIONS[name]
    except KeyError:
        raise ValueError(f"no pandas query named {name!r}") from None
    return function.__code__.co_varnames[:function.__code__.co_argcount]


def run(name: str, tables: dict[str, pd.DataFrame], values: dict) -> pd.DataFrame:
    wanted = arguments(name)
    return FUNCTIONS[name](**{k: v for k, v in {**tables, **values}.items() if k in wanted})

