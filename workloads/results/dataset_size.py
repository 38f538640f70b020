"""The size of the data a run read, as laid out: days, rows and keys.

The runner records it with the run's layout (``layout["size"]``, from the ``Layout`` that
``prepare`` returned and the dataset's own keys), for imported and generated data alike; every
view (``tickbench show``, History, the report) reads it from there and never from the scenario's
scale, whose rows per day and symbols an import ignores. Runs stored before the size was recorded
fall back on the layout's own days and rows (keys then unknown), and only without a layout on
the scale asked for.
"""
from __future__ import annotations

import json
from typing import Any


def layout_size(days: int, rows: int, keys: int | None, keys_sampled: bool = False) -> dict[str, Any]:
    """The record the runner stores: ``{"days", "rows", "keys"}`` (keys None when the dataset has none),
    and ``keys_sampled`` when the keys are those a sample of the table held (a table where it lives:
    counting them all would read the whole table)."""
    size = {"days": int(days), "rows": int(rows), "keys": int(keys) if keys else None}
    return {**size, "keys_sampled": True} if keys_sampled and keys else size


def dataset_size(run: dict[str, Any]) -> dict[str, Any] | None:
    """The run's data as laid out (``{"days", "rows", "keys", "source"}``), source "layout" when
    recorded with the run, "scale" when only the scale asked for is known; None with neither."""
    layout = record_of(run.get("layout"))
    size = layout.get("size")
    if isinstance(size, dict) and size.get("rows") is not None:
        return {**size, "source": "layout"}
    if layout.get("rows") is not None and layout.get("days"):
        return {"days": len(layout["days"]), "rows": int(layout["rows"]), "keys": None, "source": "layout"}
    scale = record_of(run.get("scenario")).get("scale") or {}
    if scale.get("rows_per_day"):
        days = int(scale.get("days") or 1)
        return {"days": days, "rows": days * int(scale["rows_per_day"]), "keys": scale.get("symbols"),
                "source": "scale"}
    return None


def size_text(size: dict[str, Any] | None) -> str:
    """``50,019 rows over 1 day, 20 keys`` ("as asked" when only the scale is known); "" for None."""
    if not size:
        return ""
    days = int(size["days"])
    text = f"{int(size['rows']):,} rows over {days:,} day{'s' if days != 1 else ''}"
    if size.get("keys"):
        keys = int(size["keys"])
        text += (f", at least {keys:,} key{'s' if keys != 1 else ''} (in a sample of its last day)"
                 if size.get("keys_sampled") else f", {keys:,} key{'s' if keys != 1 else ''}")
    return text + (" (as asked; not recorded as laid out)" if size.get("source") == "scale" else "")


def run_size_text(run: dict[str, Any]) -> str:
    return size_text(dataset_size(run))


def record_of(value: Any) -> dict[str, Any]:
    """A run's stored record (its layout, its scenario) as a dict, whether kept as JSON text or not."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value else {}
        except json.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}
