"""Each engine's fastest documented client path for the three read operations and the tick pack's
as-of join and snapshot, to time beside Tickbench's own figure (``benchmarks/bench_practitioner.py``).

A path is what that engine's practitioners write by hand: its own client, its natural layout, no
Tickbench code inside the timed call. It may use the target only for names (the table, the file,
the port), which it reads before timing. Every path returns a pandas DataFrame of the same rows the
target's operation returns (order aside where the operation's meaning leaves order free).

One module per engine, ``<engine>_paths.py``, with one ``Paths`` subclass named ``PATHS``.
"""
from __future__ import annotations

import datetime as dt
import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

OPERATIONS = ("read_day", "read_slice", "minute_bars", "asof_join", "snapshot")
SNAPSHOT_AT = "12:00:00"        # the snapshot workload's default time of day

# target kind -> module of its paths (imported only when that engine is measured)
MODULES = {
    "duckdb": "duckdb_paths",
    "pickle": "files_paths",
    "parquet": "files_paths",
    "feather": "files_paths",
    "clickhouse": "clickhouse_paths",
    "arcticdb": "arcticdb_paths",
    "hdf5": "hdf5_paths",
    "questdb": "questdb_paths",
    "postgres": "postgres_paths",
    "druid": "druid_paths",
}


@dataclass(frozen=True)
class Path:
    """One operation's hand-written path: what it is (printed beside its figure) and the call."""

    how: str
    call: Callable[[dt.date, str], pd.DataFrame]     # (day, key) -> the result; key unused by read_day


class Paths(ABC):
    """An engine's paths over one prepared layout. ``open`` connects (untimed); ``paths`` gives a
    ``Path`` per operation in ``OPERATIONS``; ``close`` releases what ``open`` made."""

    def __init__(self, target: Any, layout: Any):
        self.target, self.layout = target, layout

    def open(self) -> None:
        """Connect, open files: outside every timed call."""

    def close(self) -> None:
        """Release what ``open`` made."""

    @abstractmethod
    def paths(self) -> dict[str, Path]:
        """A ``Path`` per operation of ``OPERATIONS`` the engine can do (the tick pack's where it asks them)."""


def paths_for(kind: str, target: Any, layout: Any) -> Paths:
    """The ``Paths`` of target kind ``kind`` (KeyError when no path is written for it)."""
    module = importlib.import_module(f"{__name__}.{MODULES[kind]}")
    return module.PATHS(target, layout)
