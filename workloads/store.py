"""The results catalog: a folder with one folder per run (``workloads.run_files``), read through
DuckDB views named as the tables they replace (``runs``, ``steps``, ``workers``, ``ops``,
``resources``, ``references``), so figures are SQL over every stored record.

Each run's folder has one writer, the process running it; every other process (the window, the
command line, a second window) reads at any time and never waits: no file is locked, each is
replaced whole or added as an immutable part. A run id is a name, never a path, and names one run:
``create_run`` refuses an id in use or one that is not a name, before anything is written.

Readers never fail on one run: a run folder whose file cannot be read back (truncated, garbage,
wrong types) is listed with status ``damaged: <file>: <reason>`` and nothing else of it, every other
run stays readable. A run whose process died (``kill -9``, a crash, a power cut) reads as aborted
at once, with its steps and workers in their true end states; it is sealed on disk by one opener
(the one holding its seal lock, when the disk has room): opening never writes on a full disk.

A write that finds the disk full ends the run "failed" with "disk full at <path>" and what was
kept (``workloads.run_files.RunWriter.end``, helped by the space each running run reserves).

The catalog is the folder ``results/``; a results file of an older Tickbench (``results.duckdb``,
one DuckDB file) is moved into it once (``workloads.store_migration``), and so are the runs of a
catalog folder an earlier version named ``results.duckdb/``.

The figures computed from these records live in ``workloads.figures``, exports in
``workloads.exports``.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import psutil
import pyarrow as pa

from workloads.records import Columns, OpRecord
from workloads.run_files import (OPS_COLUMNS, RESERVE_BYTES, RESOURCE_COLUMNS, RUN_COLUMNS, RUN_FILE,
                                 STEP_COLUMNS, WORKER_COLUMNS, DamagedFile, DiskFullError, RunFolder,
                                 RunWriter, SealLock, check_run_id, ended, measured_ends, ops_table,
                                 read_json, read_parquet_whole, run_path, table, utc_now, write_json)

FORMAT = 3                    # 1 and 2 were single DuckDB files (workloads.store_migration)
SCHEMA_VERSION = FORMAT
CATALOG_FILE = "catalog.json"
RUNS_DIR = "runs"
ABORTED_MESSAGE = "the process running it (pid {pid}) stopped before the run ended (killed or crashed)"


class StoreError(RuntimeError):
    """The results catalog cannot be opened or read; the message names it."""


@dataclass(frozen=True)
class HostProcess:
    """The process that runs a run: with its start time, a pid cannot be mistaken for a reused one."""

    host: str
    pid: int
    started: float      # psutil create_time, seconds since the epoch


def host_process() -> HostProcess:
    me = psutil.Process()
    return HostProcess(socket.gethostname(), me.pid, me.create_time())


def process_alive(process: HostProcess) -> bool:
    """Whether ``process`` still runs: same pid, same start time (a reused pid is another one)."""
    try:
        return abs(psutil.Process(process.pid).create_time() - process.started) < 1.0
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:      # exists but cannot be inspected: assume it is ours and alive
        return True


def run_process(run: dict[str, Any]) -> HostProcess | None:
    if run.get("host_pid") is None:
        return None
    return HostProcess(str(run.get("host") or ""), int(run["host_pid"]), float(run.get("host_started") or 0))


def dead_message(run: dict[str, Any]) -> str | None:
    """Why ``run`` ended if it says 'running' but its process has ended, else None.

    Only runs started on this machine can be checked; a run recorded without its process (an old
    results file) cannot still be running."""
    if run.get("status") != "running":
        return None
    process = run_process(run)
    if process is None:
        return "the app stopped during the run"
    if process.host == socket.gethostname() and not process_alive(process):
        return ABORTED_MESSAGE.format(pid=process.pid)
    return None


def abort_if_dead(folder: Path) -> bool:
    """Seal the run in ``folder`` as aborted if its process has ended: by one process only (the
    holder of its seal lock; the others leave it), never on a disk without room for it (readers
    show it aborted all the same). True if this call sealed it."""
    folder = Path(folder)
    if dead_message(RunFolder(folder).run()) is None or not _room_to_seal(folder):
        return False
    with SealLock(folder) as owner:
        if not owner:
            return False
        run = RunFolder(folder).run()              # another sealer may have finished meanwhile
        message = dead_message(run)
        if message is None:
            return False
        try:
            RunWriter(folder).end("aborted", message, run.get("finished_at") or utc_now())
        except (OSError, DamagedFile, pa.ArrowException):
            return False                       # read-only, full, damaged: readers show it aborted
    return True


def _room_to_seal(folder: Path) -> bool:
    """Whether the disk holds a sealed copy of the run's parts and its end, with room to spare."""
    try:
        parts = sum(p.stat().st_size for p in RunFolder(folder).ops_files())
        return shutil.disk_usage(folder).free > 2 * parts + 2 * RESERVE_BYTES
    except OSError:                     # a part sealed away meanwhile, or no such disk
        return False


