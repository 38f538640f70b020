"""The interface every storage target implements: files, DuckDB, DolphinDB.

A target lives in two places. In the parent it ``prepare``s data (cached, reused across runs) and
reports its footprint. In each worker process it is rebuilt from its plain-dict ``config``,
``open``ed (connections are made there, outside timing) and asked for operations.

An operation's total time is the call a user makes (``pickle.load``, ``pq.read_table(...).to_pandas()``,
``session.run(query)``) and nothing else. Its ``phases`` split that time only where the call has
natural parts (Arrow's reader, then ``to_pandas``). A split that needs a different code path
(pickle's file reads, DolphinDB's server time and raw transfer) is measured in separate *probe*
operations: the worker runs them after the step's measured operations, with the target in
``probe_mode()``, and they are stored apart (kind "probe") and never counted in a figure but the
phase split. The phases (seconds), one meaning each, everywhere:

- ``io``: bytes off the disk into memory, nothing decoded (pickle probes: the unpickler's reads).
- ``read``: a format's reader into its in-memory form: disk + decompression + decoding into Arrow
  (``pq.read_table``, ``pa.ipc.open_file(...).read_all()``).
- ``query``: a query engine's execution into its result (DuckDB into Arrow), or pandas' own work
  after decoding (filters, minute bars).
- ``server``: measured on a server, result kept there (DolphinDB probes).
- ``transfer``: the same result's bytes read off the socket without decoding (DolphinDB probes).
- ``decode``: in-memory data to a pandas DataFrame (``to_pandas``; a client's deserialisation).

Bytes, one meaning each: ``OpResult.nbytes`` is the logical size of the rows the operation counts
(rows x the row width in DolphinDB's column widths, ``workloads.targets.common.sizes``), the same for every
target, so MB/s compares across targets; ``wire_bytes`` is what was actually read from disk or the
network where the target knows it (a file's bytes, a server's reply), else None.
"""
from __future__ import annotations

import datetime as dt
import os
from abc import ABC, abstractmethod
from pathlib import Path
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workloads.datasets.schema import Scale, Schema, StringMode

PHASES = ("io", "read", "query", "server", "transfer", "decode")  # every phase, in data-flow order
IMPORT_TABLE = "import"          # where the import workload loads CSV files (beside the main table)

ProgressCallback = Callable[[int, int, str], None]  # (done, total, message)


class OpResult:
    """What one operation produced. Its sizes may be given, or worked out on first use: rows by
    ``count_rows`` (a server-side count of what a load wrote), logical bytes from the frame or the
    rows and the schema, wire bytes from the file read. The worker asks only after the timed span,
    so sizing a result never costs the operation time."""

    def __init__(self, rows: int | None, nbytes: int | None = None, phases: dict[str, float] | None = None,
                 node: str = "", frame: pd.DataFrame | None = None, extra: dict[str, Any] | None = None,
                 wire_bytes: int | None = None, schema: Schema | None = None,
                 wire_path: str | os.PathLike | None = None, count_rows: Callable[[], int] | None = None,
                 count_wire: Callable[[], int] | None = None):
        self._rows = rows
        self._count_rows = count_rows
        self._count_wire = count_wire    # the bytes a read took, worked out after it (Parquet, Feather columns)
        self.phases = phases if phases is not None else {}
        self.node = node                 # which server node answered, when there is one
        self.frame = frame               # the data, for tests; workers drop it
        self.extra = extra if extra is not None else {}   # target facts (DuckDB: lock_wait_s...)
        self._nbytes = nbytes
        self._wire_bytes = wire_bytes
        self._schema = schema            # the dataset's schema, for the row width of its columns
        self._wire_path = wire_path      # a file read whole: its size is the wire bytes

    @property
    def rows(self) -> int:
        if self._rows is None:
            try:
                self._rows = int(self._count_rows()) if self._count_rows is not None else 0
            except Exception as exc:  # the load itself succeeded: say the count failed, count none
                self._rows = 0
                self.extra = {**self.extra, "count_error": f"{type(exc).__name__}: {exc}"}
        return self._rows

    @rows.setter
    def rows(self, value: int) -> None:
        self._rows = int(value)

    @property
    def nbytes(self) -> int:
        """Logical bytes of the counted rows (see the module doc)."""
        if self._nbytes is None:
            from workloads.targets.common.sizes import frame_bytes, rows_bytes
            if self.frame is not None:
                self._nbytes = frame_bytes(self.frame, self._schema)
            else:
                self._nbytes = rows_bytes(self.rows, self._schema) if self._schema is not None else 0
        return self._nbytes

    @nbytes.setter
    def nbytes(self, value: int) -> None:
        self._nbytes = int(value)

    @property
    def wire_bytes(self) -> int | None:
        """Bytes actually read from disk or the network, when known."""
        if self._wire_bytes is None and self._count_wire is not None:
            try:
                self._wire_bytes = int(self._count_wire())
            except Exception:  # a size that cannot be worked out is unknown, never an error
                self._wire_bytes = None
            self._count_wire = None
        if self._wire_bytes is None and self._wire_path is not None:
            try:
                self._wire_bytes = os.stat(self._wire_path).st_size
            except OSError:
                self._wire_path = None
        return self._wire_bytes

    @wire_bytes.setter
    def wire_bytes(self, value: int | None) -> None:
        self._wire_bytes = value


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
    notes: str = ""                   # what the layout does to the data (a rounding), recorded with the run


