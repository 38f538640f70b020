"""What every generator shares: the weekday calendar, chunk-independent random streams, and the
chunk loop of ``Dataset.generate_day``.

Why chunking cannot change the data: a row's random draws depend only on (seed, dataset, day,
stream, row index). Each stream is one PCG64 sequence per day; a chunk starting at row ``a``
jumps straight to position ``a`` with ``advance`` (O(1)), so any chunk size draws the same
numbers for the same rows. Everything not per-row (keys, price paths) is computed once per day.
"""
from __future__ import annotations

import datetime as dt
import zlib
from abc import abstractmethod
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from workloads.datasets._strings import join_parts, to_column
from workloads.datasets.base import Dataset
from workloads.datasets.schema import Scale, StringMode
from workloads.text import plural

_STREAM_SPACING = 1 << 48  # draws reserved per stream and day: far more rows than any day has
BLOCK_ROWS = 1 << 16        # rows generated at a time inside a chunk


def dataset_tag(name: str) -> int:
    """A stable integer per dataset name, so two datasets with one seed differ."""
    return zlib.crc32(name.encode("ascii"))


def _entropy(parts) -> np.random.SeedSequence:
    # SeedSequence wants non-negative integers; a user's seed may be negative.
    return np.random.SeedSequence([int(p) % 2**64 for p in parts])


def seeded(*parts: int) -> np.random.Generator:
    """A generator for one purpose, named by ``parts`` (seed, dataset tag, purpose, ...)."""
    return np.random.Generator(np.random.PCG64(_entropy(parts)))


def weekdays_from(start: dt.date, count: int) -> list[dt.date]:
    """``count`` weekdays starting at ``start`` (or the first weekday after it)."""
    days: list[dt.date] = []
    day = start
    while len(days) < count:
        if day.weekday() < 5:
            days.append(day)
        day += dt.timedelta(days=1)
    return days


def parse_start(text: str, default: str) -> dt.date:
    value = text or default
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"start day {value!r} is not a date: use YYYY-MM-DD") from None


class ChunkRandom:
    """Uniform draws in [0, 1) for rows ``start .. stop`` of one day, stream by stream."""

    def __init__(self, seed_parts: tuple[int, ...], start: int, stop: int):
        self._state = np.random.PCG64(_entropy(seed_parts)).state
        self.start = start
        self.rows = stop - start

    def uniform(self, stream: int) -> np.ndarray:
        bits = np.random.PCG64()
        bits.state = self._state
        bits.advance(stream * _STREAM_SPACING + self.start)  # one 64-bit draw per double
        return np.random.Generator(bits).random(self.rows)

    def uniforms(self, first_stream: int, count: int) -> np.ndarray:
        """``count`` consecutive streams as a ``(count, rows)`` array."""
        out = np.empty((count, self.rows))
        for i in range(count):
            out[i] = self.uniform(first_stream + i)
        return out


class ChunkedDataset(Dataset):
    """Implements the chunk loop; subclasses describe one day (``day_context``) and build the
    rows ``start .. stop`` of it (``rows``)."""

    default_start: str = ""

    def trading_days(self, scale: Scale) -> list[dt.date]:
        return weekdays_from(parse_start(scale.start, self.default_start), scale.days)

    def generate_day(
        self, day_index: int, scale: Scale, strings: StringMode = StringMode.ARROW,
        chunk_rows: int = 1_000_000,
    ) -> Iterator[pd.DataFrame]:
        strings = StringMode.parse(strings)
        if not 0 <= day_index < scale.days:
            raise ValueError(f"day index {day_index} is outside this scale's {plural(scale.days, 'day')}")
        if chunk_rows < 1:
            raise ValueError("chunk rows must be at least 1")
        day = self.trading_days(scale)[day_index]
        context = self.day_context(day_index, day, scale)
        seed_parts = (scale.seed, dataset_tag(self.info.name), day_index)
        for start in range(0, scale.rows_per_day, chunk_rows):
            stop = min(start + chunk_rows, scale.rows_per_day)
            # Work in cache-sized blocks: big temporaries cost page faults, not just arithmetic.
            blocks = [self.rows(context, ChunkRandom(seed_parts, a, min(a + BLOCK_ROWS, stop)),
                                a, min(a + BLOCK_ROWS, stop))
                      for a in range(start, stop, BLOCK_ROWS)]
            yield pd.DataFrame({name: to_column(join_parts([b[name] for b in blocks]), strings)
                                for name in blocks[0]}, copy=False)

    @abstractmethod
    def day_context(self, day_index: int, day: dt.date, scale: Scale) -> Any:
        """Everything about one day that is not per row: keys, price paths, clocks."""

    @abstractmethod
    def rows(self, context: Any, random: ChunkRandom, start: int, stop: int) -> dict[str, Any]:
        """The columns (in schema order) of rows ``start .. stop`` of the day: numpy arrays,
        string columns as ``Coded`` or ``Chars``."""
