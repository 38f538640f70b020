"""China A-share level-2 snapshots (report 000): the 78-column table, ten price levels a side.

Shape: sessions 09:30-11:30 and 13:00-15:00; each security's last price follows its own path
inside the +/-10% daily limits; High/Low are running extremes and TradNumber/TradVolume/Turnover
running totals, so for one security they never go backwards in time; the book has BidPrice1 <
AskPrice1, asks rising and bids falling level by level, volumes in board lots of 100 shares.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from workloads.datasets._chunks import ChunkedDataset, ChunkRandom, dataset_tag, seeded
from workloads.datasets._names import china_security_ids
from workloads.datasets._shapes import (KeyActivity, PricePaths, SessionClock, daily_levels,
                                        geometric, grid_step, log_uniform_int)
from workloads.datasets._strings import Vocabulary, vocabulary
from workloads.datasets.schema import Column, DatasetInfo, Scale, Schema

LEVELS = 10


def _columns() -> tuple[Column, ...]:
    head = [("UpdateTime", "TIME"), ("TradeDate", "DATE"), ("Market", "SYMBOL"),
            ("SecurityID", "SYMBOL")]
    head += [(name, "DOUBLE") for name in
             ("PreCloPrice", "OpenPrice", "HighPrice", "LowPrice", "LastPrice")]
    head += [("TradNumber", "INT"), ("TradVolume", "INT"), ("Turnover", "DOUBLE"),
             ("TotalBidVol", "INT"), ("WAvgBidPri", "DOUBLE"), ("TotalAskVol", "INT"),
             ("WAvgAskPri", "DOUBLE"), ("IOPV", "DOUBLE")]
    for prefix, ddb_type in (("AskPrice", "DOUBLE"), ("AskVolume", "INT"), ("BidPrice", "DOUBLE"),
                             ("BidVolume", "INT"), ("NumOrdersB", "INT"), ("NumOrdersS", "INT")):
        head += [(f"{prefix}{level}", ddb_type) for level in range(1, LEVELS + 1)]
    head.append(("LocalTime", "TIME"))
    return tuple(Column(name, ddb_type) for name, ddb_type in head)


SCHEMA = Schema(_columns())
assert len(SCHEMA.columns) == 78, "report 000's level-2 table has 78 columns"

SESSIONS = [(9 * 3600 + 30 * 60, 11 * 3600 + 30 * 60), (13 * 3600, 15 * 3600)]
PRICE_LIMIT = 0.10  # daily up/down limit of main-board A shares

INFO = DatasetInfo(
    name="level2", title="China level-2 snapshots", schema=SCHEMA,
    date_column="TradeDate", key_column="SecurityID", time_column="UpdateTime",
    price_columns=("BidPrice1", "AskPrice1"),
    notes="Shanghai/Shenzhen level-2 market snapshots as in report 000: ten levels each side, "
          "sessions 09:30-11:30 and 13:00-15:00. The seed days 2019.09.10-12 had ~21.7 million rows each.",
    extra={"default_start": "2019-09-10", "sessions": [["09:30:00", "11:30:00"], ["13:00:00", "15:00:00"]],
           "seed_rows_per_day": 21_700_000, "seed_symbols": 4000},
)

# Random streams (one uniform per row each); see ChunkRandom.
_KEY, _BID_OFFSET, _SPREAD, _LATENCY = 0, 1, 2, 3
_ASK_GAPS, _BID_GAPS = 4, 4 + LEVELS - 1
_ASK_VOLUMES = _BID_GAPS + LEVELS - 1
_BID_VOLUMES, _ORDERS_SELL, _ORDERS_BUY = (_ASK_VOLUMES + LEVELS * i for i in (1, 2, 3))


@dataclass(frozen=True)
class _Keys:
    ids: list[str]
    markets: np.ndarray          # code into MARKETS per key
    activity: KeyActivity
    base_price: np.ndarray
    daily_vol: np.ndarray
    day_volume: np.ndarray       # shares traded in a full day
    trade_shares: np.ndarray     # mean shares per trade
    spread_ticks: np.ndarray     # mean spread above one tick
    depth: np.ndarray            # whole book volume / top ten levels' volume


MARKETS = ("SH", "SZ")


@dataclass(frozen=True)
class _Day:
    keys: _Keys
    date_ns: int
    clock: SessionClock
    paths: PricePaths
    previous_ticks: np.ndarray
    open_ticks: np.ndarray
    high_grid: np.ndarray        # running maximum of the path up to each point
    low_grid: np.ndarray
    turnover_grid: np.ndarray    # running turnover (yuan) at each point
    ids: Vocabulary
    markets: Vocabulary


class Level2Dataset(ChunkedDataset):
    info = INFO
    default_start = "2019-09-10"

    def keys(self, scale: Scale) -> list[str]:
        return list(self._keys(scale.seed, scale.symbols).ids)

    @staticmethod
    @lru_cache(maxsize=8)
    def _keys(seed: int, count: int) -> _Keys:
        tag = dataset_tag(INFO.name)
        ids, markets = china_security_ids(seeded(seed, tag, 1), count)
        rng = seeded(seed, tag, 2)
        activity = KeyActivity(count, exponent=0.6, offset=20.0)
        rank = np.arange(count) / count
        price = np.round(np.clip(np.exp(rng.normal(2.3, 0.7, count)), 2.0, 300.0), 2)
        vol = (0.012 + 0.02 * rng.random(count)) * (1.0 + 0.5 * rank)
        day_volume = np.minimum(3e4 * count * activity.weights * np.exp(rng.normal(0, 0.5, count)), 1.5e9)
        trade_shares = 100.0 * (3 + 27 * rng.random(count))
        spread = price / 60.0 * (0.5 + rng.random(count))
        depth = 1.5 + 4.5 * rng.random(count)
        market_codes = np.array([MARKETS.index(m) for m in markets], dtype=np.int64)
        return _Keys(ids, market_codes, activity, price, vol, day_volume, trade_shares, spread, depth)

    def day_context(self, day_index: int, day: dt.date, scale: Scale) -> _Day:
        keys = self._keys(scale.seed, scale.symbols)
        tag = dataset_tag(INFO.name)
        previous, opening, closing = daily_levels(seeded(scale.seed, tag, 3), keys.base_price,
                                                  keys.daily_vol, day_index)
        previous = np.round(previous, 2)
        low = np.round(previous * (1 - PRICE_LIMIT), 2)
        high = np.round(previous * (1 + PRICE_LIMIT), 2)
        clock = SessionClock(SESSIONS, scale.rows_per_day)
        step = grid_step(clock.seconds, scale.symbols)
        paths = PricePaths(seeded(scale.seed, tag, 4, day_index), np.clip(opening, low, high),
                           np.clip(closing, low, high), keys.daily_vol, clock.seconds, step, low, high)
        # Volume traded between path points follows the intraday activity; turnover = price x volume.
        point_share = clock.cdf[np.arange(paths.grid.shape[0]) * step]
        volume_step = np.diff(point_share)[:, None] * keys.day_volume
        mid_step = (paths.grid[1:] + paths.grid[:-1]) / 2
        turnover = np.vstack([np.zeros((1, scale.symbols)), np.cumsum(volume_step * mid_step, axis=0)])
        return _Day(
            keys=keys, date_ns=int(np.datetime64(day, "ns").astype(np.int64)), clock=clock, paths=paths,
            previous_ticks=_ticks(previous), open_ticks=_ticks(paths.grid[0]),
            high_grid=_ticks(np.maximum.accumulate(paths.grid, axis=0)),
            low_grid=_ticks(np.minimum.accumulate(paths.grid, axis=0)),
            turnover_grid=turnover, ids=vocabulary(tuple(keys.ids)), markets=vocabulary(MARKETS),
        )

    def rows(self, day: _Day, random: ChunkRandom, start: int, stop: int) -> dict:
        n = stop - start
        keys = day.keys
        key = keys.activity.sample(random.uniform(_KEY))
        second, frac = day.clock.locate(start, stop)
        at = second + frac
        last = _ticks(day.paths.at(key, at))
        high = np.maximum(day.paths.at_point(key, at, day.high_grid), last)
        low = np.minimum(day.paths.at_point(key, at, day.low_grid), last)
        traded = np.floor(keys.day_volume[key] * day.clock.activity_share(second, frac) / 100) * 100
        # Zero until the first whole lot has traded, like TradVolume.
        turnover = np.where(traded > 0, np.round(day.paths.at(key, at, day.turnover_grid), 2), 0.0)

        bid1 = np.maximum(last - (random.uniform(_BID_OFFSET) < 0.5), LEVELS * 3)
        ask1 = bid1 + 1 + geometric(random.uniform(_SPREAD), keys.spread_ticks[key])
        asks = ask1 + _offsets(random.uniforms(_ASK_GAPS, LEVELS - 1))
        bids = bid1 - _offsets(random.uniforms(_BID_GAPS, LEVELS - 1))
        ask_lots = log_uniform_int(random.uniforms(_ASK_VOLUMES, LEVELS), 1, 800)
        bid_lots = log_uniform_int(random.uniforms(_BID_VOLUMES, LEVELS), 1, 800)
        orders_sell = _orders(ask_lots, random.uniforms(_ORDERS_SELL, LEVELS))
        orders_buy = _orders(bid_lots, random.uniforms(_ORDERS_BUY, LEVELS))
        ask_volume = (ask_lots * 100).astype(np.int32)
        bid_volume = (bid_lots * 100).astype(np.int32)
        depth = keys.depth[key]

        update_ms = day.clock.clock[second] * 1000 + np.floor(frac * 1000).astype(np.int64)
        latency_ms = log_uniform_int(random.uniform(_LATENCY), 1, 300)
        columns = {
            "UpdateTime": _time(update_ms),
            "TradeDate": np.full(n, day.date_ns, dtype=np.int64).view("datetime64[ns]"),
            "Market": day.markets.codes(keys.markets[key]),
            "SecurityID": day.ids.codes(key),
            "PreCloPrice": day.previous_ticks[key] / 100.0,
            "OpenPrice": day.open_ticks[key] / 100.0,
            "HighPrice": high / 100.0,
            "LowPrice": low / 100.0,
            "LastPrice": last / 100.0,
            "TradNumber": np.ceil(traded / keys.trade_shares[key]).astype(np.int32),
            "TradVolume": traded.astype(np.int32),
            "Turnover": turnover,
            "TotalBidVol": _book_total(bid_lots, depth),
            "WAvgBidPri": _weighted_price(bids, bid_lots),
            "TotalAskVol": _book_total(ask_lots, depth),
            "WAvgAskPri": _weighted_price(asks, ask_lots),
            "IOPV": np.zeros(n),  # only ETFs publish an indicative NAV
        }
        for prefix, matrix in (("AskPrice", asks / 100.0), ("AskVolume", ask_volume),
                               ("BidPrice", bids / 100.0), ("BidVolume", bid_volume),
                               ("NumOrdersB", orders_buy), ("NumOrdersS", orders_sell)):
            for level in range(LEVELS):
                columns[f"{prefix}{level + 1}"] = matrix[level]
        columns["LocalTime"] = _time(update_ms + latency_ms)
        return columns


def _ticks(prices: np.ndarray) -> np.ndarray:
    """Prices in yuan to whole fen (0.01 yuan, the A-share tick)."""
    return np.round(prices * 100.0).astype(np.int64)


def _offsets(u: np.ndarray) -> np.ndarray:
    """Tick distance of levels 1..10 from level 1: gaps of 1 tick, sometimes 2 or 3."""
    gaps = 1 + (u < 0.25) + (u < 0.08)
    offsets = np.zeros((LEVELS, u.shape[1]), dtype=np.int64)
    np.cumsum(gaps, axis=0, out=offsets[1:])
    return offsets


def _orders(lots: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Orders queued at a level: one order per few lots, at least one."""
    return (1 + np.floor(lots * (0.02 + 0.18 * u))).astype(np.int32)


def _book_total(lots: np.ndarray, depth: np.ndarray) -> np.ndarray:
    return (np.round(lots.sum(axis=0) * depth) * 100).astype(np.int32)


def _weighted_price(ticks: np.ndarray, lots: np.ndarray) -> np.ndarray:
    return np.round((ticks * lots).sum(axis=0) / lots.sum(axis=0) / 100.0, 3)


def _time(ms_of_day: np.ndarray) -> np.ndarray:
    return (ms_of_day * 1_000_000).view("datetime64[ns]")
