"""The 45-column table of report 002's API benchmark, as an order/execution blotter.

Report 002 only says: 45 columns of STRING, INT, LONG, SYMBOL, DOUBLE, DATE and TIME, 336 bytes
per row. This design has exactly that mix and size when a STRING counts as its text plus a
terminating byte (DolphinDB's encoding): 228 bytes of fixed-width values + 108 of text.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from workloads.datasets._chunks import ChunkedDataset, ChunkRandom, dataset_tag, seeded, weekdays_from
from workloads.datasets._names import tickers
from workloads.datasets._shapes import (KeyActivity, PricePaths, SessionClock, categorical,
                                        daily_levels, geometric, grid_step, log_uniform_int)
from workloads.datasets._strings import Chars, Vocabulary, put_choice, put_digits, put_text, vocabulary
from workloads.datasets.schema import DDB_VALUE_BYTES, Column, DatasetInfo, Scale, Schema

_COLUMNS = (
    ("trade_date", "DATE"), ("order_time", "TIME"), ("order_id", "LONG"),
    ("client_order_id", "STRING"), ("account", "STRING"), ("trader", "STRING"),
    ("portfolio", "STRING"), ("symbol", "SYMBOL"), ("exchange", "SYMBOL"), ("side", "SYMBOL"),
    ("order_type", "SYMBOL"), ("time_in_force", "SYMBOL"), ("status", "SYMBOL"),
    ("currency", "SYMBOL"), ("broker", "SYMBOL"), ("strategy", "SYMBOL"), ("price", "DOUBLE"),
    ("limit_price", "DOUBLE"), ("stop_price", "DOUBLE"), ("bid", "DOUBLE"), ("ask", "DOUBLE"),
    ("order_qty", "INT"), ("filled_qty", "INT"), ("leaves_qty", "INT"), ("last_qty", "INT"),
    ("avg_price", "DOUBLE"), ("notional", "DOUBLE"), ("commission", "DOUBLE"), ("fees", "DOUBLE"),
    ("tax", "DOUBLE"), ("trade_time", "TIME"), ("ack_time", "TIME"), ("settle_date", "DATE"),
    ("trade_id", "LONG"), ("venue_order_id", "STRING"), ("seq_no", "LONG"), ("position", "LONG"),
    ("max_position", "LONG"), ("realized_pnl", "DOUBLE"), ("unrealized_pnl", "DOUBLE"),
    ("participation", "DOUBLE"), ("latency_us", "INT"), ("reject_code", "INT"),
    ("counterparty", "SYMBOL"), ("remark", "STRING"),
)
SCHEMA = Schema(tuple(Column(name, ddb_type) for name, ddb_type in _COLUMNS))
assert len(SCHEMA.columns) == 45, "report 002's table has 45 columns"

REPORT_ROW_BYTES = 336  # report 002: 1,000,000 rows = 336 MB

INFO = DatasetInfo(
    name="api45", title="45-column order blotter (API test)", schema=SCHEMA,
    date_column="trade_date", key_column="symbol", time_column="order_time",
    price_columns=("bid", "ask"),
    notes="The 45-column STRING/INT/LONG/SYMBOL/DOUBLE/DATE/TIME table of report 002's API "
          "upload and download tests, designed as an order blotter; 336 bytes per row in "
          "DolphinDB's encoding, as in the report.",
    extra={"default_start": "2020-06-01", "sessions": [["09:30:00", "16:00:00"]],
           "row_bytes": REPORT_ROW_BYTES, "seed_rows_per_day": 1_000_000, "seed_symbols": 500},
)

SESSION = (9 * 3600 + 30 * 60, 16 * 3600)
EXCHANGES = {"XNAS": 0.32, "XNYS": 0.28, "ARCX": 0.16, "BATS": 0.14, "EDGX": 0.10}
SIDES = {"B": 0.50, "S": 0.42, "SS": 0.08}
ORDER_TYPES = {"LIMIT": 0.70, "MARKET": 0.22, "STOP": 0.05, "STOP_LIMIT": 0.03}
TIME_IN_FORCE = {"DAY": 0.75, "IOC": 0.15, "GTC": 0.07, "FOK": 0.03}
STATUSES = {"FILLED": 0.62, "PARTIAL": 0.12, "CANCELED": 0.14, "NEW": 0.08, "REJECTED": 0.04}
CURRENCIES = {"USD": 0.94, "CAD": 0.04, "EUR": 0.02}
BROKERS = {"GSCO": 0.2, "MSCO": 0.18, "JPMS": 0.16, "UBSS": 0.12, "CSFB": 0.1, "BARC": 0.09,
           "CITI": 0.08, "DBAB": 0.07}
STRATEGIES = {"VWAP_": 0.3, "TWAP_": 0.2, "POV__": 0.15, "IS___": 0.15, "DMA__": 0.12, "CLOSE": 0.08}
URGENCIES = ("LOW_", "MED_", "HIGH")
REJECT_CODES = np.array([101, 102, 201, 305], dtype=np.int32)
COUNTERPARTIES = tuple(f"CP{i:03d}" for i in range(24))
_STATUS = {name: i for i, name in enumerate(STATUSES)}
_TYPE = {name: i for i, name in enumerate(ORDER_TYPES)}


@dataclass(frozen=True)
class _Keys:
    names: list[str]
    activity: KeyActivity
    base_price: np.ndarray
    daily_vol: np.ndarray
    accounts: KeyActivity        # which account sends an order
    account_names: list[str]
    trader_of: np.ndarray        # code into trader_names per account
    trader_names: list[str]
    portfolio_names: list[str]   # one per account
    max_position: np.ndarray     # per account


@dataclass(frozen=True)
class _Day:
    keys: _Keys
    day: dt.date
    date_ns: int
    settle_ns: int
    clock: SessionClock
    paths: PricePaths
    text: dict[str, Vocabulary]


class Api45Dataset(ChunkedDataset):
    info = INFO
    default_start = "2020-06-01"

    def keys(self, scale: Scale) -> list[str]:
        return list(self._keys(scale.seed, scale.symbols).names)

    @staticmethod
    @lru_cache(maxsize=8)
    def _keys(seed: int, count: int) -> _Keys:
        tag = dataset_tag(INFO.name)
        names = tickers(seeded(seed, tag, 1), count)
        rng = seeded(seed, tag, 2)
        accounts = max(20, count // 5)
        traders = max(5, accounts // 4)
        account_ids = rng.choice(100_000_000, size=accounts, replace=False)
        letters = rng.integers(65, 91, size=(accounts, 4), dtype=np.uint8)
        return _Keys(
            names=names, activity=KeyActivity(count, exponent=1.0, offset=4.0),
            base_price=np.clip(np.exp(rng.normal(3.6, 0.8, count)), 2.0, 900.0),
            daily_vol=0.012 + 0.02 * rng.random(count),
            accounts=KeyActivity(accounts, exponent=0.8, offset=2.0),
            account_names=[f"AC{a:08d}" for a in account_ids],
            trader_of=rng.integers(0, traders, accounts),
            trader_names=[f"TRD{t:05d}" for t in range(1, traders + 1)],
            portfolio_names=[f"PF-{row.tobytes().decode()}-{i % 10000:04d}" for i, row in enumerate(letters)],
            max_position=rng.integers(1, 50, accounts) * 100_000,
        )

    def day_context(self, day_index: int, day: dt.date, scale: Scale) -> _Day:
        keys = self._keys(scale.seed, scale.symbols)
        tag = dataset_tag(INFO.name)
        _, opening, closing = daily_levels(seeded(scale.seed, tag, 3), keys.base_price,
                                           keys.daily_vol, day_index)
        clock = SessionClock([SESSION], scale.rows_per_day)
        paths = PricePaths(seeded(scale.seed, tag, 4, day_index), opening, closing, keys.daily_vol,
                           clock.seconds, grid_step(clock.seconds, scale.symbols))
        settle = weekdays_from(day, 3)[2]  # T+2
        text = {name: vocabulary(tuple(values)) for name, values in (
            ("symbol", keys.names), ("account", keys.account_names), ("trader", keys.trader_names),
            ("portfolio", keys.portfolio_names), ("exchange", EXCHANGES), ("side", SIDES),
            ("order_type", ORDER_TYPES), ("time_in_force", TIME_IN_FORCE), ("status", STATUSES),
            ("currency", CURRENCIES), ("broker", BROKERS),
            ("strategy", [s.rstrip("_") for s in STRATEGIES]), ("counterparty", COUNTERPARTIES))}
        return _Day(keys, day, _ns(day), _ns(settle), clock, paths, text)

    def rows(self, day: _Day, random: ChunkRandom, start: int, stop: int) -> dict:
        n = stop - start
        keys = day.keys
        u = random.uniform
        row = np.arange(start, stop, dtype=np.int64)
        key = keys.activity.sample(u(0))
        account = keys.accounts.sample(u(1))
        second, frac = day.clock.locate(start, stop)
        mid = day.paths.at(key, second + frac)
        half_spread = np.round(mid * 2e-4, 2) + 0.01
        bid, ask = np.round(mid, 2) - half_spread, np.round(mid, 2) + half_spread

        side = categorical(u(2), list(SIDES.values()))
        buying = side == 0
        order_type = categorical(u(3), list(ORDER_TYPES.values()))
        status = categorical(u(4), list(STATUSES.values()))
        order_qty = log_uniform_int(u(5), 1, 500) * 100
        fill_u = u(6)
        fill_share = np.select([status == _STATUS["FILLED"], status == _STATUS["PARTIAL"],
                                status == _STATUS["CANCELED"]], [1.0, fill_u, 0.3 * fill_u], 0.0)
        filled = np.floor(order_qty * fill_share / 100) * 100
        open_order = (status == _STATUS["NEW"]) | (status == _STATUS["PARTIAL"])
        leaves = np.where(open_order, order_qty - filled, 0)
        last_qty = np.minimum(filled, log_uniform_int(u(7), 1, 50) * 100)
        touch = np.where(buying, ask, bid)
        slippage = np.round(mid * 5e-4 * (u(8) - 0.3), 4)
        avg_price = np.where(filled > 0, np.round(touch + np.where(buying, slippage, -slippage), 4), 0.0)
        notional = np.round(filled * avg_price, 2)
        limited = (order_type == _TYPE["LIMIT"]) | (order_type == _TYPE["STOP_LIMIT"])
        stopped = order_type >= _TYPE["STOP"]
        limit_price = np.where(limited, np.round(touch * (1 + np.where(buying, 1, -1) * 0.002 * u(9)), 2), 0.0)
        stop_price = np.where(stopped, np.round(mid * np.where(buying, 1.02, 0.98), 2), 0.0)

        order_ms = day.clock.clock[second] * 1000 + np.floor(frac * 1000).astype(np.int64)
        latency_us = log_uniform_int(u(10), 40, 20_000)
        fill_ms = log_uniform_int(u(11), 1, 5_000)
        strategy = categorical(u(12), list(STRATEGIES.values()))
        yyyymmdd = day.day.year * 10_000 + day.day.month * 100 + day.day.day
        t = day.text
        return {
            "trade_date": _dates(day.date_ns, n),
            "order_time": _time(order_ms),
            "order_id": yyyymmdd * 1_000_000_000 + row,
            "client_order_id": _client_order_ids(yyyymmdd % 1_000_000, row),
            "account": t["account"].codes(account),
            "trader": t["trader"].codes(keys.trader_of[account]),
            "portfolio": t["portfolio"].codes(account),
            "symbol": t["symbol"].codes(key),
            "exchange": t["exchange"].codes(categorical(u(13), list(EXCHANGES.values()))),
            "side": t["side"].codes(side),
            "order_type": t["order_type"].codes(order_type),
            "time_in_force": t["time_in_force"].codes(categorical(u(14), list(TIME_IN_FORCE.values()))),
            "status": t["status"].codes(status),
            "currency": t["currency"].codes(categorical(u(15), list(CURRENCIES.values()))),
            "broker": t["broker"].codes(categorical(u(16), list(BROKERS.values()))),
            "strategy": t["strategy"].codes(strategy),
            "price": np.round(mid, 4),
            "limit_price": limit_price,
            "stop_price": stop_price,
            "bid": bid,
            "ask": ask,
            "order_qty": order_qty.astype(np.int32),
            "filled_qty": filled.astype(np.int32),
            "leaves_qty": leaves.astype(np.int32),
            "last_qty": last_qty.astype(np.int32),
            "avg_price": avg_price,
            "notional": notional,
            "commission": np.round(filled * 0.0035, 2),
            "fees": np.round(filled * 0.000119, 2),
            "tax": np.where(buying, 0.0, np.round(notional * 2.21e-5, 2)),  # SEC fee on sales
            "trade_time": _time(order_ms + np.where(filled > 0, fill_ms, 0)),
            "ack_time": _time(order_ms + latency_us // 1000),
            "settle_date": _dates(day.settle_ns, n),
            "trade_id": np.where(filled > 0, yyyymmdd * 1_000_000_000 + 500_000_000 + row, 0),
            "venue_order_id": _venue_order_ids(u(13), row),
            "seq_no": row + 1,
            "position": np.round((u(17) - 0.45) * keys.max_position[account] / 100).astype(np.int64) * 100,
            "max_position": keys.max_position[account].astype(np.int64),
            "realized_pnl": np.round(np.where(buying, 0.0, notional * 0.02 * (u(18) - 0.45)), 2),
            "unrealized_pnl": np.round(filled * mid * 0.01 * (u(19) - 0.5), 2),
            "participation": np.round(0.25 * u(20) * (filled > 0), 4),
            "latency_us": latency_us.astype(np.int32),
            "reject_code": np.where(status == _STATUS["REJECTED"],
                                    REJECT_CODES[(u(21) * len(REJECT_CODES)).astype(np.int64)], 0).astype(np.int32),
            "counterparty": t["counterparty"].codes(geometric(u(22), 4.0) % len(COUNTERPARTIES)),
            "remark": _remarks(strategy, u(23), row),
        }


def mean_row_bytes(frame: pd.DataFrame, schema: Schema = SCHEMA) -> float:
    """Mean bytes per row in DolphinDB's encoding, a STRING counting its text length + 1."""
    total = 0.0
    for column in schema.columns:
        if column.ddb_type == "STRING":
            total += frame[column.name].astype(str).str.len().mean() + 1
        else:
            total += DDB_VALUE_BYTES[column.ddb_type]
    return total


