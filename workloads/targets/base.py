"""The interface every storage target implements: files, DuckDB, DolphinDB.

A target lives in two places. In the parent it ``prepare``s data (cached, reused across runs) and
reports its footprint. In each worker process it is rebuilt from its plain-dict ``config``,
``open``ed (connections are made there, outside timing) and asked for operations. Each operation
returns an ``OpResult`` whose ``phases`` split its time (seconds) the way ARCHITECTURE.md says:
files io+decode, DuckDB query+decode, DolphinDB server+transfer+decode.
"""
from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workloads.datasets.schema import Scale, StringMode

PHASES = ("io", "query", "server", "transfer", "decode")  # every phase any target may report

ProgressCallback = Callable[[int, int, str], None]  # (done, total, message)


@dataclass
class OpResult:
    rows: int
    nbytes: int                      # payload bytes moved (DolphinDB encoding size for reads)
    phases: dict[str, float] = field(default_factory=dict)
    node: str = ""                   # which server node answered, when there is one
    frame: pd.DataFrame | None = None  # the data, for tests; workers drop it
    extra: dict[str, Any] = field(default_factory=dict)  # target-specific facts (DuckDB: lock_wait_s, lock_retries)


@dataclass(frozen=True)
class Layout:
    """What ``prepare`` left behind, as plain data for the run record."""

    dataset: str
    scale: Scale
    strings: StringMode
    days: tuple[dt.date, ...]
    keys_sample: tuple[str, ...]      # keys a slice workload may pick from
    rows: int
    footprint_bytes: int
    reused: bool                      # True when the cache already held it
    location: str


class TargetError(RuntimeError):
    """A failure a user can act on (unreachable host, wrong password, disk full)."""


class Target(ABC):
    kind: str = ""                   # registry key: pickle, parquet, feather, duckdb, dolphindb
    read_phases: tuple[str, ...] = ()

    def __init__(self, config: dict[str, Any]):
        self.config = dict(config)

    # --- parent side -------------------------------------------------------------------
    @abstractmethod
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        """Lay the dataset out (or find it already laid out) and describe it."""

    @abstractmethod
    def footprint(self, layout: Layout) -> int:
        """Bytes on disk for the laid-out dataset."""

    def describe(self) -> dict[str, Any]:
        """Plain data for the run's environment record (server version, topology...)."""
        return {"kind": self.kind}

    def drop_cache(self, layout: Layout) -> list[str]:
        """Make the next read cold; return the methods actually applied."""
        return []

    # --- worker side ---------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        """Connect / open files; not timed."""

    def close(self) -> None:
        """Release connections and handles."""

    @abstractmethod
    def read_day(self, layout: Layout, day: dt.date) -> OpResult: ...

    @abstractmethod
    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult: ...

    @abstractmethod
    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        """Append rows to ``table`` (default: the layout's scratch append table)."""

    @abstractmethod
    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        """One key-day's one-minute OHLC bars of the mid price, computed where the target computes."""
