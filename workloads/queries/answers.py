"""Checked answers: a query's result, normalised so that every engine's answer to the same
question reads the same, and fingerprinted.

Normalisation: the suite's column names by position; numbers rounded to ``DIGITS`` significant
digits (engines sum and average in different orders; booleans, integers and decimals become
numbers). Rounding is in two steps: first to ``SNAP_DIGITS`` digits, which erases the last-bit
differences of float arithmetic, so that a value that is exactly a rounding tie (an average of a
few prices in cents often is) reads the same from every engine, then half-to-even to ``DIGITS``; times as ISO text to the millisecond (dates, times of day, timestamps and engines' minute
types alike: a time of day is a time on 1970-01-01, as the datasets hold them); missing values
(None, NaN, NaT) as empty text; rows sorted. The fingerprint is the SHA-256 of that table as CSV.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import math
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

DIGITS = 6
SNAP_DIGITS = 12
PREVIEW_ROWS = 20


def normalise(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    if frame.shape[1] != len(columns):
        raise ValueError(f"the result has {frame.shape[1]} columns, the suite expects {len(columns)}: "
                         f"{', '.join(columns)}")
    out = {}
    for name, (_, series) in zip(columns, frame.items()):
        out[name] = _column(series)
    table = pd.DataFrame(out, columns=list(columns))
    return table.sort_values(list(columns), kind="stable").reset_index(drop=True)


def _column(series: pd.Series) -> list[str]:
    dtype = series.dtype
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return [_time(v) for v in series]
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        return [_number(v) for v in series]
    return [_value(v) for v in series]


def _value(value: Any) -> str:
    if value is None or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_, int, np.integer, float, np.floating, Decimal)):
        return _number(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time, np.datetime64, pd.Timestamp)):
        return _time(value)
    return str(value)


def _number(value: Any) -> str:
    if value is None or value is pd.NA:
        return ""
    number = float(value)
    if math.isnan(number):
        return ""
    if number == 0:
        return "0"
    snapped = Decimal(f"{number:.{SNAP_DIGITS - 1}e}")
    return f"{snapped:.{DIGITS - 1}e}"          # Decimal rounds half to even


def _time(value: Any) -> str:
    if value is None or value is pd.NaT:
        return ""
    if isinstance(value, dt.time):
        value = dt.datetime.combine(dt.date(1970, 1, 1), value)
    elif isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime.combine(value, dt.time())
    stamp = pd.Timestamp(value)
    if pd.isna(stamp):
        return ""
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}"


def fingerprint(normalised: pd.DataFrame) -> str:
    text = normalised.to_csv(index=False, lineterminator="\n")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def preview(normalised: pd.DataFrame, rows: int = PREVIEW_ROWS) -> dict[str, Any]:
    """A small, JSON-ready look at an answer: its size and first rows (for showing a difference)."""
    return {"rows": len(normalised), "columns": list(normalised.columns),
            "head": normalised.head(rows).values.tolist()}
