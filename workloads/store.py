"""The results file: one DuckDB database with a schema version and migrations.

Only the run's collector writes while a run is going; readers use their own cursors. Opening the
file marks runs whose process died (``kill -9``, a crash, a power cut) as aborted. The figures
computed from these records live in ``workloads.figures``, exports in ``workloads.exports``.
"""
from __future__ import annotations

import json
import shutil
import socket
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import psutil
import pyarrow as pa

from workloads.records import (PHASE_FIELDS, UNKNOWN_BYTES, Columns, OpRecord, as_columns,
                               batch_length)

SCHEMA_VERSION = 2

_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY, name VARCHAR, created_at TIMESTAMP, finished_at TIMESTAMP,
    status VARCHAR, dataset VARCHAR, target VARCHAR, workload VARCHAR, users VARCHAR,
    cache VARCHAR, scenario JSON, environment JSON, layout JSON, message VARCHAR
);
CREATE TABLE IF NOT EXISTS steps (
    run_id VARCHAR, step INTEGER, users INTEGER, label VARCHAR, params JSON,
    started_at TIMESTAMP, duration_s DOUBLE, status VARCHAR, cache_methods VARCHAR
);
CREATE TABLE IF NOT EXISTS workers (
    run_id VARCHAR, step INTEGER, worker INTEGER, pid INTEGER, node VARCHAR,
    state VARCHAR, error VARCHAR, exitcode INTEGER
);
CREATE TABLE IF NOT EXISTS ops (
    run_id VARCHAR, step INTEGER, worker INTEGER, seq INTEGER, op VARCHAR,
    t_start DOUBLE, total_s DOUBLE, io_s DOUBLE, query_s DOUBLE, server_s DOUBLE,
    transfer_s DOUBLE, decode_s DOUBLE, rows BIGINT, bytes BIGINT, ok BOOLEAN,
    error VARCHAR, node VARCHAR
);
CREATE TABLE IF NOT EXISTS resources (
    run_id VARCHAR, t DOUBLE, cpu_percent DOUBLE, rss_bytes BIGINT,
    read_bytes_per_s DOUBLE, write_bytes_per_s DOUBLE
);
CREATE TABLE IF NOT EXISTS "references" (
    source VARCHAR, experiment VARCHAR, series VARCHAR, x VARCHAR, value DOUBLE,
    unit VARCHAR, note VARCHAR
);
"""

# Version 2: complete records. Warm-up and probe operations kept apart (ops.kind); the "read"
# phase; bytes actually read (wire_bytes) beside the logical bytes; target facts (extra); each
# step's release (wall clock and run clock) and its measurement window under its real name; a
# failed worker's traceback; the process that runs a run, so a dead one is recognised; facts of a
# step (the import table's footprint after an import).
_SCHEMA_V2 = [
    "ALTER TABLE runs ADD COLUMN host VARCHAR",
    "ALTER TABLE runs ADD COLUMN host_pid INTEGER",
    "ALTER TABLE runs ADD COLUMN host_started DOUBLE",
    "ALTER TABLE steps ADD COLUMN released_at TIMESTAMP",
    "ALTER TABLE steps ADD COLUMN release_clock DOUBLE",
    "ALTER TABLE steps RENAME COLUMN duration_s TO window_s",
    "ALTER TABLE steps ADD COLUMN facts JSON",
    "ALTER TABLE workers ADD COLUMN traceback VARCHAR",
    "ALTER TABLE ops ADD COLUMN kind VARCHAR DEFAULT 'measured'",
    "ALTER TABLE ops ADD COLUMN read_s DOUBLE",
    "ALTER TABLE ops ADD COLUMN wire_bytes BIGINT",
    "ALTER TABLE ops ADD COLUMN extra JSON",
]

# version -> statements that bring a file from version-1 to version. Add entries, never edit them.
MIGRATIONS: dict[int, list[str]] = {1: [_SCHEMA_V1], 2: _SCHEMA_V2}

_OPS_ARROW_TYPES = {
    "step": pa.int32(), "worker": pa.int32(), "seq": pa.int32(), "op": pa.string(),
    "t_start": pa.float64(), "total_s": pa.float64(), "rows": pa.int64(), "bytes": pa.int64(),
    "ok": pa.bool_(), "kind": pa.string(), **{f: pa.float64() for f in PHASE_FIELDS},
    "wire_bytes": pa.int64(), "error": pa.string(), "node": pa.string(), "extra": pa.string(),
}
assert tuple(_OPS_ARROW_TYPES) == OpRecord._fields
ABORTED_MESSAGE = "the process running it (pid {pid}) stopped before the run ended (killed or crashed)"


class StoreError(RuntimeError):
    """The results file cannot be opened or read; the message names it."""


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


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class ResultsStore:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._con = duckdb.connect(str(self.path))
        except duckdb.Error as exc:
            raise StoreError(f"cannot open results file {self.path}: {exc}") from None
        self._lock = threading.RLock()  # one connection, many threads: cursors under a lock
        self._migrate()
        self._load_references()
        self.aborted_on_open = self._mark_dead_runs()

    # --- schema ------------------------------------------------------------------------
    def _migrate(self) -> None:
        self._con.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
        row = self._con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        current = int(row[0]) if row else 0
        if current > SCHEMA_VERSION:
            raise StoreError(f"{self.path} was written by a newer Tickbench (schema {current})")
        if current == SCHEMA_VERSION:
            return
        if current > 0:
            self._backup(current)
        for version in range(current + 1, SCHEMA_VERSION + 1):
            self._con.execute("BEGIN")
            for statement in MIGRATIONS[version]:
                self._con.execute(statement)
            self._con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(version)])
            self._con.execute("COMMIT")

    def _load_references(self) -> None:
        """The published figures shipped with this version, so SQL can set them beside runs."""
        from workloads.references import ReferenceDataError, as_frame, load_references
        try:
            frame = as_frame(load_references())
        except (ReferenceDataError, OSError):
            return  # a damaged resources folder must not stop the results file from opening
        with self._lock:
            self._con.execute('DELETE FROM "references"')
            self._con.register("_shipped_references", frame)
            try:
                self._con.execute('INSERT INTO "references" SELECT * FROM _shipped_references')
            finally:
                self._con.unregister("_shipped_references")

    def references(self) -> pd.DataFrame:
        return self.frame('SELECT * FROM "references"')

    def _backup(self, version: int) -> Path:
        self._con.execute("CHECKPOINT")
        backup = self.path.with_name(f"{self.path.stem}.v{version}.bak{self.path.suffix}")
        shutil.copy2(self.path, backup)
        return backup

    @property
    def schema_version(self) -> int:
        return int(self.query("SELECT value FROM meta WHERE key='schema_version'")[0][0])

    def close(self) -> None:
        with self._lock:
            self._con.close()

    def _mark_dead_runs(self) -> int:
        """Runs left 'running' by a process that no longer runs become 'aborted'.

        Only runs started on this machine can be checked; a run recorded without its process
        (schema 1) cannot still be running, since that version cannot open this file.
        """
        here = socket.gethostname()
        with self._lock:
            rows = self._con.execute("SELECT run_id, host, host_pid, host_started FROM runs "
                                     "WHERE status = 'running'").fetchall()
            dead = []
            for run_id, host, pid, started in rows:
                if pid is None:
                    dead.append((run_id, "the app stopped during the run"))
                elif host == here and not process_alive(HostProcess(host, int(pid), float(started))):
                    dead.append((run_id, ABORTED_MESSAGE.format(pid=pid)))
            for run_id, message in dead:
                self._con.execute("UPDATE runs SET status = 'aborted', message = ?, "
                                  "finished_at = coalesce(finished_at, ?) WHERE run_id = ?",
                                  [message, _now(), run_id])
        return len(dead)

    # --- reading by SQL ------------------------------------------------------------------
    def query(self, sql: str, params: list | None = None) -> list[tuple]:
        with self._lock:
            return self._con.cursor().execute(sql, params or []).fetchall()

    def frame(self, sql: str, params: list | None = None) -> pd.DataFrame:
        with self._lock:
            return self._con.cursor().execute(sql, params or []).df()

    def _exec(self, sql: str, params: list | None = None) -> None:
        with self._lock:
            self._con.execute(sql, params or [])

    # --- writers -------------------------------------------------------------------------
    def create_run(self, run_id: str, scenario: dict[str, Any], environment: dict[str, Any],
                   process: HostProcess | None = None) -> None:
        process = process or host_process()
        self._exec(
            "INSERT INTO runs (run_id, name, created_at, status, dataset, target, workload, users, "
            "cache, scenario, environment, message, host, host_pid, host_started) "
            "VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?)",
            [run_id, scenario.get("name", ""), _now(), scenario["dataset"], scenario["target"],
             scenario["workload"], ",".join(str(u) for u in scenario["users"]), scenario["cache"],
             json.dumps(scenario, default=str), json.dumps(environment, default=str),
             process.host, process.pid, process.started],
        )

    def set_environment_entry(self, run_id: str, key: str, value: Any) -> None:
        with self._lock:
            row = self._con.execute("SELECT environment FROM runs WHERE run_id = ?", [run_id]).fetchone()
            environment = json.loads(row[0]) if row and row[0] else {}
            environment[key] = value
            self._con.execute("UPDATE runs SET environment = ? WHERE run_id = ?",
                              [json.dumps(environment, default=str), run_id])

    def set_layout(self, run_id: str, layout: dict[str, Any]) -> None:
        self._exec("UPDATE runs SET layout = ? WHERE run_id = ?", [json.dumps(layout, default=str), run_id])

    def finish_run(self, run_id: str, status: str, message: str = "") -> None:
        self._exec("UPDATE runs SET status = ?, finished_at = ?, message = ? WHERE run_id = ?",
                   [status, _now(), message, run_id])

    def add_step(self, run_id: str, step: int, users: int, label: str, params: dict) -> None:
        self._exec("INSERT INTO steps (run_id, step, users, label, params, started_at, status, "
                   "cache_methods) VALUES (?, ?, ?, ?, ?, ?, 'running', '')",
                   [run_id, step, users, label, json.dumps(params, default=str), _now()])

    def release_step(self, run_id: str, step: int, run_clock: float) -> None:
        """The moment the step's workers were released: the start of its measurement window."""
        self._exec("UPDATE steps SET released_at = ?, release_clock = ? WHERE run_id = ? AND step = ?",
                   [_now(), run_clock, run_id, step])

    def finish_step(self, run_id: str, step: int, window_s: float, status: str,
                    cache_methods: list[str]) -> None:
        """``window_s``: from the release to the end of the step's last measured operation."""
        self._exec("UPDATE steps SET window_s = ?, status = ?, cache_methods = ? "
                   "WHERE run_id = ? AND step = ?",
                   [window_s, status, ",".join(cache_methods), run_id, step])

    def set_step_facts(self, run_id: str, step: int, facts: dict[str, Any]) -> None:
        self._exec("UPDATE steps SET facts = ? WHERE run_id = ? AND step = ?",
                   [json.dumps(facts, default=str), run_id, step])

    def set_worker(self, run_id: str, step: int, worker: int, pid: int | None, node: str,
                   state: str, error: str = "", exitcode: int | None = None, traceback: str = "") -> None:
        with self._lock:
            self._con.execute("DELETE FROM workers WHERE run_id=? AND step=? AND worker=?",
                              [run_id, step, worker])
            self._con.execute("INSERT INTO workers (run_id, step, worker, pid, node, state, error, "
                              "exitcode, traceback) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                              [run_id, step, worker, pid, node, state, error, exitcode, traceback or None])

    def add_ops(self, run_id: str, records: "Columns | list[OpRecord]") -> None:
        columns = as_columns(records)
        count = batch_length(columns)
        if not count:
            return
        arrays = {"run_id": pa.array(np.full(count, run_id, dtype=object), pa.string())}
        for name in OpRecord._fields:
            values = columns[name]
            arrays[name] = pa.array(values, _OPS_ARROW_TYPES[name], mask=_missing(name, values))
        frame = pa.table(arrays)
        with self._lock:
            self._con.register("_incoming_ops", frame)
            try:
                self._con.execute("INSERT INTO ops BY NAME SELECT * FROM _incoming_ops")
            finally:
                self._con.unregister("_incoming_ops")

    def add_resource(self, run_id: str, t: float, cpu: float, rss: int, rbps: float, wbps: float) -> None:
        self._exec("INSERT INTO resources VALUES (?, ?, ?, ?, ?, ?)", [run_id, t, cpu, rss, rbps, wbps])

    def delete_run(self, run_id: str) -> None:
        with self._lock:
            for table in ("ops", "steps", "workers", "resources", "runs"):
                self._con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])

    # --- readers -------------------------------------------------------------------------
    def runs(self) -> pd.DataFrame:
        return self.frame("SELECT run_id, name, created_at, finished_at, status, dataset, target, "
                          "workload, users, cache, message FROM runs ORDER BY created_at DESC")

    def run(self, run_id: str) -> dict[str, Any]:
        frame = self.frame("SELECT * FROM runs WHERE run_id = ?", [run_id])
        if frame.empty:
            matches = self.query("SELECT run_id FROM runs WHERE run_id LIKE ?", [run_id + "%"])
            if len(matches) == 1:
                return self.run(matches[0][0])
            raise StoreError(f"no run {run_id!r} in {self.path}")
        row = frame.iloc[0].to_dict()
        for key in ("scenario", "environment", "layout"):
            row[key] = json.loads(row[key]) if isinstance(row[key], str) and row[key] else {}
        return row

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


def _missing(name: str, values: np.ndarray) -> np.ndarray | None:
    """Which values are NULL in the file: absent phases (NaN), unknown wire bytes, no extra facts."""
    if name in PHASE_FIELDS:
        return np.isnan(values)
    if name == "wire_bytes":
        return values == UNKNOWN_BYTES
    if name == "extra":
        return values == ""
    return None
