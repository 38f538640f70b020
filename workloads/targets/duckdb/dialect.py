"""DuckDB's SQL text: quoted identifiers and literals, the schema's types as SQL, the conversions
from and to the CSV files' text, and the names of the tables a layout uses."""
from __future__ import annotations

from workloads.datasets.schema import Scale, Schema


MANIFEST_TABLE = "_tickbench_layouts"


_SQL_TYPES = {
    "BOOL": "BOOLEAN", "CHAR": "TINYINT", "SHORT": "SMALLINT", "INT": "INTEGER", "LONG": "BIGINT",
    "FLOAT": "REAL", "DOUBLE": "DOUBLE", "DATE": "DATE", "SECOND": "TIMESTAMP", "TIME": "TIMESTAMP",
    "TIMESTAMP": "TIMESTAMP", "NANOTIMESTAMP": "TIMESTAMP_NS", "SYMBOL": "VARCHAR", "STRING": "VARCHAR",
}
TIME_PRECISION = "ns"   # the finest timestamp it keeps: TIMESTAMP_NS holds an imported NANOTIMESTAMP whole


def quote(name: str) -> str:
    """A SQL identifier, quoted (names come from schemas and callers, never from SQL text)."""
    return '"' + name.replace('"', '""') + '"'


def table_name(dataset: str, scale: Scale) -> str:
    return f"{dataset}_{scale.key()}"


def _columns_sql(schema: Schema) -> str:
    return ", ".join(f"{quote(c.name)} {_SQL_TYPES[c.ddb_type]}" for c in schema.columns)


def _select_cast_sql(schema: Schema) -> str:
    """Arrow's timestamp[ns] etc. cast to the table's types (DATE, TIMESTAMP, ...)."""
    return ", ".join(f"CAST({quote(c.name)} AS {_SQL_TYPES[c.ddb_type]}) AS {quote(c.name)}"
                     for c in schema.columns)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# DolphinDB's text style (workloads.datasets.csv_files) to the table's types, column by column
_FROM_TEXT = {
    "DATE": "CAST(strptime({c}, '%Y.%m.%d') AS DATE)",
    "SECOND": "strptime('1970.01.01 ' || {c}, '%Y.%m.%d %H:%M:%S')",
    "TIME": "strptime('1970.01.01 ' || {c}, '%Y.%m.%d %H:%M:%S.%g')",
    "TIMESTAMP": "strptime({c}, '%Y.%m.%dT%H:%M:%S.%g')",
    "CHAR": "CAST(ascii(nullif({c}, '')) AS TINYINT)",
}


def _from_text_sql(schema: Schema) -> str:
    parts = []
    for c in schema.columns:
        name = quote(c.name)
        expr = _FROM_TEXT.get(c.ddb_type, f"CAST(nullif({name}, '') AS {_SQL_TYPES[c.ddb_type]})")
        parts.append(expr.format(c=name) + f" AS {name}")
    return ", ".join(parts)


# The table's types as a CSV holds them: a time of day without the 1970-01-01 it is stored on,
# a CHAR as its letter (as the dataset's CSV files and DolphinDB's saveText write them)
_TO_TEXT = {
    "SECOND": "CAST({c} AS TIME)",
    "TIME": "CAST({c} AS TIME)",
    "CHAR": "chr(CAST({c} AS INTEGER))",
}


def _to_text_sql(schema: Schema) -> str:
    return ", ".join(_TO_TEXT.get(c.ddb_type, "{c}").format(c=quote(c.name)) + f" AS {quote(c.name)}"
                     for c in schema.columns)
