"""A workload that does nothing, to measure the harness's own cost per operation."""
from __future__ import annotations

from workloads.kinds.base import Operation, WorkerContext, Workload
from workloads.targets.base import OpResult

_EMPTY = OpResult(rows=0, nbytes=0)


class NoOp(Workload):
    name = "noop"
    title = "Harness overhead (no-op)"
    description = "Operations that do nothing: what remains is the harness's cost per operation."
    op_name = "noop"
    uses_target = False

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation:
        return lambda: _EMPTY
