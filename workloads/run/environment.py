"""The environment record saved with every run: machine, OS, Python and library versions."""
from __future__ import annotations

import functools
import importlib.metadata
import os
import platform
import socket
from pathlib import Path
from typing import Any

import psutil

from workloads.run.allocator import describe_allocator

LIBRARIES = ("numpy", "pandas", "pyarrow", "duckdb", "dolphindb", "psutil")


@functools.lru_cache(maxsize=None)      # read once a process: each read parses the package's metadata
def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        module = __import__(name)
        return getattr(module, "__version__", "unknown")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _disk(path: str) -> dict[str, Any]:
    usage = psutil.disk_usage(path)
    device = ""
    best = ""
    for part in psutil.disk_partitions(all=False):
        if path.startswith(part.mountpoint) and len(part.mountpoint) > len(best):
            best, device = part.mountpoint, f"{part.device} ({part.fstype})"
    return {"path": path, "device": device, "total_bytes": usage.total, "free_bytes": usage.free}


def version_of(name: str) -> str:
    """A library's installed version, or "not installed"."""
    try:
        return _version(name)
    except ImportError:
        return "not installed"


def capture_environment(data_paths: list[str] | None = None) -> dict[str, Any]:
    memory = psutil.virtual_memory()
    versions = {lib: version_of(lib) for lib in LIBRARIES}
    return {
        "host": socket.gethostname(),
        "cpu": _cpu_model(),
        "cores_logical": psutil.cpu_count(logical=True),
        "cores_physical": psutil.cpu_count(logical=False),
        "ram_bytes": memory.total,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "libraries": versions,
        "disks": [_disk(p) for p in (data_paths or []) if os.path.exists(p)],
        # the run's processes' scheduling priority: a run the window starts yields the CPU to it
        "nice": os.nice(0) if hasattr(os, "nice") else 0,
        "autogroup_nice": autogroup_nice(),
        "allocator": describe_allocator(),      # what every worker does to malloc first (workloads.run.allocator)
        # how busy the machine was as the run began (other processes compete with its users)
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


BUSY_OPENING = "The machine was busy when this run began"


def busy_note(environment: dict[str, Any]) -> str:
    """A sentence when the machine was busy as the run began (1-minute load average at least
    half its logical cores), else ""."""
    load, cores = environment.get("load_average"), environment.get("cores_logical") or 0
    if not load or not cores or load[0] < cores / 2:
        return ""
    return (f"{BUSY_OPENING}: load average {load[0]:.1f} on {cores} logical "
            "cores. Other processes competed with its users, so its times may be longer than on a quiet "
            "machine.")


def autogroup_nice() -> int | None:
    """The nice of this process's scheduling group (Linux autogroups), None where there is none.

    The file is empty for a process in the root group (a session the kernel gave no group of its
    own, as in many containers), and absent on kernels without autogroups."""
    try:
        return int(Path("/proc/self/autogroup").read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return None
