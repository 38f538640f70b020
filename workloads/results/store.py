"""The results catalog: a folder with one folder per run (``workloads.results.run_files``), read through
DuckDB views named as the tables they replace (``runs``, ``steps``, ``workers``, ``ops``,
``resources``, ``references``), so figures are SQL over every stored record.

Each run's folder has one writer, the process running it; every other process (the window, the
command line, a second window) reads at any time and never waits: no file is locked, each is
replaced whole or added as an immutable part.

``ResultsStore`` opens the catalog (here) and is made of its parts: ``StoreViews`` (the views and
SQL over them, a damaged run set aside: ``workloads.results.store_views``), ``StoreWrites`` (the
writes of a run's process: ``workloads.results.store_writes``) and ``StoreReads`` (runs read back:
``workloads.results.store_reads``). Where the catalog is and its layout:
``workloads.results.catalog_folder``; runs whose process died: ``workloads.results.dead_runs``.

The catalog is the folder ``results/``; a results file of an older Tickbench (``results.duckdb``,
one DuckDB file) is moved into it once (``workloads.results.migration``), and so are the runs of a
catalog folder an earlier version named ``results.duckdb/``.

The figures computed from these records live in ``workloads.results.figures``, exports in
``workloads.results.exports``.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path

import duckdb
import pandas as pd

from workloads.results.atomic_files import read_json, write_json
from workloads.results.catalog_folder import (CATALOG_FILE, FORMAT, RUNS_DIR, StoreError, old_catalog_folder,
                                              results_folder)
from workloads.results.dead_runs import abort_if_dead, dead_message, run_process
from workloads.results.leftovers import remove_leftover_incoming
from workloads.results.run_files import RunFolder
from workloads.results.run_writer import RunWriter
from workloads.results.store_reads import StoreReads
from workloads.results.store_views import StoreViews, _CachedRun
from workloads.results.store_writes import StoreWrites
from workloads.paths import run_path


class ResultsStore(StoreReads, StoreWrites, StoreViews):
    def __init__(self, path: Path | str):
        self.path, legacy = results_folder(path)
        self.runs_dir = self.path / RUNS_DIR
        try:
            self.runs_dir.mkdir(parents=True, exist_ok=True)
            self._check_format()
        except OSError as exc:
            raise StoreError(f"cannot open results folder {self.path}: {exc}") from None
        self._con = duckdb.connect(":memory:")
        # each query reads every run's Parquet footer: keep them (a sealed part never changes)
        self._con.execute("SET parquet_metadata_cache = true")
        self._lock = threading.RLock()  # one connection, many threads: cursors under a lock
        self._writers: dict[str, RunWriter] = {}
        self._cache: dict[str, _CachedRun] = {}
        self._views_built = False
        self._full: dict[str, str] = {}     # run id -> "disk full at <path>" once a write found no room
        self.migrated = self._migrate(legacy) if legacy is not None else 0
        self._old_runs_dir: Path | None = None
        old = old_catalog_folder(self.path)
        if old is not None:
            self.migrated += self._absorb(old)
        self._load_references()
        self.aborted_on_open = self._mark_dead_runs()
        remove_leftover_incoming(self.runs_dir)     # an open or a delete killed mid-way (its process is gone)

    # --- the catalog -----------------------------------------------------------------------
    def _check_format(self) -> None:
        catalog = self.path / CATALOG_FILE
        found = read_json(catalog, None)
        if found is None:
            write_json(catalog, {"format": FORMAT})
        elif int(found.get("format", 0)) > FORMAT:
            raise StoreError(f"{self.path} was written by a newer Tickbench (format {found['format']})")

    @property
    def schema_version(self) -> int:
        return int(read_json(self.path / CATALOG_FILE, {}).get("format", FORMAT))

    def _migrate(self, legacy: Path) -> int:
        from workloads.results.migration import LegacyFileError, migrate_legacy_file
        try:
            return migrate_legacy_file(legacy, self.runs_dir)
        except LegacyFileError as exc:
            raise StoreError(str(exc)) from None

    def _absorb(self, old: Path) -> int:
        """Move the runs of a catalog folder of an earlier name into this one (a rename each: a
        reader sees a run in one place or the other). A run still going, an id this catalog
        already has, or a rename refused stays where it is and is read from there."""
        moved = 0
        for folder in sorted((old / RUNS_DIR).iterdir()):
            if not folder.is_dir() or folder.name.startswith(".") or (self.runs_dir / folder.name).exists():
                continue
            run = RunFolder(folder).run()
            process = run_process(run) if run.get("status") == "running" else None
            if process is not None and dead_message(run) is None:
                continue                              # its process still writes there
            try:
                os.rename(folder, self.runs_dir / folder.name)
                moved += 1
            except OSError:       # not movable now (another opener took it, a read-only disk): read where it is
                pass
        try:
            (old / RUNS_DIR).rmdir()                  # only when every run moved
            (old / CATALOG_FILE).unlink()
            old.rmdir()
        except OSError:
            self._old_runs_dir = old / RUNS_DIR
        return moved

    def _load_references(self) -> None:
        """The published figures shipped with this version, so SQL can set them beside runs."""
        from workloads.results.references import ReferenceDataError, as_frame, load_references
        try:
            frame = as_frame(load_references())
        except (ReferenceDataError, OSError):
            frame = pd.DataFrame({c: pd.Series(dtype=object) for c in
                                  ("source", "experiment", "series", "x", "unit", "note")} | {"value": pd.Series(dtype=float)})
        with self._lock:
            self._con.register("_shipped_references", frame)
            self._con.execute('CREATE OR REPLACE TABLE "references" AS SELECT * FROM _shipped_references')
            self._con.unregister("_shipped_references")

    def references(self) -> pd.DataFrame:
        return self.frame('SELECT * FROM "references"')

    def close(self) -> None:
        with self._lock:
            self._con.close()

    def _folders(self) -> list[RunFolder]:
        """Every run folder: this catalog's, then those left in a catalog of an earlier name."""
        found: dict[str, RunFolder] = {}
        for runs_dir in (self.runs_dir, self._old_runs_dir):
            try:
                entries = list(runs_dir.iterdir()) if runs_dir is not None else []
            except OSError:
                continue
            for p in entries:
                if p.is_dir() and not p.name.startswith(".") and p.name not in found:
                    found[p.name] = RunFolder(p)
        return list(found.values())

    def _folder(self, run_id: str) -> Path:
        """Where ``run_id``'s folder is (ValueError if it is not a run id)."""
        folder = run_path(self.runs_dir, run_id)
        if not folder.is_dir() and self._old_runs_dir is not None and (self._old_runs_dir / run_id).is_dir():
            return self._old_runs_dir / run_id
        return folder

    def _mark_dead_runs(self) -> int:
        """Runs left 'running' by a process that no longer runs become 'aborted'."""
        return sum(abort_if_dead(folder.folder) for folder in self._folders())
