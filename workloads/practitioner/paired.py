"""How much slower Tickbench's operation is than the hand-written call, told so that a re-run of the
benchmark agrees.

The practitioner benchmark runs in rounds (``workloads.practitioner.rounds``): each round a fresh
Tickbench user and a fresh hand-written process, in random order, make the same (day, symbol)
sequence. On a shared 2-core machine the same call varies more between rounds (2x and more) than the
difference sought (a few per cent), a slice's cost varies with its symbol's size, and a process's
allocator and heap make one process faster than the next for its whole life. So:

- **within a round** each operation is paired with its hand-written twin on the same (day, symbol),
  and the round's ratio is the median of those pairs' ratios: a large symbol makes both sides large,
  a slow operation moves one pair only;
- **across rounds** the ratio is the Hodges-Lehmann centre of the rounds' log ratios, with
  Wilcoxon's signed-rank interval (``workloads.results.evidence.hodges_lehmann``, as the verdicts
  between paired runs): one disturbed round (a round's ratio of 3.6 among ratios near 1.0) moves it by
  a rank, where it moved the median of all pairs pooled by its whole share of them;
- **the interval is a re-run's**: it says where the ratio of another run of the benchmark (as many
  rounds) falls, 95 % of the time, not only where the true ratio lies. Two independent estimates
  differ by sqrt(2) times one's spread, so the signed-rank interval is widened by sqrt(2) either
  side. Each round being a fresh pair of processes in random order, what moves a whole run (a
  process's luck, an order effect) is inside the rounds' spread, so inside the interval.

Seeded and exact: the same figures give the same interval.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from workloads.results.evidence import MIN_PAIRS, hodges_lehmann

REPEAT_WIDENING = math.sqrt(2)      # next run minus this run: the spread of two estimates, not one


@dataclass(frozen=True)
class PairedRatio:
    ratio: float        # Hodges-Lehmann centre of the rounds' ratios
    low: float          # 95 % of re-runs' ratios fall in low-high (0 and inf: too few rounds to say)
    high: float
    pairs: int
    rounds: int
    round_low: float    # the rounds' own ratios, lowest and highest
    round_high: float

    @property
    def half_width(self) -> float:
        """Half the interval, as a fraction of the ratio (0.05: a re-run lands within +-5 %)."""
        return (self.high - self.low) / 2 / self.ratio

    def __str__(self) -> str:
        interval = (f"a re-run 95 % {self.low:.2f}-{self.high:.2f}" if math.isfinite(self.high) else
                    f"no interval under {MIN_PAIRS} rounds")
        return (f"{self.ratio:.2f} ({interval}; {self.pairs} pairs in {self.rounds} rounds, rounds' own "
                f"{self.round_low:.2f}-{self.round_high:.2f})")


def round_ratio(ours: Sequence[float], theirs: Sequence[float]) -> float:
    """One round's ratio: the median of its pairs' ratios ours_i / theirs_i."""
    if len(ours) != len(theirs):
        raise ValueError(f"a round pairs {len(ours)} operations with {len(theirs)}: not the same sequence")
    if not len(ours):
        raise ValueError("a round without pairs")
    return float(np.median(np.asarray(ours, dtype=float) / np.asarray(theirs, dtype=float)))


def paired_ratio(rounds: Sequence[tuple[Sequence[float], Sequence[float]]]) -> PairedRatio:
    """``rounds``: per round, Tickbench's seconds and the hand-written seconds of the same
    operations in the same order (equal lengths)."""
    ratios = [round_ratio(ours, theirs) for ours, theirs in rounds if len(ours) or len(theirs)]
    if not ratios:
        raise ValueError("no pairs to compare")
    logs = np.log(ratios)
    pairs = sum(len(ours) for ours, _ in rounds)
    centre = hodges_lehmann(logs)
    if centre is None:              # too few rounds for a 95 % interval: the centre alone
        middle = float(np.median(logs))
        return PairedRatio(math.exp(middle), 0.0, math.inf, pairs, len(ratios), min(ratios), max(ratios))
    middle, low, high = centre
    return PairedRatio(math.exp(middle), math.exp(middle - REPEAT_WIDENING * (middle - low)),
                       math.exp(middle + REPEAT_WIDENING * (high - middle)), pairs, len(ratios),
                       min(ratios), max(ratios))


def more_rounds(paired: PairedRatio | None, rounds: int, *, least: int, most: int, precision: float,
                spent_s: float, allowance_s: float, floor: int = MIN_PAIRS) -> bool:
    """Whether a cell gets another round: always up to ``floor`` (the fewest rounds with an
    interval), never beyond ``most``; up to ``least`` while another round (as long as the mean one
    so far) still fits ``allowance_s``; beyond, while its interval is also wider than
    +-``precision`` of its ratio. On a slow host the share ends a cell's rounds before ``least``
    (a wider interval, which the run's summary names) rather than the run overrunning its budget.
    The rule looks at the interval's width, never at the ratio's value, so stopping cannot pick a
    flattering ratio."""
    if rounds < min(floor, least):
        return True
    if rounds >= most:
        return False
    fits = spent_s + spent_s / rounds <= allowance_s
    if rounds < least:
        return fits
    return fits and paired is not None and paired.half_width > precision


GOAL_RATIO = 1.05       # the benchmark's goal: every cell's ratio at most this,
GOAL_TOP = 1.10         # and the top of its interval (where a re-run's ratio falls) at most this


def run_summary(cells: Sequence[tuple[str, PairedRatio]], precision: float) -> list[str]:
    """What a whole run can be quoted for: how many cells reached ``precision`` (the others ran
    out of their share of the budget, so their ratio alone says little about the next run), and
    whether every cell meets the goal, naming the cells that do not."""
    if not cells:
        return []
    wide = sorted(((paired.half_width, label) for label, paired in cells if paired.half_width > precision),
                  reverse=True)
    precise = f"precision: {len(cells) - len(wide)} of {len(cells)} cells within +-{precision:.0%} of a re-run"
    if wide:
        width, label = wide[0]
        widest = "no interval" if not math.isfinite(width) else f"+-{width:.0%}"
        precise += (f"; {len(wide)} wider when their rounds stopped (their share spent or --max-rounds), "
                    f"the widest {label} ({widest})")
    over = [label for label, paired in cells if paired.ratio > GOAL_RATIO]
    high = [label for label, paired in cells if paired.high > GOAL_TOP]
    if not over and not high:
        goal = f"goal (every ratio <= {GOAL_RATIO:.2f}, every interval's top <= {GOAL_TOP:.2f}): met"
    else:
        misses = [f"{what} in {_some(labels)}" for what, labels in
                  ((f"ratio over {GOAL_RATIO:.2f}", over), (f"interval's top over {GOAL_TOP:.2f}", high)) if labels]
        goal = (f"goal (every ratio <= {GOAL_RATIO:.2f}, every interval's top <= {GOAL_TOP:.2f}): not met: "
                + "; ".join(misses))
    return [precise, goal]


def _some(labels: list[str], shown: int = 4) -> str:
    more = f" and {len(labels) - shown} more" if len(labels) > shown else ""
    return f"{len(labels)} ({', '.join(labels[:shown])}{more})"


def call_spread(seconds: Sequence[float]) -> tuple[float, float]:
    """How much one fixed call varies on this machine from call to call: its 5th and 95th
    percentiles as fractions of its median (0.98, 1.03: quiet; 0.83, 1.25: a noisy host, where a
    few per cent between two paths needs many rounds)."""
    if len(seconds) < 20:
        raise ValueError(f"{len(seconds)} calls say nothing of a spread: time 20 or more")
    times = np.asarray(seconds, dtype=float)
    middle = float(np.median(times))
    return float(np.percentile(times, 5)) / middle, float(np.percentile(times, 95)) / middle
