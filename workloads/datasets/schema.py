"""Column schemas in DolphinDB's type vocabulary, and how each maps to pandas.

Datasets describe their columns with DolphinDB type names because the seed reports do, and
because every target (pickle, Parquet, DuckDB, DolphinDB) can be derived from that one truth.

DataFrame conventions shared by every generator and target:
- DATE      -> ``datetime64[ns]`` at midnight
- SECOND/TIME -> ``datetime64[ns]`` on 1970-01-01 (what the ``dolphindb`` client returns)
- TIMESTAMP -> ``datetime64[ns]``
- CHAR -> ``int8`` (ASCII code), INT -> ``int32``, LONG -> ``int64``, DOUBLE -> ``float64``
- SYMBOL / STRING -> one of three string representations (see ``StringMode``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np
import pandas as pd


class StringMode(str, Enum):
    """How string columns are held in pandas; decode cost differs by an order of magnitude."""

    OBJECT = "object"      # Python str objects, as the seed reports' pickle files held them
    ARROW = "str"          # pandas' Arrow-backed string dtype
    CATEGORY = "category"  # dictionary encoding, like DolphinDB's SYMBOL

    @classmethod
    def parse(cls, value: "str | StringMode") -> "StringMode":
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown string mode {value!r}: choose one of {names}") from None


NUMPY_DTYPES: dict[str, str] = {
    "BOOL": "bool",
    "CHAR": "int8",
    "SHORT": "int16",
    "INT": "int32",
    "LONG": "int64",
    "FLOAT": "float32",
    "DOUBLE": "float64",
    "DATE": "datetime64[ns]",
    "SECOND": "datetime64[ns]",
    "TIME": "datetime64[ns]",
    "TIMESTAMP": "datetime64[ns]",
    "NANOTIMESTAMP": "datetime64[ns]",   # an imported timestamp finer than a millisecond, kept to the ns
}
STRING_TYPES = frozenset({"SYMBOL", "STRING"})

# Bytes per value in DolphinDB's own encoding, used for MB/s figures that match the reports.
DDB_VALUE_BYTES: dict[str, int] = {
    "BOOL": 1, "CHAR": 1, "SHORT": 2, "INT": 4, "LONG": 8, "FLOAT": 4, "DOUBLE": 8,
    "DATE": 4, "SECOND": 4, "TIME": 4, "TIMESTAMP": 8, "NANOTIMESTAMP": 8, "SYMBOL": 4, "STRING": 8,
}


@dataclass(frozen=True)
class Column:
    name: str
    ddb_type: str  # DolphinDB type name: SYMBOL, STRING, DATE, SECOND, TIME, DOUBLE, INT, ...

    def __post_init__(self) -> None:
        if self.ddb_type not in NUMPY_DTYPES and self.ddb_type not in STRING_TYPES:
            raise ValueError(f"column {self.name}: unsupported type {self.ddb_type}")

    @property
    def is_string(self) -> bool:
        return self.ddb_type in STRING_TYPES

    def pandas_dtype(self, strings: StringMode) -> "str | pd.api.extensions.ExtensionDtype":
        if not self.is_string:
            return NUMPY_DTYPES[self.ddb_type]
        if strings is StringMode.OBJECT:
            return "object"
        if strings is StringMode.CATEGORY:
            return "category"
        return pd.StringDtype(storage="pyarrow", na_value=np.nan)


@dataclass(frozen=True)
class Schema:
    columns: tuple[Column, ...]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def without_strings(self) -> "Schema":
        return Schema(tuple(c for c in self.columns if not c.is_string))

    def row_bytes(self) -> int:
        """Bytes per row in DolphinDB's encoding (report 003: 45 bytes/row for TAQ)."""
        return sum(DDB_VALUE_BYTES[c.ddb_type] for c in self.columns)


def apply_string_mode(frame: pd.DataFrame, schema: Schema, strings: StringMode) -> pd.DataFrame:
    """Convert the string columns of ``frame`` in place to the requested representation."""
    for col in schema.columns:
        if col.is_string and col.name in frame.columns:
            frame[col.name] = frame[col.name].astype(col.pandas_dtype(strings))
    return frame


@dataclass(frozen=True)
class Scale:
    """How much of a dataset to generate; ``seed`` makes generation deterministic."""

    days: int = 1
    rows_per_day: int = 1_000_000
    symbols: int = 500        # symbols (TAQ, L2), devices (devices), keys (api45)
    seed: int = 20070823
    start: str = ""           # first trading day, ISO; empty = the dataset's own default

    def __post_init__(self) -> None:
        if self.days < 1:
            raise ValueError("days must be at least 1")
        if self.rows_per_day < 1:
            raise ValueError("rows per day must be at least 1")
        if self.symbols < 1:
            raise ValueError("symbols must be at least 1")

    def key(self) -> str:
        """A stable string naming this scale, used for cache folders and table names."""
        start = self.start.replace("-", "") or "default"
        return f"d{self.days}_r{self.rows_per_day}_s{self.symbols}_seed{self.seed}_{start}"


@dataclass(frozen=True)
class DatasetInfo:
    """What the GUI and command line show about a dataset."""

    name: str                 # registry key: "taq", "level2", "devices", "api45"
    title: str
    schema: Schema
    date_column: str          # partition day
    key_column: str           # symbol / SecurityID / device_id: what a slice selects
    time_column: str
    price_columns: tuple[str, str] = ("", "")  # (bid, ask) used by minute bars; empty if none
    notes: str = ""
    size_column: str = ""     # a traded size: minute bars add its sum as volume; empty if none
    extra: dict = field(default_factory=dict)
