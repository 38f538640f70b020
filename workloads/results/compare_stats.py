"""How sure a ratio of two runs' figures is: bootstrap intervals over their operations.

A figure of a step is either a ratio of sums over its operations (rows/s = rows / the time they
took, scaled to the step's window; a phase's or a query's mean = its seconds / its operations) or a
quantile of their times (p50, p95, p99; the first operation's median over workers). Resampling each
run's operations with replacement ``DRAWS`` times and taking the ratio new / base each time gives
the ratio's spread; its central ``LEVEL`` share is the interval.

- Ratio-of-sums figures resample operations; a step of more than ``MAX_BLOCKS`` operations is
  resampled in ``MAX_BLOCKS`` blocks of consecutive operations of one worker, which bounds the work
  (neighbouring operations share the machine's state, so keeping them together does not make the
  interval narrower than drawing them one by one would).
- Where a step ran in rounds (a cold step: every user's k-th operation starts together after one
  clear of every cache), the rounds are resampled whole, as the practitioner benchmark does: the
  operations of one round share its clear and its start, so they are not independent draws. More
  than ``MAX_BLOCKS`` rounds (each round is a clear of every cache: a real step holds hundreds)
  are resampled in ``MAX_BLOCKS`` blocks of consecutive rounds, which bounds the memory a
  resample takes whatever a run's records claim.
- Quantiles are resampled by rank: the k-th smallest of a resample of n values is the value at a
  rank drawn from Binomial(n, q), which is what resampling and sorting would give, without a sort
  per draw.
- The interval is scaled around the figure as stored (its point is the stored figure's ratio),
  so it never disagrees with the figures the run shows.

Seeded: the same runs always give the same interval, so the same verdict and the same gate answer.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LEVEL = 0.95
DRAWS = 2000
MAX_BLOCKS = 2000


@dataclass(frozen=True)
class Sample:
    """One run's step, for a ratio-of-sums figure: per operation the numerator and the denominator
    (rows and seconds; seconds and 1), with the worker that made it, in time order."""
    top: np.ndarray
    bottom: np.ndarray
    worker: np.ndarray
    rounds: np.ndarray | None = None      # each operation's round, where the step ran in rounds

    def __len__(self) -> int:
        return int(self.top.size)


def blocks(sample: Sample, max_blocks: int = MAX_BLOCKS) -> tuple[np.ndarray, np.ndarray]:
    """Block sums (top, bottom): whole rounds where the step ran in them, else consecutive
    operations of one worker, ``ceil(n / max_blocks)`` a block."""
    if sample.rounds is not None:
        block = round_blocks(sample.rounds, max_blocks)
        return np.bincount(block, weights=sample.top), np.bincount(block, weights=sample.bottom)
    n = len(sample)
    size = max(1, -(-n // max_blocks))
    order = np.lexsort((np.arange(n), sample.worker))          # by worker, time order within
    worker = sample.worker[order]
    starts = np.flatnonzero(np.r_[True, worker[1:] != worker[:-1]])
    position = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    block = np.cumsum(np.r_[True, (worker[1:] != worker[:-1]) | (position[1:] % size == 0)]) - 1
    return (np.bincount(block, weights=sample.top[order]), np.bincount(block, weights=sample.bottom[order]))


def round_blocks(rounds: np.ndarray, max_blocks: int = MAX_BLOCKS) -> np.ndarray:
    """Each operation's block: its round's index, consecutive rounds merged into at most
    ``max_blocks`` blocks."""
    index = np.unique(rounds, return_inverse=True)[1].reshape(-1)
    count = int(index.max()) + 1 if index.size else 0
    return index if count <= max_blocks else index * max_blocks // count


def _ratio_draws(sample: Sample, rng: np.random.Generator, draws: int) -> np.ndarray:
    top, bottom = blocks(sample)
    picks = rng.integers(0, top.size, size=(draws, top.size))
    with np.errstate(divide="ignore", invalid="ignore"):
        return top[picks].sum(axis=1) / bottom[picks].sum(axis=1)


def _round_quantile_draws(values: np.ndarray, rounds: np.ndarray, q: float, rng: np.random.Generator,
                          draws: int) -> np.ndarray:
    """The ``q`` quantile of resamples of whole rounds (linear interpolation, as ``np.quantile``),
    found by rank in the values sorted once: a resample is each block's values times the times
    its block was drawn, so the value at rank k is where the drawn counts, summed in value order,
    pass k (``_ranked``)."""
    block = round_blocks(rounds)
    order = np.argsort(values, kind="stable")
    ordered, owner = values[order], block[order]
    groups = int(owner.max()) + 1
    picks = rng.integers(0, groups, size=(draws, groups))
    counts = np.bincount((picks + groups * np.arange(draws)[:, None]).ravel(),
                         minlength=draws * groups).reshape(draws, groups)
    total = counts @ np.bincount(owner, minlength=groups)
    position = q * (total - 1)
    below = np.floor(position).astype(np.int64)
    low, high = _ranked(ordered, owner, counts, below), _ranked(ordered, owner, counts, np.minimum(below + 1, total - 1))
    return low + (position - below) * (high - low)


def _ranked(ordered: np.ndarray, owner: np.ndarray, counts: np.ndarray, rank: np.ndarray,
            checkpoints: int = 1024, batch: int = 256) -> np.ndarray:
    """Per draw, the value at ``rank`` (from 0) of the resample holding ``counts[d, g]`` copies of
    block g: the running count is known at ``checkpoints`` places (one product of matrices), then
    summed exactly within the stretch between two of them, ``batch`` draws at a time (memory:
    ``batch`` x the stretch, whatever the draws)."""
    n, groups = ordered.size, counts.shape[1]
    stretch = -(-n // checkpoints)
    chunks = -(-n // stretch)
    per_chunk = np.bincount(np.arange(n) // stretch * groups + owner, minlength=chunks * groups).reshape(chunks, groups)
    # in floats, for the matrix product's speed: counts stay exact far past any run's size
    running_at = np.vstack([np.zeros(groups), np.cumsum(per_chunk, axis=0)[:-1]]).T
    out = np.empty(len(rank))
    for first in range(0, len(rank), batch):
        some, wanted = counts[first:first + batch], rank[first:first + batch, None]
        before = some.astype(float) @ running_at
        chunk = (before <= wanted).sum(axis=1) - 1
        rows = np.arange(len(some))
        at = np.minimum(chunk[:, None] * stretch + np.arange(stretch), n)       # n: past the end, counts 0
        weights = np.where(at < n, some[rows[:, None], owner[np.minimum(at, n - 1)]], 0)
        running = before[rows, chunk][:, None] + np.cumsum(weights, axis=1)
        out[first:first + batch] = ordered[np.minimum(at[rows, (running > wanted).argmax(axis=1)], n - 1)]
    return out


def _quantile_draws(values: np.ndarray, q: float, rng: np.random.Generator, draws: int) -> np.ndarray:
    ordered = np.sort(np.asarray(values, dtype=float))
    ranks = rng.binomial(ordered.size - 1, q, size=draws)       # linear-interpolation quantile's neighbourhood
    return ordered[ranks]


def _interval(point: float, base_draws: np.ndarray, new_draws: np.ndarray, base_est: float, new_est: float,
              level: float) -> tuple[float, float]:
    """The ``level`` interval of new / base, its draws divided by the estimate they scatter around
    and multiplied by the stored figures' ratio ``point``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = (new_draws / base_draws) / (new_est / base_est)
    spread = spread[np.isfinite(spread)]
    if spread.size == 0:
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(spread, [tail, 1.0 - tail])
    return float(point * low), float(point * high)


