"""Each host's environment (CPU, RAM, OS, library versions) and the versions that differ between
hosts, flagged before a run starts: a host with another pandas or client library measures
something else."""
from __future__ import annotations

from typing import Any

COMPARED = ("python",)          # besides every library in the environment's "libraries"


def version_differences(environments: dict[str, dict[str, Any]]) -> list[str]:
    """One line per library (or Python) whose version is not the same on every host."""
    if len(environments) < 2:
        return []
    names = sorted({lib for env in environments.values() for lib in (env.get("libraries") or {})})
    lines = []
    for what in (*COMPARED, *names):
        seen: dict[str, list[str]] = {}
        for host, env in sorted(environments.items()):
            version = env.get(what) if what in COMPARED else (env.get("libraries") or {}).get(what, "not installed")
            seen.setdefault(str(version), []).append(host)
        if len(seen) > 1:
            lines.append(f"{what}: " + "; ".join(f"{v} on {', '.join(h)}" for v, h in sorted(seen.items())))
    return lines
