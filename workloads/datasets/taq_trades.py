"""US TAQ trades beside the quotes: the ``trades`` table of the ``taq`` dataset (TAQ's CT file).

Trades are drawn from the day's own quotes, so that a join between the two gives a realistic
answer: each trade prints at its symbol's prevailing quote (at the bid, at the offer, or a whole
cent inside), at the second of that quote. Only quotes that are their symbol's one quote in their
second carry a trade, so "the quote prevailing at a trade's time" (the last quote of the symbol at
or before it) is one quote on every engine, whatever the order it keeps ties in: an as-of join has
one right answer, and ``verify`` can check it. About one trade per ``QUOTES_PER_TRADE`` quotes,
as in TAQ (2007: ~230 M quotes and ~30 M trades a day).

Columns as TAQ's trade file records them: SIZE in shares (round lots of 100, odd lots under 100 and
mixed lots), COND the sale condition (``@`` regular, ``F`` intermarket sweep, ``Z`` sold out of
sequence, ``E`` slow quote; a symbol's first print of the day ``O``, the opening, and its last ``6``,
the closing), CORR the correction indicator
(0 as printed, 1 corrected), G127 (40: a rule 127 block trade), EX the venue of the quote it printed at.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from workloads.datasets._chunks import dataset_tag, seeded
from workloads.datasets._shapes import categorical, geometric
from workloads.datasets.schema import Column, Scale, Schema, StringMode, apply_string_mode

TRADES_SCHEMA = Schema((
    Column("symbol", "SYMBOL"), Column("date", "DATE"), Column("time", "SECOND"),
    Column("price", "DOUBLE"), Column("size", "INT"), Column("g127", "INT"), Column("corr", "INT"),
    Column("cond", "SYMBOL"), Column("ex", "CHAR"),
))

QUOTES_PER_TRADE = 8
CONDITIONS = {"@": 0.81, "F": 0.14, "E": 0.03, "Z": 0.02}   # a symbol's first and last prints: O and 6
_AT_BID, _AT_OFFER = 0.35, 0.35     # shares of trades printing at the bid and at the offer; the rest inside
_ROUND, _ODD = 0.60, 0.22           # shares of round-lot and odd-lot sizes; the rest mixed lots
_CORRECTED, _BLOCK = 0.004, 0.01    # shares of corrected and rule-127 trades


def trades_of_day(quotes: pd.DataFrame, scale: Scale, day_index: int, tag: str) -> pd.DataFrame:
    """One day's trades from that day's ``quotes`` (the ``taq`` columns, symbols categorical)."""
    lone = ~quotes.duplicated(["symbol", "time"], keep=False).to_numpy()
    candidates = np.flatnonzero(lone)
    rng = seeded(scale.seed, dataset_tag(tag), 9, day_index)
    share = min(1.0, len(quotes) / QUOTES_PER_TRADE / max(len(candidates), 1))
    rows = candidates[rng.random(len(candidates)) < share]
    n = len(rows)
    bid = np.round(quotes["bid"].to_numpy()[rows] * 100).astype(np.int64)
    ofr = np.round(quotes["ofr"].to_numpy()[rows] * 100).astype(np.int64)
    where = rng.random(n)
    inside = bid + 1 + np.floor(rng.random(n) * np.maximum(ofr - bid - 1, 0)).astype(np.int64)
    cents = np.where(where < _AT_BID, bid, np.where(where < _AT_BID + _AT_OFFER, ofr,
                                                     np.where(ofr - bid > 1, inside, bid)))
    lots = rng.random(n)
    round_lot = 100 * (1 + geometric(rng.random(n), 2.0))
    odd_lot = 1 + np.floor(rng.random(n) * 99).astype(np.int64)
    size = np.where(lots < _ROUND, round_lot, np.where(lots < _ROUND + _ODD, odd_lot, round_lot + odd_lot))
    conditions = np.array(list(CONDITIONS), dtype=object)
    frame = pd.DataFrame({
        "symbol": quotes["symbol"].to_numpy()[rows],
        "date": quotes["date"].to_numpy()[rows],
        "time": quotes["time"].to_numpy()[rows],
        "price": cents / 100.0,                     # exact cents, as printed
        "size": np.minimum(size, 1_000_000).astype(np.int32),
        "g127": np.where(rng.random(n) < _BLOCK, 40, 0).astype(np.int32),
        "corr": np.where(rng.random(n) < _CORRECTED, 1, 0).astype(np.int32),
        "cond": conditions[categorical(rng.random(n), list(CONDITIONS.values()))],
        "ex": quotes["ex"].to_numpy()[rows].astype(np.int8),
    })
    first = ~frame.duplicated("symbol", keep="first")     # rows are in time order
    last = ~frame.duplicated("symbol", keep="last")
    frame.loc[first, "cond"] = "O"
    frame.loc[last & ~first, "cond"] = "6"
    return frame


def trades_frame(dataset, scale: Scale, strings: StringMode = StringMode.ARROW) -> pd.DataFrame:
    """Every day's trades of ``scale``, in (date, time) order, ties in the quotes' own order."""
    days = []
    for index in range(len(dataset.trading_days(scale))):
        quotes = dataset.day_frame(index, scale, StringMode.CATEGORY)
        days.append(trades_of_day(quotes, scale, index, dataset.info.name))
    frame = pd.concat(days, ignore_index=True) if days else pd.DataFrame(columns=TRADES_SCHEMA.names)
    frame["symbol"] = frame["symbol"].astype(object)
    order = np.lexsort((np.arange(len(frame)), frame["time"].to_numpy(), frame["date"].to_numpy()))
    frame = frame.iloc[order].reset_index(drop=True)
    return apply_string_mode(frame, TRADES_SCHEMA, StringMode.parse(strings))