def results_folder(path: Path | str) -> tuple[Path, Path | None]:
    """The catalog folder for ``path`` and an older results file to move into it, if any:
    ``results.duckdb`` (a file) -> ``results/``; ``results.duckdb`` (no file) -> ``results/``;
    ``results/`` -> itself, with ``results.duckdb`` beside it if that is a file."""
    path = Path(path)
    if path.is_file():
        return path.with_name(path.stem), path
    if path.suffix == ".duckdb":
        return path.with_name(path.stem), None
    legacy = path.with_name(path.name + ".duckdb")
    return path, legacy if legacy.is_file() else None


def old_catalog_folder(folder: Path) -> Path | None:
    """A catalog folder an earlier version named ``<folder>.duckdb/``, if there is one."""
    old = folder.with_name(folder.name + ".duckdb")
    return old if (old / CATALOG_FILE).is_file() and (old / RUNS_DIR).is_dir() else None


class ResultsStore:
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
        from workloads.store_migration import LegacyFileError, migrate_legacy_file
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
        from workloads.references import ReferenceDataError, as_frame, load_references
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

    # --- the views -------------------------------------------------------------------------
    def _refresh(self) -> None:
        """Point the views at the files as they are now. A run's small files are re-read only when
        they changed, and a finished run's never again (it is final once its status is); the views
        are rebuilt only when something changed."""
        changed, order = False, []
        for folder in self._folders():
            cached = self._cache.get(folder.run_id)
            if cached is not None and cached.final:
                order.append(folder.run_id)
                continue
            stamp = _stamp(folder)
            if cached is None or cached.stamp != stamp:
                cached = self._cache[folder.run_id] = _CachedRun.read(folder, stamp)
                changed = True
            elif not cached.final and not cached.damage:
                files = [str(p) for p in folder.ops_files()]      # a running run adds parts
                if files != cached.ops_files:
                    cached.ops_files, changed = files, True
            order.append(folder.run_id)
        gone = set(self._cache) - set(order)
        for run_id in gone:
            del self._cache[run_id]
        if not changed and not gone and self._views_built:
            return
        runs = [self._cache[r] for r in order if self._cache[r].tables["runs"].num_rows]   # run.json comes first
        for name, columns in (("runs", RUN_COLUMNS), ("steps", STEP_COLUMNS), ("workers", WORKER_COLUMNS),
                              ("resources", RESOURCE_COLUMNS)):
            self._register(name, pa.concat_tables([pa.schema(columns).empty_table()]
                                                   + [run.tables[name] for run in runs]))
        ops_files = [f for run in runs for f in run.ops_files]
        if ops_files:
            listed = ", ".join(f"'{p.replace(chr(39), chr(39) * 2)}'" for p in ops_files)
            # runs stored before a column was added lack it: the empty table of every column gives
            # it to them as NULL (a parquet list without it would not know the column at all)
            self._register("ops_columns", pa.schema(OPS_COLUMNS).empty_table())
            self._con.execute(f"CREATE OR REPLACE TEMP VIEW ops AS SELECT {', '.join(OPS_COLUMNS)} "
                              f"FROM (SELECT * FROM read_parquet([{listed}], union_by_name = true) "
                              f"UNION ALL BY NAME SELECT * FROM ops_columns)")
        else:
            self._register("ops", pa.schema(OPS_COLUMNS).empty_table())
        self._views_built = True

    def _register(self, name: str, data: pa.Table) -> None:
        self._con.execute(f"DROP VIEW IF EXISTS {name}")
        self._con.register(name, data)

    # --- reading by SQL (the views are this connection's own: no cursors) ---------------------
    def query(self, sql: str, params: list | None = None) -> list[tuple]:
        return self._read(lambda cursor: cursor.execute(sql, params or []).fetchall())

    def frame(self, sql: str, params: list | None = None) -> pd.DataFrame:
        return self._read(lambda cursor: cursor.execute(sql, params or []).df())

    def _read(self, fetch):
        with self._lock:
            for attempt in (1, 2, 3):
                try:
                    self._refresh()
                    return fetch(self._con)
                except duckdb.IOException:
                    if attempt == 3:      # a run sealed its parts between the listing and the read
                        raise
                except duckdb.Error:
                    # records past a sound footer that cannot be read: set that run aside, read the rest
                    if attempt == 3 or not self._find_damaged_records():
                        raise

    def _find_damaged_records(self) -> bool:
        """Read every record of every run the views hold; a run whose records cannot be read is
        damaged from now on. True if one was found (the views are then rebuilt)."""
        found = False
        for run_id, cached in list(self._cache.items()):
            for path in cached.ops_files:
                try:
                    read_parquet_whole(Path(path))
                except DamagedFile as exc:
                    self._cache[run_id] = _CachedRun.damaged(RunFolder(Path(path).parent if Path(path).parent.name != "ops"
                                                                       else Path(path).parent.parent), cached.stamp, exc)
                    found = True
                    break
        if found:
            self._views_built = False
        return found

    # --- writers: only the process running a run writes its folder ---------------------------
    def _writer(self, run_id: str) -> RunWriter:
        writer = self._writers.get(run_id)
        if writer is None:
            writer = self._writers[run_id] = RunWriter(run_path(self.runs_dir, run_id))
        return writer

    def _write(self, run_id: str, write) -> None:
        """A write of the run's process; a full disk is remembered, the run then ends on it."""
        try:
            write(self._writer(run_id))
        except DiskFullError as exc:
            self._full.setdefault(run_id, str(exc))
            raise

    def check_new_run_id(self, run_id: str) -> str:
        """``run_id`` if a new run may take it: a name (never a path), not used in this catalog;
        else ValueError naming the id and the rule. Nothing is created or deleted."""
        check_run_id(run_id)
        folder = self._folder(run_id)
        if (folder / RUN_FILE).exists():
            raise ValueError(f"run id {run_id!r}: already used by a run in {self.path}; a run id names one run")
        return run_id

    def create_run(self, run_id: str, scenario: dict[str, Any], environment: dict[str, Any],
                   process: HostProcess | None = None) -> None:
        """The run's first record: ValueError (before anything is written) if ``run_id`` is not a
        name or is in use, also by a run created at the same moment."""
        self.check_new_run_id(run_id)
        process = process or host_process()
        writer = RunWriter(run_path(self.runs_dir, run_id))
        writer.create_run(dict(
            run_id=run_id, name=scenario.get("name", ""), created_at=utc_now(), finished_at=None,
            status="running", dataset=scenario["dataset"], target=scenario["target"],
            workload=scenario["workload"], users=",".join(str(u) for u in scenario["users"]),
            cache=scenario["cache"], scenario=json.dumps(scenario, default=str),
            environment=json.dumps(environment, default=str), layout=None, message="",
            host=process.host, host_pid=process.pid, host_started=process.started))
        self._writers[run_id] = writer

    def set_environment_entry(self, run_id: str, key: str, value: Any) -> None:
        def write(writer: RunWriter) -> None:
            environment = json.loads(writer.run().get("environment") or "{}")
            environment[key] = value
            writer.update_run(environment=json.dumps(environment, default=str))
        self._write(run_id, write)

    def set_layout(self, run_id: str, layout: dict[str, Any]) -> None:
        self._write(run_id, lambda w: w.update_run(layout=json.dumps(layout, default=str)))

    def finish_run(self, run_id: str, status: str, message: str = "") -> None:
        """The run's end: records sealed, steps and workers in true end states, then its status.
        After a full disk it ends "failed" with "disk full at <path>" and what was kept."""
        writer = self._writer(run_id)
        if run_id in self._full:
            kept = writer.kept_ops()
            status, message = "failed", f"{self._full[run_id]}; kept {kept:,} operation record{'s' * (kept != 1)}"
        writer.end(status, message)

    def add_step(self, run_id: str, step: int, users: int, label: str, params: dict, rate: float = 0.0) -> None:
        self._write(run_id, lambda w: w.add_step(
            {"run_id": run_id, "step": step, "users": users, "label": label, "rate": rate or None,
             "params": json.dumps(params, default=str), "started_at": utc_now(), "window_s": None,
             "status": "running", "cache_methods": "", "released_at": None, "release_clock": None,
             "facts": None}))

    def release_step(self, run_id: str, step: int, run_clock: float) -> None:
        """The moment the step's workers were released: the start of its measurement window."""
        self._write(run_id, lambda w: w.update_step(step, released_at=utc_now(), release_clock=run_clock))

    def finish_step(self, run_id: str, step: int, window_s: float, status: str,
                    cache_methods: list[str]) -> None:
        """``window_s``: from the release to the end of the step's last measured operation."""
        self._write(run_id, lambda w: w.update_step(step, window_s=window_s, status=status,
                                                    cache_methods=",".join(cache_methods)))

    def set_step_facts(self, run_id: str, step: int, facts: dict[str, Any]) -> None:
        self._write(run_id, lambda w: w.update_step(step, facts=json.dumps(facts, default=str)))

    def set_worker(self, run_id: str, step: int, worker: int, pid: int | None, node: str,
                   state: str, error: str = "", exitcode: int | None = None, traceback: str = "",
                   host: str = "") -> None:
        self._write(run_id, lambda w: w.set_worker(
            {"run_id": run_id, "step": step, "worker": worker, "pid": pid, "node": node, "state": state,
             "error": error, "exitcode": exitcode, "traceback": traceback or None, "host": host}))

    def add_ops(self, run_id: str, records: "Columns | list[Columns] | list[OpRecord]") -> None:
        table_ = ops_table(run_id, records)
        self._write(run_id, lambda w: w.add_ops(table_))

    def add_resource(self, run_id: str, t: float, cpu: float, rss: int, rbps: float, wbps: float) -> None:
        self._write(run_id, lambda w: w.add_resource({"run_id": run_id, "t": t, "cpu_percent": cpu, "rss_bytes": rss,
                                                      "read_bytes_per_s": rbps, "write_bytes_per_s": wbps}))

    def delete_run(self, run_id: str) -> None:
        """The run's folder, moved aside first so no reader ever sees half of it."""
        folder = self._folder(run_id)
        if not folder.is_dir():
            return
        self._writers.pop(run_id, None)
        doomed = folder.with_name(f".deleted-{run_id}")
        folder.rename(doomed)
        shutil.rmtree(doomed, ignore_errors=True)

    # --- readers -------------------------------------------------------------------------
    def runs(self) -> pd.DataFrame:
        return self.frame("SELECT run_id, name, created_at, finished_at, status, dataset, target, "
                          "workload, users, cache, message FROM runs ORDER BY created_at DESC")

    def running(self) -> list[dict[str, Any]]:
        """The records of runs that say they are running, read from their folders alone (cheap:
        no view is built, so the window can ask at start-up)."""
        return [run for run in (folder.run() for folder in self._folders()) if run.get("status") == "running"]

    def run_ids(self) -> list[str]:
        return sorted(f.run_id for f in self._folders())

    def run(self, run_id: str) -> dict[str, Any]:
        """The run's record (a unique prefix of its id is enough); StoreError if there is no such
        run or it is damaged (naming the file and why). A dead run reads as aborted."""
        try:
            folder = self._folder(run_id)
        except ValueError:
            folder = None
        if folder is None or not (folder / RUN_FILE).exists():
            matches = [r for r in self.run_ids() if r.startswith(run_id)] if run_id else []
            if len(matches) == 1 and matches[0] != run_id:
                return self.run(matches[0])
            raise StoreError(f"no run {run_id!r} in {self.path}")
        with self._lock:                # this run's files alone: the window asks on its GUI thread
            cached = self._cache.get(folder.name)
        if cached is None or not cached.final:
            run_folder = RunFolder(folder)
            cached = _CachedRun.read(run_folder, _stamp(run_folder))
        if cached is None or cached.damage or not cached.tables["runs"].num_rows:
            raise StoreError(f"run {folder.name} is {cached.damage if cached and cached.damage else 'not readable'}")
        row = cached.tables["runs"].to_pylist()[0]
        for key in ("created_at", "finished_at"):
            row[key] = pd.Timestamp(row[key]) if row[key] else None
        for key in ("scenario", "environment", "layout"):
            try:
                row[key] = json.loads(row[key]) if isinstance(row[key], str) and row[key] else {}
            except json.JSONDecodeError:
                raise StoreError(f"run {folder.name} is damaged: {RUN_FILE}: its {key} is not JSON") from None
        return row

    def run_folder(self, run_id: str) -> Path:
        return self._folder(self.run(run_id)["run_id"])

    def step_facts(self, run_id: str) -> dict[int, dict[str, Any]]:
        """Facts a step recorded (an import table's footprint), by step."""
        rows = self.query("SELECT step, facts FROM steps WHERE run_id = ? AND facts IS NOT NULL "
                          "ORDER BY step", [run_id])
        return {int(step): json.loads(facts) for step, facts in rows}

    def ops(self, run_id: str, kinds: tuple[str, ...] | None = None) -> pd.DataFrame:
        """Every record of the run (or only those of ``kinds``), in time order per step."""
        where, params = "run_id = ?", [run_id]
        if kinds:
            where += f" AND kind IN ({', '.join('?' for _ in kinds)})"
            params += list(kinds)
        return self.frame(f"SELECT * FROM ops WHERE {where} ORDER BY step, t_start, worker, seq", params)

    def workers(self, run_id: str) -> pd.DataFrame:
        return self.frame("SELECT * FROM workers WHERE run_id = ? ORDER BY step, worker", [run_id])

    def resources(self, run_id: str) -> pd.DataFrame:
        return self.frame("SELECT * FROM resources WHERE run_id = ? ORDER BY t", [run_id])


