"""What a worker process tells the run's collector, one small dataclass per message.

Each worker has a pipe of its own; a worker killed mid-message corrupts only its channel.
Order on one pipe: ``Ready`` (or ``Failed``), then after the release ``Records`` batches,
``MeasuredDone`` when its measured operations are over, more ``Records`` (probes), and ``Done``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from workloads.run.records import Columns


@dataclass(frozen=True)
class Ready:
    """Set up (imports, connection, data, warm-up) and waiting at the barrier."""
    worker: int
    pid: int
    node: str = ""
    conditions: dict = field(default_factory=dict)   # how it was started and run (workloads.run.processes)


@dataclass(frozen=True)
class Records:
    worker: int
    batch: Columns


@dataclass(frozen=True)
class MeasuredDone:
    """The worker's measured operations are over (its probes, if any, wait for the step's)."""
    worker: int
    ops: int
    cache_methods: tuple[str, ...] = ()


@dataclass(frozen=True)
class Done:
    worker: int
    cache_methods: tuple[str, ...] = ()


@dataclass(frozen=True)
class Failed:
    worker: int
    error: str                       # one readable line
    traceback: str = field(default="", repr=False)


Message = Ready | Records | MeasuredDone | Done | Failed
