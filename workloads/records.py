"""One record per operation: the fields every worker sends and the results file stores."""
from __future__ import annotations

from typing import NamedTuple

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
