"""PostgreSQL's SQL text: identifiers and literals quoted, table names, column DDL, the suite
texts' placeholders, and the conversions between DolphinDB's CSV text style and the table's types.

Types: SYMBOL/STRING ``text``, DATE ``date``, SECOND/TIME/TIMESTAMP/NANOTIMESTAMP ``timestamp`` (without
time zone: naive UTC; times of day on 1970-01-01, as the datasets hold them; microseconds, the finest
PostgreSQL keeps, so a NANOTIMESTAMP is rounded down to the microsecond: ``TIME_PRECISION``),
CHAR ``smallint`` (PostgreSQL has no one-byte integer), SHORT ``smallint``, INT ``integer``, LONG ``bigint``, FLOAT ``real``,
DOUBLE ``double precision``, BOOL ``boolean``. ``_seq`` (integer) is each row's arrival ordinal
within its day (``layout``).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import re
from typing import Any

import numpy as np

from workloads.datasets.schema import Scale, Schema


SEQ = "_seq"
MAX_NAME = 40                 # table names stay well under PostgreSQL's 63 bytes with their suffixes
_PG_TYPES = {
    "BOOL": "boolean", "CHAR": "smallint", "SHORT": "smallint", "INT": "integer", "LONG": "bigint",
    "FLOAT": "real", "DOUBLE": "double precision", "DATE": "date", "SECOND": "timestamp",
    "TIME": "timestamp", "TIMESTAMP": "timestamp", "NANOTIMESTAMP": "timestamp", "SYMBOL": "text", "STRING": "text",
}
_TEMPORAL = frozenset({"DATE", "SECOND", "TIME", "TIMESTAMP", "NANOTIMESTAMP"})
TIME_PRECISION = "us"         # PostgreSQL's timestamp: microseconds
_TABLE_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")   # a table the layout has (text_tables), else left as written
_PARAMETER = re.compile(r"%\(([A-Za-z_][A-Za-z0-9_]*)\)s")


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def table_name(dataset: str, scale: Scale) -> str:
    name = f"{dataset}_{scale.key()}"
    if len(name) > MAX_NAME:
        name = f"{name[:MAX_NAME - 9]}_{hashlib.sha1(name.encode()).hexdigest()[:8]}"
    return name


def _columns_ddl(schema: Schema, seq: bool = False) -> str:
    parts = [f"{quote(c.name)} {_PG_TYPES[c.ddb_type]}" for c in schema.columns]
    if seq:
        parts.append(f"{quote(SEQ)} integer NOT NULL")
    return ", ".join(parts)


def sql_literal(value: Any) -> str | None:
    """``value`` as a plain SQL literal (``DATE '2007-08-23'``, ``'AAPL'``, ``42``), as a user
    writes one into a query; None for a value it leaves to psycopg (a backslash in text, which
    ``standard_conforming_strings`` decides; a type not listed). A psycopg cursor made to quote each
    operation's two values cost ~0.15 ms of a 4 ms slice (measured against the practitioner's
    literal SQL, interleaved in one process)."""
    if value is None:
        return "NULL"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, str):
        return None if "\\" in value or "\x00" in value else "'" + value.replace("'", "''") + "'"
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return f"DATE '{value.isoformat()}'"
    return None


# DolphinDB's text style (workloads.datasets.csv_files) to the table's types
_FROM_TEXT = {
    "DATE": "to_date({c}, 'YYYY.MM.DD')",
    "SECOND": "('1970-01-01 ' || {c})::timestamp",
    "TIME": "('1970-01-01 ' || {c})::timestamp",
    "TIMESTAMP": "(replace(substr({c}, 1, 10), '.', '-') || ' ' || substr({c}, 12))::timestamp",
    "NANOTIMESTAMP": "(replace(substr({c}, 1, 10), '.', '-') || ' ' || substr({c}, 12, 15))::timestamp",
    "CHAR": "ascii({c})::smallint",
}
# ... and back as DuckDB's COPY writes them
_TO_TEXT = {
    "DATE": "to_char({c}, 'YYYY-MM-DD')",
    "SECOND": "to_char({c}, 'HH24:MI:SS')",
    "TIME": "to_char({c}, 'HH24:MI:SS.MS')",
    "TIMESTAMP": "to_char({c}, 'YYYY-MM-DD HH24:MI:SS.MS')",
    "NANOTIMESTAMP": "to_char({c}, 'YYYY-MM-DD HH24:MI:SS.US')",
    "CHAR": "chr({c})",
}
