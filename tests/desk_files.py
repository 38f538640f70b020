"""A desk's own quotes and trades, as files come (issue 53): quotes
``timestamp,ticker,bid_px,ask_px,bid_sz,ask_sz,exch`` with ISO times at -04:00 to the millisecond, 20
tickers (``BRK.B``, ``BF B``, ``BRK/A``, ``NA``, ``7203.T`` among them); trades ``exec_time,sym,px,qty``
with epoch nanoseconds. Quotes tie (one ticker, one millisecond, several quotes) and trades print at
such ties, so "the last quote at or before a trade" is decided by arrival; and the tick pack's answers
worked out by plain pandas from the files themselves, to check the engines' answers against."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd

from workloads.datasets.roles import Roles

TICKERS = ["BRK.B", "BF B", "BRK/A", "NA", "7203.T", *(f"T{i:02d}" for i in range(15))]
DAYS = ("2025-03-10", "2025-03-11")
ZONE = dt.timezone(dt.timedelta(hours=-4))
QUOTE_ROLES = Roles(time="timestamp", key="ticker", price=("bid_px", "ask_px"), quote_size=("bid_sz", "ask_sz"))
TRADE_ROLES = Roles(time="exec_time", key="sym", price=("px",), size="qty")
SNAPSHOT_AT = dt.time(12, 0)
_ACTIVITY = 0.85 ** np.arange(len(TICKERS)) / (0.85 ** np.arange(len(TICKERS))).sum()


def desk_frames(quotes_a_day: int = 4_000, seed: int = 53) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(quotes, trades) with their instants as tz-aware timestamps, in file (arrival) order."""
    rng = np.random.default_rng(seed)
    quotes, trades = [], []
    for day in DAYS:
        opening = pd.Timestamp(f"{day} 09:30:00", tz=ZONE)
        offsets = np.sort(rng.integers(0, 23_400_000, quotes_a_day))
        stamp = opening + pd.to_timedelta(offsets, unit="ms")
        ticker = rng.choice(TICKERS, quotes_a_day, p=_ACTIVITY)        # the most active: distinct counts
        bid = np.round(50 + rng.random(quotes_a_day) * 100, 2)
        frame = pd.DataFrame({"timestamp": stamp, "ticker": ticker, "bid_px": bid,
                              "ask_px": np.round(bid + 0.01 * rng.integers(1, 5, quotes_a_day), 2),
                              "bid_sz": rng.integers(1, 50, quotes_a_day) * 100,
                              "ask_sz": rng.integers(1, 50, quotes_a_day) * 100,
                              "exch": rng.choice(list("NQPZ"), quotes_a_day)})
        # ties: every 25th quote is repeated at its own millisecond with another bid
        tied = frame.iloc[::25].copy()
        tied["bid_px"] = np.round(tied["bid_px"] + 0.05, 2)
        tied["ask_px"] = np.round(tied["ask_px"] + 0.05, 2)
        # a quote and its trade 0.3 s before a 5-minute bucket ends: a time rounded, not cut, moves it on
        edge = frame.iloc[:1].assign(timestamp=opening + pd.Timedelta(milliseconds=299_700), ticker="NA")
        frame = pd.concat([frame, tied, edge]).sort_values("timestamp", kind="stable", ignore_index=True)
        quotes.append(frame)
        printed = frame.sample(frac=0.12, random_state=seed)
        printed = pd.concat([printed, frame[frame["timestamp"] == edge["timestamp"].iloc[0]].tail(1)])
        printed = printed[~printed.index.duplicated()].sort_values("timestamp", kind="stable")
        trades.append(pd.DataFrame({"exec_time": printed["timestamp"].to_numpy(), "sym": printed["ticker"].to_numpy(),
                                    "px": printed["bid_px"].to_numpy(),
                                    "qty": rng.integers(1, 30, len(printed)) * 100}))
    return pd.concat(quotes, ignore_index=True), pd.concat(trades, ignore_index=True)


