"""Arrow <-> pandas conversions shared by the Parquet, Feather and DuckDB targets.

One rule for every Arrow-based target: the stored data holds plain strings, and the layout's
``StringMode`` is applied while decoding, along the cheapest path pyarrow offers for each mode
(object: ``to_numpy`` of the string column; Arrow str: ``types_mapper``; category:
``strings_to_categorical`` or Parquet's own dictionary pages). Temporal columns come back as
``datetime64[ns]`` (the convention of ``workloads.datasets.schema``).
"""
from __future__ import annotations

import functools

import platform
import sys
from importlib import metadata
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from workloads.datasets.schema import Column, Schema, StringMode

_ARROW_TYPES: dict[str, pa.DataType] = {
    "BOOL": pa.bool_(), "CHAR": pa.int8(), "SHORT": pa.int16(), "INT": pa.int32(),
    "LONG": pa.int64(), "FLOAT": pa.float32(), "DOUBLE": pa.float64(),
    "DATE": pa.timestamp("ns"), "SECOND": pa.timestamp("ns"), "TIME": pa.timestamp("ns"),
    "TIMESTAMP": pa.timestamp("ns"), "NANOTIMESTAMP": pa.timestamp("ns"),
}
_ARROW_STR = pd.StringDtype(storage="pyarrow", na_value=np.nan)  # pandas 3's default "str"


def arrow_schema(schema: Schema) -> pa.Schema:
    """Storage schema for files: pandas' own column types, strings as ``large_string``.

    ``large_string`` is what pandas 3's ``str`` holds, so writing and Arrow-str decoding copy nothing.
    """
    return pa.schema([pa.field(c.name, pa.large_string() if c.is_string else _ARROW_TYPES[c.ddb_type])
                      for c in schema.columns])


def arrow_table(frame: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """A generator chunk (any string mode) as an Arrow table of exactly ``schema``."""
    missing = [name for name in schema.names if name not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks column(s) {', '.join(missing)} of the dataset schema")
    table = pa.Table.from_pandas(frame[schema.names], preserve_index=False)
    return table.cast(schema).replace_schema_metadata(None)


def _is_string(typ: pa.DataType) -> bool:
    if pa.types.is_dictionary(typ):
        typ = typ.value_type
    return pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ)


def frame_from_arrow(table: pa.Table, strings: StringMode) -> pd.DataFrame:
    """Arrow -> DataFrame, strings in ``strings``' representation, times as ``datetime64[ns]``."""
    options: dict[str, Any] = {"date_as_object": False, "coerce_temporal_nanoseconds": True}
    if strings is StringMode.CATEGORY:
        return table.to_pandas(strings_to_categorical=True, **options)
    if strings is StringMode.ARROW:
        return table.to_pandas(types_mapper=_arrow_str_mapper, **options)
    # Object strings: pandas 3 infers "str" from Arrow, so build the Python-str columns directly.
    string_names = [f.name for f in table.schema if _is_string(f.type)]
    frame = table.drop_columns(string_names).to_pandas(**options)
    if frame.shape[1] == 0:  # only string columns: keep the row count
        frame = pd.DataFrame(index=pd.RangeIndex(table.num_rows))
    for name in string_names:
        values = table.column(name).to_numpy(zero_copy_only=False)
        frame.insert(table.schema.get_field_index(name), name, pd.Series(values, dtype=object, copy=False))
    return frame


def _arrow_str_mapper(typ: pa.DataType):
    return _ARROW_STR if _is_string(typ) and not pa.types.is_dictionary(typ) else None


def key_value(column: Column, key: str) -> Any:
    """A slice key (always given as text) converted to the key column's type."""
    if column.is_string:
        return str(key)
    try:
        return int(key) if column.ddb_type in ("CHAR", "SHORT", "INT", "LONG") else key
    except ValueError:
        raise ValueError(f"key {key!r} is not valid for {column.ddb_type} column {column.name}") from None


def library_versions() -> dict[str, str]:
    """Versions that change decode cost; stored with every layout."""
    versions = {"python": sys.version.split()[0], "platform": platform.platform()}
    for package in ("numpy", "pandas", "pyarrow", "duckdb"):
        versions[package] = _installed_version(package)
    return versions


@functools.lru_cache(maxsize=None)      # read once a process: each read parses the package's metadata
def _installed_version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return ""
