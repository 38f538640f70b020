"""Loading a dataset's days into a server engine: what the PostgreSQL, QuestDB, ClickHouse and
Druid layouts share.

Each keeps a manifest (one row per table: layout format, scale with the dataset's content id,
days with their row counts, a keys sample, schema, library versions, complete or not). A prepare
reads it; a table of another format or scale is started over; a day already loaded with the rows
expected is kept; any other day is loaded again (an interrupted load leaves a short day), the
manifest written after each day so a second prepare resumes where the first stopped. Days are
loaded in time order, checked: each engine's arrival ordinal (``_seq``) must follow time order.
How a day goes in (COPY, ILP, Arrow insert, an ingestion task) stays with each engine.
"""
from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict
from typing import Any

import pandas as pd

from workloads.datasets.schema import DatasetInfo, Scale
from workloads.targets.base import ProgressCallback, TargetError
from workloads.targets.common.arrow_frames import library_versions

KEYS_SAMPLE = 100


def scale_json(ds, scale: Scale) -> str:
    """The scale and the dataset's content id as the manifest stores them (a change reloads)."""
    return json.dumps({**asdict(scale), "content": ds.content_id}, sort_keys=True)


def manifest_fields(dataset: str, scale_text: str, keys: Iterable[str], info: DatasetInfo) -> dict[str, str]:
    """The manifest's fields that do not change from day to day (texts, JSON where structured)."""
    return {"dataset": dataset, "scale": scale_text, "keys_sample": json.dumps(list(keys)),
            "schema": json.dumps([[c.name, c.ddb_type] for c in info.schema.columns]),
            "versions": json.dumps(library_versions())}


def keys_sample(ds, scale: Scale) -> list[str]:
    return [str(k) for k in ds.keys(scale)[:KEYS_SAMPLE]]


def manifest_entries(row: dict[str, Any] | None, layout_format: int, scale_text: str) -> tuple[bool, dict[str, dict]]:
    """(compatible, the days it records by ISO date) from a manifest row: not compatible (and no
    days) when there is none or it is of another layout format or scale."""
    compatible = row is not None and int(row["format"]) == layout_format and row["scale"] == scale_text
    return compatible, ({e["date"]: e for e in json.loads(row["days"])} if compatible else {})


def time_ordered(chunks: Iterable[pd.DataFrame], info: DatasetInfo, index: int, seq: str) -> Iterator[pd.DataFrame]:
    """``chunks`` of day ``index`` passed through, a TargetError at the first out of time order."""
    last = None
    for chunk in chunks:
        if len(chunk):
            times = chunk[info.time_column]
            if not times.is_monotonic_increasing or (last is not None and times.iloc[0] < last):
                raise TargetError(f"{info.name}: day {index + 1} is not in time order; the arrival ordinal "
                                  f"({seq}) must follow time order")
            last = times.iloc[-1]
        yield chunk


def load_days(days: list[dt.date], expected: dict[dt.date, int], entries: dict[str, dict],
              rows_of: Callable[[dt.date], int | None], load: Callable[[int, dt.date, int, int], int],
              save: Callable[[dict[str, dict], bool], None], table: str,
              progress: ProgressCallback | None = None) -> dict[str, dict]:
    """Every day of ``days`` whose stored rows (``rows_of``) are not those the manifest
    (``entries``) and the dataset (``expected``) say, loaded by ``load(index, day, rows_done,
    total) -> rows`` (which drops what an interrupted load left); ``save(entries, complete)``
    after each day and once complete. The entries of ``days`` only, returned."""
    total, done = sum(expected.values()), 0
    for index, day in enumerate(days):
        key = day.isoformat()
        entry = entries.get(key)
        if entry and rows_of(day) == entry["rows"] == expected[day]:
            done += entry["rows"]
            continue
        rows = load(index, day, done, total)
        entries[key] = {"date": key, "rows": rows}
        save(entries, False)
        done += rows
        if progress is not None:
            progress(min(done, total), total, f"{key} loaded into {table}")
    wanted = {d.isoformat() for d in days}
    entries = {k: v for k, v in entries.items() if k in wanted}
    save(entries, True)
    return entries


def complete_days(entries: dict[str, dict], days: list[dt.date]) -> bool:
    return sorted(entries) == [d.isoformat() for d in days]


def ordered_days(entries: dict[str, dict]) -> tuple[tuple[dt.date, ...], int]:
    """The manifest's days in date order and their rows in all."""
    ordered = sorted(entries.values(), key=lambda e: e["date"])
    return tuple(dt.date.fromisoformat(e["date"]) for e in ordered), sum(e["rows"] for e in ordered)


def days_json(entries: dict[str, dict]) -> str:
    return json.dumps(sorted(entries.values(), key=lambda e: e["date"]))
