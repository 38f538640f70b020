"""What the machine can hold: a scenario's users and data checked before anything starts.

``Scenario`` itself refuses what is never meaningful (a duration that is not finite, negative
counts); ``machine_problems`` says, with the estimate, what this machine could not hold: more
users than its memory can give a worker process each, more data than its disk or memory can take.
The command line refuses those unless ``--force``; the window's runs go through the same command.
Qt-free, no I/O beyond asking the OS for free memory and disk.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from workloads.datasets import DATASETS, IMPORT_PREFIX, get_dataset
from workloads.run.processes import available_start
from workloads.scenario import Scenario, has_own_size
from workloads.text import plural

# What a user process holds of its own (USS) before its data, by how it starts (workloads.run.processes),
# as benchmarks/bench_users.py measured it (2026-11-28, a no-op step of 8-128 users): spawned, 59.8 MiB
# (it imports pandas, pyarrow and the client itself); forked from the preloaded server, 9.0-9.1 MiB (the
# rest it shares with the server, whose 43-51 MiB are held once). Each with a margin.
WORKER_BYTES = {"spawn": 64 * 2**20, "forkserver": 16 * 2**20}
SERVER_BYTES = 64 * 2**20       # the forkserver itself, once
DISK_FACTOR = 3                 # the target's files, the generated CSV cache and headroom, per logical byte
MEMORY_FACTOR = 4               # a day generated in memory: numpy, pandas and Arrow copies
MAX_REMOTE_USERS = 4096         # users spread over Dask hosts: this machine only collects their records


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} PB"


class TooBig(ValueError):
    """A scenario beyond what this machine can hold; ``--force`` goes past it."""


def available_memory() -> int:
    try:
        import psutil
        return int(psutil.virtual_memory().available)
    except Exception:  # no psutil or no /proc: assume the pages the OS reports
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def free_disk(path: Path) -> int:
    path = Path(path)
    while not path.exists() and path != path.parent:
        path = path.parent
    return shutil.disk_usage(path).free


def machine_problems(scenario: Scenario, data_root: Path | None = None,
                     memory: int | None = None, disk: int | None = None) -> list[str]:
    """What this machine could not hold, one sentence each with the estimate (empty: it fits)."""
    problems: list[str] = []
    memory = available_memory() if memory is None else memory
    users = max(scenario.users)
    if scenario.scheduler:
        if users > MAX_REMOTE_USERS:
            problems.append(f"users: {users:,} is more than the {MAX_REMOTE_USERS:,} this machine can "
                            "collect records from")
    else:
        start = available_start(scenario.start)
        each = WORKER_BYTES[start]
        once = SERVER_BYTES if start == "forkserver" else 0
        fits = max(1, (memory - once) // each)
        if users > fits:
            how = "forked from a preloaded server" if start == "forkserver" else "spawned"
            problems.append(f"users: {users:,} worker processes {how} need about "
                            f"{human_bytes(users * each + once)} of memory ({human_bytes(each)} each); "
                            f"{human_bytes(memory)} is free, enough for {fits:,}")
    schema = DATASETS[scenario.dataset].info.schema if scenario.dataset in DATASETS else None
    if schema is None:                # an imported CSV: its size is the file's, already on disk
        return problems
    scale = scenario.scale
    day_bytes = scale.rows_per_day * schema.row_bytes()
    if day_bytes * MEMORY_FACTOR > memory:
        problems.append(f"rows per day: {scale.rows_per_day:,} rows of {scenario.dataset} make a day of about "
                        f"{human_bytes(day_bytes * MEMORY_FACTOR)} in memory; {human_bytes(memory)} is free")
    if not scenario.target_config.get("host"):      # a server's disk is its own
        total = scale.days * day_bytes * DISK_FACTOR
        root = data_root or scenario.target_config.get("root") or scenario.target_config.get("path")
        if root:
            free = free_disk(Path(root)) if disk is None else disk
            if total > free:
                problems.append(f"days x rows per day: {scale.days:,} x {scale.rows_per_day:,} rows of "
                                f"{scenario.dataset} need about {human_bytes(total)} of disk at {root}; "
                                f"{human_bytes(free)} is free")
    return problems


def check_machine(scenario: Scenario, force: bool = False, data_root: Path | None = None) -> None:
    """Raise ``TooBig`` (one line, the estimates in it) unless the scenario fits or ``force``."""
    problems = [] if force else machine_problems(scenario, data_root)
    if problems:
        raise TooBig("; ".join(problems) + " (give --force to run it anyway)")


# --- what the scenario form shows ------------------------------------------------------------------
IN_MEMORY_FACTOR = 1.6   # a DataFrame with decoded strings is larger than its stored rows
WARN_FRACTION = 0.8


def form_estimate(scenario: Scenario, data_dir: Path) -> tuple[str, bool]:
    """What the scenario form shows: the data's size on disk and at peak in RAM (each user holds a
    day, one more lays it out) against what is free, and whether it is too much."""
    dataset = get_dataset(scenario.dataset)
    if has_own_size(scenario.dataset) and not scenario.dataset.startswith(IMPORT_PREFIX):
        return "A table is read where it lives: nothing is laid out, its size is what each run finds.", False
    row_bytes = dataset.info.schema.row_bytes()
    imported = scenario.dataset.startswith(IMPORT_PREFIX)     # an import knows its real rows per day
    rows = dataset.day_rows(scenario.scale) if imported else [scenario.scale.rows_per_day] * scenario.scale.days
    on_disk = sum(rows) * row_bytes
    per_day_ram = max(rows) * row_bytes * IN_MEMORY_FACTOR
    in_ram = per_day_ram * (max(scenario.users) + 1)   # each reader holds a day; +1 to lay it out
    free_ram, free_space = available_memory(), free_disk(data_dir)
    problems = []
    if on_disk > WARN_FRACTION * free_space:
        problems.append(f"needs ~{human_bytes(on_disk)} of disk, {human_bytes(free_space)} free")
    if in_ram > WARN_FRACTION * free_ram:
        problems.append(f"needs ~{human_bytes(in_ram)} of RAM at {plural(max(scenario.users), 'user')}, "
                        f"{human_bytes(free_ram)} free")
    shape = f"{plural(len(rows), 'imported day')}, {plural(sum(rows), 'row')}" if imported else \
        f"{plural(scenario.scale.days, 'day')} × {plural(scenario.scale.rows_per_day, 'row')}"
    text = (f"Data ~{human_bytes(on_disk)} on disk ({shape}); "
            f"~{human_bytes(in_ram)} RAM at peak. Free: {human_bytes(free_ram)} RAM, "
            f"{human_bytes(free_space)} disk.")
    if problems:
        text = "⚠ Too large for this machine: " + "; ".join(problems) + ". " + text
    return text, bool(problems)
