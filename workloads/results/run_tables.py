"""The tables of a run's records: the columns of each (``runs``, ``steps``, ``workers``, ``ops``,
``resources``), rows of JSON values as typed Arrow tables (times UTC without a zone: ``utc_now``),
and operation records as the ``ops`` table, as its Parquet parts are written (``PART_WRITE``).
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import numpy as np
import pyarrow as pa

from workloads.run.records import PHASE_FIELDS, UNKNOWN_BYTES, Columns, OpRecord, as_columns, batch_length

RUN_COLUMNS = {
    "run_id": pa.string(), "name": pa.string(), "created_at": pa.timestamp("us"),
    "finished_at": pa.timestamp("us"), "status": pa.string(), "dataset": pa.string(), "target": pa.string(),
    "workload": pa.string(), "users": pa.string(), "cache": pa.string(), "scenario": pa.string(),
    "environment": pa.string(), "layout": pa.string(), "message": pa.string(), "host": pa.string(),
    "host_pid": pa.int32(), "host_started": pa.float64(),
}
STEP_COLUMNS = {
    "run_id": pa.string(), "step": pa.int32(), "users": pa.int32(), "label": pa.string(), "params": pa.string(),
    "started_at": pa.timestamp("us"), "window_s": pa.float64(), "status": pa.string(),
    "cache_methods": pa.string(), "released_at": pa.timestamp("us"), "release_clock": pa.float64(),
    "facts": pa.string(), "rate": pa.float64(),
}
WORKER_COLUMNS = {
    "run_id": pa.string(), "step": pa.int32(), "worker": pa.int32(), "pid": pa.int32(), "node": pa.string(),
    "state": pa.string(), "error": pa.string(), "exitcode": pa.int32(), "traceback": pa.string(),
    "host": pa.string(),
}
OPS_COLUMNS = {
    "run_id": pa.string(), "step": pa.int32(), "worker": pa.int32(), "seq": pa.int32(), "op": pa.string(),
    "t_start": pa.float64(), "total_s": pa.float64(), "io_s": pa.float64(), "query_s": pa.float64(),
    "server_s": pa.float64(), "transfer_s": pa.float64(), "decode_s": pa.float64(), "rows": pa.int64(),
    "bytes": pa.int64(), "ok": pa.bool_(), "error": pa.string(), "node": pa.string(), "kind": pa.string(),
    "read_s": pa.float64(), "wire_bytes": pa.int64(), "extra": pa.string(), "host": pa.string(),
    "intended_s": pa.float64(),
}
RESOURCE_COLUMNS = {
    "run_id": pa.string(), "t": pa.float64(), "cpu_percent": pa.float64(), "rss_bytes": pa.int64(),
    "read_bytes_per_s": pa.float64(), "write_bytes_per_s": pa.float64(),
}
TIMESTAMPS = frozenset({"created_at", "finished_at", "started_at", "released_at"})
assert set(OPS_COLUMNS) == {"run_id", *OpRecord._fields}


def utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def table(rows: list[dict[str, Any]], columns: dict[str, pa.DataType]) -> pa.Table:
    """Rows of JSON values as a typed Arrow table (ISO strings become timestamps)."""
    arrays = {}
    for name, kind in columns.items():
        values = [row.get(name) for row in rows]
        if name in TIMESTAMPS:
            values = [datetime.fromisoformat(v) if isinstance(v, str) else v for v in values]
        arrays[name] = pa.array(values, kind)
    return pa.table(arrays)


_STRING_COLUMNS = [name for name, kind in OPS_COLUMNS.items() if kind == pa.string()]
_DICTIONARY = pa.dictionary(pa.int32(), pa.string())
# Record parts are written often (every few hundredths of a second under load): strings as
# dictionaries (a run's few operation names, kinds and hosts), no dictionary tried on the numbers,
# statistics only where a reader prunes by them, no Arrow schema (readers see plain strings)
PART_WRITE = {"compression": "lz4", "use_dictionary": _STRING_COLUMNS, "write_statistics": ["run_id", "step", "kind"],
              "store_schema": False}


def ops_table(run_id: str, records: "Columns | list[Columns] | list[OpRecord]") -> pa.Table:
    """Records (one batch of columns, several, or OpRecords) as the catalog's Arrow table, built
    column by column: string columns as dictionaries (a batch's value repeated costs one value and
    a run of zero indices), never value by value."""
    if isinstance(records, list) and records and isinstance(records[0], dict):
        return pa.concat_tables([ops_table(run_id, batch) for batch in records])
    columns = as_columns(records)
    count = batch_length(columns)
    arrays = {}
    for name, kind in OPS_COLUMNS.items():
        if name == "run_id":
            arrays[name] = _repeated(run_id, count)
        elif kind == pa.string():
            arrays[name] = _strings(columns[name], null_if_empty=name == "extra")
        else:
            values = columns[name]
            arrays[name] = pa.array(values, kind, mask=_missing(name, values))
    return pa.table(arrays)


def _repeated(value: str, count: int, null: bool = False) -> pa.DictionaryArray:
    indices = pa.array(np.zeros(count, np.int32), mask=np.ones(count, np.bool_) if null else None)
    return pa.DictionaryArray.from_arrays(indices, pa.array([value], pa.string()))


def _strings(values: np.ndarray, null_if_empty: bool = False) -> pa.DictionaryArray:
    if not len(values):
        return pa.array([], _DICTIONARY)
    first = values[0]
    if (values == first).all():
        return _repeated(str(first), len(values), null=null_if_empty and first == "")
    mask = (values == "") if null_if_empty else None
    return pa.array(values, pa.string(), mask=mask).dictionary_encode()


def _as_dictionaries(table: pa.Table) -> pa.Table:
    """String columns as dictionaries (a migrated run's plain strings), so every part of a writer concatenates."""
    for name in _STRING_COLUMNS:
        column = table.column(name)
        if column.type != _DICTIONARY:
            table = table.set_column(table.schema.get_field_index(name), pa.field(name, _DICTIONARY),
                                     column.cast(pa.string()).dictionary_encode())
    return table


def plain_strings(table: pa.Table) -> pa.Table:
    """Dictionary columns decoded (a stream's batches each carry their own dictionary; Parquet
    parts read back plain), so records from both concatenate and read alike in SQL."""
    for index, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(index, pa.field(field.name, field.type.value_type),
                                     table.column(index).cast(field.type.value_type))
    return table


def _missing(name: str, values: np.ndarray) -> np.ndarray | None:
    """Which values are NULL: absent phases (NaN), unknown wire bytes, no extra facts."""
    if name in PHASE_FIELDS or name == "intended_s":
        return np.isnan(values)
    if name == "wire_bytes":
        return values == UNKNOWN_BYTES
    if name == "extra":
        return values == ""
    return None
