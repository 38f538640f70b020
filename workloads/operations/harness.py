"""A workload that does nothing, to measure the harness's own cost per operation; optionally
stalling like a server that stops answering now and then (a known delay, to show what a closed
loop hides and an open one counts: ``workloads.run.schedule``), or answering every operation in a
known time with a known number of rows (a target whose truth is known: what ``tickbench compare``
must call slower when the time grows 20 %, and the same when it does not), or spending a known CPU
time on each (``work_s``: a busy loop, as a server whose answer costs known CPU)."""
from __future__ import annotations

import time

from workloads.operations.base import Operation, WorkerContext, Workload
from workloads.operations.params import Param
from workloads.targets.base import OpResult

_EMPTY = OpResult(rows=0, nbytes=0)


def _noop() -> OpResult:
    return _EMPTY


def busy_for(seconds: float) -> None:
    """Spend ``seconds`` of CPU in a busy loop (never a sleep): a known cost of work."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class NoOp(Workload):
    name = "noop"
    title = "Harness overhead (no-op)"
    description = ("Operations that do nothing: what remains is the harness's cost per operation. With a stall, "
                   "every operation that arrives inside a stall window waits until it ends, as a server that "
                   "stops answering for a while.")
    op_name = "noop"
    roles = frozenset()
    uses_target = False
    system_params = frozenset({"stall_every_s", "stall_s", "hold_s", "work_s", "rows"})    # the simulated server
    params = (
        Param("stall_every_s", "Stall every", "float", 0.0, 0.0, 3600.0, "s",
              help="0: never. Otherwise a stall window opens this often, from the worker's first operation."),
        Param("stall_s", "Stall length", "float", 0.0, 0.0, 3600.0, "s",
              help="How long each stall window lasts."),
        Param("hold_s", "Answer time", "float", 0.0, 0.0, 60.0, "s",
              help="0: none. Otherwise every operation takes this long (a sleep), as a server whose answer "
                   "takes a known time."),
        Param("work_s", "CPU work per operation", "float", 0.0, 0.0, 60.0, "s",
              help="0: none. Otherwise every operation spends this long in a busy loop (after any answer "
                   "time), as a server whose answer costs known CPU."),
        Param("rows", "Rows per operation", "int", 0, 0, 1_000_000_000, "rows",
              help="The rows each operation says it returned (for a rows/s figure of known truth)."),
    )

    def setup(self, ctx: WorkerContext) -> None:
        every, length = ctx.params["stall_every_s"], ctx.params["stall_s"]
        if every > 0 and length > 0:
            ctx.state["stalls"] = (every, length, None)
        hold, rows, work = ctx.params["hold_s"], ctx.params["rows"], ctx.params["work_s"]
        if hold > 0 or rows > 0 or work > 0:    # made once: the plain no-op's next_op stays two lookups
            answer = OpResult(rows=rows, nbytes=rows * 8)

            def held() -> OpResult:
                if hold > 0:
                    time.sleep(hold)
                if work > 0:
                    busy_for(work)
                return answer
            ctx.state["held"] = held

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation:
        held = ctx.state.get("held")
        if held is not None:
            return held
        stalls = ctx.state.get("stalls")
        if stalls is None:
            return _noop            # one function for every operation: the harness's cost, not a closure's
        every, length, origin = stalls
        if origin is None:
            ctx.state["stalls"] = (every, length, time.monotonic())

        def stalled() -> OpResult:
            into = (time.monotonic() - ctx.state["stalls"][2]) % every
            if into < length:
                time.sleep(length - into)     # inside a stall window: wait for its end
            return _EMPTY
        return stalled


def with_added_work(next_op, seconds: float, share: float = 0.0):
    """``next_op`` itself when ``seconds`` and ``share`` are 0; else one whose operations each end
    with a CPU busy loop of ``seconds`` plus ``share`` of the operation's own time, inside their
    timed span (after the operation, never after a failed one), keeping the operation's marks
    (``named``, ``counted_as``, ``checked``, the days it reads)."""
    if not (seconds > 0 or share > 0):
        return next_op

    def next_with_work(ctx, seq: int):
        op = next_op(ctx, seq)
        if op is None:
            return None

        def worked():
            started = time.perf_counter()
            result = op()
            busy_for(seconds + share * (time.perf_counter() - started))
            return result
        worked.__dict__.update(getattr(op, "__dict__", None) or {})
        return worked
    return next_with_work
