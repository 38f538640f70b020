"""ArcticDB symbols and their rows: the names of day and scratch symbols, a day's ``date_range``,
and the timestamp index every stored frame carries."""
from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

from workloads.datasets.schema import DatasetInfo, Schema, StringMode


MANIFEST_SYMBOL = "_tickbench_manifest"
MINUTE_SYMBOL = "_minute"
INDEX_NAME = "_ts"
_EPOCH = np.datetime64(0, "ns")
_TIME_OF_DAY = ("SECOND", "TIME")


def day_symbol(day: dt.date) -> str:
    return f"d{day:%Y%m%d}"


def day_range(day: dt.date) -> tuple[pd.Timestamp, pd.Timestamp]:
    """A day's ``date_range`` (both ends inclusive in ArcticDB)."""
    start = pd.Timestamp(day)
    return start, start + pd.Timedelta(days=1) - pd.Timedelta(1, "ns")


def _time_of_day(info: DatasetInfo) -> bool:
    """Whether the time column is a time of day (on 1970-01-01) beside a separate date column."""
    return (info.date_column != info.time_column
            and info.schema.column(info.time_column).ddb_type in _TIME_OF_DAY
            and info.schema.column(info.date_column).ddb_type == "DATE")


def timestamps(frame: pd.DataFrame, info: DatasetInfo) -> pd.DatetimeIndex:
    """Each row's moment: date + time of day (TAQ), else the time column itself (devices)."""
    times = frame[info.time_column].to_numpy()
    if _time_of_day(info):
        times = frame[info.date_column].to_numpy() + (times - _EPOCH)
    return pd.DatetimeIndex(times, name=INDEX_NAME)


def time_indexed(frame: pd.DataFrame, info: DatasetInfo) -> pd.DataFrame:
    """``frame`` indexed by its rows' moments, sorted (stable: arrival order kept among ties)."""
    indexed = frame.set_axis(timestamps(frame, info), axis=0)
    if not indexed.index.is_monotonic_increasing:
        indexed = indexed.sort_index(kind="stable")
    return indexed


def empty_frame(schema: Schema, strings: StringMode) -> pd.DataFrame:
    return pd.DataFrame({c.name: pd.Series(dtype=c.pandas_dtype(strings)) for c in schema.columns})
