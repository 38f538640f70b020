"""An independent check that each worker's warm-up stopped where ``workloads.run.warmup`` says:
written again here from the rule's words (only its constants are shared), so a bug in the rule's
code cannot vouch for itself."""
from __future__ import annotations

import pandas as pd

from workloads.run.warmup import BUDGET_S, MAX_OPS, STEADY_RUN, STEADY_SPREAD


def _agrees(times: list[float]) -> bool:
    if len(times) < STEADY_RUN:
        return False
    last = sorted(times[-STEADY_RUN:])
    middle = last[len(last) // 2]
    return last[0] >= middle * (1 - STEADY_SPREAD) and last[-1] <= middle * (1 + STEADY_SPREAD)


def _done(times: list[float], minimum: int) -> bool:
    return len(times) >= minimum and (
        minimum == 0 or len(times) >= MAX_OPS or sum(times) >= BUDGET_S or _agrees(times))


def assert_warmups_follow_rule(ops: pd.DataFrame, minimum: int) -> None:
    """Every (step, worker)'s warm-up records of ``ops`` (a warm step's, all successful) ran until
    the rule first said "done", and not one operation longer."""
    warmups = ops[ops["kind"] == "warmup"].sort_values(["step", "worker", "seq"])
    assert len(warmups), "no warm-up operation at all"
    for (step, worker), group in warmups.groupby(["step", "worker"]):
        times = [float(t) for t in group["total_s"]]
        assert list(group["seq"]) == list(range(len(times))), (step, worker, list(group["seq"]))
        first_done = next((n for n in range(1, len(times) + 1) if _done(times[:n], minimum)), None)
        assert first_done == len(times), (f"step {step} worker {worker}: warm-up times {times} should have "
                                          f"stopped after {first_done} operations")
