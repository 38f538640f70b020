"""One run's records on disk: a folder of its own in the results catalog (``workloads.results.store``).

Only the process running the run writes its folder; anyone may read it at any moment, without a
lock: a JSON file is replaced whole (write, then rename), operation records are appended batch by
batch to an Arrow stream and later become immutable Parquet parts, resource samples are appended
as whole lines. A reader therefore sees each JSON or Parquet file either as it was or as it is,
never half-written (``workloads.results.atomic_files``), and every whole batch of a stream.

    <run_id>/run.json          the run: status, scenario, environment, layout, the process running it
             steps.json        its steps (release, window, status, facts)
             workers.json      its workers, by step
             ops/000001.arrows operation records appended as they arrive (``workloads.results.ops_stream``)
             ops/000001.parquet   the same stream as a part once its step ended (or it grew large);
                               the stream is deleted just after (a reader listing between reads the part)
             ops/000001-000100.parquet   parts merged by earlier versions, read the same way
             ops.parquet       every record in one file once the run has ended
             resources.jsonl   the client machine's samples, one JSON line each
             live.json         the latest live snapshot while it runs (``workloads.run.live``)
             .reserve          space held while it runs, given back to write its end on a full disk
             .seal.lock        whoever seals a dead run holds it (one sealer, ``workloads.results.dead_runs``)

A run id is a name, never a path (``workloads.paths.check_run_id``). Here: the folder's file
names, ``RunFolder`` (reading it, checked: a file that cannot be read back raises ``DamagedFile``)
and the true end states of a run's steps and workers (``ended``). The columns of its tables are in
``workloads.results.run_tables``; its one writer is ``workloads.results.run_writer.RunWriter``.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from workloads.results.atomic_files import DamagedFile, read_checked
from workloads.results.ops_stream import STREAM_SUFFIX, check_stream, is_stream, read_stream
from workloads.results.record_budget import metadata_problem, records_budget
from workloads.results.run_tables import RESOURCE_COLUMNS, RUN_COLUMNS, STEP_COLUMNS, WORKER_COLUMNS, table
from workloads.results.strict_json import json_record

RUN_FILE, STEPS_FILE, WORKERS_FILE = "run.json", "steps.json", "workers.json"
OPS_DIR, OPS_FILE, RESOURCES_FILE, LIVE_FILE = "ops", "ops.parquet", "resources.jsonl", "live.json"
RESERVE_FILE, RESERVE_BYTES, SEAL_LOCK = ".reserve", 1 << 20, ".seal.lock"
DELETED = ".deleted-"            # a run folder being deleted: moved aside (no reader lists it), then removed
ENDED_WORKER = ("starting", "ready", "running", "measured")     # worker states of a run still going


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
        """The finished run's one file, or its parts and streams so far (read each with
        ``read_ops_file``)."""
        whole = self.folder / OPS_FILE
        if whole.exists():
            return [whole]
        try:
            found = sorted(p for p in (self.folder / OPS_DIR).iterdir()
                           if p.suffix in (".parquet", STREAM_SUFFIX) and not p.name.startswith("."))
        except FileNotFoundError:
            return []
        # a Parquet part stands for the stream of its number and for the parts a merged one holds
        # (each deleted just after the part appears)
        parts = [(_part_range(p), p) for p in found if p.suffix == ".parquet"]
        return [p for p in found
                if not any(q != p and a <= _part_range(p)[0] and _part_range(p)[1] <= b for (a, b), q in parts)]

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
        for key in RUN_JSON_FIELDS:
            _record_or_damaged(run.get(key), RUN_FILE, key)
        for step in rows["steps"]:
            for key in STEP_JSON_FIELDS:
                _record_or_damaged(step.get(key), STEPS_FILE, f"step {step.get('step')}'s {key}")
        files = self.ops_files()
        budget = records_budget(run, len(rows["workers"])) if run.get("status") != "running" else None
        for path in files:
            if is_stream(path):
                check_stream(path)
            else:
                check_parquet(path, budget)
        return {"run": run, "rows": rows, "tables": tables, "ops_files": files}


RUN_JSON_FIELDS = ("scenario", "environment", "layout")     # JSON text of a record, each
STEP_JSON_FIELDS = ("params", "facts")


def _record_or_damaged(text: Any, name: str, what: str) -> None:
    try:
        json_record(text, what)
    except ValueError as exc:
        raise DamagedFile(name, str(exc)) from None


def _part_range(path: Path) -> tuple[int, int]:
    """The part numbers a part holds: "000007" -> (7, 7), "000001-000100" -> (1, 100)."""
    first, _, last = path.stem.partition("-")
    try:
        return int(first), int(last or first)
    except ValueError:
        return 0, 0


def check_parquet(path: Path, budget: int | None = None) -> None:
    """``DamagedFile`` unless ``path`` is a Parquet file of operation records (footer and schema)
    within what a run could hold (``workloads.results.record_budget``; ``budget``: its records)."""
    name = path.name if path.parent.name != OPS_DIR else f"{OPS_DIR}/{path.name}"
    try:
        meta = pq.read_metadata(path)
        schema = meta.schema.to_arrow_schema()
    except (pa.ArrowException, OSError) as exc:
        raise DamagedFile(name, f"not a Parquet file ({str(exc).splitlines()[0][:120]})") from None
    too_much = metadata_problem(meta, path.stat().st_size, budget)
    if too_much:
        raise DamagedFile(name, too_much)
    missing = [c for c in ("run_id", "step", "kind", "t_start", "total_s", "ok") if c not in schema.names]
    if missing:
        raise DamagedFile(name, f"no column {missing[0]}")


def check_parquet_records(path: Path) -> None:
    """Every value of ``path`` decoded (a check past the footer), or ``DamagedFile``."""
    check_parquet(path)
    try:
        with pq.ParquetFile(path) as records:          # batch by batch: nothing held but one batch
            for _ in records.iter_batches(batch_size=1 << 16):
                pass
    except (pa.ArrowException, OSError) as exc:
        raise DamagedFile(path.name, f"unreadable records ({str(exc).splitlines()[0][:120]})") from None


def read_ops_file(path: Path, columns: list[str] | None = None) -> pa.Table:
    """The records of one of ``RunFolder.ops_files``: a Parquet file or a stream's whole batches."""
    return read_stream(path, columns) if is_stream(path) else pq.read_table(path, columns=columns)


def measured_ends(files: list[Path]) -> dict[int, float]:
    """Per step, the release-relative end of its last measured operation in ``files``."""
    ends: dict[int, float] = {}
    for path in files:
        try:
            part = read_ops_file(path, columns=["step", "kind", "t_start", "total_s"]).to_pydict()
        except (pa.ArrowException, OSError, DamagedFile):
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
