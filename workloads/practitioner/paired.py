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
                spent_s: float, allowance_s: float) -> bool:
    """Whether a cell gets another round: always up to ``least``, never beyond ``most``; between,
    while its interval is wider than +-``precision`` of its ratio and another round (as long as the
    mean one so far) still fits ``allowance_s``. The rule looks at the interval's width, never at
    the ratio's value, so stopping cannot pick a flattering ratio."""
    if rounds < least:
        return True
    if rounds >= most or paired is None or paired.half_width <= precision:
        return False
    return spent_s + spent_s / rounds <= allowance_s
