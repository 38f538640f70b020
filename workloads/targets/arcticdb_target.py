"""ArcticDB (Man Group's DataFrame database), embedded: LMDB on the local disk, or a user's S3 store.

Configuration (plain data; the registry and the GUI use exactly these keys):
- ``uri``: where the store lives. Default ``lmdb://<datasets dir>/arcticdb?map_size=4GB``. Any
  ``lmdb://<folder>[?options]`` or a user's ``s3://...`` / ``s3s://...`` URI, passed to
  ``Arctic()`` unchanged (Tickbench never contacts S3 itself; its access keys are never recorded).
- ``symbol_per``: ``"day"`` (default: one symbol per trading day, ``d20070823``) or
  ``"instrument"`` (one symbol per key, ``AAPL``, holding every day; a day is a ``date_range``).
- ``library``: an optional prefix of the library's name.
Also ``lock_timeout_s`` (writer turns, below) and ``drop_caches`` (cold reads, as the files do).

Layout: one library per dataset, scale and symbol layout, ``<prefix><dataset>_<scale.key()>_by_<day|
instrument>`` (characters ArcticDB dislikes made ``_``). Rows are indexed by their timestamp
(TAQ: ``date`` + the ``time`` of day; devices: ``time``), sorted, so ``date_range`` reads seek;
every schema column is stored as well, so a read gives DuckDB's columns in its order with the
index dropped. Per-day symbols hold the generator's time order; a day of the per-instrument
layout is read with ``read_batch`` (one ``date_range`` request per key, keys in sorted order:
DuckDB's row order). The manifest is the metadata of the symbol ``_tickbench_manifest`` (format,
scale with the dataset's content id, days and rows per day, keys sample, schema, versions,
complete flag), rewritten after each day, so an interrupted ``prepare`` resumes at the first
missing day (per-day: the day symbol is simply rewritten; per-instrument: a day begun is first
deleted from every key symbol with ``delete_data_in_range``). Side tables (devices' ``info``)
are ``_side_<name>``, appends go to ``_append_<table>``, CSV imports to ``_import_<day symbol or
key>``, report 003's minute quotes to ``_minute``; those scratch symbols are row-numbered (their
batches repeat timestamps, which a time-indexed append refuses).

Phases (meanings in ``workloads.targets.base``). ArcticDB decodes its segments straight into
pandas inside ``lib.read(...).data``: one call, no honest split, so it is one ``read`` phase.
Strings: with pandas' future string inference on (as Tickbench runs) ArcticDB builds Arrow-backed
``str`` columns itself; the object mode reads with that option off, which is ArcticDB's native
object output; only the category mode needs a conversion afterwards, timed as ``decode``.
``query`` is pandas' own work (concatenating the keys of a per-instrument day, the suites, report
003). Minute bars: ArcticDB's ``QueryBuilder`` (filter to the key in the per-day layout, the
key's symbol and the day's ``date_range`` in the per-instrument one, ``apply`` the mid price,
``resample("1min")`` with first/max/min/last) computes exactly ``workloads.targets.bars.
minute_bars`` (checked on real data by the tests: its first/last follow the stored, i.e. arrival,
order; buckets without rows are left out), so it is used; ``bars_by`` in describe() and in each
OpResult's ``extra`` says so ("arcticdb resample"; config ``bars_by: "pandas"`` computes them in
pandas after a slice read instead, for comparison). Its resample would merge keys over a whole
day symbol: hence the filter first. ArcticDB has no CSV loader: imports read with Tickbench's
pyarrow reader (``read``) then ``lib.write`` / ``update_batch`` (``io``); exports read the day
then write the CSV (``io``). ``wire_bytes`` stays empty (ArcticDB reads its own keys).

Concurrency, found by trying (ArcticDB 6.28, LMDB): several processes may read one LMDB store
at once (LMDB's MVCC readers), also while another writes. Several processes writing the SAME
symbol at once lose data silently: three processes each appending 30 batches to one symbol
reported 89 successes (one ``E_NON_INCREASING_INDEX_VERSION``) and left 30 batches in it;
ArcticDB documents parallel writes to one symbol as unsupported. Writes to different symbols
are safe. Taking turns is not enough by itself: each process caches the version map (reloaded
every few seconds), so a process appends onto a version it last saw and drops the other's
batches (two processes, 8 serialised appends each: half the rows lost), or fails with
``KeyNotFoundException`` after a clear. So a writer, once its turn is taken, and a count of
written rows first drop their process's cached version map (``flush_version_map``) and read
the current versions; reads keep ArcticDB's default cache, as its users' reads do (a reload
interval of 0 for the whole process, this target's former fix, made every read reload the map).
Every write of a library (prepare, append, import, clear, the map-reduce) takes the library's
writer turn: an ``flock`` on ``<lmdb folder>/.<library>.writers.lock`` (for S3 a lock
file in the temp folder, which serialises this machine's processes only). The wait is part of
the ``query``/``io`` phase and reported in ``extra`` (``lock_wait_s``, ``serialised``, turn
times on the system-wide monotonic clock). Without ``fcntl`` (Windows) there is no turn.

LMDB's ``map_size`` is the most the store may grow to (a reservation of address space, not disk);
``data.mdb`` on disk holds the pages in use. A full map is reported as a TargetError naming it.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import tempfile
import time
from contextlib import contextmanager
from dataclasses import asdict, replace
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pandas as pd
from arcticdb import Arctic, QueryBuilder, ReadRequest, UpdatePayload, WritePayload
from arcticdb.exceptions import NoSuchVersionException

from workloads.datasets.base import side_tables
from workloads.datasets.csv_files import STYLE as CSV_STYLE
from workloads.datasets.csvread import read_csv
from workloads.datasets.csvwrite import write_csv
from workloads.datasets.schema import DatasetInfo, Scale, Schema, StringMode, apply_string_mode
from workloads.targets.arrow_frames import key_value, library_versions
from workloads.targets.bars import BAR_COLUMNS, minute_bars, price_columns
from workloads.targets.base import IMPORT_TABLE, Footprint, Layout, OpResult, ProgressCallback, Target, TargetError
from workloads.targets.cache import drop_file_cache, system_wide_drop
from workloads.targets.columns import column_schema
from workloads.targets.client_pandas import ClientPandas
from workloads.targets.quotes import minute_quotes
from workloads.targets.sizes import rows_bytes
from workloads.targets.turns import take_turn
from workloads.targets.storage import disk_full_error
from workloads.targets.lazy import get_dataset as _get_dataset
from workloads.text import plural

LAYOUT_FORMAT = 1
KEYS_SAMPLE = 100
DEFAULT_CHUNK_ROWS = 1_000_000
DEFAULT_LOCK_TIMEOUT_S = 120.0
SYMBOL_LAYOUTS = ("day", "instrument")
MANIFEST_SYMBOL = "_tickbench_manifest"
MINUTE_SYMBOL = "_minute"
INDEX_NAME = "_ts"
BARS_ARCTICDB = "arcticdb resample"
BARS_PANDAS = "pandas"
_EPOCH = np.datetime64(0, "ns")
_TIME_OF_DAY = ("SECOND", "TIME")
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


def _now() -> float:
    return time.perf_counter()



def default_uri() -> str:
    from workloads.paths import default_datasets_dir
    return f"lmdb://{default_datasets_dir() / 'arcticdb'}?map_size=4GB"


def lmdb_folder(uri: str) -> Path | None:
    """The folder of an ``lmdb://`` URI; None for S3; TargetError for anything else."""
    scheme = uri.split("://", 1)[0].lower() if "://" in uri else ""
    if scheme in ("s3", "s3s"):
        if not uri.split("://", 1)[1].strip():
            raise TargetError(f"ArcticDB URI {uri!r} names no S3 endpoint or bucket")
        return None
    if scheme != "lmdb":
        raise TargetError(f"ArcticDB URI {uri!r} is not understood: use lmdb://<folder>[?map_size=4GB] "
                          "or a user's s3://... / s3s://... store")
    folder = uri[len("lmdb://"):].split("?", 1)[0]
    if not folder:
        raise TargetError(f"ArcticDB URI {uri!r} names no folder: use lmdb://<folder>[?map_size=4GB]")
    return Path(folder)