def write_desk_files(folder: Path, quotes_a_day: int = 4_000) -> tuple[Path, Path]:
    quotes, trades = desk_frames(quotes_a_day)
    quotes_path, trades_path = folder / "quotes.csv", folder / "trades.csv"
    iso = quotes.assign(timestamp=quotes["timestamp"].map(lambda t: t.isoformat(timespec="milliseconds")))
    iso.to_csv(quotes_path, index=False)
    epoch = trades.assign(exec_time=trades["exec_time"].map(lambda t: t.value))    # UTC nanoseconds
    epoch.to_csv(trades_path, index=False)
    return quotes_path, trades_path


# --- the answers, worked out from the files by plain pandas ---------------------------------------------
def _read(quotes_path: Path, trades_path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    q = pd.read_csv(quotes_path, keep_default_na=False, dtype={"ticker": str})
    t = pd.read_csv(trades_path, keep_default_na=False, dtype={"sym": str})
    q_local = pd.to_datetime(q["timestamp"]).dt.tz_convert(ZONE).dt.tz_localize(None)
    t_local = pd.to_datetime(t["exec_time"], unit="ns", utc=True).dt.tz_convert(ZONE).dt.tz_localize(None)
    quotes = pd.DataFrame({"symbol": q["ticker"], "date": q_local.dt.normalize(),
                           "time": pd.Timestamp(0) + (q_local - q_local.dt.normalize()).dt.floor("ms"),
                           "bid": q["bid_px"], "ofr": q["ask_px"], "bidsiz": q["bid_sz"], "ofrsiz": q["ask_sz"]})
    trades = pd.DataFrame({"symbol": t["sym"], "date": t_local.dt.normalize(),
                           "time": pd.Timestamp(0) + (t_local - t_local.dt.normalize()).dt.floor("ms"),
                           "price": t["px"], "size": t["qty"]})
    return quotes, trades


def expected_tick_answers(quotes_path: Path, trades_path: Path) -> dict[str, pd.DataFrame]:
    """Each tick query's answer on the first day (the five most active tickers for the rolling mid)."""
    quotes, trades = _read(quotes_path, trades_path)
    day = quotes["date"].min()
    q, t = quotes[quotes["date"] == day], trades[trades["date"] == day]
    # the last quote of each (ticker, ms) by arrival, then the last at or before each trade
    last = q.groupby(["symbol", "time"], sort=False).tail(1).sort_values("time", kind="stable")
    asof = pd.merge_asof(t.sort_values("time", kind="stable"), last, on="time", by="symbol",
                         direction="backward", suffixes=("", "_q"))
    seconds = (t["time"] - pd.Timestamp(0)).dt.total_seconds()
    buckets = t.assign(bucket=(seconds // 300 * 300).astype("int64"), value=t["price"] * t["size"])
    vwap = buckets.groupby(["symbol", "bucket"]).agg(trades=("size", "size"), volume=("size", "sum"),
                                                     value=("value", "sum")).reset_index()
    vwap["vwap"] = vwap["value"] / vwap["volume"]
    before = q[q["time"] <= pd.Timestamp.combine(dt.date(1970, 1, 1), SNAPSHOT_AT)]
    top5 = quotes["symbol"].value_counts(sort=True).index[:5]
    per_second = (q[q["symbol"].isin(top5)].assign(second=lambda f: f["time"].dt.floor("s"),
                                                  mid=lambda f: (f["bid"] + f["ofr"]) / 2)
                  .groupby(["symbol", "second"]).agg(mids=("mid", "sum"), quotes=("mid", "size")).reset_index())
    rolled = [(s, g.rolling("60s", on="second")[["mids", "quotes"]].sum().assign(second=g["second"].to_numpy()))
              for s, g in per_second.groupby("symbol")]
    rolling = pd.concat([r.assign(symbol=s) for s, r in rolled], ignore_index=True)
    return {
        "asof-join": asof[["symbol", "time", "price", "size", "bid", "ofr"]],
        "vwap": vwap[["symbol", "bucket", "trades", "volume", "vwap"]],
        "snapshot": before.groupby("symbol").tail(1)[["symbol", "time", "bid", "ofr", "bidsiz", "ofrsiz"]],
        "year-high-bid": quotes.groupby("symbol")["bid"].max().rename("high").reset_index(),
        "rolling-mid": pd.DataFrame({"symbol": rolling["symbol"], "time": rolling["second"],
                                     "mid_avg": rolling["mids"] / rolling["quotes"]}),
    }