@dataclass
class _CachedRun:
    """What the views hold of one run folder, and when it was read."""
    stamp: tuple
    tables: dict[str, pa.Table]
    ops_files: list[str]
    final: bool                   # its status is no longer 'running': its files never change again
    damage: str = ""              # "damaged: <file>: <reason>" when a file cannot be read back

    @classmethod
    def read(cls, folder: RunFolder, stamp: tuple) -> "_CachedRun":
        try:
            found = folder.checked()
        except DamagedFile as exc:
            return cls.damaged(folder, stamp, exc)
        run, tables, files = found["run"], found["tables"], found["ops_files"]
        message = dead_message(run)
        if message is not None:       # its process has ended: read as its sealer will write it
            steps, workers = ended("aborted", message, found["rows"]["steps"], found["rows"]["workers"],
                                   measured_ends(files))
            run = {**run, "status": "aborted", "message": message}
            tables = {**tables, "runs": table([run], RUN_COLUMNS), "steps": table(steps, STEP_COLUMNS),
                      "workers": table(workers, WORKER_COLUMNS)}
            return cls(stamp, tables, [str(p) for p in files], final=False)
        final = bool(run) and run.get("status") != "running"
        return cls(stamp, tables, [str(p) for p in files], final)

    @classmethod
    def damaged(cls, folder: RunFolder, stamp: tuple, exc: DamagedFile) -> "_CachedRun":
        """The run as one row saying what is damaged (what its run.json still tells, if it can)."""
        damage = f"damaged: {exc}"
        run = folder.run()
        row = {name: "" for name, kind in RUN_COLUMNS.items() if kind == pa.string()}    # listed as text
        row.update({name: run.get(name) for name in RUN_COLUMNS if isinstance(run.get(name), (str, int, float))})
        try:
            created = datetime.fromisoformat(str(run.get("created_at")))
        except ValueError:
            created = datetime.fromtimestamp(folder.folder.stat().st_mtime, timezone.utc).replace(tzinfo=None)
        row.update(run_id=folder.run_id, name=str(run.get("name") or folder.run_id), created_at=created,
                   status=damage, message=damage)
        for name in ("host_pid", "host_started"):
            row.pop(name, None)
        try:
            runs = table([row], RUN_COLUMNS)
        except (pa.ArrowException, TypeError, ValueError):
            runs = table([{**{name: "" for name, kind in RUN_COLUMNS.items() if kind == pa.string()},
                           "run_id": folder.run_id, "name": folder.run_id, "created_at": created,
                           "status": damage, "message": damage}], RUN_COLUMNS)
        empty = {name: pa.schema(columns).empty_table() for name, columns in
                 (("steps", STEP_COLUMNS), ("workers", WORKER_COLUMNS), ("resources", RESOURCE_COLUMNS))}
        return cls(stamp, {"runs": runs, **empty}, [], final=False, damage=damage)


def _stamp(folder: RunFolder) -> tuple:
    """What changes when one of a run's small files changes."""
    out = []
    for name in (RUN_FILE, "steps.json", "workers.json", "resources.jsonl"):
        try:
            stat = (folder.folder / name).stat()
            out.append((stat.st_mtime_ns, stat.st_size))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)
