"""US TAQ level-1 quotes (reports 000, 001, 003, 004): the 10-column ``quotes`` table.

Shape: a few symbols carry most quotes (Zipf-like), quotes cluster at the open and the close,
each symbol's mid price follows its own path through the day, bid < ofr by a spread of whole
cents that widens for expensive and thinly traded names, sizes are round lots (units of 100
shares, as TAQ records them).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from workloads.datasets._chunks import ChunkedDataset, ChunkRandom, dataset_tag, seeded
from workloads.datasets._shapes import (KeyActivity, PricePaths, SessionClock, categorical,
                                        daily_levels, geometric, grid_step)
from workloads.datasets._names import tickers
from workloads.datasets._strings import Vocabulary, vocabulary
from workloads.datasets.schema import Column, DatasetInfo, Scale, Schema, StringMode
from workloads.datasets.taq_trades import TRADES_SCHEMA, trades_frame

SCHEMA = Schema((
    Column("symbol", "SYMBOL"), Column("date", "DATE"), Column("time", "SECOND"),
    Column("bid", "DOUBLE"), Column("ofr", "DOUBLE"), Column("bidsiz", "INT"),
    Column("ofrsiz", "INT"), Column("mode", "INT"), Column("ex", "CHAR"), Column("mmid", "SYMBOL"),
))

SESSION = (9 * 3600 + 30 * 60, 16 * 3600)  # 09:30:00 .. 16:00:00, last quote at 15:59:59

# Quote venues of 2007 (CHAR codes) and rough shares of quote traffic.
EXCHANGES = {"T": 0.21, "P": 0.19, "N": 0.15, "Z": 0.12, "B": 0.06, "I": 0.05, "C": 0.04,
             "D": 0.04, "X": 0.04, "A": 0.03, "M": 0.03, "W": 0.02, "Q": 0.02}
MODES = {12: 0.86, 1: 0.03, 2: 0.03, 3: 0.02, 4: 0.02, 6: 0.01, 10: 0.03}  # 12: regular two-sided
MARKET_MAKERS = {"NSDQ": 0.30, "ARCX": 0.18, "BATS": 0.12, "EDGX": 0.08, "NITE": 0.07,
                 "TRAC": 0.06, "CINN": 0.05, "GSCO": 0.04, "UBSS": 0.03, "MSCO": 0.03,
                 "FLOW": 0.02, "SBSH": 0.02}
_EX_CODES = np.array([ord(c) for c in EXCHANGES], dtype=np.int8)
_MODE_CODES = np.array(list(MODES), dtype=np.int32)
_QUOTE_JITTER = 4e-4   # quotes scatter this much (relative) around the symbol's mid-price path

INFO = DatasetInfo(
    name="taq", title="US TAQ level-1 quotes", schema=SCHEMA,
    date_column="date", key_column="symbol", time_column="time", price_columns=("bid", "ofr"),
    notes="NYSE TAQ quotes as in reports 000/001/003/004: one row per quote update, "
          "09:30:00-16:00:00, sizes in round lots. The seed day 2007.08.23 had ~230 million rows. "
          "Its trades are a table beside the quotes (workloads/datasets/taq_trades.py).",
    extra={"default_start": "2007-08-23", "sessions": [["09:30:00", "16:00:00"]],
           "seed_rows_per_day": 230_000_000, "seed_symbols": 8000, "side_tables": ["trades"]},
)


@dataclass(frozen=True)
class _Keys:
    names: list[str]
    activity: KeyActivity
    base_price: np.ndarray       # close before the first day
    daily_vol: np.ndarray
    spread_cents: np.ndarray     # mean spread above one cent


@dataclass(frozen=True)
class _Day:
    keys: _Keys
    date_ns: int
    clock: SessionClock
    paths: PricePaths
    symbols: Vocabulary
    market_makers: Vocabulary


class TaqDataset(ChunkedDataset):
    info = INFO
    default_start = "2007-08-23"
    trades_schema = TRADES_SCHEMA

    def trades_frame(self, scale: Scale, strings: StringMode = StringMode.ARROW) -> pd.DataFrame:
        """The ``trades`` table: every day's trades, printed at its quotes (``taq_trades``)."""
        return trades_frame(self, scale, strings)

    def keys(self, scale: Scale) -> list[str]:
        return list(self._keys(scale.seed, scale.symbols).names)

    @staticmethod
    @lru_cache(maxsize=8)
    def _keys(seed: int, count: int) -> _Keys:
        tag = dataset_tag(INFO.name)
        names = tickers(seeded(seed, tag, 1), count)
        rng = seeded(seed, tag, 2)
        rank = np.arange(count) / count                  # 0 = most active
        price = np.clip(np.exp(rng.normal(3.4, 0.8, count)), 1.0, 900.0)
        vol = (0.012 + 0.02 * rng.random(count)) * (1.0 + rank)
        spread = price * 3e-4 * (1.0 + 3.0 * rank) * (0.5 + rng.random(count))
        return _Keys(names, KeyActivity(count, exponent=1.0, offset=4.0), price, vol, spread)

    def day_context(self, day_index: int, day: dt.date, scale: Scale) -> _Day:
        keys = self._keys(scale.seed, scale.symbols)
        tag = dataset_tag(INFO.name)
        _, opening, closing = daily_levels(seeded(scale.seed, tag, 3), keys.base_price,
                                           keys.daily_vol, day_index)
        clock = SessionClock([SESSION], scale.rows_per_day)
        step = grid_step(clock.seconds, scale.symbols)
        paths = PricePaths(seeded(scale.seed, tag, 4, day_index), opening, closing,
                           keys.daily_vol, clock.seconds, step)
        date_ns = int(np.datetime64(day, "ns").astype(np.int64))
        return _Day(keys, date_ns, clock, paths, vocabulary(tuple(keys.names)),
                    vocabulary(tuple(MARKET_MAKERS)))

    def rows(self, day: _Day, random: ChunkRandom, start: int, stop: int) -> dict:
        n = stop - start
        key = day.keys.activity.sample(random.uniform(0))
        second, frac = day.clock.locate(start, stop)
        mid = day.paths.at(key, second + frac) * (1.0 + _QUOTE_JITTER * (random.uniform(1) - 0.5))
        spread = 1 + geometric(random.uniform(2), day.keys.spread_cents[key])
        bid_cents = np.maximum(np.floor(mid * 100.0 - spread / 2).astype(np.int64), 1)
        clock_ns = (day.clock.clock[second] * 1_000_000_000).view("datetime64[ns]")
        return {
            "symbol": day.symbols.codes(key),
            "date": np.full(n, day.date_ns, dtype=np.int64).view("datetime64[ns]"),
            "time": clock_ns,
            "bid": bid_cents / 100.0,                 # exact cents, as quoted
            "ofr": (bid_cents + spread) / 100.0,
            "bidsiz": _lots(random.uniform(3)),
            "ofrsiz": _lots(random.uniform(4)),
            "mode": _MODE_CODES[categorical(random.uniform(5), list(MODES.values()))],
            "ex": _EX_CODES[categorical(random.uniform(6), list(EXCHANGES.values()))],
            "mmid": day.market_makers.codes(categorical(random.uniform(7), list(MARKET_MAKERS.values()))),
        }


def _lots(u: np.ndarray) -> np.ndarray:
    """Quote sizes in round lots: mostly 1-5, now and then a few hundred."""
    return np.minimum(1 + geometric(u, 3.0), 9999).astype(np.int32)
