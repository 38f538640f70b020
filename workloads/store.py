"""The results catalog: a folder with one folder per run (``workloads.run_files``), read through
DuckDB views named as the tables they replace (``runs``, ``steps``, ``workers``, ``ops``,
``resources``, ``references``), so figures are SQL over every stored record.

Each run's folder has one writer, the process running it; every other process (the window, the
command line, a second window) reads at any time and never waits: no file is locked, each is
replaced whole or added as an immutable part. Opening the catalog marks runs whose process died
(``kill -9``, a crash, a power cut) as aborted, and moves a results file of an older Tickbench (one
DuckDB file) into the catalog once (``workloads.store_migration``).

The figures computed from these records live in ``workloads.figures``, exports in
``workloads.exports``.
"""
from __future__ import annotations

import json
import shutil
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import psutil
import pyarrow as pa

from workloads.records import Columns, OpRecord
from workloads.run_files import (OPS_COLUMNS, RESOURCE_COLUMNS, RUN_COLUMNS, RUN_FILE, STEP_COLUMNS,
                                 WORKER_COLUMNS, RunFolder, RunWriter, ops_table, read_json, table,
                                 utc_now, write_json)

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


def abort_if_dead(folder: Path) -> bool:
    """Mark the run in ``folder`` aborted if it says 'running' but its process has ended.

    Only runs started on this machine can be checked; a run recorded without its process (an old
    results file) cannot still be running."""
    run = RunFolder(folder).run()
    if run.get("status") != "running":
        return False
    process = run_process(run)
    if process is None:
        message = "the app stopped during the run"
    elif process.host == socket.gethostname() and not process_alive(process):
        message = ABORTED_MESSAGE.format(pid=process.pid)
    else:
        return False
    writer = RunWriter(folder)
    writer.seal_ops()
    writer.update_run(status="aborted", message=message, finished_at=run.get("finished_at") or utc_now())
    return True


