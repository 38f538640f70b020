"""ClickHouse's SQL text for the target: identifiers, literals and query parameters, the type map
and the tables' DDL, the Arrow form of a load and of a reply, and the CSV text conversions of imports
and exports (plus the clock and the one-line error text every part of the target uses).

Types: SYMBOL ``LowCardinality(String)``, STRING ``String``, DATE ``Date``, SECOND
``DateTime64(0, 'UTC')``, TIME/TIMESTAMP ``DateTime64(3, 'UTC')`` (times of day on 1970-01-01, as
the datasets hold them), an imported NANOTIMESTAMP ``DateTime64(9, 'UTC')`` (kept to the ns), CHAR
``Int8``, INT ``Int32``, LONG ``Int64``, DOUBLE ``Float64``..., default codecs (LZ4), wide parts at
every scale (as a real day's size gets them: per-column sizes are then known). Loads go as Arrow
with explicit UTC times and dates, so the machine's time zone never shifts a value.
"""
from __future__ import annotations

import datetime as dt
import re
import time
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from workloads.datasets.schema import DatasetInfo, Scale, Schema
from workloads.targets.common.arrow_frames import arrow_schema, arrow_table
from workloads.targets.common.row_order import order_columns

SEQ = "_seq"                   # arrival ordinal within the day: ties in (key, time) keep their order

_CH_TYPES = {
    "BOOL": "Bool", "CHAR": "Int8", "SHORT": "Int16", "INT": "Int32", "LONG": "Int64",
    "FLOAT": "Float32", "DOUBLE": "Float64", "DATE": "Date", "SECOND": "DateTime64(0, 'UTC')",
    "TIME": "DateTime64(3, 'UTC')", "TIMESTAMP": "DateTime64(3, 'UTC')", "NANOTIMESTAMP": "DateTime64(9, 'UTC')",
    "SYMBOL": "LowCardinality(String)", "STRING": "String",
}
_TEMPORAL = frozenset({"SECOND", "TIME", "TIMESTAMP", "NANOTIMESTAMP"})
TIME_PRECISION = "ns"          # the finest it keeps: DateTime64(9) holds an imported NANOTIMESTAMP whole
_INT_PARAM = {"CHAR": "Int8", "SHORT": "Int16", "INT": "Int32", "LONG": "Int64"}

# Suite texts name tables as {quotes}/{readings}/{info}; ClickHouse's {name:Type} are parameters
_TABLE_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")   # a table the layout has (text_tables), else left as written
_PARAMETER = re.compile(r"\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:")
_SETTINGS = re.compile(r"\bSETTINGS\b", re.IGNORECASE)


def _now() -> float:
    return time.perf_counter()


def quote(name: str) -> str:
    """A ClickHouse identifier, quoted (names come from schemas and callers, never from SQL text)."""
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


