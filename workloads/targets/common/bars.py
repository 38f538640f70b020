"""One-minute OHLC bars of the mid price, computed on the client with pandas (files targets).

Definition shared with every engine's own bars (DuckDB's SQL, ClickHouse's, ...): mid = (bid + ask) / 2
(one price given as its own bid and ask is its own mid); a bar per minute that has rows; open/close are
the first/last row of the minute in stored order (time order, ties in arrival order); high/low the
max/min mid. Columns: minute (datetime64[ns]), open, high, low, close; and, for a dataset with a size
column (``DatasetInfo.size_column``: a user's trades), volume = the sum of the size over the minute,
int64 for an integer size and float64 otherwise. TAQ, level 2, devices and api45 name no size: their
bars keep the five columns.
"""
from __future__ import annotations

import pandas as pd

from workloads.datasets.schema import DatasetInfo

BAR_COLUMNS = ("minute", "open", "high", "low", "close")
VOLUME = "volume"
_INTEGER_SIZES = frozenset({"CHAR", "SHORT", "INT", "LONG"})


def price_columns(info: DatasetInfo) -> tuple[str, str]:
    """The (bid, ask) columns, or a clear error for a dataset without quotes."""
    bid, ask = info.price_columns
    if not bid or not ask:
        raise ValueError(f"dataset {info.name!r} has no bid/ask price columns: minute bars need them")
    return bid, ask


def bar_columns(info: DatasetInfo) -> tuple[str, ...]:
    """The bars' columns for ``info``: the five, then volume when it names a size."""
    return BAR_COLUMNS + ((VOLUME,) if info.size_column else ())


def volume_dtype(info: DatasetInfo) -> str:
    """The volume's dtype: int64 for an integer size (an engine's wider sum is cast back), else float64."""
    return "int64" if info.schema.column(info.size_column).ddb_type in _INTEGER_SIZES else "float64"


def minute_bars(frame: pd.DataFrame, time_column: str, bid: str, ask: str, size: str = "") -> pd.DataFrame:
    """Bars of one key-day already selected in ``frame`` (rows in time order); with ``size``, its
    sum per minute as ``volume``."""
    mid = (frame[bid] + frame[ask]) / 2
    minute = frame[time_column].dt.floor("min").to_numpy()
    bars = mid.groupby(minute, sort=True).agg(["first", "max", "min", "last"])
    bars.columns = list(BAR_COLUMNS[1:])
    if size:
        sizes = frame[size]
        total = sizes.groupby(minute, sort=True).sum()
        bars[VOLUME] = total.astype("int64" if sizes.dtype.kind in "iu" else "float64")
    bars.index.name = BAR_COLUMNS[0]
    return bars.reset_index()
