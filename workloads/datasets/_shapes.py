"""Market shapes shared by the generators: skewed activity across keys, an intraday activity
clock (busy open and close), and per-key price paths that do not depend on chunking.

All per-row helpers take uniforms in [0, 1) and invert a distribution in closed form: a
binary search per row (``searchsorted`` on a long CDF) would cost more than all the rest of
a TAQ row together.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np


class KeyActivity:
    """Zipf-Mandelbrot activity over ranks 0..count-1: rank r gets weight ~ (r + offset) ** -exponent.

    Sampling inverts the continuous version of that law, so each rank's probability is the
    integral over [r, r+1): Zipf-like, and O(1) per row.
    """

    def __init__(self, count: int, exponent: float = 1.0, offset: float = 4.0):
        self.count = count
        self.exponent = exponent
        self.offset = offset
        self._g0 = self._g(0.0)
        self._span = self._g(float(count)) - self._g0
        edges = self._g(np.arange(count + 1, dtype=np.float64))
        self.weights = np.diff(edges) / self._span  # share of rows per rank, sums to 1

    def _g(self, x):
        if self.exponent == 1.0:
            return np.log(x + self.offset)
        return (x + self.offset) ** (1.0 - self.exponent) / (1.0 - self.exponent)

    def sample(self, u: np.ndarray) -> np.ndarray:
        g = self._g0 + u * self._span
        if self.exponent == 1.0:
            x = np.exp(g) - self.offset
        else:
            x = (g * (1.0 - self.exponent)) ** (1.0 / (1.0 - self.exponent)) - self.offset
        return np.minimum(x.astype(np.int64), self.count - 1)  # float rounding at u -> 1


def geometric(u: np.ndarray, mean) -> np.ndarray:
    """Integers >= 0 with the given mean (scalar or per row), geometric law, from uniforms."""
    p = 1.0 / (1.0 + np.asarray(mean, dtype=np.float64))
    return np.floor(np.log1p(-u) / np.log1p(-p)).astype(np.int64)


def categorical(u: np.ndarray, weights) -> np.ndarray:
    """Indices into a short list of ``weights`` (a handful of categories), by table lookup:
    shares are kept to 1/4096, and a lookup is several times cheaper than a binary search."""
    return _category_table(tuple(weights))[(u * _CATEGORY_BINS).astype(np.intp)]


_CATEGORY_BINS = 4096


@lru_cache(maxsize=64)
def _category_table(weights: tuple[float, ...]) -> np.ndarray:
    cdf = np.cumsum(np.asarray(weights, dtype=np.float64))
    centers = (np.arange(_CATEGORY_BINS) + 0.5) / _CATEGORY_BINS
    return np.minimum(np.searchsorted(cdf / cdf[-1], centers, side="right"), len(cdf) - 1)


def log_uniform_int(u: np.ndarray, low: int, high: int) -> np.ndarray:
    """Integers in [low, high], log-uniform: many small values, a long tail (order sizes)."""
    return np.floor(low * np.exp(u * math.log((high + 1) / low))).astype(np.int64)


class SessionClock:
    """Spreads ``rows`` rows over the trading sessions, busier at the open and the close.

    Row ``i`` of a day always lands on the same session second (computed from ``i`` alone),
    so the day is sorted by time and any chunk can be located without the others.
    """

    def __init__(self, sessions: list[tuple[int, int]], rows: int,
                 open_burst: float = 2.5, close_burst: float = 1.5):
        self.sessions = sessions
        self.clock = np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in sessions])
        self.seconds = len(self.clock)            # session seconds in the day
        x = (np.arange(self.seconds) + 0.5) / self.seconds
        weight = 1.0 + open_burst * np.exp(-x / 0.04) + close_burst * np.exp(-(1.0 - x) / 0.05)
        self.cdf = np.concatenate([[0.0], np.cumsum(weight) / weight.sum()])
        bounds = np.floor(rows * self.cdf).astype(np.int64)
        bounds[-1] = rows
        self.bounds = bounds                       # rows before each session second

    def locate(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Session second of rows ``start .. stop`` and the fraction [0, 1) into that second."""
        b = self.bounds
        first = int(np.searchsorted(b, start, side="right")) - 1
        last = int(np.searchsorted(b, stop - 1, side="right")) - 1
        seconds = np.arange(first, last + 1)
        lo = np.maximum(b[seconds], start)
        counts = np.minimum(b[seconds + 1], stop) - lo
        second = np.repeat(seconds, counts)
        begin = np.repeat(b[seconds], counts)
        size = np.repeat(b[seconds + 1] - b[seconds], counts)
        frac = (np.arange(start, stop) - begin) / size
        return second, frac

    def activity_share(self, second: np.ndarray, frac: np.ndarray) -> np.ndarray:
        """Fraction of the day's activity done by this moment (for cumulative volumes)."""
        return self.cdf[second] + frac * (self.cdf[second + 1] - self.cdf[second])