def literal(text: str) -> str:
    """A ClickHouse string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


_PLACEHOLDER = re.compile(r"\{(\w+):([^{}]+)\}")
_INTEGER_TYPES = frozenset(_INT_PARAM.values())


def with_literals(sql: str, params: dict[str, Any]) -> str | None:
    """``sql`` with its ``{name:Type}`` placeholders written as the literals a user types (text
    quoted, integers as they are, a date as its ISO text: this target compares ``Date``
    placeholders with Date columns only, where ClickHouse converts the text); None when a
    placeholder is of another kind (chDB then binds it). chDB's bound parameters, and a
    ``CAST('2007-08-23' AS Date)`` alike, cost ~2 % of a 6 ms slice beside the plain literals
    (measured interleaved in one process)."""
    def written(match: re.Match) -> str:
        value, kind = params[match.group(1)], match.group(2)
        if kind == "String" and isinstance(value, str) and "\0" not in value:
            return literal(value)
        if kind in _INTEGER_TYPES and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return str(int(value))
        if kind == "Date" and isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return f"'{value.isoformat()}'"
        raise LookupError(kind)
    try:
        return _PLACEHOLDER.sub(written, sql)
    except (LookupError, KeyError):
        return None


def table_name(dataset: str, scale: Scale) -> str:
    return f"{dataset}_{scale.key()}"


def _escape(text: str) -> str:
    """ClickHouse's escaped-text form of a query parameter's value (as HTTP ``param_`` sends it)."""
    return (text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            .replace("\r", "\\r").replace("\0", "\\0"))


def _value_text(value: Any) -> str:
    """A parameter value as ClickHouse parses it: ISO dates, times with milliseconds."""
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        value = pd.Timestamp(value).to_pydatetime()
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ", timespec="milliseconds")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    return str(value)


def _element(value: Any) -> str:
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return str(value)
    return literal(_value_text(value))


def param_text(value: Any) -> str:
    """A Python value as the text of a ClickHouse query parameter (chDB ``params``, HTTP ``param_``)."""
    if isinstance(value, (list, tuple)):
        return _escape("[" + ", ".join(_element(v) for v in value) + "]")
    return _escape(_value_text(value))


def _first_line(text: str) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def _columns_ddl(schema: Schema, seq: bool = False) -> str:
    parts = [f"{quote(c.name)} {_CH_TYPES[c.ddb_type]}" for c in schema.columns]
    if seq:
        parts.append(f"{quote(SEQ)} UInt32")
    return ", ".join(parts)


def _engine_ddl(info: DatasetInfo, seq: bool = False) -> str:
    day = info.schema.column(info.date_column)
    partition = quote(day.name) if day.ddb_type == "DATE" else f"toDate({quote(day.name)})"
    order = [quote(c) for c in order_columns(info)]     # (key, time), or time alone without a key
    if seq:
        order.append(quote(SEQ))
    # wide parts at every scale (a real day's size gets them anyway): per-column sizes are known
    return (f"ENGINE = MergeTree PARTITION BY {partition} ORDER BY ({', '.join(order)}) "
            "SETTINGS min_bytes_for_wide_part = 0, min_rows_for_wide_part = 0")


def insert_arrow(frame: pd.DataFrame, schema: Schema, seq_start: int | None = None) -> pa.Table:
    """A frame as the Arrow table ClickHouse loads: dates as date32, times as UTC timestamps (so
    no time zone, the machine's or the server's, shifts them), ``_seq`` from ``seq_start``."""
    table = arrow_table(frame, arrow_schema(schema))
    columns, fields = [], []
    for column, values in zip(schema.columns, table.columns):
        if column.ddb_type == "DATE":
            values = values.cast(pa.date32())
        elif column.ddb_type in _TEMPORAL:
            values = values.cast(pa.timestamp("ns", tz="UTC"))
        columns.append(values)
        fields.append(pa.field(column.name, values.type))
    if seq_start is not None:
        columns.append(pa.array(np.arange(seq_start, seq_start + len(table), dtype=np.uint32)))
        fields.append(pa.field(SEQ, pa.uint32()))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def naive_times(table: pa.Table) -> pa.Table:
    """ClickHouse's timestamps come back tz-aware (UTC): the datasets' convention is naive UTC.
    The same values under the naive type, viewed in place: a cast of the whole table (its other
    columns cast to themselves) cost a 5 ms chDB slice ~1 % (44 us against 4)."""
    for index, field in enumerate(table.schema):
        if pa.types.is_timestamp(field.type) and field.type.tz is not None:
            naive = pa.timestamp(field.type.unit)
            column = pa.chunked_array([chunk.view(naive) for chunk in table.column(index).chunks], naive)
            table = table.set_column(index, field.with_type(naive), column)
    return table


# DolphinDB's text style (workloads.datasets.csv_files) to the table's types, column by column
_FROM_TEXT = {
    "DATE": "toDate(replaceAll({c}, '.', '-'))",
    "SECOND": "toDateTime64(concat('1970-01-01 ', {c}), 0, 'UTC')",
    "TIME": "toDateTime64(concat('1970-01-01 ', {c}), 3, 'UTC')",
    "TIMESTAMP": "toDateTime64(concat(replaceAll(substring({c}, 1, 10), '.', '-'), ' ', substring({c}, 12)), 3, 'UTC')",
    "NANOTIMESTAMP": "parseDateTime64BestEffort({c}, 9, 'UTC')",
    "CHAR": "toInt8(ascii({c}))",
    "BOOL": "toBool({c})",
    "SYMBOL": "{c}",
    "STRING": "{c}",
}


def _text_structure(schema: Schema) -> str:
    return ", ".join(f"{quote(c.name)} String" for c in schema.columns)


def _from_text_sql(schema: Schema) -> str:
    parts = []
    for c in schema.columns:
        expr = _FROM_TEXT.get(c.ddb_type, f"CAST({{c}} AS {_CH_TYPES[c.ddb_type]})")
        parts.append(expr.format(c=quote(c.name)) + f" AS {quote(c.name)}")
    return ", ".join(parts)


# The table's types as DuckDB's COPY writes them: a time of day without its 1970-01-01, a CHAR as
# its letter, timestamps with their milliseconds
_TO_TEXT = {
    "SECOND": "formatDateTime({c}, '%H:%i:%S')",
    "TIME": "substring(toString({c}), 12)",
    "TIMESTAMP": "toString({c})",
    "CHAR": "char({c})",
}


def _to_text_sql(schema: Schema, qualifier: str = "") -> str:
    return ", ".join(_TO_TEXT.get(c.ddb_type, "{c}").format(c=qualifier + quote(c.name)) + f" AS {quote(c.name)}"
                     for c in schema.columns)