def display_uri(uri: str) -> str:
    """The URI without its options for S3 (they may hold access keys): safe to record."""
    if lmdb_folder(uri) is not None:
        return uri
    parts = urlsplit(uri)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def day_symbol(day: dt.date) -> str:
    return f"d{day:%Y%m%d}"


def day_range(day: dt.date) -> tuple[pd.Timestamp, pd.Timestamp]:
    """A day's ``date_range`` (both ends inclusive in ArcticDB)."""
    start = pd.Timestamp(day)
    return start, start + pd.Timedelta(days=1) - pd.Timedelta(1, "ns")


def _time_of_day(info: DatasetInfo) -> bool:
    """Whether the time column is a time of day (on 1970-01-01) beside a separate date column."""
    return (info.date_column != info.time_column
            and info.schema.column(info.time_column).ddb_type in _TIME_OF_DAY
            and info.schema.column(info.date_column).ddb_type == "DATE")


def timestamps(frame: pd.DataFrame, info: DatasetInfo) -> pd.DatetimeIndex:
    """Each row's moment: date + time of day (TAQ), else the time column itself (devices)."""
    times = frame[info.time_column].to_numpy()
    if _time_of_day(info):
        times = frame[info.date_column].to_numpy() + (times - _EPOCH)
    return pd.DatetimeIndex(times, name=INDEX_NAME)


