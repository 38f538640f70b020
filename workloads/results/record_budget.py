"""What a run's operation records can weigh, from what a real run of its length could hold: read
from a Parquet file's footer alone, before any column is decoded, so a file that claims more than
its run could have measured (a "Parquet bomb": 200 million run-length-encoded records in 325 KB)
is refused before it costs memory, at a bundle's open and at every catalog read.

The budgets, each with its reason (genuine runs measured on 2026-12-03: 7.8 bytes a record on disk
for a no-op workload's 1.8 million records, 18 to 85 for reads, 24 to 57 decoded, at most ~950
records per worker-second of a read):
- records: at most ``MAX_OPS_PER_WORKER_S`` per worker-second of the run (an operation of 10 µs,
  faster than any call Tickbench times), plus ``OPS_SLACK``; a run still going has no length yet,
  so only the bytes rule below holds for it;
- bytes on disk: at least ``MIN_FILE_BYTES_PER_RECORD`` a record (a record's start and total
  time are two different floats: they do not compress to nothing);
- decoded: at most ``MAX_DECODED_BYTES_PER_RECORD`` a record on average, and no row group over
  ``MAX_ROW_GROUP_BYTES`` (what one batch of a reader holds), at most ``MAX_ROW_GROUPS`` of them;
- text: no value over ``MAX_TEXT_BYTES`` (an error message, an operation's ``extra``).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

MAX_OPS_PER_WORKER_S = 100_000
OPS_SLACK = 10_000
MIN_FILE_BYTES_PER_RECORD = 4
MAX_DECODED_BYTES_PER_RECORD = 4096
MAX_ROW_GROUP_BYTES = 256 << 20
MAX_ROW_GROUPS = 10_000
MAX_TEXT_BYTES = 64 << 10


def records_budget(run: dict[str, Any], worker_rows: int) -> int | None:
    """The most records a run of ``run``'s length (``created_at`` to ``finished_at``) and
    ``worker_rows`` workers could hold; None while it has no end."""
    try:
        length = (datetime.fromisoformat(str(run["finished_at"])) -
                  datetime.fromisoformat(str(run["created_at"]))).total_seconds()
    except (KeyError, TypeError, ValueError):
        return None
    return int(max(length, 0.0) + 60) * max(worker_rows, 1) * MAX_OPS_PER_WORKER_S + OPS_SLACK


def metadata_problem(meta: pq.FileMetaData, file_bytes: int, budget: int | None) -> str | None:
    """Why the records a footer declares cannot be a run's, or None (nothing decoded)."""
    records = meta.num_rows
    if budget is not None and records > budget:
        return (f"{records:,} records: more than a run of its length could measure "
                f"(at most {budget:,}, {MAX_OPS_PER_WORKER_S:,} a worker-second)")
    if records > max(file_bytes, 0) // MIN_FILE_BYTES_PER_RECORD + OPS_SLACK:
        return (f"{records:,} records in {file_bytes:,} bytes: under {MIN_FILE_BYTES_PER_RECORD} bytes a record, "
                "which no measured record compresses to")
    if meta.num_row_groups > MAX_ROW_GROUPS:
        return f"{meta.num_row_groups:,} row groups; at most {MAX_ROW_GROUPS:,}"
    decoded = 0
    for index in range(meta.num_row_groups):
        group = meta.row_group(index)
        size = sum(max(group.column(c).total_uncompressed_size, 0) for c in range(group.num_columns))
        if size > MAX_ROW_GROUP_BYTES:
            return f"row group {index + 1} decodes to {size:,} bytes; at most {MAX_ROW_GROUP_BYTES:,}"
        decoded += size
    if decoded > max(records, 1) * MAX_DECODED_BYTES_PER_RECORD + (1 << 20):
        return (f"{records:,} records decode to {decoded:,} bytes; at most "
                f"{MAX_DECODED_BYTES_PER_RECORD:,} a record")
    return None


def text_problem(batch: pa.RecordBatch, first_row: int) -> str | None:
    """A text value of ``batch`` (read as dictionaries: nothing repeated is decoded) over
    ``MAX_TEXT_BYTES``, or None."""
    for name, values in zip(batch.schema.names, batch.columns):
        if pa.types.is_dictionary(values.type):
            if not pa.types.is_string(values.type.value_type) and not pa.types.is_large_string(values.type.value_type):
                continue
            lengths = pc.binary_length(values.dictionary)
            if len(lengths) and (pc.max(lengths).as_py() or 0) > MAX_TEXT_BYTES:
                longest = pc.index(lengths, pc.max(lengths)).as_py()
                at = pc.index(values.indices, longest).as_py()
                if at >= 0:
                    return f"record {first_row + at + 1:,}: its {name} is {lengths[longest].as_py():,} bytes; " \
                           f"at most {MAX_TEXT_BYTES:,}"
        elif pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            lengths = pc.binary_length(values)
            if len(lengths) and (pc.max(lengths).as_py() or 0) > MAX_TEXT_BYTES:
                at = pc.index(lengths, pc.max(lengths)).as_py()
                return f"record {first_row + at + 1:,}: its {name} is {lengths[at].as_py():,} bytes; " \
                       f"at most {MAX_TEXT_BYTES:,}"
    return None
