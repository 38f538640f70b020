"""The report's environment record of a run: machine, OS, versions, target and the cache methods
applied (the stored environment of workloads.run.environment, flattened into rows)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from app.report.as_html import fmt_bytes, fmt_int
from workloads.operations import get_workload
from workloads.run.environment import busy_note
from workloads.run.processes import describe_conditions
from workloads.run.turns import turns_note


STRING_MODES = {"object": "Python objects (object)", "str": "Arrow-backed strings (str)",
                "category": "categories (category)"}


def _environment_rows(run: dict[str, Any], steps: pd.DataFrame) -> list[list[str]]:
    """Machine, OS, versions, target and cache facts; ``steps`` are the store's step figures."""
    env = run.get("environment") or {}
    layout = run.get("layout") or {}
    rows = [["Host", env.get("host", "")],
            ["CPU", f"{env.get('cpu', '')} ({env.get('cores_logical', '?')} logical / "
                    f"{env.get('cores_physical', '?')} physical cores)"],
            ["RAM", fmt_bytes(env.get("ram_bytes"))],
            ["OS", env.get("os", "")],
            ["Python", env.get("python", "")],
            ["Libraries", ", ".join(f"{k} {v}" for k, v in (env.get("libraries") or {}).items())]]
    if env.get("allocator"):          # what every worker did to malloc first (workloads.run.allocator)
        rows.append(["Allocator", env["allocator"]])
    # how the users were started and run; a run recorded before this says what it then was
    rows.append(["Process", describe_conditions(env.get("process"))])
    if turns_note(env):
        rows.append(["Operations", turns_note(env)])
    if env.get("load_average"):
        load = ", ".join(f"{v:.2f}" for v in env["load_average"])
        note = busy_note(env)
        rows.append(["Load average at the start (1, 5, 15 min)", load + (f". {note}" if note else "")])
    for disk in env.get("disks") or []:
        rows.append(["Disk", f"{disk.get('path')}: {disk.get('device') or 'device unknown'}, "
                             f"{fmt_bytes(disk.get('total_bytes'))} total, {fmt_bytes(disk.get('free_bytes'))} free"])
    if not _uses_target(run):
        rows.append(["Target", f"not used by the {run['workload']} workload"])
    else:
        if env.get("string_mode"):
            rows.append(["String columns", STRING_MODES.get(env["string_mode"], env["string_mode"])])
        rows.extend([key, value] for key, value in _flatten(env.get("target") or {}, "Target"))
    if layout:
        rows.append(["Data laid out", f"{fmt_int(layout.get('rows'))} rows, {fmt_bytes(layout.get('footprint_bytes'))} "
                                      f"on disk at {layout.get('location', '?')}"
                                      + (" (reused from an earlier run)" if layout.get("reused") else "")])
    rows.append(["Cache state", str(run.get("cache") or "")])
    applied = "; ".join(f"{r.label}: {_methods(r)}" for r in steps.itertuples())
    rows.append(["Cache methods applied", applied or "none"])
    return [[k, str(v)] for k, v in rows]


def _uses_target(run: dict[str, Any]) -> bool:
    try:
        return get_workload(str(run["workload"])).uses_target
    except ValueError:            # a workload this version no longer has: assume it did
        return True


def _bounded_by_operations(run: dict[str, Any]) -> bool:
    """False for workloads that end by their own plan (rows, files, a suite's queries)."""
    try:
        return get_workload(str(run["workload"])).bounded_by_operations
    except ValueError:
        return True


def _methods(row) -> str:
    text = getattr(row, "cache_methods", "")
    return text if isinstance(text, str) and text else "none (warm)"


def _flatten(data: Any, prefix: str, depth: int = 0) -> Iterable[tuple[str, str]]:
    """A nested description as (key path, text) rows: an inner dict of plain values in one row
    ("Target versions: numpy 2.4.6, pandas 3.1.1"), a list of dicts one row per item."""
    plain = isinstance(data, dict) and not any(isinstance(v, (dict, list)) for v in data.values())
    if depth and plain and data:
        yield prefix, ", ".join(f"{k} {v}" for k, v in data.items())
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from _flatten(value, f"{prefix} {key}", depth + 1)
    elif isinstance(data, list) and data and all(isinstance(v, dict) for v in data):
        for i, value in enumerate(data, start=1):
            yield f"{prefix} {i}", ", ".join(f"{k}={v}" for k, v in value.items())
    elif isinstance(data, list):
        yield prefix, ", ".join(str(v) for v in data)
    else:
        yield prefix, str(data)
