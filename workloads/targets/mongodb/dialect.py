"""MongoDB's names and BSON types: collection names, the layouts' fields, rows as documents and
suite parameters as stored values, and the words a server uses for a stage or operator it lacks.

Types: strings as strings; DATE as a datetime at midnight UTC; SECOND/TIME as a datetime on
1970-01-01 (BSON has no time of day; milliseconds, as the datasets hold them); TIMESTAMP a
datetime; NANOTIMESTAMP a datetime too, in milliseconds (BSON dates hold no finer: rounded down,
``TIME_PRECISION``); CHAR/SHORT/INT as 32-bit ints, LONG 64-bit, DOUBLE/FLOAT doubles. Reads
cast
pymongoarrow's Arrow table to the dataset's Arrow types, so frames hold DuckDB's rows and dtypes.
``_seq`` is each row's arrival ordinal within its day (ties in (key, time) are frequent: it makes
the first/last quote of a minute well defined and equal to DuckDB's).
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from workloads.datasets.schema import Scale, Schema

MANIFEST = "_tickbench_layouts"
SEQ = "_seq"
TS_FIELD = "_ts"       # a time-series collection's timeField where the day and the time of day are apart (TAQ)
DOCUMENTS, TIMESERIES = "documents", "timeseries"
VARIANTS = (DOCUMENTS, TIMESERIES)
STAND_IN = "mongo-java-server (wire-protocol stand-in, not MongoDB)"
_TEMPORAL = frozenset({"DATE", "SECOND", "TIME", "TIMESTAMP", "NANOTIMESTAMP"})
TIME_PRECISION = "ms"  # a BSON date: milliseconds
EPOCH = dt.datetime(1970, 1, 1)


def table_name(dataset: str, scale: Scale, variant: str = DOCUMENTS) -> str:
    return f"{dataset}_{scale.key()}" + ("_ts" if variant == TIMESERIES else "")


# What a server says when it lacks a stage or an operator: (pattern, what the verdict names)
_UNKNOWN = (re.compile(r"Unrecognized pipeline stage name: '(\$\w+)'"),
            re.compile(r"Unrecognized window function, (\$\w+)"),
            re.compile(r"Unrecognized expression '(\$\w+)'"),
            re.compile(r"[Uu]nknown group operator '(\$\w+)'"))


def lacking(message: str) -> str | None:
    """The stage or operator a server's error says it does not know, else None."""
    for pattern in _UNKNOWN:
        found = pattern.search(message)
        if found:
            return found.group(1)
    return None


def bson_arrow_schema(schema: Schema) -> pa.Schema:
    """The Arrow types pymongoarrow builds from the stored BSON (module doc: Types): 32-bit ints
    for CHAR/SHORT/INT, datetimes in milliseconds, doubles, strings; ``arrow_schema`` after a cast."""
    def typ(column) -> pa.DataType:
        if column.is_string:
            return pa.string()
        if column.ddb_type in _TEMPORAL:
            return pa.timestamp("ms")
        return {"BOOL": pa.bool_(), "LONG": pa.int64(), "FLOAT": pa.float64(),
                "DOUBLE": pa.float64()}.get(column.ddb_type, pa.int32())
    return pa.schema([pa.field(c.name, typ(c)) for c in schema.columns])


def documents(frame: pd.DataFrame, schema: Schema, seq_start: int | None = None,
              stamp: tuple[str, str] | None = None) -> list[dict[str, Any]]:
    """Rows as BSON-ready documents (module doc: Types), ``_seq`` from ``seq_start``; ``stamp``
    (the day column, the time-of-day column) adds ``_ts``, their sum (a time-series timeField)."""
    names, columns = [], []
    if stamp is not None:
        day = frame[stamp[0]].to_numpy().astype("datetime64[ms]")
        clock = frame[stamp[1]].to_numpy().astype("datetime64[ms]") - np.datetime64(0, "ms")
        names.append(TS_FIELD)
        columns.append((day + clock).tolist())
    for column in schema.columns:
        series = frame[column.name]
        if column.is_string:
            values = series.astype(object).tolist()
        elif column.ddb_type in _TEMPORAL:
            values = series.to_numpy().astype("datetime64[ms]").tolist()
        else:
            values = series.to_numpy().tolist()
        names.append(column.name)
        columns.append(values)
    if seq_start is not None:
        names.append(SEQ)
        columns.append(range(seq_start, seq_start + len(frame)))
    return [dict(zip(names, row)) for row in zip(*columns)]


def bson_value(value: Any) -> Any:
    """A suite parameter as the stored type: a date at midnight, a time of day on 1970-01-01."""
    if isinstance(value, (list, tuple)):
        return [bson_value(v) for v in value]
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time())
    if isinstance(value, dt.time):
        return dt.datetime.combine(EPOCH.date(), value)
    if isinstance(value, np.generic):
        return value.item()
    return value
