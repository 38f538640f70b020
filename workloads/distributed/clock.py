"""How far each host's monotonic clock is from the run's: estimated from round trips, with an
error bound, so records from every host share the run's timeline.

For one round trip the host's reading ``r`` was taken somewhere between the local readings ``a``
(sent) and ``b`` (answered): ``offset = r - (a + b) / 2`` is wrong by at most ``(b - a) / 2``.
The round trip with the smallest span gives the tightest bound (NTP's minimum-delay filter)."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

ROUNDS = 15


@dataclass(frozen=True)
class ClockOffset:
    offset_s: float       # host clock - run clock
    error_s: float        # |true offset - offset_s| <= error_s
    rounds: int

    def to_run_clock(self, host_time: float) -> float:
        return host_time - self.offset_s

    def to_host_clock(self, run_time: float) -> float:
        return run_time + self.offset_s


def offset_from_round_trips(trips: list[tuple[float, float, float]]) -> ClockOffset:
    """``trips``: (sent, host reading, answered) per round trip, sent/answered on the run's clock."""
    if not trips:
        raise ValueError("no round trips to estimate a clock offset from")
    sent, reading, answered = min(trips, key=lambda t: t[2] - t[0])
    return ClockOffset(reading - (sent + answered) / 2, (answered - sent) / 2, len(trips))


def measure_offset(ask: Callable[[], float], rounds: int = ROUNDS,
                   clock: Callable[[], float] = time.monotonic) -> ClockOffset:
    """Ask a host for its clock ``rounds`` times; ``ask()`` returns the host's ``time.monotonic()``."""
    trips = []
    for _ in range(rounds):
        sent = clock()
        reading = ask()
        trips.append((sent, reading, clock()))
    return offset_from_round_trips(trips)
