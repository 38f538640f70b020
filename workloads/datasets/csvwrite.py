"""Write generated frames as CSV text, the way DolphinDB (or ISO tools) write them.

Import benchmarks (reports 001 and 004 load daily CSV files) need real CSV files of the
generated data; ``csvread`` reads them back. Written in streaming fashion, chunk by chunk.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from workloads.datasets.schema import Column, Schema

# (DATE, SECOND, TIME, TIMESTAMP) formats per style; %S prints the fraction of ms timestamps.
STYLES = {
    "dolphindb": {"DATE": "%Y.%m.%d", "SECOND": "%H:%M:%S", "TIME": "%H:%M:%S",
                  "TIMESTAMP": "%Y.%m.%dT%H:%M:%S"},
    "iso": {"DATE": "%Y-%m-%d", "SECOND": "%H:%M:%S", "TIME": "%H:%M:%S",
            "TIMESTAMP": "%Y-%m-%d %H:%M:%S"},
}
_UNITS = {"DATE": "s", "SECOND": "s", "TIME": "ms", "TIMESTAMP": "ms"}


def write_csv(frames: pd.DataFrame | Iterable[pd.DataFrame], path: str | Path, schema: Schema,
              style: str = "dolphindb") -> int:
    """Write ``frames`` (one frame or an iterable of chunks) to ``path``; return the rows written."""
    if style not in STYLES:
        raise ValueError(f"unknown CSV style {style!r}: choose one of {', '.join(STYLES)}")
    if isinstance(frames, pd.DataFrame):
        frames = [frames]
    rows = 0
    writer: pcsv.CSVWriter | None = None
    try:
        for frame in frames:
            table = pa.table({c.name: _text(frame[c.name], c, style) for c in schema.columns})
            if writer is None:
                writer = pcsv.CSVWriter(str(path), table.schema,
                                        write_options=pcsv.WriteOptions(quoting_style="needed"))
            writer.write_table(table)
            rows += table.num_rows
    finally:
        if writer is not None:
            writer.close()
    if writer is None:  # no chunk at all: still write the header
        Path(path).write_text(",".join(f'"{name}"' for name in schema.names) + "\n")
    return rows


def _text(series: pd.Series, column: Column, style: str) -> pa.Array:
    kind = column.ddb_type
    if column.is_string:
        strings = pa.array(series)  # zero-copy for Arrow strings; category -> dictionary
        if pa.types.is_dictionary(strings.type):
            strings = strings.dictionary_decode()
        return strings.cast(pa.large_string())
    if kind == "CHAR":
        codes = series.to_numpy().astype(np.uint8)
        offsets = np.arange(len(codes) + 1, dtype=np.int32)
        return pa.StringArray.from_buffers(len(codes), pa.py_buffer(offsets), pa.py_buffer(codes))
    if kind in _UNITS:
        # Format each distinct value once: a TAQ day has one date and ~23,400 distinct seconds.
        stamps = pc.dictionary_encode(pa.array(series.to_numpy().astype(f"datetime64[{_UNITS[kind]}]")))
        text = pc.strftime(stamps.dictionary, format=STYLES[style][kind])
        return text.take(stamps.indices)
    return pa.array(series.to_numpy())
