"""The results file: one DuckDB database with a schema version, migrations and exports.

Only the run's collector writes while a run is going; readers use their own cursors.
"""
from __future__ import annotations

import json
import shutil
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from workloads.records import PHASE_FIELDS, Columns, OpRecord, as_columns, batch_length

SCHEMA_VERSION = 1

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

# version -> SQL that brings a file from version-1 to version. Add entries, never edit them.
MIGRATIONS: dict[int, str] = {1: _SCHEMA_V1}

STEP_FIGURES_SQL = """
SELECT s.step, s.users, s.label, s.duration_s, s.status, s.cache_methods,
       count(o.seq) FILTER (WHERE o.ok) AS ops,
       count(o.seq) FILTER (WHERE NOT o.ok) AS errors,
       coalesce(sum(o.rows) FILTER (WHERE o.ok), 0) AS rows,
       coalesce(sum(o.bytes) FILTER (WHERE o.ok), 0) AS bytes,
       quantile_cont(o.total_s, 0.50) FILTER (WHERE o.ok) AS p50_s,
       quantile_cont(o.total_s, 0.95) FILTER (WHERE o.ok) AS p95_s,
       quantile_cont(o.total_s, 0.99) FILTER (WHERE o.ok) AS p99_s,
       avg(o.io_s) FILTER (WHERE o.ok) AS io_s, avg(o.query_s) FILTER (WHERE o.ok) AS query_s,
       avg(o.server_s) FILTER (WHERE o.ok) AS server_s,
       avg(o.transfer_s) FILTER (WHERE o.ok) AS transfer_s,
       avg(o.decode_s) FILTER (WHERE o.ok) AS decode_s,
       avg(o.total_s) FILTER (WHERE o.ok) AS mean_s
FROM steps s LEFT JOIN ops o ON o.run_id = s.run_id AND o.step = s.step
WHERE s.run_id = ?
GROUP BY ALL ORDER BY s.step
"""


_OPS_ARROW_TYPES = {
    "step": pa.int32(), "worker": pa.int32(), "seq": pa.int32(), "op": pa.string(),
    "t_start": pa.float64(), "total_s": pa.float64(), "io_s": pa.float64(), "query_s": pa.float64(),
    "server_s": pa.float64(), "transfer_s": pa.float64(), "decode_s": pa.float64(),
    "rows": pa.int64(), "bytes": pa.int64(), "ok": pa.bool_(), "error": pa.string(), "node": pa.string(),
}


