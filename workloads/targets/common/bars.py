"""One-minute OHLC bars of the mid price, computed on the client with pandas (files targets).

Definition shared with the DuckDB target's SQL: mid = (bid + ask) / 2; a bar per minute that has
quotes; open/close are the first/last quote of the minute in stored order (time order, ties in
arrival order); high/low the max/min mid. Columns: minute (datetime64[ns]), open, high, low, close.
"""
from __future__ import annotations

import pandas as pd

from workloads.datasets.schema import DatasetInfo

BAR_COLUMNS = ("minute", "open", "high", "low", "close")


def price_columns(info: DatasetInfo) -> tuple[str, str]:
    """The (bid, ask) columns, or a clear error for a dataset without quotes."""
    bid, ask = info.price_columns
    if not bid or not ask:
        raise ValueError(f"dataset {info.name!r} has no bid/ask price columns: minute bars need them")
    return bid, ask


def minute_bars(frame: pd.DataFrame, time_column: str, bid: str, ask: str) -> pd.DataFrame:
    """Bars of one key-day already selected in ``frame`` (rows in time order)."""
    mid = (frame[bid] + frame[ask]) / 2
    minute = frame[time_column].dt.floor("min").to_numpy()
    bars = mid.groupby(minute, sort=True).agg(["first", "max", "min", "last"])
    bars.columns = list(BAR_COLUMNS[1:])
    bars.index.name = BAR_COLUMNS[0]
    return bars.reset_index()
