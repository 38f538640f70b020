"""One run's records on disk: a folder of its own in the results catalog (``workloads.store``).

Only the process running the run writes its folder; anyone may read it at any moment, without a
lock: a JSON file is replaced whole (write, then rename), operation records arrive as immutable
Parquet parts, resource samples as whole lines appended. A reader therefore sees each file either
as it was or as it is, never half-written.

    <run_id>/run.json          the run: status, scenario, environment, layout, the process running it
             steps.json        its steps (release, window, status, facts)
             workers.json      its workers, by step
             ops/000001.parquet ...   operation records, one part per flush while it runs
             ops.parquet       the same records in one file once the run has ended
             resources.jsonl   the client machine's samples, one JSON line each
             live.json         the latest live snapshot while it runs (``workloads.live``)
"""
from __future__ import annotations

import json
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from workloads.records import PHASE_FIELDS, UNKNOWN_BYTES, Columns, OpRecord, as_columns, batch_length

RUN_FILE, STEPS_FILE, WORKERS_FILE = "run.json", "steps.json", "workers.json"
OPS_DIR, OPS_FILE, RESOURCES_FILE, LIVE_FILE = "ops", "ops.parquet", "resources.jsonl", "live.json"

RUN_COLUMNS = {
    "run_id": pa.string(), "name": pa.string(), "created_at": pa.timestamp("us"),
    "finished_at": pa.timestamp("us"), "status": pa.string(), "dataset": pa.string(), "target": pa.string(),
    "workload": pa.string(), "users": pa.string(), "cache": pa.string(), "scenario": pa.string(),
    "environment": pa.string(), "layout": pa.string(), "message": pa.string(), "host": pa.string(),
    "host_pid": pa.int32(), "host_started": pa.float64(),
}
STEP_COLUMNS = {
    "run_id": pa.string(), "step": pa.int32(), "users": pa.int32(), "label": pa.string(), "params": pa.string(),
    "started_at": pa.timestamp("us"), "window_s": pa.float64(), "status": pa.string(),
    "cache_methods": pa.string(), "released_at": pa.timestamp("us"), "release_clock": pa.float64(),
    "facts": pa.string(),
}
WORKER_COLUMNS = {
    "run_id": pa.string(), "step": pa.int32(), "worker": pa.int32(), "pid": pa.int32(), "node": pa.string(),
    "state": pa.string(), "error": pa.string(), "exitcode": pa.int32(), "traceback": pa.string(),
    "host": pa.string(),
}
OPS_COLUMNS = {
    "run_id": pa.string(), "step": pa.int32(), "worker": pa.int32(), "seq": pa.int32(), "op": pa.string(),
    "t_start": pa.float64(), "total_s": pa.float64(), "io_s": pa.float64(), "query_s": pa.float64(),
    "server_s": pa.float64(), "transfer_s": pa.float64(), "decode_s": pa.float64(), "rows": pa.int64(),
    "bytes": pa.int64(), "ok": pa.bool_(), "error": pa.string(), "node": pa.string(), "kind": pa.string(),
    "read_s": pa.float64(), "wire_bytes": pa.int64(), "extra": pa.string(), "host": pa.string(),
}
RESOURCE_COLUMNS = {
    "run_id": pa.string(), "t": pa.float64(), "cpu_percent": pa.float64(), "rss_bytes": pa.int64(),
    "read_bytes_per_s": pa.float64(), "write_bytes_per_s": pa.float64(),
}
TIMESTAMPS = frozenset({"created_at", "finished_at", "started_at", "released_at"})
assert set(OPS_COLUMNS) == {"run_id", *OpRecord._fields}


def utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def write_json(path: Path, value: Any) -> None:
    """Replace ``path`` whole: a reader sees the old file or the new one, never a part."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(value, default=_jsonable), encoding="utf-8")
    os.replace(temporary, path)


def read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def table(rows: list[dict[str, Any]], columns: dict[str, pa.DataType]) -> pa.Table:
    """Rows of JSON values as a typed Arrow table (ISO strings become timestamps)."""
    arrays = {}
    for name, kind in columns.items():
        values = [row.get(name) for row in rows]
        if name in TIMESTAMPS:
            values = [datetime.fromisoformat(v) if isinstance(v, str) else v for v in values]
        arrays[name] = pa.array(values, kind)
    return pa.table(arrays)


def ops_table(run_id: str, records: "Columns | list[OpRecord]") -> pa.Table:
    columns = as_columns(records)
    count = batch_length(columns)
    arrays = {"run_id": pa.array(np.full(count, run_id, dtype=object), pa.string())}
    for name, kind in OPS_COLUMNS.items():
        if name != "run_id":
            values = columns[name]
            arrays[name] = pa.array(values, kind, mask=_missing(name, values))
    return pa.table(arrays)


def _missing(name: str, values: np.ndarray) -> np.ndarray | None:
    """Which values are NULL: absent phases (NaN), unknown wire bytes, no extra facts."""
    if name in PHASE_FIELDS:
        return np.isnan(values)
    if name == "wire_bytes":
        return values == UNKNOWN_BYTES
    if name == "extra":
        return values == ""
    return None


class RunFolder:
    """Reads one run's folder; ``RunWriter`` adds the writing."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.run_id = self.folder.name

    def run(self) -> dict[str, Any]:
        return read_json(self.folder / RUN_FILE, {})

    def steps(self) -> list[dict[str, Any]]:
        return read_json(self.folder / STEPS_FILE, [])

    def workers(self) -> list[dict[str, Any]]:
        return read_json(self.folder / WORKERS_FILE, [])

    def ops_files(self) -> list[Path]:
        """The finished run's one file, or the parts written so far."""
        whole = self.folder / OPS_FILE
        if whole.exists():
            return [whole]
        try:
            return sorted(p for p in (self.folder / OPS_DIR).iterdir() if p.suffix == ".parquet")
        except FileNotFoundError:
            return []

    def resources(self) -> list[dict[str, Any]]:
        try:
            lines = (self.folder / RESOURCES_FILE).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        rows = []
        for line in lines:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                break                   # a line still being appended
        return rows


class RunWriter(RunFolder):
    """The one writer of a run's folder (the process running it, or a migration)."""

    def __init__(self, folder: Path):
        super().__init__(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._run = self.run()
        self._steps = self.steps()
        self._workers = self.workers()
        parts = self.ops_files()
        self._next_part = 1 + max((int(p.stem) for p in parts if p.stem.isdigit()), default=0)

    def update_run(self, **fields: Any) -> None:
        self._run.update(fields)
        write_json(self.folder / RUN_FILE, self._run)

    def add_step(self, row: dict[str, Any]) -> None:
        self._steps = [s for s in self._steps if s["step"] != row["step"]] + [row]
        write_json(self.folder / STEPS_FILE, self._steps)

    def update_step(self, step: int, **fields: Any) -> None:
        for row in self._steps:
            if row["step"] == step:
                row.update(fields)
        write_json(self.folder / STEPS_FILE, self._steps)

    def set_worker(self, row: dict[str, Any]) -> None:
        self._workers = [w for w in self._workers
                         if (w["step"], w["worker"]) != (row["step"], row["worker"])] + [row]
        write_json(self.folder / WORKERS_FILE, self._workers)

    def add_ops(self, ops: pa.Table) -> None:
        """One immutable part: written aside, then renamed into place."""
        if not ops.num_rows:
            return
        folder = self.folder / OPS_DIR
        folder.mkdir(exist_ok=True)
        path = folder / f"{self._next_part:06d}.parquet"
        self._next_part += 1
        temporary = folder / f".{path.name}.tmp"
        pq.write_table(ops, temporary, compression="zstd")
        os.replace(temporary, path)

    def add_resource(self, row: dict[str, Any]) -> None:
        with open(self.folder / RESOURCES_FILE, "a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")

    def seal_ops(self) -> None:
        """The parts as one file once the run has ended (readers then open one file, not hundreds)."""
        parts = [p for p in self.ops_files() if p.parent.name == OPS_DIR]
        if not parts:
            return
        whole = pa.concat_tables([pq.read_table(p) for p in parts]).select(list(OPS_COLUMNS))
        temporary = self.folder / f".{OPS_FILE}.tmp"
        pq.write_table(whole, temporary, compression="zstd")
        os.replace(temporary, self.folder / OPS_FILE)
        shutil.rmtree(self.folder / OPS_DIR, ignore_errors=True)
