"""How much slower Tickbench's operation is than the hand-written call, told through the noise.

The practitioner benchmark times, in each round, Tickbench's measured operations and then the
hand-written call on the very same (day, symbol) sequence. On a shared 2-core machine the same call
varies more from round to round (2x and more) than the difference sought (a few per cent), and a
slice's cost varies with its symbol's size. Comparing the two sides' overall medians leaves both
kinds of noise in; pairing each operation with its own hand-written twin from the same round takes
them out: a slow round makes both slow, a large symbol makes both large.

``paired_ratio`` is the median of the per-pair ratios ours / theirs, with a 95 % interval from a
bootstrap that resamples whole rounds (pairs of one round share that round's state, so they are
not independent draws). Seeded: the same figures give the same interval.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

RESAMPLES = 4000


@dataclass(frozen=True)
class PairedRatio:
    ratio: float        # median of ours_i / theirs_i over every pair
    low: float          # 95 % interval, rounds resampled
    high: float
    pairs: int
    rounds: int

    @property
    def half_width(self) -> float:
        """Half the 95 % interval, as a fraction of the ratio (0.05: the ratio is known to +-5 %)."""
        return (self.high - self.low) / 2 / self.ratio

    def __str__(self) -> str:
        return f"{self.ratio:.2f} (95 % {self.low:.2f}-{self.high:.2f}, {self.pairs} pairs in {self.rounds} rounds)"


def paired_ratio(rounds: Sequence[tuple[Sequence[float], Sequence[float]]], seed: int = 0) -> PairedRatio:
    """``rounds``: per round, Tickbench's seconds and the hand-written seconds of the same
    operations in the same order (equal lengths)."""
    per_round = []
    for ours, theirs in rounds:
        if len(ours) != len(theirs):
            raise ValueError(f"a round pairs {len(ours)} operations with {len(theirs)}: not the same sequence")
        if len(ours):
            per_round.append(np.asarray(ours, dtype=float) / np.asarray(theirs, dtype=float))
    if not per_round:
        raise ValueError("no pairs to compare")
    everything = np.concatenate(per_round)
    rng = np.random.default_rng(seed)
    drawn = rng.integers(len(per_round), size=(RESAMPLES, len(per_round)))
    medians = np.array([np.median(np.concatenate([per_round[i] for i in row])) for row in drawn])
    low, high = np.percentile(medians, [2.5, 97.5])
    return PairedRatio(float(np.median(everything)), float(low), float(high), len(everything), len(per_round))
