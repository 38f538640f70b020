"""The daily CSV files that import workloads load (reports 001 and 004 loaded one CSV per day).

Written once from the generators and reused, like layouts: ``<datasets dir>/csv/<dataset>/<scale
key>/<YYYY-MM-DD>.csv`` plus ``manifest.json`` (rows and bytes per day), each file through a temp
file and a rename, in DolphinDB's text style (``2007.08.23``, ``09:30:07``), which DuckDB and
pyarrow read too. A manifest that does not match the files on disk is rebuilt.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from workloads.datasets.csvwrite import write_csv
from workloads.datasets.schema import Scale, StringMode

MANIFEST = "manifest.json"
FORMAT = 1
STYLE = "dolphindb"
CHUNK_ROWS = 500_000


@dataclass(frozen=True)
class CsvFile:
    day: dt.date
    path: Path
    rows: int
    bytes: int


def csv_dir(root: Path, dataset: str, scale: Scale) -> Path:
    return Path(root) / "csv" / dataset / scale.key()


def csv_files(dataset: str, scale: Scale, root: Path | None = None) -> list[CsvFile]:
    """Every day of ``dataset`` at ``scale`` as a CSV file, written now if not already there."""
    from workloads.datasets import get_dataset
    from workloads.paths import default_datasets_dir

    ds = get_dataset(dataset)
    folder = csv_dir(root or default_datasets_dir(), dataset, scale)
    folder.mkdir(parents=True, exist_ok=True)
    days = list(ds.trading_days(scale))
    manifest = _read_manifest(folder)
    wanted = {"format": FORMAT, "dataset": dataset, "content": ds.content_id, "style": STYLE}
    entries = {e["date"]: e for e in manifest.get("entries", [])} \
        if all(manifest.get(k) == v for k, v in wanted.items()) else {}
    files = []
    for index, day in enumerate(days):
        path = folder / f"{day.isoformat()}.csv"
        entry = entries.get(day.isoformat())
        if not entry or not path.is_file() or path.stat().st_size != entry["bytes"]:
            rows = _write(path, ds.generate_day(index, scale, StringMode.ARROW, CHUNK_ROWS), ds.info.schema)
            entry = {"date": day.isoformat(), "rows": rows, "bytes": path.stat().st_size}
            entries[day.isoformat()] = entry
            _write_manifest(folder, {**wanted, "entries": sorted(entries.values(), key=lambda e: e["date"])})
        files.append(CsvFile(day, path, entry["rows"], entry["bytes"]))
    return files


def existing_csv_bytes(dataset: str, scale: Scale, root: Path | None = None) -> int | None:
    """Bytes of the dataset's CSV files when all of them were written already, else None
    (for compression ratios: nothing is written to find out)."""
    from workloads.datasets import get_dataset
    from workloads.paths import default_datasets_dir

    folder = csv_dir(root or default_datasets_dir(), dataset, scale)
    entries = {e["date"]: e for e in _read_manifest(folder).get("entries", [])}
    try:
        days = [d.isoformat() for d in get_dataset(dataset).trading_days(scale)]
    except ValueError:
        return None
    if not days or any(d not in entries or not (folder / f"{d}.csv").is_file() for d in days):
        return None
    return sum(entries[d]["bytes"] for d in days)


def _write(path: Path, chunks, schema) -> int:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        rows = write_csv(chunks, tmp, schema, style=STYLE)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return rows


def _read_manifest(folder: Path) -> dict:
    try:
        return json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}


def _write_manifest(folder: Path, manifest: dict) -> None:
    tmp = folder / f".{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, folder / MANIFEST)
