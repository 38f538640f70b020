"""Druid's SQL replies (``resultFormat`` csv) read into Arrow by pyarrow's CSV reader: with the
column types a read expects (``_csv_table``), or typed by the reply's own header, Druid type and
SQL type lines (``_typed_reply``: the suites' queries, timestamps naive UTC).
"""
from __future__ import annotations

import csv
import io

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv


def _csv_table(data: bytes, types: dict[str, pa.DataType]) -> pa.Table:
    names = list(types)
    if not data.strip():
        return pa.table({n: pa.array([], t) for n, t in types.items()})
    return pacsv.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(column_names=names),
                          convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                               quoted_strings_can_be_null=False))


_SQL_ARROW = {"BIGINT": pa.int64(), "INTEGER": pa.int64(), "SMALLINT": pa.int64(), "TINYINT": pa.int64(),
              "DOUBLE": pa.float64(), "FLOAT": pa.float64(), "REAL": pa.float64(), "DECIMAL": pa.float64(),
              "BOOLEAN": pa.int64()}


def _typed_reply(data: bytes) -> pa.Table:
    """A CSV reply with its header, Druid type and SQL type lines, as Arrow: timestamps naive UTC."""
    lines = data.split(b"\n", 3)
    names = next(csv.reader([lines[0].decode()])) if lines[0] else []
    sql_types = lines[2].decode().strip().split(",") if len(lines) > 2 else []
    body = lines[3] if len(lines) > 3 else b""
    names = [f"c{i}_{n}" for i, n in enumerate(names)]      # unique, order kept
    types = {n: (pa.string() if t in ("TIMESTAMP", "DATE") else _SQL_ARROW.get(t, pa.string()))
             for n, t in zip(names, sql_types)}
    table = _csv_table(body, types)
    arrays = []
    for name, sql_type in zip(names, sql_types):
        column = table.column(name)
        if sql_type in ("TIMESTAMP", "DATE"):
            column = pc.strptime(pc.replace_substring(column, "Z", ""), "%Y-%m-%dT%H:%M:%S", "ms",
                                 error_is_null=True) if len(column) and not _has_fraction(column) else \
                pc.cast(pc.replace_substring(pc.replace_substring(column, "Z", ""), "T", " "), pa.timestamp("ms"))
        arrays.append(column)
    return pa.Table.from_arrays(arrays, names=names)


def _has_fraction(column) -> bool:
    return "." in str(column[0].as_py() or "")
