"""The logical size of an operation's rows: one definition of ``bytes`` for every target.

Rows x the row width in DolphinDB's column widths (``DDB_VALUE_BYTES``: DOUBLE 8 B, INT 4 B, DATE 4 B,
SYMBOL 4 B...), the way reports 002 and 003 count MB/s (TAQ: 45 B/row). It depends on neither the
file format nor pandas' representation, so MB/s compares across targets. Columns outside the
dataset's schema (a result's own columns: bars, coefficients) count their numpy width, and strings
4 B, as a symbol index.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from workloads.datasets.schema import DDB_VALUE_BYTES, Schema

STRING_BYTES = DDB_VALUE_BYTES["SYMBOL"]


def row_width(frame: pd.DataFrame, schema: Schema | None = None) -> int:
    """Bytes per row of ``frame``'s columns: the schema's widths where it has the column."""
    known = {c.name: DDB_VALUE_BYTES[c.ddb_type] for c in schema.columns} if schema else {}
    width = 0
    for name, dtype in frame.dtypes.items():
        if name in known:
            width += known[name]
        elif isinstance(dtype, np.dtype) and dtype.kind in "biufcmM":
            width += dtype.itemsize
        else:                         # object, str, category: a string per value
            width += STRING_BYTES
    return width


def frame_bytes(frame: pd.DataFrame, schema: Schema | None = None) -> int:
    return len(frame) * row_width(frame, schema)


def rows_bytes(rows: int, schema: Schema) -> int:
    """Rows of the whole schema (writes, scans)."""
    return int(rows) * schema.row_bytes()
