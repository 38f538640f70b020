"""Laying a dataset out as one file per trading day, resumable, shared by the file targets
(pickle, Parquet, Feather) and HDF5.

A folder holds the day files and ``manifest.json`` (what was asked for, each written day's rows and
bytes, the keys sample, schema and library versions). Each day file is written atomically by its
target; the manifest is rewritten after every day, so an interrupted prepare resumes at the first
day that is missing or whose file does not match its entry. A manifest asking for something else
(another scale, format or dataset content) starts the folder over.
"""
from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workloads.datasets.schema import Scale, StringMode
from workloads.targets.base import Layout, ProgressCallback
from workloads.targets.common.storage import remove_stale_temp_files, write_bytes_atomic

MANIFEST = "manifest.json"
KEYS_SAMPLE = 100          # most active keys offered to slice workloads


def root_folder(config: dict[str, Any]) -> Path:
    """Where a day-file target lays its folders out: ``config["root"]``, else the datasets folder."""
    root = config.get("root")
    if not root:
        from workloads.paths import default_datasets_dir
        return default_datasets_dir()
    return Path(root)


def read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        return json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None  # missing or damaged: rebuild what is not verifiably there


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    write_bytes_atomic(folder / MANIFEST, json.dumps(manifest, indent=1).encode())


def entry_ok(folder: Path, entry: dict[str, Any] | None) -> bool:
    """Whether a manifest entry's file is there with the size it was written with."""
    if not entry:
        return False
    path = folder / entry["file"]
    return path.is_file() and path.stat().st_size == entry["bytes"]


def layout_of(manifest: dict[str, Any], folder: Path, strings: StringMode, reused: bool) -> Layout:
    entries = manifest["entries"]
    return Layout(
        dataset=manifest["dataset"], scale=Scale(**manifest["scale"]), strings=strings,
        days=tuple(dt.date.fromisoformat(e["date"]) for e in entries),
        keys_sample=tuple(manifest["keys_sample"]), rows=sum(e["rows"] for e in entries),
        footprint_bytes=sum(e["bytes"] for e in entries), reused=reused, location=str(folder))


def lay_out_days(folder: Path, wanted: dict[str, Any], ds, scale: Scale, strings: StringMode, ext: str,
                 write_day: Callable[[int, Path, Callable[[int], None]], int],
                 write_side_tables: Callable[[Path], None], versions: dict[str, str],
                 progress: ProgressCallback | None = None) -> Layout:
    """The days of ``ds`` at ``scale`` in ``folder`` as ``<YYYY-MM-DD>.<ext>``, reusing what a
    manifest equal to ``wanted`` (its "days" included) says is there.

    ``write_day(index, path, on_chunk)`` writes one day and returns its rows (``on_chunk(rows)``
    reports progress within the day); ``write_side_tables(folder)`` writes the dataset's side
    tables if missing.
    """
    days = [dt.date.fromisoformat(d) for d in wanted["days"]]
    if folder.is_dir():
        remove_stale_temp_files(folder)
    manifest = read_manifest(folder)
    same = manifest is not None and all(manifest.get(k) == v for k, v in wanted.items() if k != "days")
    done = {e["date"]: e for e in manifest["entries"]} if same else {}
    if same and manifest.get("complete") and manifest["days"] == wanted["days"] \
            and all(entry_ok(folder, done.get(d)) for d in wanted["days"]):
        write_side_tables(folder)
        return layout_of(manifest, folder, strings, reused=True)

    folder.mkdir(parents=True, exist_ok=True)
    keys = [str(k) for k in ds.keys(scale)[:KEYS_SAMPLE]]
    manifest = {**wanted, "complete": False, "entries": [], "keys_sample": keys,
                "schema": [[c.name, c.ddb_type] for c in ds.info.schema.columns],
                "versions": versions, "created": dt.datetime.now().isoformat()}
    total = sum(ds.day_rows(scale))          # an import's real rows, not the scale's
    rows_done = 0
    for index, day in enumerate(days):
        path = folder / f"{day.isoformat()}.{ext}"
        entry = done.get(day.isoformat())
        if not entry_ok(folder, entry):
            def on_chunk(rows: int, base=rows_done, name=path.name) -> None:
                if progress is not None:
                    progress(min(base + rows, total), total, f"writing {name}")
            rows = write_day(index, path, on_chunk)
            entry = {"date": day.isoformat(), "file": path.name, "rows": rows, "bytes": path.stat().st_size}
        manifest["entries"].append(entry)
        rows_done += entry["rows"]
        write_manifest(folder, manifest)
        if progress is not None:
            progress(min(rows_done, total), total, f"{day.isoformat()} done")
    write_side_tables(folder)
    manifest["complete"] = True
    write_manifest(folder, manifest)
    return layout_of(manifest, folder, strings, reused=False)
