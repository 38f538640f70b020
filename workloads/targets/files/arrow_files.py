"""Arrow files read in part: a Feather (Arrow IPC) file's chosen fields, and the bytes a Parquet
read of some columns takes."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def read_ipc_file(source, fields: list[int] | None = None) -> pa.Table:
    """An Arrow IPC (Feather v2) file into Arrow as pyarrow documents it since ``feather.read_table``
    was deprecated: ``pa.ipc.open_file(source).read_all()``; with ``fields`` (column positions in
    the file), opened with ``IpcReadOptions(included_fields=fields)`` so only those are read."""
    options = pa.ipc.IpcReadOptions(included_fields=fields) if fields is not None else None
    return pa.ipc.open_file(source, options=options).read_all()


def ipc_fields(names: list[str], columns: tuple[str, ...]) -> list[int]:
    """Positions of ``columns`` among a file's column ``names``, in the file's order."""
    return sorted(names.index(name) for name in columns)


def parquet_columns_bytes(path: Path, columns: tuple[str, ...]) -> int:
    """Bytes a read of ``columns`` takes from a Parquet file: their column chunks (as stored,
    compressed), the footer and its length and magic (4 + 4 bytes), from the footer's own sizes."""
    meta = pq.ParquetFile(path).metadata
    wanted = set(columns)
    chunks = 0
    for group in range(meta.num_row_groups):
        row_group = meta.row_group(group)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            if chunk.path_in_schema in wanted:
                chunks += chunk.total_compressed_size
    return chunks + meta.serialized_size + 8
