"""One run's records on disk: a folder of its own in the results catalog (``workloads.store``).

Only the process running the run writes its folder; anyone may read it at any moment, without a
lock: a JSON file is replaced whole (write, then rename), operation records arrive as immutable
Parquet parts, resource samples as whole lines appended. A reader therefore sees each file either
as it was or as it is, never half-written.

    <run_id>/run.json          the run: status, scenario, environment, layout, the process running it
             steps.json        its steps (release, window, status, facts)
             workers.json      its workers, by step
             ops/000001.parquet ...   operation records, one part per flush while it runs
             ops/000001-000100.parquet   parts merged as it goes (few files for a long run)
             ops.parquet       the same records in one file once the run has ended
             resources.jsonl   the client machine's samples, one JSON line each
             live.json         the latest live snapshot while it runs (``workloads.live``)
             .reserve          space held while it runs, given back to write its end on a full disk
             .seal.lock        whoever seals a dead run holds it (one sealer, ``workloads.store``)

A run id is a name, never a path (``check_run_id``). A file that cannot be read back as written
(truncated, garbage, wrong types) raises ``DamagedFile`` naming it, so a reader can set that run
aside and read the rest; a write that finds the disk full raises ``DiskFullError`` naming where,
and leaves no temporary file behind.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import threading
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
    "facts": pa.string(), "rate": pa.float64(),
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
    "intended_s": pa.float64(),
}
RESOURCE_COLUMNS = {
    "run_id": pa.string(), "t": pa.float64(), "cpu_percent": pa.float64(), "rss_bytes": pa.int64(),
    "read_bytes_per_s": pa.float64(), "write_bytes_per_s": pa.float64(),
}
TIMESTAMPS = frozenset({"created_at", "finished_at", "started_at", "released_at"})
assert set(OPS_COLUMNS) == {"run_id", *OpRecord._fields}

MAX_RUN_ID = 64
RESERVE_FILE, RESERVE_BYTES, SEAL_LOCK = ".reserve", 1 << 20, ".seal.lock"
MERGE_PARTS = 100             # parts of records merged into one as a run goes (``RunWriter.add_ops``)
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
ENDED_WORKER = ("starting", "ready", "running", "measured")     # worker states of a run still going


def check_run_id(run_id: Any) -> str:
    """``run_id`` if it is a name a run folder may have, else ValueError naming it and the rule:
    printable, no path separator, not '.'-first, never '..', at most ``MAX_RUN_ID`` characters."""
    if not isinstance(run_id, str) or not run_id.strip():
        raise ValueError(f"run id {run_id!r}: must be a non-empty name")
    if "/" in run_id or "\\" in run_id or ".." in run_id or run_id.startswith("."):
        raise ValueError(f"run id {run_id!r}: a name, not a path: no '/' or '\\', never '..', not '.' first")
    if not run_id.isprintable() or run_id != run_id.strip():
        raise ValueError(f"run id {run_id!r}: no control characters or surrounding spaces")
    if len(run_id) > MAX_RUN_ID:
        raise ValueError(f"run id {run_id[:20]!r}...: at most {MAX_RUN_ID} characters ({len(run_id)} given)")
    return run_id


def run_path(runs_dir: Path, run_id: Any) -> Path:
    """The folder of ``run_id`` in ``runs_dir``: never anywhere else."""
    return Path(runs_dir) / check_run_id(run_id)


class DamagedFile(ValueError):
    """A run's file cannot be read back as written."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"{name}: {reason}")
        self.name, self.reason = name, reason


class DiskFullError(OSError):
    """A write found no room (ENOSPC, EDQUOT, EFBIG); ``str()`` is 'disk full at <path>'."""

    def __init__(self, path: Path, cause: OSError):
        super().__init__(cause.errno, f"disk full at {path}")
        self.path = Path(path)

    def __str__(self) -> str:
        return f"disk full at {self.path}"


def disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in FULL_ERRNOS


def utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _temporary(path: Path) -> Path:
    """A temporary name no other writer (process or thread) uses at the same time."""
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{os.urandom(3).hex()}.tmp")


def _written(path: Path, write) -> None:
    """``write(temporary)`` then rename it to ``path``; on failure the temporary file is removed and
    a full disk is raised as ``DiskFullError``."""
    temporary = _temporary(path)
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException as exc:
        temporary.unlink(missing_ok=True)
        if disk_full(exc):
            raise DiskFullError(path, exc) from None
        raise


def write_json(path: Path, value: Any) -> None:
    """Replace ``path`` whole: a reader sees the old file or the new one, never a part."""
    text = json.dumps(value, default=_jsonable)
    _written(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))


def create_json(path: Path, value: Any) -> bool:
    """Write ``path`` only if it does not exist yet (one creator wins, atomically); False if it did."""
    text = json.dumps(value, default=_jsonable)
    temporary = _temporary(path)
    try:
        temporary.write_text(text, encoding="utf-8")
        os.link(temporary, path)                # fails if path exists: never replaces it
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        if disk_full(exc):
            raise DiskFullError(path, exc) from None
        raise
    finally:
        temporary.unlink(missing_ok=True)


def read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default


def read_checked(path: Path, default: Any, kind: type) -> Any:
    """``path``'s JSON if it is a ``kind`` (of dicts, for a list), else ``DamagedFile``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return default
    except OSError as exc:
        raise DamagedFile(path.name, f"cannot be read ({exc.strerror or exc})") from None
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise DamagedFile(path.name, f"not text ({len(data)} bytes)") from None
    except json.JSONDecodeError as exc:
        if not data.rstrip().endswith((b"}", b"]")):
            raise DamagedFile(path.name, f"truncated (ends after {len(data)} bytes)") from None
        raise DamagedFile(path.name, f"not JSON ({exc.msg} at byte {exc.pos} of {len(data)})") from None
    if not isinstance(value, kind) or (kind is list and not all(isinstance(v, dict) for v in value)):
        raise DamagedFile(path.name, f"holds a {type(value).__name__}, not a {'list of records' if kind is list else 'record'}")
    return value


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


_STRING_COLUMNS = [name for name, kind in OPS_COLUMNS.items() if kind == pa.string()]
_DICTIONARY = pa.dictionary(pa.int32(), pa.string())
# Record parts are written often (every few hundredths of a second under load): strings as
# dictionaries (a run's few operation names, kinds and hosts), no dictionary tried on the numbers,
# statistics only where a reader prunes by them, no Arrow schema (readers see plain strings)
PART_WRITE = {"compression": "lz4", "use_dictionary": _STRING_COLUMNS, "write_statistics": ["run_id", "step", "kind"],
              "store_schema": False}


def ops_table(run_id: str, records: "Columns | list[Columns] | list[OpRecord]") -> pa.Table:
    """Records (one batch of columns, several, or OpRecords) as the catalog's Arrow table, built
    column by column: string columns as dictionaries (a batch's value repeated costs one value and
    a run of zero indices), never value by value."""
    if isinstance(records, list) and records and isinstance(records[0], dict):
        return pa.concat_tables([ops_table(run_id, batch) for batch in records])
    columns = as_columns(records)
    count = batch_length(columns)
    arrays = {}
    for name, kind in OPS_COLUMNS.items():
        if name == "run_id":
            arrays[name] = _repeated(run_id, count)
        elif kind == pa.string():
            arrays[name] = _strings(columns[name], null_if_empty=name == "extra")
        else:
            values = columns[name]
            arrays[name] = pa.array(values, kind, mask=_missing(name, values))
    return pa.table(arrays)


def _repeated(value: str, count: int, null: bool = False) -> pa.DictionaryArray:
    indices = pa.array(np.zeros(count, np.int32), mask=np.ones(count, np.bool_) if null else None)
    return pa.DictionaryArray.from_arrays(indices, pa.array([value], pa.string()))


def _strings(values: np.ndarray, null_if_empty: bool = False) -> pa.DictionaryArray:
    if not len(values):
        return pa.array([], _DICTIONARY)
    first = values[0]
    if (values == first).all():
        return _repeated(str(first), len(values), null=null_if_empty and first == "")
    mask = (values == "") if null_if_empty else None
    return pa.array(values, pa.string(), mask=mask).dictionary_encode()


def _as_dictionaries(table: pa.Table) -> pa.Table:
    """String columns as dictionaries (a migrated run's plain strings), so every part of a writer concatenates."""
    for name in _STRING_COLUMNS:
        column = table.column(name)
        if column.type != _DICTIONARY:
            table = table.set_column(table.schema.get_field_index(name), pa.field(name, _DICTIONARY),
                                     column.cast(pa.string()).dictionary_encode())
    return table


def _missing(name: str, values: np.ndarray) -> np.ndarray | None:
    """Which values are NULL: absent phases (NaN), unknown wire bytes, no extra facts."""
    if name in PHASE_FIELDS or name == "intended_s":
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
        """The run's record; {} if it has none yet or it cannot be read (``checked()`` says why)."""
        try:
            return read_checked(self.folder / RUN_FILE, {}, dict)
        except DamagedFile:
            return {}

    def steps(self) -> list[dict[str, Any]]:
        return read_checked(self.folder / STEPS_FILE, [], list)

    def workers(self) -> list[dict[str, Any]]:
        return read_checked(self.folder / WORKERS_FILE, [], list)

    def ops_files(self) -> list[Path]:
        """The finished run's one file, or the parts written so far."""
        whole = self.folder / OPS_FILE
        if whole.exists():
            return [whole]
        try:
            found = sorted(p for p in (self.folder / OPS_DIR).iterdir()
                           if p.suffix == ".parquet" and not p.name.startswith("."))
        except FileNotFoundError:
            return []
        # a merged part "first-last" stands for the parts it holds (deleted just after it appears)
        merged = [_part_range(p) for p in found if "-" in p.stem]
        return [p for p in found if "-" in p.stem or not any(a <= _part_range(p)[0] <= b for a, b in merged)]

    def resources(self) -> list[dict[str, Any]]:
        """The samples; a last line still being appended is left out, anything else unreadable is
        ``DamagedFile``."""
        path = self.folder / RESOURCES_FILE
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return []
        lines = data.split(b"\n")
        rows = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                if number == len(lines):            # no newline yet: still being written
                    break
                raise DamagedFile(RESOURCES_FILE, f"line {number} is not a JSON record") from None
            if not isinstance(row, dict):
                raise DamagedFile(RESOURCES_FILE, f"line {number} is not a record")
            rows.append(row)
        return rows

    def checked(self) -> dict[str, Any]:
        """Every file read and checked: the rows of each table as Arrow tables and the Parquet
        files of its records, or ``DamagedFile`` naming the first file that cannot be read."""
        run = read_checked(self.folder / RUN_FILE, {}, dict)
        rows = {"runs": [run] if run else [], "steps": self.steps(), "workers": self.workers(),
                "resources": self.resources()}
        tables = {}
        for key, name, columns in (("runs", RUN_FILE, RUN_COLUMNS), ("steps", STEPS_FILE, STEP_COLUMNS),
                                   ("workers", WORKERS_FILE, WORKER_COLUMNS),
                                   ("resources", RESOURCES_FILE, RESOURCE_COLUMNS)):
            for row in rows[key]:
                row.setdefault("run_id", self.run_id)
            if any(row.get("run_id") != self.run_id for row in rows[key]):
                raise DamagedFile(name, f"holds records of another run than {self.run_id}")
            try:
                tables[key] = table(rows[key], columns)
            except (pa.ArrowException, TypeError, ValueError) as exc:
                raise DamagedFile(name, f"wrong types ({str(exc).splitlines()[0][:120]})") from None
        files = self.ops_files()
        for path in files:
            check_parquet(path)
        return {"run": run, "rows": rows, "tables": tables, "ops_files": files}


def _part_range(path: Path) -> tuple[int, int]:
    """The part numbers a part holds: "000007" -> (7, 7), "000001-000100" -> (1, 100)."""
    first, _, last = path.stem.partition("-")
    try:
        return int(first), int(last or first)
    except ValueError:
        return 0, 0


def check_parquet(path: Path) -> None:
    """``DamagedFile`` unless ``path`` is a Parquet file of operation records (footer and schema)."""
    name = path.name if path.parent.name != OPS_DIR else f"{OPS_DIR}/{path.name}"
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowException, OSError) as exc:
        raise DamagedFile(name, f"not a Parquet file ({str(exc).splitlines()[0][:120]})") from None
    missing = [c for c in ("run_id", "step", "kind", "t_start", "total_s", "ok") if c not in schema.names]
    if missing:
        raise DamagedFile(name, f"no column {missing[0]}")


