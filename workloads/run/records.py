"""One record per operation: the fields every worker sends and the results file stores.

Workers send records in columnar batches (one numpy array per field): unpickling, live
aggregation and the DuckDB insert then cost per batch, not per record, which keeps the parent's
collector thread from hogging the interpreter the GUI thread shares with it.

Three kinds of record, so nothing but measured operations enters a figure:
- ``measured``: an operation of the step's measurement window (released together, timed as the
  user's own call);
- ``warmup``: a worker's first operations, before the release (``t_start`` < 0): the cost of the
  first operation in a fresh process, shown apart, never in a step's figures;
- ``probe``: an instrumented run of the same operation after the window, for the phase split a
  plain call cannot give (``workloads.targets.base``);
- ``unsupported``: an operation the target cannot express (a query without a text in its
  dialect): recorded once, a state of its own, neither an error nor a time;
- ``missed``: an open-loop step's scheduled start that its user never reached before the step
  ended (``workloads.run.schedule``): its intended start, no time.
"""
from __future__ import annotations

import json
from typing import Any, NamedTuple

import numpy as np

from workloads.targets.base import PHASES

MEASURED, WARMUP, PROBE, UNSUPPORTED, MISSED = "measured", "warmup", "probe", "unsupported", "missed"
KINDS = (MEASURED, WARMUP, PROBE, UNSUPPORTED, MISSED)
UNKNOWN_BYTES = -1          # wire_bytes not known: NULL in the results file
# a suite query's outcome, as its records and the figures say it
NOT_SUPPORTED, FAILED, OK, PENDING = "not supported", "failed", "ok", "pending"   # PENDING: live only


class OpRecord(NamedTuple):
    step: int
    worker: int
    seq: int                # per worker and kind
    op: str
    t_start: float          # seconds from the step's release of the workers (< 0 for warm-up)
    total_s: float          # wall time of the operation, as the user experiences it
    rows: int
    bytes: int              # logical bytes of the counted rows (workloads.targets.common.sizes)
    ok: bool
    kind: str = MEASURED
    io_s: float | None = None
    read_s: float | None = None
    query_s: float | None = None
    server_s: float | None = None
    transfer_s: float | None = None
    decode_s: float | None = None
    wire_bytes: int = UNKNOWN_BYTES   # bytes read from disk or the network, when known
    error: str = ""
    node: str = ""
    extra: str = ""         # JSON object of target-specific facts ("" = none)
    host: str = ""          # the load generator that ran it (a Dask worker's address; "" = the run's own machine)
    intended_s: float | None = None   # open loop: its start on the step's schedule (step clock); None = closed loop


PHASE_FIELDS = tuple(f"{phase}_s" for phase in PHASES)
assert set(PHASE_FIELDS) <= set(OpRecord._fields)

FIELD_DTYPES: dict[str, object] = {
    "step": np.int32, "worker": np.int32, "seq": np.int32, "op": np.str_, "t_start": np.float64,
    "total_s": np.float64, "rows": np.int64, "bytes": np.int64, "ok": np.bool_, "kind": np.str_,
    **{f: np.float64 for f in PHASE_FIELDS}, "wire_bytes": np.int64, "error": np.str_,
    "node": np.str_, "extra": np.str_, "host": np.str_, "intended_s": np.float64,
}  # strings as fixed-width numpy text: pickled as one buffer, not one object per record
assert tuple(FIELD_DTYPES) == OpRecord._fields

Columns = dict[str, np.ndarray]   # a batch of records: field name -> one array, all of one length


def extra_json(extra: dict[str, Any] | None) -> str:
    return json.dumps(extra, default=str, separators=(",", ":")) if extra else ""


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


def select(batch: Columns, mask: np.ndarray) -> Columns:
    return {name: values[mask] for name, values in batch.items()}
