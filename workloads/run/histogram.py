"""A log-bucketed latency histogram (HDR-style): constant memory, ~1% relative precision.

Live percentiles come from these; exact final figures come from the stored records by SQL.
"""
from __future__ import annotations

import numpy as np

_LOWEST_S = 1e-6      # 1 microsecond
_HIGHEST_S = 3600.0   # an hour; slower operations land in the last bucket
_GROWTH = 1.01        # each bucket 1% wider than the one before
_BUCKETS = int(np.ceil(np.log(_HIGHEST_S / _LOWEST_S) / np.log(_GROWTH))) + 1
_UPPER_EDGES = _LOWEST_S * _GROWTH ** np.arange(1, _BUCKETS + 1)


class LogHistogram:
    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = np.zeros(_BUCKETS, dtype=np.int64)
        self.total = 0

    def add_many(self, seconds: np.ndarray) -> None:
        values = np.asarray(seconds, dtype=np.float64)
        if values.size == 0:
            return
        index = np.searchsorted(_UPPER_EDGES, np.clip(values, 0.0, _HIGHEST_S))
        np.add.at(self.counts, np.minimum(index, _BUCKETS - 1), 1)
        self.total += values.size

    def merge(self, other: "LogHistogram") -> None:
        self.counts += other.counts
        self.total += other.total

    def percentile(self, q: float) -> float:
        """Upper edge of the bucket holding the q-th percentile (0 < q <= 100); 0 when empty."""
        if self.total == 0:
            return 0.0
        rank = max(1, int(np.ceil(self.total * q / 100.0)))
        bucket = int(np.searchsorted(np.cumsum(self.counts), rank))
        return float(_UPPER_EDGES[min(bucket, _BUCKETS - 1)])
