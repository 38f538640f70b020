"""What the practitioner benchmark last measured, kept with Tickbench so a run can say how its
target's path compares with that engine's fastest documented client path.

``benchmarks/bench_practitioner.py --save`` writes ``resources/practitioner/measured.json``: per
engine and operation both medians, the paired ratio (``workloads.practitioner.paired``) with the
interval 95 % of re-runs fall in (older records: the interval of that run's ratio), the path, and the command, date, machine and load that measured them (a later run of
some engines replaces only theirs). ``path_check(kind)`` turns one engine's entries into plain data for the run's
environment record (and so the report): the ratio and figures of each operation, and a plain
warning for any operation where Tickbench's path is not the fastest (ratio above ``FAIR_RATIO``).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workloads.paths import resources_dir

FAIR_RATIO = 1.10       # the goal: Tickbench within 10 % of the practitioner's path


def measured_path() -> Path:
    return resources_dir() / "practitioner" / "measured.json"


def save(record: dict[str, Any], path: Path | None = None) -> Path:
    path = path or measured_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def load(path: Path | None = None) -> dict[str, Any]:
    try:
        return json.loads((path or measured_path()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def path_check(kind: str, record: dict[str, Any] | None = None) -> dict[str, str]:
    """One engine's comparison with its fastest documented path as flat, readable entries (one per
    operation, then who measured them), or {} when never measured."""
    record = load() if record is None else record
    entries = (record.get("engines") or {}).get(kind) or {}
    out: dict[str, str] = {}
    sources: list[str] = []
    for op, entry in sorted(entries.items()):
        ratio = float(entry["ratio"])
        verdict = ("within 10 % of it or faster" if ratio <= FAIR_RATIO else "NOT the fastest documented path")
        of = "a re-run 95 %" if entry.get("interval_of") else "95 %"
        interval = (f" ({of} {entry['interval'][0]:.2f}-{entry['interval'][1]:.2f}, paired)"
                    if entry.get("interval") else "")
        out[f"vs fastest path, {op.replace('_', ' ')}"] = (
            f"{ratio:.2f}x{interval}, {verdict}: Tickbench {entry['tickbench_ms']:.2f} ms, by hand {entry['path_ms']:.2f} ms "
            f"with {entry['path']}")
        source = f"{entry.get('command', '?')} ({entry.get('date', '?')}, load {entry.get('load', '?')})"
        if source not in sources:
            sources.append(source)
    if out:
        out["vs fastest path, measured by"] = "; ".join(sources)
    return out
