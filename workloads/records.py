"""One record per operation: the fields every worker sends and the results file stores.

Workers send records in columnar batches (one numpy array per field): unpickling, live
aggregation and the DuckDB insert then cost per batch, not per record, which keeps the parent's
collector thread from hogging the interpreter the GUI thread shares with it.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from workloads.targets.base import PHASES


class OpRecord(NamedTuple):
    step: int
    worker: int
    seq: int
    op: str
    t_start: float      # seconds from the step's release of the workers
    total_s: float      # wall time of the operation, as the user experiences it
    io_s: float | None
    query_s: float | None
    server_s: float | None
    transfer_s: float | None
    decode_s: float | None
    rows: int
    bytes: int
    ok: bool
    error: str
    node: str


PHASE_FIELDS = tuple(f"{phase}_s" for phase in PHASES)
assert set(PHASE_FIELDS) <= set(OpRecord._fields)

FIELD_DTYPES: dict[str, object] = {
    "step": np.int32, "worker": np.int32, "seq": np.int32, "op": np.str_,
    "t_start": np.float64, "total_s": np.float64, **{f: np.float64 for f in PHASE_FIELDS},
    "rows": np.int64, "bytes": np.int64, "ok": np.bool_, "error": np.str_, "node": np.str_,
}  # strings as fixed-width numpy text: pickled as one buffer, not one object per record

Columns = dict[str, np.ndarray]   # a batch of records: field name -> one array, all of one length


def to_columns(records: list[OpRecord]) -> Columns:
    """A list of records as one array per field; a missing phase becomes NaN."""
    if not records:
        return {name: np.empty(0, dtype=dtype) for name, dtype in FIELD_DTYPES.items()}
    values = zip(*records)
    return {name: np.array(column, dtype=FIELD_DTYPES[name])
            for name, column in zip(OpRecord._fields, values)}


def as_columns(batch: "Columns | list[OpRecord]") -> Columns:
    return to_columns(batch) if isinstance(batch, list) else batch


def batch_length(batch: Columns) -> int:
    return len(batch["seq"])


def concat_columns(batches: list[Columns]) -> Columns:
    return {name: np.concatenate([b[name] for b in batches]) for name in FIELD_DTYPES}