class TargetError(RuntimeError):
    """A failure a user can act on (unreachable host, wrong password, disk full)."""


class NotSupported(TargetError):
    """The target cannot express this (a query its engine has no construct for): a state of its
    own in figures, never an error and never a zero."""


@dataclass(frozen=True)
class Footprint:
    """Space a laid-out (or imported) table takes, as the engine stores it."""

    bytes: int                                   # on disk, replicas included as stored
    columns: dict[str, int] = field(default_factory=dict)   # per column, where the engine tells
    replicas: int | None = None                  # copies ``bytes`` includes (1: one; None: unknown)
    runtime_bytes: int | None = None             # extra space while serving (a segment cache)
    method: str = ""                             # how it was measured (storage_info, file sizes...)

    def to_dict(self) -> dict[str, Any]:
        return {"bytes": self.bytes, "columns": dict(self.columns), "replicas": self.replicas,
                "runtime_bytes": self.runtime_bytes, "method": self.method}


class Target(ABC):
    kind: str = ""                   # registry key: pickle, parquet, feather, duckdb, dolphindb
    read_phases: tuple[str, ...] = ()
    # operations (by OpResult-producing method name) whose phase split comes from probe operations
    probed_ops: frozenset[str] = frozenset()
    # The engine keeps data in caches of its own, which its ``drop_cache`` must empty: when that clear
    # applies nothing, dropping the host's page cache (an agent's) leaves the data cached all the same
    engine_caches_data: bool = False

    def __init__(self, config: dict[str, Any]):
        self.config = dict(config)
        self.probing = False

    @contextmanager
    def probe_mode(self) -> Iterator[None]:
        """Operations inside run their instrumented path (phases split, not the user's plain call)."""
        self.probing = True
        try:
            yield
        finally:
            self.probing = False

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
        """Empty every shared cache that could hold this layout's data: each file's pages in the OS
        cache, a server's caches on every node it uses. Called in a worker when no operation of the
        step runs (``workloads.run.cold``: by user 0 between the rounds of a cold step), outside every
        timing; returns the methods actually applied ([] = nothing could be dropped, and no
        operation after it is called cold)."""
        return []

    def data_hosts(self) -> tuple[str, ...]:
        """The hosts whose page caches hold the layout's data, as the server reports them after the
        last ``drop_cache`` (each must have an agent for a read to be host-cold); () where this
        target cannot tell."""
        return ()

    def data_files(self, layout: Layout) -> list[Path]:
        """The files on this machine that hold the layout's data: a cold round checks after its
        clear that none of their pages is left in the OS cache ([] = none here to check, e.g. a
        remote server's)."""
        return []

    def drop_process_cache(self, layout: Layout) -> list[str]:
        """Empty what this process itself keeps of the data (an embedded engine's buffer pool): every
        user of a cold round calls it for its own process, before the round's ``drop_cache``."""
        return []

    def prepare_columns(self, layout: Layout, columns: tuple[str, ...] | None) -> None:
        """Whatever reading only ``columns`` of a day needs beforehand (pickle: a second file per
        day holding only them, as report 000 did); in the parent before any worker starts, untimed.
        Most engines read a subset of columns as it is and need nothing."""

    def clear_table(self, layout: Layout, table: str = "") -> None:
        """Empty a scratch table that writes append to (default: the layout's append table), so
        every step of a write workload starts from the same state; called before its workers start."""

    def key_groups(self, layout: Layout) -> list[frozenset]:
        """The layout's keys grouped by the partition of the key they are stored in, where the
        engine partitions by key and locks what a write touches (DolphinDB's RANGE buckets); [] =
        the key is no partitioning level here. Writing users split these groups among themselves
        when more users write than there are days (``workloads.operations.shares``)."""
        return []

    # --- worker side ---------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        """Connect / open files; not timed."""

    def close(self) -> None:
        """Release connections and handles."""

    @abstractmethod
    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        """One whole day as a DataFrame, with the call a user makes. ``columns``: None for every
        column, else only those (names of the dataset's schema, in its order: ``workloads.targets.
        columns``), read the engine's own way (a select list, ``columns=``, a projection), so the
        result's rows, bytes and schema describe just them."""

    @abstractmethod
    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult: ...

    @abstractmethod
    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        """Append rows to ``table`` (default: the layout's scratch append table)."""

    @abstractmethod
    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        """One key-day's one-minute OHLC bars of the mid price, computed where the target computes."""

    # --- reports 001 and 004: import, export, footprint, query suites ------------------------
    query_dialect: str = ""          # which text of a suite's query this target runs

    def supports(self, query) -> bool:
        """Whether this target can run the suite query (it has a text in its dialect)."""
        return query.text(self.query_dialect) is not None

    @abstractmethod
    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """Bulk-load one day's CSV file with the target's own loader into the layout's import table
        (``IMPORT_TABLE``, emptied by ``clear_table`` before each step). ``wire_bytes``: the CSV's
        size; ``extra["queryable_s"]``: time after the load until the data can be queried (an index
        build), where the engine has one."""

    @abstractmethod
    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """Write one day of the layout to ``path`` as CSV with the target's own exporter;
        ``wire_bytes``: the CSV's size. A server target writes where its server sees ``path``."""

    @abstractmethod
    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        """Space of the layout's main table ("") or its import table (``IMPORT_TABLE``)."""

    @abstractmethod
    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        """Run a suite query (``workloads.queries.Query``) with its parameter values, in this
        target's dialect; raise ``NotSupported`` when the query has no text for it."""