class StoreError(RuntimeError):
    """The results file cannot be opened or read; the message names it."""


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
            self._con.execute(MIGRATIONS[version])
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
        return self._frame('SELECT * FROM "references"')

    def _backup(self, version: int) -> Path:
        self._con.execute("CHECKPOINT")
        backup = self.path.with_name(f"{self.path.stem}.v{version}.bak{self.path.suffix}")
        shutil.copy2(self.path, backup)
        return backup

    @property
    def schema_version(self) -> int:
        return int(self._query("SELECT value FROM meta WHERE key='schema_version'")[0][0])

    def close(self) -> None:
        with self._lock:
            self._con.close()

    # --- helpers -------------------------------------------------------------------------
    def _query(self, sql: str, params: list | None = None) -> list[tuple]:
        with self._lock:
            return self._con.cursor().execute(sql, params or []).fetchall()

    def _frame(self, sql: str, params: list | None = None) -> pd.DataFrame:
        with self._lock:
            return self._con.cursor().execute(sql, params or []).df()

    def _exec(self, sql: str, params: list | None = None) -> None:
        with self._lock:
            self._con.execute(sql, params or [])

    # --- writers -------------------------------------------------------------------------
    def create_run(self, run_id: str, scenario: dict[str, Any], environment: dict[str, Any]) -> None:
        self._exec(
            "INSERT INTO runs VALUES (?, ?, ?, NULL, 'running', ?, ?, ?, ?, ?, ?, ?, NULL, '')",
            [run_id, scenario.get("name", ""), _now(), scenario["dataset"], scenario["target"],
             scenario["workload"], ",".join(str(u) for u in scenario["users"]), scenario["cache"],
             json.dumps(scenario, default=str), json.dumps(environment, default=str)],
        )

    def set_layout(self, run_id: str, layout: dict[str, Any]) -> None:
        self._exec("UPDATE runs SET layout = ? WHERE run_id = ?", [json.dumps(layout, default=str), run_id])

    def finish_run(self, run_id: str, status: str, message: str = "") -> None:
        self._exec("UPDATE runs SET status = ?, finished_at = ?, message = ? WHERE run_id = ?",
                   [status, _now(), message, run_id])

    def add_step(self, run_id: str, step: int, users: int, label: str, params: dict) -> None:
        self._exec("INSERT INTO steps VALUES (?, ?, ?, ?, ?, ?, NULL, 'running', '')",
                   [run_id, step, users, label, json.dumps(params, default=str), _now()])

    def finish_step(self, run_id: str, step: int, duration_s: float, status: str,
                    cache_methods: list[str]) -> None:
        self._exec("UPDATE steps SET duration_s = ?, status = ?, cache_methods = ? "
                   "WHERE run_id = ? AND step = ?",
                   [duration_s, status, ",".join(cache_methods), run_id, step])

    def set_worker(self, run_id: str, step: int, worker: int, pid: int | None, node: str,
                   state: str, error: str = "", exitcode: int | None = None) -> None:
        with self._lock:
            self._con.execute("DELETE FROM workers WHERE run_id=? AND step=? AND worker=?",
                              [run_id, step, worker])
            self._con.execute("INSERT INTO workers VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                              [run_id, step, worker, pid, node, state, error, exitcode])

    def add_ops(self, run_id: str, records: "Columns | list[OpRecord]") -> None:
        columns = as_columns(records)
        count = batch_length(columns)
        if not count:
            return
        arrays = {"run_id": pa.array(np.full(count, run_id, dtype=object), pa.string())}
        for name in OpRecord._fields:
            values = columns[name]
            missing = np.isnan(values) if name in PHASE_FIELDS else None  # no phase: NULL, not NaN
            arrays[name] = pa.array(values, _OPS_ARROW_TYPES[name], mask=missing)
        frame = pa.table(arrays)
        with self._lock:
            self._con.register("_incoming_ops", frame)
            try:
                self._con.execute("INSERT INTO ops SELECT * FROM _incoming_ops")
            finally:
                self._con.unregister("_incoming_ops")

    def add_resource(self, run_id: str, t: float, cpu: float, rss: int, rbps: float, wbps: float) -> None:
        self._exec("INSERT INTO resources VALUES (?, ?, ?, ?, ?, ?)", [run_id, t, cpu, rss, rbps, wbps])

    def mark_abandoned_runs(self) -> int:
        """Runs still 'running' when the app starts were cut off: mark them aborted."""
        with self._lock:
            count = self._con.execute("SELECT count(*) FROM runs WHERE status='running'").fetchone()[0]
            self._con.execute("UPDATE runs SET status='aborted', message='the app stopped during the run' "
                              "WHERE status='running'")
        return int(count)

    def delete_run(self, run_id: str) -> None:
        with self._lock:
            for table in ("ops", "steps", "workers", "resources", "runs"):
                self._con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])

    # --- readers -------------------------------------------------------------------------
    def runs(self) -> pd.DataFrame:
        return self._frame("SELECT run_id, name, created_at, finished_at, status, dataset, target, "
                           "workload, users, cache, message FROM runs ORDER BY created_at DESC")

    def run(self, run_id: str) -> dict[str, Any]:
        frame = self._frame("SELECT * FROM runs WHERE run_id = ?", [run_id])
        if frame.empty:
            matches = self._query("SELECT run_id FROM runs WHERE run_id LIKE ?", [run_id + "%"])
            if len(matches) == 1:
                return self.run(matches[0][0])
            raise StoreError(f"no run {run_id!r} in {self.path}")
        row = frame.iloc[0].to_dict()
        for key in ("scenario", "environment", "layout"):
            row[key] = json.loads(row[key]) if isinstance(row[key], str) and row[key] else {}
        return row

    def step_figures(self, run_id: str) -> pd.DataFrame:
        frame = self._frame(STEP_FIGURES_SQL, [run_id])
        span = frame["duration_s"].where(frame["duration_s"] > 0)
        frame["rows_per_s"] = frame["rows"] / span
        frame["mb_per_s"] = frame["bytes"] / span / 1e6
        frame["ops_per_s"] = frame["ops"] / span
        return frame

    def ops(self, run_id: str) -> pd.DataFrame:
        return self._frame("SELECT * FROM ops WHERE run_id = ? ORDER BY step, t_start, worker, seq", [run_id])

    def workers(self, run_id: str) -> pd.DataFrame:
        return self._frame("SELECT * FROM workers WHERE run_id = ? ORDER BY step, worker", [run_id])

    def resources(self, run_id: str) -> pd.DataFrame:
        return self._frame("SELECT * FROM resources WHERE run_id = ? ORDER BY t", [run_id])

    # --- export --------------------------------------------------------------------------
    def export_run(self, run_id: str, folder: Path, fmt: str = "csv") -> list[Path]:
        """Write the run's tables (runs, steps with figures, workers, ops, resources) to files."""
        if fmt not in ("csv", "parquet"):
            raise ValueError(f"export format must be csv or parquet, not {fmt!r}")
        run = self.run(run_id)
        run_id = run["run_id"]
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        tables = {
            "run": pd.DataFrame([{k: (json.dumps(v) if isinstance(v, dict) else v) for k, v in run.items()}]),
            "steps": self.step_figures(run_id),
            "workers": self.workers(run_id),
            "ops": self.ops(run_id),
            "resources": self.resources(run_id),
        }
        written = []
        for name, frame in tables.items():
            path = folder / f"{run_id}_{name}.{fmt}"
            if fmt == "csv":
                frame.to_csv(path, index=False)
            else:
                frame.to_parquet(path, index=False)
            written.append(path)
        return written
