"""How a dataset's columns map to Druid's (``_Shape``): which make ``__time``, how the rest are
stored, the ingestion files' columns, what a read selects and how its reply becomes the dataset's
columns again.

``__time`` is the row's timestamp in milliseconds: TAQ's ``date`` + ``time`` joined at ingestion
(read back as DuckDB has them: ``date`` the day, ``time`` the time of day on 1970-01-01), devices'
``time``, a user's timestamp column. A NANOTIMESTAMP is kept to the millisecond, as every time in
Druid (``TIME_PRECISION``: rounded down). Strings are string dimensions, integers ``long``,
doubles ``double``; ``_seq`` (long) is
each row's arrival ordinal within its day, so the first/last quote of a minute (``EARLIEST_BY``/
``LATEST_BY`` on ``MILLIS_TO_TIMESTAMP(_seq)``) equal DuckDB's (quotes are stamped to the second:
``EARLIEST`` on ``__time`` alone would pick among a second's quotes arbitrarily).
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from workloads.datasets.schema import Column, DatasetInfo, Schema
from workloads.targets.common.arrow_frames import arrow_schema
from workloads.targets.druid.dialect import DAY_MS, SEQ, TS, quote


_TEMPORAL = frozenset({"DATE", "SECOND", "TIME", "TIMESTAMP", "NANOTIMESTAMP"})
TIME_PRECISION = "ms"         # __time and every temporal column: milliseconds
_OF_DAY = frozenset({"SECOND", "TIME"})
_DIM_TYPES = {"DOUBLE": "double", "FLOAT": "float", "CHAR": "long", "SHORT": "long", "INT": "long", "LONG": "long",
              "BOOL": "long"}


class _Shape:
    """Which columns make ``__time`` and how the rest are stored."""

    def __init__(self, info: DatasetInfo, schema: Schema | None = None):
        self.schema = schema or info.schema
        self.info = info
        date = self.schema.column(info.date_column) if info.date_column in self.schema.names else None
        time_col = self.schema.column(info.time_column) if info.time_column in self.schema.names else None
        if date is not None and date.ddb_type == "DATE" and time_col is not None and time_col.ddb_type in _OF_DAY:
            self.time_parts = (date.name, time_col.name)         # taq: date + time of day
        elif date is not None and date.ddb_type in _TEMPORAL:
            self.time_parts = (date.name,)                       # devices: one timestamp
        else:
            self.time_parts = ()                                 # a side table: a constant time
        self.stored = [c for c in self.schema.columns if c.name not in self.time_parts]

    def dimensions(self, seq: bool) -> list[dict[str, str]]:
        dims = []
        for c in self.stored:
            kind = "string" if c.is_string else ("long" if c.ddb_type in _TEMPORAL else _DIM_TYPES[c.ddb_type])
            dims.append({"type": kind, "name": c.name})
        if seq:
            dims.append({"type": "long", "name": SEQ})
        return dims

    def millis(self, frame: pd.DataFrame) -> np.ndarray:
        if not self.time_parts:
            return np.full(len(frame), 946684800000, dtype=np.int64)   # 2000-01-01
        total = np.zeros(len(frame), dtype=np.int64)
        for name in self.time_parts:
            total += frame[name].to_numpy().astype("datetime64[ms]").astype(np.int64)
        return total

    def input_table(self, frame: pd.DataFrame, seq_start: int | None) -> pa.Table:
        """A frame as the ingestion file's columns: __ts (ms), the stored columns, _seq."""
        columns = {TS: pa.array(self.millis(frame))}
        for c in self.stored:
            values = frame[c.name]
            if c.ddb_type in _TEMPORAL:
                columns[c.name] = pa.array(values.to_numpy().astype("datetime64[ms]").astype(np.int64))
            elif c.is_string:
                columns[c.name] = pa.array(values.astype(object).to_numpy(), pa.string())
            else:
                columns[c.name] = pa.array(values.to_numpy())
        if seq_start is not None:
            columns[SEQ] = pa.array(np.arange(seq_start, seq_start + len(frame), dtype=np.int64))
        return pa.table(columns)

    def _read_columns(self, names: Iterable[str] | None) -> list[Column]:
        """The stored columns a read of ``names`` (None: every column) selects."""
        if names is None:
            return self.stored
        keep = set(names)
        return [c for c in self.stored if c.name in keep]

    def select_list(self, names: Iterable[str] | None = None) -> str:
        """What a read selects: the ms timestamp, then the stored columns (of ``names`` only)."""
        return ", ".join(["TIMESTAMP_TO_MILLIS(__time) AS " + quote(TS)]
                         + [quote(c.name) for c in self._read_columns(names)])

    def reply_types(self, seq: bool = False, names: Iterable[str] | None = None) -> dict[str, pa.DataType]:
        types = {TS: pa.int64()}
        for c in self._read_columns(names):
            types[c.name] = pa.string() if c.is_string else (
                pa.int64() if c.ddb_type in _TEMPORAL or _DIM_TYPES[c.ddb_type] == "long" else pa.float64())
        if seq:
            types[SEQ] = pa.int64()
        return types

    def to_schema(self, table: pa.Table, schema: Schema | None = None) -> pa.Table:
        """A reply (ms timestamp + stored columns) as the dataset schema's Arrow table, or as
        ``schema``'s (some of its columns)."""
        target = arrow_schema(schema or self.schema)
        ms = table.column(TS)
        arrays = []
        for field in target:
            name = field.name
            if name in self.time_parts:
                if len(self.time_parts) == 2:
                    day = pc.multiply(pc.divide(ms, DAY_MS), DAY_MS)
                    part = day if name == self.time_parts[0] else pc.subtract(ms, day)
                else:
                    part = ms
                arrays.append(part.cast(pa.timestamp("ms")).cast(field.type))
            elif field.type == pa.timestamp("ns"):
                arrays.append(table.column(name).cast(pa.timestamp("ms")).cast(field.type))
            else:
                arrays.append(table.column(name).cast(field.type))
        return pa.Table.from_arrays(arrays, schema=target)