def _client_order_ids(yymmdd: int, row: np.ndarray) -> Chars:
    """"C" + yymmdd + 9-digit sequence: 16 characters, unique per day."""
    chars = np.empty((len(row), 16), dtype=np.uint8)
    put_text(chars, 0, "C")
    put_digits(chars, 1, 6, np.full(len(row), yymmdd))
    put_digits(chars, 7, 9, row)
    return Chars(chars)


def _venue_order_ids(exchange_u: np.ndarray, row: np.ndarray) -> Chars:
    """Venue MIC (the same draw as the ``exchange`` column) + 16 digits that look random."""
    chars = np.empty((len(row), 20), dtype=np.uint8)
    put_choice(chars, 0, list(EXCHANGES), categorical(exchange_u, list(EXCHANGES.values())))
    put_digits(chars, 4, 16, _scramble(row))
    return Chars(chars)


def _scramble(row: np.ndarray) -> np.ndarray:
    """``row * A mod 10**16``: unique per row since A is coprime with 10; split in halves so the
    product never overflows int64."""
    a_high, a_low = divmod(3_141_592_653_589_793, 10**8)
    high = (row * a_high) % 10**8
    return (high * 10**8 + row * a_low + 271_828_182_845_904) % 10**16


def _remarks(strategy: np.ndarray, urgency_u: np.ndarray, row: np.ndarray) -> Chars:
    """"algo=VWAP_;urg=HIGH;ref=000000001234": 36 characters of routing notes."""
    chars = np.empty((len(row), 36), dtype=np.uint8)
    put_text(chars, 0, "algo=")
    put_choice(chars, 5, list(STRATEGIES), strategy)
    put_text(chars, 10, ";urg=")
    put_choice(chars, 15, URGENCIES, (urgency_u * len(URGENCIES)).astype(np.int64))
    put_text(chars, 19, ";ref=")
    put_digits(chars, 24, 12, row * 37 + 1_000)
    return Chars(chars)


def _ns(day: dt.date) -> int:
    return int(np.datetime64(day, "ns").astype(np.int64))


def _dates(day_ns: int, n: int) -> np.ndarray:
    return np.full(n, day_ns, dtype=np.int64).view("datetime64[ns]")


def _time(ms_of_day: np.ndarray) -> np.ndarray:
    return (ms_of_day * 1_000_000).view("datetime64[ns]")