def ratio_of_sums_interval(point: float, base: Sample, new: Sample, level: float = LEVEL, draws: int = DRAWS,
                           seed: int = 0) -> tuple[float, float]:
    """Interval of a ratio-of-sums figure's ratio new / base (``point``: the stored figures' ratio)."""
    if len(base) == 0 or len(new) == 0:
        raise ValueError("a ratio needs operations on both sides")
    rng = np.random.default_rng(seed)
    base_draws, new_draws = _ratio_draws(base, rng, draws), _ratio_draws(new, rng, draws)
    with np.errstate(divide="ignore", invalid="ignore"):
        base_est = base.top.sum() / base.bottom.sum()
        new_est = new.top.sum() / new.bottom.sum()
    return _interval(point, base_draws, new_draws, base_est, new_est, level)


def quantile_interval(point: float, base: np.ndarray, new: np.ndarray, q: float, level: float = LEVEL,
                      draws: int = DRAWS, seed: int = 0, base_rounds: np.ndarray | None = None,
                      new_rounds: np.ndarray | None = None) -> tuple[float, float]:
    """Interval of the ratio of two samples' ``q`` quantiles (``point``: the stored figures' ratio);
    a side with ``rounds`` (each value's round) is resampled in whole rounds."""
    base, new = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    if base.size == 0 or new.size == 0:
        raise ValueError("a ratio needs operations on both sides")
    rng = np.random.default_rng(seed)

    def draw(values, rounds):
        if rounds is None:
            return _quantile_draws(values, q, rng, draws)
        return _round_quantile_draws(values, np.asarray(rounds), q, rng, draws)
    base_draws, new_draws = draw(base, base_rounds), draw(new, new_rounds)
    return _interval(point, base_draws, new_draws, float(np.quantile(base, q)), float(np.quantile(new, q)), level)