def time_indexed(frame: pd.DataFrame, info: DatasetInfo) -> pd.DataFrame:
    """``frame`` indexed by its rows' moments, sorted (stable: arrival order kept among ties)."""
    indexed = frame.set_axis(timestamps(frame, info), axis=0)
    if not indexed.index.is_monotonic_increasing:
        indexed = indexed.sort_index(kind="stable")
    return indexed


def empty_frame(schema: Schema, strings: StringMode) -> pd.DataFrame:
    return pd.DataFrame({c.name: pd.Series(dtype=c.pandas_dtype(strings)) for c in schema.columns})


class ArcticDBTarget(ClientPandas, Target):
    kind = "arcticdb"
    read_phases = ("read", "query", "decode")

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self._arctic: Arctic | None = None
        self._libraries: dict[str, Any] = {}
        self._info: DatasetInfo | None = None
        self._symbols: dict[str, list[str]] = {}   # per library: the key symbols (per-instrument)
        if self.symbol_per not in SYMBOL_LAYOUTS:
            raise TargetError(f"symbol_per {self.symbol_per!r}: choose one of {', '.join(SYMBOL_LAYOUTS)}")
        if self.bars_by not in (BARS_ARCTICDB, BARS_PANDAS):
            raise TargetError(f"bars_by {self.bars_by!r}: choose {BARS_ARCTICDB!r} or {BARS_PANDAS!r}")
        lmdb_folder(self.uri)  # a malformed URI is refused at once, by name

    # --- configuration -------------------------------------------------------------------
    @property
    def uri(self) -> str:
        return str(self.config.get("uri") or default_uri())

    @property
    def symbol_per(self) -> str:
        return str(self.config.get("symbol_per") or "day")

    @property
    def bars_by(self) -> str:
        return BARS_PANDAS if self.config.get("bars_by") == BARS_PANDAS else BARS_ARCTICDB

    @property
    def lock_timeout_s(self) -> float:
        return float(self.config.get("lock_timeout_s") or DEFAULT_LOCK_TIMEOUT_S)

    def library_name(self, dataset: str, scale: Scale) -> str:
        name = f"{self.config.get('library') or ''}{dataset}_{scale.key()}_by_{self.symbol_per}"
        return _NAME_CHARS.sub("_", name)

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        if self._info is None or self._info.name != layout.dataset:
            self._info = _get_dataset(layout.dataset).info
        return self._info

    # --- the store -------------------------------------------------------------------------
    def _connect(self) -> Arctic:
        if self._arctic is None:
            folder = lmdb_folder(self.uri)
            if folder is not None:
                folder.mkdir(parents=True, exist_ok=True)
            try:
                self._arctic = Arctic(self.uri)
            except Exception as exc:
                raise TargetError(f"cannot open ArcticDB store {display_uri(self.uri)}: "
                                  f"{type(exc).__name__}: {exc}") from exc
        return self._arctic

    def _library(self, name: str, create: bool = False):
        lib = self._libraries.get(name)
        if lib is None:
            arctic = self._connect()
            if not create and not arctic.has_library(name):
                raise TargetError(f"ArcticDB library {name} does not exist in {display_uri(self.uri)}: "
                                  "prepare the target first")
            lib = self._libraries[name] = arctic.get_library(name, create_if_missing=create)
        return lib

    def _lib(self, layout: Layout):
        return self._library(self.library_name(layout.dataset, layout.scale))

    def _current_versions(self, library: str) -> None:
        """Drop this process's cached version map of ``library`` (ArcticDB keeps one per library
        instance, reloaded every few seconds): the next call reads what other processes wrote since."""
        lib = self._libraries.get(library)
        if lib is not None:
            lib._nvs.version_store.flush_version_map()

    def _mdb_files(self, layout: Layout) -> list[Path]:
        folder = lmdb_folder(self.uri)
        if folder is None:
            return []
        return [folder / self.library_name(layout.dataset, layout.scale) / "data.mdb"]

    @contextmanager
    def _writer_turn(self, library: str):
        """This library's writer turn among this machine's processes (ArcticDB loses concurrent
        writes to one symbol); yields the wait facts an OpResult reports."""
        folder = lmdb_folder(self.uri)
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f".{library}.writers.lock"
        else:
            digest = hashlib.sha1(f"{display_uri(self.uri)}|{library}".encode()).hexdigest()[:16]
            path = Path(tempfile.gettempdir()) / f"tickbench-arcticdb-{digest}.writers.lock"
        asked = time.monotonic()
        fd, _polls = take_turn(path, self.lock_timeout_s,
                               f"no turn to write ArcticDB library {library} within {self.lock_timeout_s:g} s: "
                               "other Tickbench processes kept writing (ArcticDB loses concurrent writes "
                               "to one symbol)")
        taken = time.monotonic()
        facts = {"lock_wait_s": taken - asked, "serialised": fd is not None,
                 "turn_asked": asked, "turn_taken": taken}
        try:
            with self._store_errors():
                self._current_versions(library)     # build on the last writer's version, not a cached one
                yield facts
        finally:
            facts["turn_released"] = time.monotonic()
            if fd is not None:
                os.close(fd)

    @contextmanager
    def _store_errors(self):
        """A full disk or a full LMDB map as errors a user can act on."""
        try:
            yield
        except TargetError:
            raise
        except Exception as exc:
            folder = lmdb_folder(self.uri)
            error = disk_full_error(exc, folder or Path(tempfile.gettempdir()))
            if error is not None:
                raise error from exc
            if "MAP_FULL" in str(exc).upper():
                raise TargetError(f"the LMDB map of {self.uri} is full: raise map_size in the uri "
                                  f"(e.g. ?map_size=16GB): {exc}") from exc
            raise

    # --- parent side ---------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        days = list(ds.trading_days(scale))
        name = self.library_name(dataset, scale)
        wanted = {"format": LAYOUT_FORMAT, "dataset": dataset, "scale": asdict(scale),
                  "content": ds.content_id, "symbol_per": self.symbol_per}
        with self._writer_turn(name):
            lib = self._library(name, create=True)
            manifest = self._read_manifest(lib)
            same = manifest is not None and all(manifest.get(k) == v for k, v in wanted.items())
            if same and manifest["complete"] and [e["date"] for e in manifest["entries"]] \
                    == [d.isoformat() for d in days]:
                self._write_side_tables(lib, ds, scale)
                return self._layout(manifest, name, strings, reused=True)
            if not same:  # another format, scale or content under this name: start over
                for symbol in lib.list_symbols():
                    lib.delete(symbol)
                manifest = {**wanted, "complete": False, "entries": [], "symbols": [],
                            "keys_sample": [str(k) for k in ds.keys(scale)[:KEYS_SAMPLE]],
                            "schema": [[c.name, c.ddb_type] for c in ds.info.schema.columns],
                            "versions": self._versions(), "created": dt.datetime.now().isoformat()}
            self._write_days(lib, ds, scale, days, manifest, progress)
            self._write_side_tables(lib, ds, scale)
            manifest["complete"] = True
            self._write_manifest(lib, manifest)
            return self._layout(manifest, name, strings, reused=False)

    def _write_days(self, lib, ds, scale: Scale, days: list[dt.date], manifest: dict[str, Any],
                    progress: ProgressCallback | None) -> None:
        done = {e["date"] for e in manifest["entries"]}
        pending = manifest.pop("pending", None)
        if pending and pending not in done and self.symbol_per == "instrument":
            span = day_range(dt.date.fromisoformat(pending))   # a day begun: take it out of every key
            for symbol in manifest["symbols"]:
                if lib.has_symbol(symbol):
                    lib.delete_data_in_range(symbol, span)
        total = scale.days * scale.rows_per_day
        rows_done = sum(e["rows"] for e in manifest["entries"])
        chunk_rows = int(self.config.get("chunk_rows") or DEFAULT_CHUNK_ROWS)
        for index, day in enumerate(days):
            if day.isoformat() in done:
                continue
            manifest["pending"] = day.isoformat()
            self._write_manifest(lib, manifest)
            chunks = ds.generate_day(index, scale, StringMode.ARROW, chunk_rows)
            if self.symbol_per == "day":
                rows = self._write_day_symbol(lib, ds.info, day, chunks)
            else:
                rows = self._append_day_to_keys(lib, ds.info, chunks, manifest)
            manifest.pop("pending")
            manifest["entries"].append({"date": day.isoformat(), "rows": rows})
            manifest["entries"].sort(key=lambda e: e["date"])
            self._write_manifest(lib, manifest)
            rows_done += rows
            if progress is not None:
                progress(min(rows_done, total), total, f"{day.isoformat()} written to ArcticDB")

    @staticmethod
    def _write_day_symbol(lib, info: DatasetInfo, day: dt.date, chunks) -> int:
        """The day as one symbol: the first chunk written (replacing a half day), the rest appended."""
        rows = 0
        for n, chunk in enumerate(chunks):
            frame = time_indexed(chunk, info)
            if n == 0:
                lib.write(day_symbol(day), frame, prune_previous_versions=True)
            else:
                lib.append(day_symbol(day), frame)
            rows += len(frame)
        return rows

    @staticmethod
    def _append_day_to_keys(lib, info: DatasetInfo, chunks, manifest: dict[str, Any]) -> int:
        """The whole day grouped by key (one segment per key-day), appended to each key's symbol."""
        day = pd.concat(list(chunks), ignore_index=True)
        payloads = [WritePayload(str(key), time_indexed(rows, info))
                    for key, rows in day.groupby(day[info.key_column].astype(str), sort=True, observed=True)]
        failed = [r for r in lib.append_batch(payloads) if not hasattr(r, "version")]
        if failed:
            raise TargetError(f"ArcticDB refused {plural(len(failed), 'key symbol')}: {failed[0]}")
        manifest["symbols"] = sorted(set(manifest["symbols"]) | {p.symbol for p in payloads})
        return len(day)

    @staticmethod
    def _write_side_tables(lib, ds, scale: Scale) -> None:
        for name in side_tables(ds):
            if not lib.has_symbol(f"_side_{name}"):
                lib.write(f"_side_{name}", getattr(ds, f"{name}_frame")(scale).reset_index(drop=True))

    @staticmethod
    def _read_manifest(lib) -> dict[str, Any] | None:
        if not lib.has_symbol(MANIFEST_SYMBOL):
            return None
        manifest = lib.read_metadata(MANIFEST_SYMBOL).metadata
        return manifest if isinstance(manifest, dict) else None

    @staticmethod
    def _write_manifest(lib, manifest: dict[str, Any]) -> None:
        lib.write(MANIFEST_SYMBOL, pd.DataFrame({"format": [LAYOUT_FORMAT]}), metadata=manifest,
                  prune_previous_versions=True)

    @staticmethod
    def _versions() -> dict[str, str]:
        return {**library_versions(), "arcticdb": metadata.version("arcticdb")}

    def _layout(self, manifest: dict[str, Any], name: str, strings: StringMode, reused: bool) -> Layout:
        entries = manifest["entries"]
        layout = Layout(dataset=manifest["dataset"], scale=Scale(**manifest["scale"]), strings=strings,
                        days=tuple(dt.date.fromisoformat(e["date"]) for e in entries),
                        keys_sample=tuple(manifest["keys_sample"]), rows=sum(e["rows"] for e in entries),
                        footprint_bytes=0, reused=reused,
                        location=f"{display_uri(self.uri)} library {name}, a symbol per {self.symbol_per}")
        return replace(layout, footprint_bytes=self.footprint(layout))

    def footprint(self, layout: Layout) -> int:
        """LMDB: the library's ``data.mdb`` (its pages in use, every symbol); S3: ArcticDB's own
        count of the library's compressed keys."""
        files = [p for p in self._mdb_files(layout) if p.is_file()]
        if files:
            return sum(p.stat().st_size for p in files)
        sizes = self._lib(layout).admin_tools().get_sizes()
        return sum(size.bytes_compressed for size in sizes.values())

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        """ArcticDB's own count (``admin_tools().get_sizes_by_symbol()``): compressed bytes of every
        key (data segments, indexes, versions) of the table's live symbols (a deleted symbol's
        tombstone keys are the library's, not a table's). No per-column figure: ArcticDB does not tell."""
        lib = self._lib(layout)
        self._current_versions(lib.name)
        sizes = lib.admin_tools().get_sizes_by_symbol()
        # live symbols only: a deleted one keeps its version keys (a tombstone) in the sizes
        live = set(lib.list_symbols())
        if table == IMPORT_TABLE:
            wanted = [s for s in sizes if s in live and s.startswith("_import_")]
        else:
            wanted = [s for s in sizes if s in live and (not s.startswith("_") or s.startswith("_side_"))]
        total = sum(size.bytes_compressed for s in wanted for size in sizes[s].values())
        return Footprint(bytes=total, replicas=1 if lmdb_folder(self.uri) is not None else None,
                         method=f"arcticdb get_sizes_by_symbol ({len(wanted)} symbols, compressed keys)")

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "uri": display_uri(self.uri), "symbol_per": self.symbol_per,
                "library_prefix": str(self.config.get("library") or ""), "bars_by": self.bars_by,
                "writers": "serialised per library (flock)", "versions": self._versions()}

    def data_files(self, layout: Layout) -> list[Path]:
        return self._mdb_files(layout)

    def drop_cache(self, layout: Layout) -> list[str]:
        """The OS cache of ``data.mdb``."""
        return drop_file_cache(self._mdb_files(layout), system_wide=system_wide_drop(self.config))

    def drop_process_cache(self, layout: Layout) -> list[str]:
        """Reopen this process's store (ArcticDB's version-map cache)."""
        if self._arctic is None:
            return []
        self.close()
        self._lib(layout)
        return ["arcticdb reopen"]

    # --- worker side ---------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        folder = lmdb_folder(self.uri)
        if folder is not None and not folder.is_dir():
            raise TargetError(f"ArcticDB store {folder} does not exist: prepare the target first")
        self._lib(layout)

    def close(self) -> None:
        self._libraries.clear()
        self._arctic = None

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    @contextmanager
    def _string_output(self, strings: StringMode):
        """Object strings are ArcticDB's native output: read them with pandas' inference off."""
        if strings is StringMode.OBJECT:
            with pd.option_context("future.infer_string", False):
                yield
        else:
            yield

    def _conform(self, frame: pd.DataFrame, schema: Schema, strings: StringMode,
                 phases: dict[str, float]) -> pd.DataFrame:
        """The string columns in the layout's mode where the read did not give it (``decode``)."""
        if frame.empty:
            return empty_frame(schema, strings)
        t0 = _now()
        wrong = [c for c in schema.columns if c.is_string and c.name in frame.columns
                 and frame[c.name].dtype != c.pandas_dtype(strings)]
        if wrong:
            frame = apply_string_mode(frame, Schema(tuple(wrong)), strings)
            phases["decode"] = _now() - t0
        return frame

    def _read(self, layout: Layout, symbol: str, strings: StringMode, schema: Schema | None = None,
              **kwargs) -> tuple[pd.DataFrame, dict[str, float]]:
        """``lib.read(symbol, ...).data`` with the index dropped: (frame, phases); ``schema``: the
        columns read (``columns=`` passed in ``kwargs``), default every column."""
        schema = schema or self._dataset_info(layout).schema
        lib = self._lib(layout)
        t0 = _now()
        try:
            with self._string_output(strings):
                frame = lib.read(symbol, **kwargs).data.reset_index(drop=True)
            frame.columns = pd.Index(list(frame.columns))  # labels as every other read gives them
        except NoSuchVersionException:   # a key the store has never seen: no rows
            frame = empty_frame(schema, strings)
        phases = {"read": _now() - t0}
        return self._conform(frame, schema, strings, phases), phases

    def _read_day(self, layout: Layout, day: dt.date, strings: StringMode,
                  columns: tuple[str, ...] | None = None) -> tuple[pd.DataFrame, dict[str, float]]:
        """The day (only ``columns``, ArcticDB's ``columns=``, when given): (frame, phases)."""
        self._check_day(layout, day)
        schema = self._columns_schema(layout, columns)
        wanted = None if columns is None else list(schema.names)
        if self.symbol_per == "day":
            if wanted is None:
                return self._read(layout, day_symbol(day), strings)
            return self._read(layout, day_symbol(day), strings, schema, columns=wanted)
        lib = self._lib(layout)
        span = day_range(day)
        requests = [ReadRequest(symbol, date_range=span, columns=wanted) for symbol in self._key_symbols(layout)]
        t0 = _now()
        with self._string_output(strings):
            items = lib.read_batch(requests)
        t1 = _now()
        failed = [item for item in items if not hasattr(item, "data")]
        if failed:
            raise TargetError(f"ArcticDB could not read {plural(len(failed), 'key symbol')}: {failed[0]}")
        frames = [item.data for item in items if len(item.data)]
        frame = pd.concat(frames, ignore_index=True) if frames else empty_frame(schema, strings)
        frame.columns = pd.Index(list(frame.columns))  # labels as every other read gives them
        phases = {"read": t1 - t0, "query": _now() - t1}
        return self._conform(frame, schema, strings, phases), phases

    def _key_symbols(self, layout: Layout) -> list[str]:
        name = self.library_name(layout.dataset, layout.scale)
        if name not in self._symbols:
            self._symbols[name] = self._read_manifest(self._lib(layout))["symbols"]
        return self._symbols[name]

    def _columns_schema(self, layout: Layout, columns: tuple[str, ...] | None) -> Schema:
        return column_schema(self._dataset_info(layout).schema, columns, layout.dataset)

    def _result(self, layout: Layout, frame: pd.DataFrame, phases: dict[str, float], schema: Schema | None = None,
                **extra) -> OpResult:
        return OpResult(rows=len(frame), phases=phases, frame=frame, extra=extra,
                        schema=schema or self._dataset_info(layout).schema)

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        frame, phases = self._read_day(layout, day, layout.strings, columns)
        return self._result(layout, frame, phases, self._columns_schema(layout, columns))

    def _read_key(self, layout: Layout, day: dt.date, key: str, strings: StringMode):
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        value = key_value(info.schema.column(info.key_column), key)
        if self.symbol_per == "day":
            q = QueryBuilder()
            return self._read(layout, day_symbol(day), strings, query_builder=q[q[info.key_column] == value])
        return self._read(layout, str(value), strings, date_range=day_range(day))

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        frame, phases = self._read_key(layout, day, key, layout.strings)
        return self._result(layout, frame, phases)

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        if self.bars_by == BARS_PANDAS:
            frame, phases = self._read_key(layout, day, key, StringMode.ARROW)
            t0 = _now()
            bars = minute_bars(frame, info.time_column, bid, ask)
            phases["query"] = _now() - t0
            return OpResult(rows=len(bars), phases=phases, frame=bars, extra={"bars_by": BARS_PANDAS})
        self._check_day(layout, day)
        value = key_value(info.schema.column(info.key_column), key)
        q = QueryBuilder()
        if self.symbol_per == "day":
            q = q[q[info.key_column] == value]
            symbol, kwargs = day_symbol(day), {}
        else:
            symbol, kwargs = str(value), {"date_range": day_range(day)}
        q = q.apply("_mid", (q[bid] + q[ask]) / 2)
        # ArcticDB 6 returns the aggregates in the reverse of the dict's order: asked in reverse they
        # come back as the answer's columns, with no reordering copy (~0.7 ms a call on 390 rows)
        q = q.resample("1min").agg({"close": ("_mid", "last"), "low": ("_mid", "min"),
                                    "high": ("_mid", "max"), "open": ("_mid", "first")})
        lib = self._lib(layout)
        t0 = _now()
        try:
            raw = lib.read(symbol, query_builder=q, **kwargs).data
        except NoSuchVersionException:
            raw = pd.DataFrame({c: pd.Series(dtype=float) for c in BAR_COLUMNS[1:]},
                               index=pd.DatetimeIndex([], name=INDEX_NAME))
        t1 = _now()
        columns = list(BAR_COLUMNS[1:])
        bars = raw if list(raw.columns) == columns else raw[columns]
        bars = bars.copy(deep=False)
        minute = raw.index.to_numpy()
        if _time_of_day(info):   # back onto the time column's clock (a time of day on 1970-01-01)
            minute = minute - (np.datetime64(day, "ns") - _EPOCH)
        bars.index = pd.DatetimeIndex(minute, name="minute")
        bars = bars.reset_index()   # the index becomes the first column as the practitioner's does
        phases = {"query": t1 - t0, "decode": _now() - t1}
        return OpResult(rows=len(bars), phases=phases, frame=bars, extra={"bars_by": BARS_ARCTICDB})

    # --- writes ------------------------------------------------------------------------------
    @staticmethod
    def append_symbol(table: str = "") -> str:
        name = table or "scratch"
        if not re.fullmatch(r"[A-Za-z0-9_]{1,64}", name):
            raise ValueError(f"append table name {name!r}: use 1-64 letters, digits or underscores")
        return f"_append_{name}"

    def _writable(self, frame: pd.DataFrame, phases: dict[str, float]) -> pd.DataFrame:
        """Row-numbered, categories as strings (ArcticDB stores strings, not pandas categories)."""
        t0 = _now()
        out = frame.reset_index(drop=True)
        categories = [name for name, dtype in out.dtypes.items() if isinstance(dtype, pd.CategoricalDtype)]
        if categories:
            out = out.astype({name: str for name in categories})
            phases["decode"] = _now() - t0
        return out

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        info = self._dataset_info(layout)
        symbol = self.append_symbol(table)
        phases: dict[str, float] = {}
        rows = self._writable(frame, phases)
        lib = self._lib(layout)
        t0 = _now()
        with self._writer_turn(lib.name) as waits:
            lib.append(symbol, rows)
        phases["query"] = _now() - t0
        return OpResult(rows=len(rows), nbytes=rows_bytes(len(rows), info.schema), phases=phases, extra=waits)

    def _row_count(self, layout: Layout, symbol: str) -> int:
        lib = self._lib(layout)
        self._current_versions(lib.name)
        return lib.get_description(symbol).row_count if lib.has_symbol(symbol) else 0

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self._row_count(layout, self.append_symbol(table))

    def clear_table(self, layout: Layout, table: str = "") -> None:
        lib = self._lib(layout)
        with self._writer_turn(lib.name):        # which symbols exist is asked after the turn's fresh map
            if table == IMPORT_TABLE:
                doomed = [s for s in lib.list_symbols() if s.startswith("_import_")]
            else:
                doomed = [MINUTE_SYMBOL if table == "minute" else self.append_symbol(table)]
            for symbol in doomed:
                if lib.has_symbol(symbol):
                    lib.delete(symbol)

    # --- reports 001 and 004: import, export (the suites: client_pandas.py) ---------------------
    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """Tickbench's pyarrow CSV reader (``read``: ArcticDB has no CSV loader), then the layout's
        write (``io``): the day's import symbol rewritten, or each key's import symbol updated over
        the day (``update_batch`` with upsert: a day imported again replaces itself)."""
        info = self._dataset_info(layout)
        lib = self._lib(layout)
        t0 = _now()
        frame = read_csv(path, layout.dataset)
        t1 = _now()
        with self._writer_turn(lib.name) as waits:
            indexed = time_indexed(frame, info)
            if self.symbol_per == "day":
                lib.write(f"_import_{day_symbol(day)}", indexed, prune_previous_versions=True)
            else:
                payloads = [UpdatePayload(f"_import_{key}", rows) for key, rows in
                            indexed.groupby(indexed[info.key_column].astype(str), sort=True, observed=True)]
                failed = [r for r in lib.update_batch(payloads, upsert=True) if not hasattr(r, "version")]
                if failed:
                    raise TargetError(f"ArcticDB refused {plural(len(failed), 'import symbol')}: {failed[0]}")
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema), wire_path=path,
                        phases={"read": t1 - t0, "io": t2 - t1}, extra={**waits, "queryable_s": 0.0})

    def imported_rows(self, layout: Layout) -> int:
        lib = self._lib(layout)
        self._current_versions(lib.name)        # symbols another process imported since
        return sum(self._row_count(layout, s) for s in lib.list_symbols() if s.startswith("_import_"))

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """The day read as a user reads it, then Tickbench's CSV writer (``io``)."""
        schema = self._dataset_info(layout).schema
        frame, phases = self._read_day(layout, day, layout.strings)
        t0 = _now()
        write_csv(frame, path, schema, style=CSV_STYLE)
        phases["io"] = _now() - t0
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), schema), wire_path=path, phases=phases)

    def _day_frame(self, layout: Layout, day: dt.date) -> tuple[pd.DataFrame, dict[str, float], int | None]:
        frame, phases = self._read_day(layout, day, layout.strings)
        return frame, phases, None

    def _side_frame(self, layout: Layout, name: str) -> pd.DataFrame:
        schema = side_tables(_get_dataset(layout.dataset))[name]
        with self._string_output(layout.strings):
            frame = self._lib(layout).read(f"_side_{name}").data.reset_index(drop=True)
        frame.columns = pd.Index(list(frame.columns))
        return self._conform(frame, schema, layout.strings, {})

    # --- report 003 (b): the map-reduce's minute quotes, written back ------------------------------
    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Minute quotes of each day (pandas, ``query``) appended to ``_minute`` (``io``)."""
        lib = self._lib(layout)
        written = {"io": 0.0}
        waits: dict[str, Any] = {}

        def save_minute_quotes(frame: pd.DataFrame, cols) -> int:
            bars = minute_quotes(frame, cols)
            t0 = _now()
            with self._writer_turn(lib.name) as facts:
                lib.append(MINUTE_SYMBOL, bars)
            written["io"] += _now() - t0
            waits["lock_wait_s"] = waits.get("lock_wait_s", 0.0) + facts["lock_wait_s"]
            return len(bars)

        counts, _, phases = self._each_day(layout, days, save_minute_quotes)
        phases["io"] = written["io"]
        phases["query"] -= written["io"]
        frame = pd.DataFrame({"bars": [sum(counts)]})
        return OpResult(rows=len(frame), phases=phases, frame=frame, extra={"bars": sum(counts), **waits})

    def minute_rows(self, layout: Layout) -> int:
        return self._row_count(layout, MINUTE_SYMBOL)