def results_folder(path: Path | str) -> tuple[Path, Path | None]:
    """The catalog folder for ``path`` and an older results file to move into it, if any:
    ``results.duckdb`` (a file) -> ``results/``; ``results/`` -> itself, with ``results.duckdb``
    beside it if that exists."""
    path = Path(path)
    if path.is_file():
        return path.with_name(path.stem), path
    legacy = path.with_name(path.name + ".duckdb")
    return path, legacy if legacy.is_file() else None


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
        self.migrated = self._migrate(legacy) if legacy is not None else 0
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
        try:
            return [RunFolder(p) for p in self.runs_dir.iterdir() if p.is_dir() and not p.name.startswith(".")]
        except FileNotFoundError:
            return []

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
            elif not cached.final:
                files = [str(p) for p in folder.ops_files()]      # a running run adds parts
                if files != cached.ops_files:
                    cached.ops_files, changed = files, True
            order.append(folder.run_id)
        gone = set(self._cache) - set(order)
        for run_id in gone:
            del self._cache[run_id]
        if not changed and not gone and self._views_built:
            return
        runs = [self._cache[r] for r in order if self._cache[r].rows["runs"]]   # run.json comes first
        for name, columns in (("runs", RUN_COLUMNS), ("steps", STEP_COLUMNS), ("workers", WORKER_COLUMNS),
                              ("resources", RESOURCE_COLUMNS)):
            self._register(name, table([row for run in runs for row in run.rows[name]], columns))
        ops_files = [f for run in runs for f in run.ops_files]
        if ops_files:
            listed = ", ".join(f"'{p.replace(chr(39), chr(39) * 2)}'" for p in ops_files)
            self._con.execute(f"CREATE OR REPLACE TEMP VIEW ops AS SELECT {', '.join(OPS_COLUMNS)} "
                              f"FROM read_parquet([{listed}], union_by_name = true)")
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
            for attempt in (1, 2):
                self._refresh()
                try:
                    return fetch(self._con)
                except duckdb.IOException:
                    if attempt == 2:      # a run sealed its parts between the listing and the read
                        raise

    # --- writers: only the process running a run writes its folder ---------------------------
    def _writer(self, run_id: str) -> RunWriter:
        writer = self._writers.get(run_id)
        if writer is None:
            writer = self._writers[run_id] = RunWriter(self.runs_dir / run_id)
        return writer

    def create_run(self, run_id: str, scenario: dict[str, Any], environment: dict[str, Any],
                   process: HostProcess | None = None) -> None:
        process = process or host_process()
        self._writer(run_id).update_run(
            run_id=run_id, name=scenario.get("name", ""), created_at=utc_now(), finished_at=None,
            status="running", dataset=scenario["dataset"], target=scenario["target"],
            workload=scenario["workload"], users=",".join(str(u) for u in scenario["users"]),
            cache=scenario["cache"], scenario=json.dumps(scenario, default=str),
            environment=json.dumps(environment, default=str), layout=None, message="",
            host=process.host, host_pid=process.pid, host_started=process.started)

    def set_environment_entry(self, run_id: str, key: str, value: Any) -> None:
        writer = self._writer(run_id)
        environment = json.loads(writer.run().get("environment") or "{}")
        environment[key] = value
        writer.update_run(environment=json.dumps(environment, default=str))

    def set_layout(self, run_id: str, layout: dict[str, Any]) -> None:
        self._writer(run_id).update_run(layout=json.dumps(layout, default=str))

    def finish_run(self, run_id: str, status: str, message: str = "") -> None:
        writer = self._writer(run_id)
        writer.seal_ops()
        writer.update_run(status=status, finished_at=utc_now(), message=message)

    def add_step(self, run_id: str, step: int, users: int, label: str, params: dict) -> None:
        self._writer(run_id).add_step(
            {"run_id": run_id, "step": step, "users": users, "label": label,
             "params": json.dumps(params, default=str), "started_at": utc_now(), "window_s": None,
             "status": "running", "cache_methods": "", "released_at": None, "release_clock": None,
             "facts": None})

    def release_step(self, run_id: str, step: int, run_clock: float) -> None:
        """The moment the step's workers were released: the start of its measurement window."""
        self._writer(run_id).update_step(step, released_at=utc_now(), release_clock=run_clock)

    def finish_step(self, run_id: str, step: int, window_s: float, status: str,
                    cache_methods: list[str]) -> None:
        """``window_s``: from the release to the end of the step's last measured operation."""
        self._writer(run_id).update_step(step, window_s=window_s, status=status,
                                         cache_methods=",".join(cache_methods))

    def set_step_facts(self, run_id: str, step: int, facts: dict[str, Any]) -> None:
        self._writer(run_id).update_step(step, facts=json.dumps(facts, default=str))

    def set_worker(self, run_id: str, step: int, worker: int, pid: int | None, node: str,
                   state: str, error: str = "", exitcode: int | None = None, traceback: str = "",
                   host: str = "") -> None:
        self._writer(run_id).set_worker(
            {"run_id": run_id, "step": step, "worker": worker, "pid": pid, "node": node, "state": state,
             "error": error, "exitcode": exitcode, "traceback": traceback or None, "host": host})

    def add_ops(self, run_id: str, records: "Columns | list[OpRecord]") -> None:
        self._writer(run_id).add_ops(ops_table(run_id, records))

    def add_resource(self, run_id: str, t: float, cpu: float, rss: int, rbps: float, wbps: float) -> None:
        self._writer(run_id).add_resource({"run_id": run_id, "t": t, "cpu_percent": cpu, "rss_bytes": rss,
                                           "read_bytes_per_s": rbps, "write_bytes_per_s": wbps})

    def delete_run(self, run_id: str) -> None:
        """The run's folder, moved aside first so no reader ever sees half of it."""
        folder = self.runs_dir / run_id
        if not folder.is_dir():
            return
        self._writers.pop(run_id, None)
        doomed = self.runs_dir / f".deleted-{run_id}"
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
        folder = self.runs_dir / run_id
        row = RunFolder(folder).run() if folder.is_dir() else {}
        if not row:
            matches = [r for r in self.run_ids() if r.startswith(run_id)] if run_id else []
            if len(matches) == 1:
                return self.run(matches[0])
            raise StoreError(f"no run {run_id!r} in {self.path}")
        row = {name: row.get(name) for name in RUN_COLUMNS}
        for key in ("created_at", "finished_at"):
            row[key] = pd.Timestamp(row[key]) if row[key] else None
        for key in ("scenario", "environment", "layout"):
            row[key] = json.loads(row[key]) if isinstance(row[key], str) and row[key] else {}
        return row

    def run_folder(self, run_id: str) -> Path:
        return self.runs_dir / self.run(run_id)["run_id"]

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
    rows: dict[str, list]
    ops_files: list[str]
    final: bool                   # its status is no longer 'running': its files never change again

    @classmethod
    def read(cls, folder: RunFolder, stamp: tuple) -> "_CachedRun":
        run = folder.run()
        rows = {"runs": [run] if run else [], "steps": folder.steps(), "workers": folder.workers(),
                "resources": folder.resources()}
        for key in ("steps", "workers", "resources"):
            for row in rows[key]:
                row.setdefault("run_id", folder.run_id)
        final = bool(run) and run.get("status") != "running"
        return cls(stamp, rows, [str(p) for p in folder.ops_files()], final)


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
