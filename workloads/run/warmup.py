"""When a worker's warm-up is over: one rule, used by every worker of a warm-cache step.

A fresh worker process is not yet the long-lived client whose call a warm figure stands for: its
allocator and the engine's caches fill over its first operations (a 1 M-row DuckDB day took 219,
221, 72, 67, 61 ms in a fresh process, then ~60; chDB compiles a query's expressions on their
fourth run: minute bars 69, 16, 13, 89, then 7-8 ms). So a warm step's warm-up runs at least the
scenario's ``warmup_ops`` and then goes on until the process is steady: the last ``STEADY_RUN``
warm-up operations each within ``STEADY_SPREAD`` of their median. It stops anyway after
``MAX_OPS`` operations or ``BUDGET_S`` seconds of warm-up (a slow operation is warmed once, as
before), or on an error. Warm-up records are kept apart, as ever; a cold step warms up
``warmup_ops`` times only (its measured operations start cold by design).
"""
from __future__ import annotations

import statistics
from collections.abc import Sequence

STEADY_RUN = 3          # warm-up operations that must agree
STEADY_SPREAD = 0.15    # each within 15 % of their median
MAX_OPS = 12            # warm-up operations at most, the scenario's minimum included
BUDGET_S = 5.0          # seconds of warm-up after which no further operation is added


def steady(seconds: Sequence[float]) -> bool:
    """Whether the last ``STEADY_RUN`` operation times agree within ``STEADY_SPREAD``."""
    if len(seconds) < STEADY_RUN:
        return False
    last = seconds[-STEADY_RUN:]
    middle = statistics.median(last)
    return all(abs(s - middle) <= STEADY_SPREAD * middle for s in last)


def more_warmup(seconds: Sequence[float], minimum: int) -> bool:
    """Whether a warm step's worker makes another warm-up operation after ``seconds`` (the times
    of those it made, in order)."""
    if len(seconds) < minimum:
        return True
    if minimum == 0 or len(seconds) >= MAX_OPS or sum(seconds) >= BUDGET_S:
        return False
    return not steady(seconds)


def expected_warmup_ops(minimum: int, op_s: float, cold: bool) -> int:
    """How many warm-up operations a worker is likely to make, for estimates: a cold step its
    minimum; a warm one at least enough for ``STEADY_RUN`` to agree, within the caps."""
    if cold or minimum == 0:
        return minimum
    within_budget = max(1, int(BUDGET_S / op_s)) if op_s > 0 else MAX_OPS
    return max(minimum, min(MAX_OPS, STEADY_RUN + 1, within_budget))
