"""Open-loop load: when each operation ought to start, whatever the answers before it did.

A closed-loop user asks again only once answered, so a server that stalls for 2 s delays one of
its operations by 2 s and then simply receives none: the stall is counted once, though every
operation that should have been sent meanwhile waited too (coordinated omission). An open-loop
step instead gives each user a schedule of intended starts at a rate (operations per second, for
the step in total or per user), constant or Poisson (exponential gaps, as independent clients
arrive). A user behind its schedule starts the next operation at once; the operation's latency
counts from its intended start (``intended_s`` in its record), its service time (``total_s``) from
when it really began.

``LATE_S``: an operation that began more than this after its intended start is *late* (the step
counts them); a scheduled start the step ended before reaching is *missed* (a record of kind
"missed": its intended start, no time).
"""
from __future__ import annotations

import math

import numpy as np

SCHEDULES = ("constant", "poisson")
RATE_PER = ("total", "user")
LATE_S = 0.001


def user_rate(rate: float, per: str, users: int) -> float:
    """One user's operations per second when the step offers ``rate`` in total or per user."""
    return rate / users if per == "total" else rate


def check_rates(rates: tuple[float, ...], schedule: str, per: str) -> None:
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, not {schedule!r}")
    if per not in RATE_PER:
        raise ValueError(f"rate_per must be one of {', '.join(RATE_PER)}, not {per!r}")
    for rate in rates:
        if not math.isfinite(rate) or rate <= 0:
            raise ValueError(f"a rate is a positive number of operations per second, not {rate}")


class Schedule:
    """One user's intended starts, in seconds from the step's release.

    Constant: every 1/r, the step's users staggered by 1/(r x users) so that together they are
    evenly spaced. Poisson: gaps drawn from an exponential of mean 1/r, from the user's own seeded
    generator (the workload's draws are left as they are)."""

    def __init__(self, rate: float, kind: str, user: int, users: int, seed_sequence: np.random.SeedSequence):
        self.gap = 1.0 / rate
        self.kind = kind
        self._rng = np.random.default_rng(seed_sequence)
        self._next = (user / max(1, users)) * self.gap if kind == "constant" else self._draw()
        self._count = 0

    def _draw(self) -> float:
        return float(self._rng.exponential(self.gap))

    def next_start(self) -> float:
        start = self._next
        self._count += 1
        self._next = (start + self.gap) if self.kind == "constant" else start + self._draw()
        return start

    def peek(self) -> float:
        return self._next