def read_parquet_whole(path: Path) -> pa.Table:
    """Every value of ``path`` decoded (a check past the footer), or ``DamagedFile``."""
    check_parquet(path)
    try:
        return pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise DamagedFile(path.name, f"unreadable records ({str(exc).splitlines()[0][:120]})") from None


def measured_ends(files: list[Path]) -> dict[int, float]:
    """Per step, the release-relative end of its last measured operation in ``files``."""
    ends: dict[int, float] = {}
    for path in files:
        try:
            part = pq.read_table(path, columns=["step", "kind", "t_start", "total_s"]).to_pydict()
        except (pa.ArrowException, OSError):
            continue
        for step, kind, start, total in zip(part["step"], part["kind"], part["t_start"], part["total_s"]):
            if kind == "measured" and start is not None and total is not None:
                ends[int(step)] = max(ends.get(int(step), 0.0), float(start) + float(total))
    return ends


def ended(status: str, message: str, steps: list[dict], workers: list[dict],
          ends: dict[int, float]) -> tuple[list[dict], list[dict]]:
    """The steps and workers of a run that ended ``status`` as they truly ended: a step still
    'running' takes the run's status and, without a window, the end of its last measured operation
    (what was kept has figures); a worker still starting/ready/running/measured takes the run's
    status and ``message``."""
    steps = [dict(s) for s in steps]
    workers = [dict(w) for w in workers]
    for step in steps:
        if step.get("status") == "running":
            step["status"] = status
            if step.get("window_s") is None and step.get("step") in ends:
                step["window_s"] = ends[step["step"]]
    for worker in workers:
        if worker.get("state") in ENDED_WORKER:
            worker["state"] = status
            worker["error"] = worker.get("error") or message
    return steps, workers


