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


def layout_size(days: int, rows: int, keys: int | None) -> dict[str, Any]:
    """The record the runner stores: ``{"days", "rows", "keys"}`` (keys None when the dataset has none)."""
    return {"days": int(days), "rows": int(rows), "keys": int(keys) if keys else None}


def dataset_size(run: dict[str, Any]) -> dict[str, Any] | None:
    """The run's data as laid out (``{"days", "rows", "keys", "source"}``), source "layout" when
    recorded with the run, "scale" when only the scale asked for is known; None with neither."""
    layout = _parsed(run.get("layout"))
    size = layout.get("size")
    if isinstance(size, dict) and size.get("rows") is not None:
        return {**size, "source": "layout"}
    if layout.get("rows") is not None and layout.get("days"):
        return {"days": len(layout["days"]), "rows": int(layout["rows"]), "keys": None, "source": "layout"}
    scale = _parsed(run.get("scenario")).get("scale") or {}
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
        text += f", {int(size['keys']):,} key{'s' if int(size['keys']) != 1 else ''}"
    return text + (" (as asked; not recorded as laid out)" if size.get("source") == "scale" else "")


def run_size_text(run: dict[str, Any]) -> str:
    return size_text(dataset_size(run))


def _parsed(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value) if value else {}
        except json.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}
