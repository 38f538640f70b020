"""Data as PostgreSQL's COPY carries it: a frame written as the CSV ``COPY ... FROM STDIN``
loads (pyarrow writes it), the size of the binary ``COPY ... TO STDOUT`` stream a read received,
and ADBC's Arrow columns cast to the dataset's read types (a CHAR from ``smallint`` to int8).
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from workloads.datasets.schema import Schema
from workloads.targets.common.arrow_frames import arrow_schema, arrow_table
from workloads.targets.postgres.dialect import SEQ, _TEMPORAL


def copy_csv(frame: pd.DataFrame, schema: Schema, seq_start: int | None = None) -> bytes:
    """A frame as the CSV ``COPY ... FROM STDIN (FORMAT csv)`` loads (pyarrow's writer: ISO
    timestamps, empty unquoted fields as NULL), ``_seq`` from ``seq_start``."""
    table = arrow_table(frame, arrow_schema(schema))
    columns = []
    for column, values in zip(schema.columns, table.columns):
        if column.ddb_type == "DATE":
            values = values.cast(pa.date32())
        elif column.ddb_type in _TEMPORAL:
            values = values.cast(pa.timestamp("us"), safe=False)    # nanoseconds rounded down (dialect)
        columns.append(values)
    names = list(schema.names)
    if seq_start is not None:
        columns.append(pa.array(np.arange(seq_start, seq_start + len(table), dtype=np.int32)))
        names.append(SEQ)
    out = io.BytesIO()
    pacsv.write_csv(pa.Table.from_arrays(columns, names=names), out,
                    pacsv.WriteOptions(include_header=False, quoting_style="needed"))
    return out.getvalue()


_READ_TYPES = {"BOOL": pa.bool_(), "CHAR": pa.int8(), "SHORT": pa.int16(), "INT": pa.int32(), "LONG": pa.int64(),
               "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "SYMBOL": pa.large_string(),
               "STRING": pa.large_string()}


def _arrow_read_type(ddb_type: str) -> pa.DataType:
    """The Arrow type a column is parsed into (temporal: datetime64[ns], as the datasets hold them)."""
    return pa.timestamp("ns") if ddb_type in _TEMPORAL else _READ_TYPES[ddb_type]


COPY_BINARY_HEADER = 19          # PGCOPY signature (11), flags (4), header extension length (4)
COPY_BINARY_TRAILER = 2          # the field count -1


def copy_binary_bytes(table: pa.Table) -> int:
    """The size of the ``COPY ... TO STDOUT (FORMAT binary)`` stream that carried ``table`` (as
    ADBC received it, before any cast): the header, per row a 16-bit field count, per field a
    32-bit length then the value (text: its UTF-8 bytes; NULL: nothing; a boolean: one byte)."""
    import pyarrow.compute as pc
    size = COPY_BINARY_HEADER + COPY_BINARY_TRAILER + table.num_rows * (2 + 4 * table.num_columns)
    for column in table.columns:
        kind = column.type
        valid = len(column) - column.null_count
        if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind):
            size += int(pc.sum(pc.binary_length(column)).as_py() or 0)
        elif pa.types.is_boolean(kind):
            size += valid
        else:
            size += valid * (kind.bit_width // 8)
    return size


class ReadShape:
    """How the result of one SELECT is read: its columns' names and read types, and which of ADBC's
    columns need a cast to those, only where pandas would otherwise differ (a CHAR's ``smallint`` to
    int8): text stays as it came, and dates and microsecond timestamps are left to
    ``frame_from_arrow``, whose ``to_pandas`` gives them as ``datetime64[ns]``. The casts are learnt
    from the first result (again if ADBC's types change): deciding them and writing the SELECT anew
    for each read cost a 3 ms slice ~2 % beside the hand-written call (interleaved in one process,
    where that Python runs cold after the fetch), so a layout's every-column reads keep theirs."""

    __slots__ = ("names", "types", "_came", "_casts", "_rename")

    def __init__(self, names: list[str], types: list[pa.DataType]):
        self.names, self.types = list(names), list(types)
        self._came: list[pa.DataType] | None = None
        self._casts: tuple[tuple[int, pa.Field], ...] = ()
        self._rename = False

    def apply(self, table: pa.Table) -> pa.Table:
        """``table`` as ADBC gave it, named ``names`` and in the read types."""
        came = table.schema.types
        if came != self._came:
            self._rename = table.column_names != self.names
            self._casts = tuple((index, pa.field(name, want)) for index, (name, got, want)
                                in enumerate(zip(self.names, came, self.types)) if not _read_as(got, want))
            self._came = came
        if self._rename:
            table = table.rename_columns(self.names)
        for index, field in self._casts:
            table = table.set_column(index, field, table.column(index).cast(field.type))
        return table


def _read_as(got: pa.DataType, want: pa.DataType) -> bool:
    """Whether ADBC's ``got`` gives pandas what ``want`` does without a cast."""
    return (got == want or (pa.types.is_string(got) and pa.types.is_large_string(want))
            or (pa.types.is_temporal(got) and pa.types.is_timestamp(want)))
