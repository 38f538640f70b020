"""How sure a finding's ratio is: a bootstrap interval of the ratio of two medians, and how far a
repeat of the runs behind it may land (``across_runs``).

A finding divides one arm's median operation time by another's. Each median comes from a few
operations (a tiny card runs five or so), so the ratio is itself uncertain. Resampling each arm's
operations with replacement and taking the ratio of the resampled medians, ``DRAWS`` times, gives
the ratio's spread; its central ``LEVEL`` share is the interval a verdict must fit in whole. The
draws use a fixed seed: the same runs always give the same interval (and the same verdict).
"""
from __future__ import annotations

import numpy as np

LEVEL = 0.95
DRAWS = 2000
_CHUNK = 250                  # draws per resampling batch: bounds memory on runs of many operations


def _medians(values: np.ndarray, rng: np.random.Generator, draws: int) -> np.ndarray:
    out = np.empty(draws)
    for start in range(0, draws, _CHUNK):
        n = min(_CHUNK, draws - start)
        picks = rng.integers(0, values.size, size=(n, values.size))
        out[start:start + n] = np.median(values[picks], axis=1)
    return out


def median_ratio_interval(top, bottom, combine=np.divide, level: float = LEVEL, draws: int = DRAWS,
                          seed: int = 0) -> tuple[float, float]:
    """The ``level`` interval of ``combine(median(top), median(bottom))`` (their ratio unless
    told) over bootstrap resamples of each side."""
    top, bottom = np.asarray(top, dtype=float), np.asarray(bottom, dtype=float)
    if top.size == 0 or bottom.size == 0:
        raise ValueError("a ratio of medians needs operations on both sides")
    rng = np.random.default_rng(seed)
    ratios = combine(_medians(top, rng, draws), _medians(bottom, rng, draws))
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(ratios, [tail, 1.0 - tail])
    return float(low), float(high)


# ---- across runs ---------------------------------------------------------------------------------
# The interval above says how sure ONE run's ratio is, not how far a repeat of it lands: a whole run
# moves at once (its allocator, its files' place on disk, the neighbours' load). Two identical runs
# here differed by up to 31 % (docs/compare.md: rows/s and p50 of a warm DuckDB read), so a ratio of
# two runs' medians may move by about this much either way with no cause:
CROSS_RUN_BAND = 0.35
MIN_REPEATS = 3               # runs of each arm whose own spread stands for the band


def across_runs(intervals: list[tuple[float, float]], band: float = CROSS_RUN_BAND,
                min_repeats: int = MIN_REPEATS) -> tuple[float, float]:
    """The interval a verdict must fit in whole, from each repetition's own (low, high) (a single
    value where a run gives no interval): their union; widened by ``band`` either way when fewer
    than ``min_repeats`` repetitions stand for how far a repeat lands."""
    if not intervals:
        raise ValueError("a verdict across runs needs at least one run")
    low, high = min(lo for lo, _ in intervals), max(hi for _, hi in intervals)
    if len(intervals) < min_repeats:
        low, high = low / (1 + band), high * (1 + band)
    return float(low), float(high)