def grid_step(session_seconds: int, keys: int, base: int = 30, budget_points: int = 8_000_000) -> int:
    """Seconds between price-path points: ``base`` unless the keys x points grid gets too big.
    Always divides the session length, so the last point is the close."""
    wanted = max(base, math.ceil(session_seconds * keys / budget_points))
    return next(s for s in range(wanted, session_seconds + 1) if session_seconds % s == 0)


class _DailyWalk:
    """One key set's daily random walk, advanced a day at a time from where it last stopped: a
    (2, keys) draw a day is the same stream as one (days, 2, keys) draw, and the running sum is
    ``cumsum``'s, so each day's levels are bit for bit what the whole prefix drawn again gives, in
    time linear in the days (drawing the prefix again for each day was quadratic: report 002's
    1,250 days x 8,000 symbols spent minutes on it)."""

    def __init__(self, rng: np.random.Generator, base: np.ndarray, daily_vol: np.ndarray):
        self.rng, self.base, self.vol = rng, base, daily_vol
        self.log_base = np.log(base)
        self.day = -1
        self.total = self.before = np.zeros(len(base))   # the running sum, after and before ``day``
        self.gap = np.zeros(len(base))

    def advance_to(self, day_index: int) -> None:
        while self.day < day_index:
            shocks = self.rng.standard_normal((2, len(self.base)))
            step = self.vol * shocks[0] - self.vol ** 2 / 2
            self.before, self.total = self.total, (step if self.day < 0 else self.total + step)
            self.gap, self.day = shocks[1], self.day + 1

    def levels(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        previous = np.exp(self.log_base + self.before) if self.day else self.base.astype(np.float64)
        opening = previous * np.exp(0.25 * self.vol * self.gap)
        return previous, opening, np.exp(self.log_base + self.total)


_WALKS: dict[tuple, _DailyWalk] = {}
_WALKS_KEPT = 8          # key sets walked at once in one process (datasets x scales in use)


def daily_levels(rng: np.random.Generator, base: np.ndarray, daily_vol: np.ndarray,
                 day_index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(previous close, open, close) of every key on day ``day_index``: a daily random walk
    from ``base`` (the close before day 0), with an overnight gap before each open. ``rng`` is
    a fresh seeded generator; its stream is walked once per process and continued for later days
    (an earlier day starts the walk again)."""
    key = (repr(rng.bit_generator.state), base.tobytes(), daily_vol.tobytes())
    walk = _WALKS.pop(key, None)
    if walk is None or walk.day > day_index:
        walk = _DailyWalk(rng, base, daily_vol)
    walk.advance_to(day_index)
    _WALKS[key] = walk
    while len(_WALKS) > _WALKS_KEPT:
        del _WALKS[next(iter(_WALKS))]
    return walk.levels()


class PricePaths:
    """One intraday price path per key: a Brownian bridge in log price from the day's open to
    its close, on a grid of points ``step`` seconds apart, linearly interpolated between."""

    def __init__(self, rng: np.random.Generator, opening: np.ndarray, closing: np.ndarray,
                 daily_vol: np.ndarray, session_seconds: int, step: int,
                 low: np.ndarray | None = None, high: np.ndarray | None = None):
        points = session_seconds // step + 1
        keys = len(opening)
        tau = np.arange(points, dtype=np.float64) / (points - 1)
        walk = np.zeros((points, keys))
        walk[1:] = np.cumsum(rng.standard_normal((points - 1, keys)), axis=0) / math.sqrt(points - 1)
        bridge = walk - tau[:, None] * walk[-1]
        log_open, log_close = np.log(opening), np.log(closing)
        grid = np.exp(log_open + tau[:, None] * (log_close - log_open) + daily_vol * bridge)
        if low is not None or high is not None:
            grid = np.clip(grid, low, high)  # e.g. China's daily price limits
        self.grid = grid                     # (points, keys): one time slice is contiguous
        self.step = step
        self.keys = keys

    def _index(self, keys: np.ndarray, seconds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        position = seconds / self.step
        point = np.minimum(position.astype(np.int64), self.grid.shape[0] - 2)
        return point * self.keys + keys, position - point

    def at_point(self, keys: np.ndarray, seconds: np.ndarray, grid: np.ndarray) -> np.ndarray:
        """Value of ``grid`` at the last path point at or before each (key, session second)."""
        return grid.ravel()[self._index(keys, seconds)[0]]

    def at(self, keys: np.ndarray, seconds: np.ndarray, grid: np.ndarray | None = None) -> np.ndarray:
        """Interpolated value of ``grid`` (default: the price) for each (key, session second)."""
        flat = (self.grid if grid is None else grid).ravel()
        index, frac = self._index(keys, seconds)
        left = flat[index]
        return left + frac * (flat[index + self.keys] - left)
