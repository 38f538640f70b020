"""QuestDB's SQL text: identifiers and literals quoted, Python values as literals, table names,
the designated timestamp, column DDL, and the type maps of ``/imp`` imports and CSV exports.

Types: SYMBOL ``SYMBOL``, STRING ``VARCHAR``, DATE ``DATE``, SECOND/TIME/TIMESTAMP/NANOTIMESTAMP
``TIMESTAMP`` (times of day on 1970-01-01, as the datasets hold them; microseconds, so a
NANOTIMESTAMP is rounded down to the microsecond: ``TIME_PRECISION``), CHAR ``BYTE``, SHORT
``SHORT``, INT ``INT``, LONG ``LONG``, FLOAT ``FLOAT``, DOUBLE ``DOUBLE``, BOOL ``BOOLEAN``.
"""
from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

from workloads.datasets.base import is_day_series
from workloads.datasets.schema import DatasetInfo, Scale, Schema


SEQ = "_seq"
TS = "_ts"
_QDB_TYPES = {
    "BOOL": "BOOLEAN", "CHAR": "BYTE", "SHORT": "SHORT", "INT": "INT", "LONG": "LONG", "FLOAT": "FLOAT",
    "DOUBLE": "DOUBLE", "DATE": "DATE", "SECOND": "TIMESTAMP", "TIME": "TIMESTAMP", "TIMESTAMP": "TIMESTAMP",
    "NANOTIMESTAMP": "TIMESTAMP", "SYMBOL": "SYMBOL", "STRING": "VARCHAR",
}
_TEMPORAL = frozenset({"SECOND", "TIME", "TIMESTAMP", "NANOTIMESTAMP", "DATE"})
TIME_PRECISION = "us"         # QuestDB's TIMESTAMP: microseconds
# /imp's parse patterns for DolphinDB's text style (workloads.datasets.csv_files)
_IMP_PATTERNS = {"DATE": "yyyy.MM.dd", "SECOND": "HH:mm:ss", "TIME": "HH:mm:ss.SSS",
                 "TIMESTAMP": "yyyy.MM.ddTHH:mm:ss.SSS"}
# export: DuckDB's COPY style for times of day and dates
_TO_TEXT = {"DATE": "to_str({c}, 'yyyy-MM-dd')", "SECOND": "to_str({c}, 'HH:mm:ss')",
            "TIME": "to_str({c}, 'HH:mm:ss.SSS')", "TIMESTAMP": "to_str({c}, 'yyyy-MM-dd HH:mm:ss.SSS')",
            "NANOTIMESTAMP": "to_str({c}, 'yyyy-MM-dd HH:mm:ss.SSSUUU')", "CHAR": "cast({c} AS CHAR)"}


def quote(name: str) -> str:
    """A QuestDB identifier, quoted."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def char_code(column: str) -> str:
    """A CHAR column's letter as its code (QuestDB casts no CHAR to a number): printable ASCII."""
    return f"CASE {column} " + " ".join(f"WHEN {literal(chr(i))} THEN {i}" for i in range(32, 127)) + " END"


def table_name(dataset: str, scale: Scale) -> str:
    return f"{dataset}_{scale.key()}"


def sql_value(value: Any) -> str:
    """A Python value as a QuestDB literal (suite parameters; lists as ``a, b`` for ``IN (...)``)."""
    if isinstance(value, (list, tuple)):
        return ", ".join(sql_value(v) for v in value)
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        value = pd.Timestamp(value).to_pydatetime()
    if isinstance(value, dt.datetime):
        return literal(value.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
    if isinstance(value, dt.date):
        return literal(value.isoformat())
    if isinstance(value, dt.time):
        return literal("1970-01-01T" + value.strftime("%H:%M:%S.%fZ"))
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return repr(value.item() if hasattr(value, "item") else value)
    return literal(str(value))


def designated(info: DatasetInfo) -> str:
    """The designated timestamp: the time column when it holds full instants, else ``_ts``."""
    column = info.schema.column(info.time_column)
    if column.ddb_type in ("TIMESTAMP", "NANOTIMESTAMP") and info.date_column == info.time_column:
        return info.time_column
    return TS


def side_timestamp(info: DatasetInfo, schema: Schema) -> str:
    """A side table's designated timestamp: the main table's ``_ts`` when it is a time series of
    the dataset's own days (its date and time columns: TAQ's trades), else "" (devices' info: none)."""
    if designated(info) == TS and is_day_series(info, schema):
        return TS
    return ""


def _columns_ddl(schema: Schema, ts: str, seq: bool) -> str:
    parts = [f"{quote(c.name)} {_QDB_TYPES[c.ddb_type]}" for c in schema.columns]
    if seq:
        parts.append(f"{quote(SEQ)} LONG")
    if ts not in schema.names:
        parts.append(f"{quote(ts)} TIMESTAMP")
    return ", ".join(parts)