class RunWriter(RunFolder):
    """The one writer of a run's folder (the process running it, or a migration, or the one
    sealer of a dead run). Every write that finds the disk full raises ``DiskFullError``."""

    def __init__(self, folder: Path):
        super().__init__(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._run = self.run()
        self._steps = self.steps()
        self._workers = self.workers()
        parts = self.ops_files()
        self._next_part = 1 + max((_part_range(p)[1] for p in parts), default=0)
        self._recent: list[tuple[int, pa.Table]] = []     # parts since the last merge, to merge them

    def create_run(self, fields: dict[str, Any]) -> None:
        """The run's first record, only if the folder has none: ValueError if it has (a run id is
        used once). Space for the run's end is held at once (``reserve``)."""
        if not create_json(self.folder / RUN_FILE, fields):
            raise ValueError(f"run id {self.run_id!r}: already used by a run in {self.folder.parent}; "
                             "a run id names one run")
        self._run = dict(fields)
        self.reserve()

    def reserve(self) -> None:
        """Hold ``RESERVE_BYTES`` (real blocks, not a hole) so the run's end can be written when
        the disk fills; best effort."""
        try:
            with open(self.folder / RESERVE_FILE, "wb") as out:
                out.write(b"\0" * RESERVE_BYTES)
        except OSError:
            (self.folder / RESERVE_FILE).unlink(missing_ok=True)

    def release_reserve(self) -> None:
        (self.folder / RESERVE_FILE).unlink(missing_ok=True)

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
        """One immutable part: written aside, then renamed into place (uncompressed zstd is cheap
        enough to write every fraction of a second; the sealed file is compressed)."""
        if not ops.num_rows:
            return
        folder = self.folder / OPS_DIR
        try:
            folder.mkdir(exist_ok=True)
        except OSError as exc:
            if disk_full(exc):
                raise DiskFullError(folder, exc) from None
            raise
        number = self._next_part
        self._next_part += 1
        ops = _as_dictionaries(ops)
        _written(folder / f"{number:06d}.parquet", lambda temporary: pq.write_table(ops, temporary, **PART_WRITE))
        self._recent.append((number, ops))
        if len(self._recent) >= MERGE_PARTS:
            self._merge_recent()

    def _merge_recent(self) -> None:
        """The last ``MERGE_PARTS`` parts as one (from memory: no re-read), so a long run written
        every few hundredths of a second keeps few files: the merged part appears whole, then the
        parts it holds go (a reader listing in between takes the merged one alone)."""
        first, last = self._recent[0][0], self._recent[-1][0]
        merged = pa.concat_tables([t for _, t in self._recent], promote_options="default")
        folder = self.folder / OPS_DIR
        _written(folder / f"{first:06d}-{last:06d}.parquet",
                 lambda temporary: pq.write_table(merged, temporary, **PART_WRITE))
        for number, _ in self._recent:
            (folder / f"{number:06d}.parquet").unlink(missing_ok=True)
        self._recent = []

    def add_resource(self, row: dict[str, Any]) -> None:
        path = self.folder / RESOURCES_FILE
        try:
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(row) + "\n")
        except OSError as exc:
            if disk_full(exc):
                raise DiskFullError(path, exc) from None
            raise

    def kept_ops(self) -> int:
        """Records on disk (parts or the sealed file), from the Parquet footers."""
        total = 0
        for path in self.ops_files():
            try:
                total += pq.read_metadata(path).num_rows
            except (pa.ArrowException, OSError):     # a damaged part keeps nothing countable
                pass
        return total

    def end(self, status: str, message: str, finished_at: Any = None) -> None:
        """The run's last writes: records sealed (left as parts if the disk has no room for the
        sealed file), steps and workers in their true end states, the run's record last. The
        reserve is given back first, so a full disk still takes these small files."""
        self.release_reserve()
        try:
            self.seal_ops()
        except DiskFullError:
            pass                        # the parts stay: readers read them as they read a live run
        steps, workers = ended(status, message, self._steps, self._workers,
                               measured_ends(self.ops_files()) if any(
                                   s.get("status") == "running" for s in self._steps) else {})
        if steps != self._steps:
            self._steps = steps
            write_json(self.folder / STEPS_FILE, steps)
        if workers != self._workers:
            self._workers = workers
            write_json(self.folder / WORKERS_FILE, workers)
        self.update_run(status=status, message=message, finished_at=finished_at or utc_now())

    def seal_ops(self) -> None:
        """The parts as one file once the run has ended (readers then open one file, not hundreds)."""
        parts = [p for p in self.ops_files() if p.parent.name == OPS_DIR]
        if not parts:
            return
        whole = pa.concat_tables([pq.read_table(p) for p in parts] + [pa.schema(OPS_COLUMNS).empty_table()],
                                 promote_options="default").select(list(OPS_COLUMNS))
        _written(self.folder / OPS_FILE, lambda temporary: pq.write_table(whole, temporary, compression="zstd"))
        shutil.rmtree(self.folder / OPS_DIR, ignore_errors=True)


class SealLock:
    """Whoever seals a dead run holds this (``flock``, let go when its process ends, even by
    ``kill -9``); anyone else finds it taken and leaves the run to them."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / SEAL_LOCK
        self._fd: int | None = None

    def __enter__(self) -> bool:
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            return False

    def __exit__(self, *_exc) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
