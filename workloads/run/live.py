"""A run's live view across processes: the process running it publishes its snapshot to the run's
folder a few times a second (``live.json``, replaced whole); any window reads it, so a window can
close, crash or open later and attach to a run in progress. A window asks the run to stop by
leaving a ``stop`` file in the folder, which the publisher turns into ``Runner.cancel()``."""
from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

from workloads.results.atomic_files import read_json, write_json
from workloads.results.run_files import LIVE_FILE
from workloads.run.snapshot import (LatencyPoint, LiveSnapshot, QueryPoint, ResourcePoint, SweepPoint,
                                ThroughputPoint)

STOP_FILE = "stop"
PUBLISH_S = 0.2
_POINTS = {"throughput": ThroughputPoint, "latency": LatencyPoint, "sweep": SweepPoint,
           "resources": ResourcePoint, "queries": QueryPoint}


def snapshot_to_dict(snapshot: LiveSnapshot) -> dict:
    return dataclasses.asdict(snapshot)


def snapshot_from_dict(data: dict) -> LiveSnapshot:
    fields = {f.name for f in dataclasses.fields(LiveSnapshot)}
    values = {k: v for k, v in data.items() if k in fields}
    for name, kind in _POINTS.items():
        known = {f.name for f in dataclasses.fields(kind)}
        values[name] = [kind(**{k: v for k, v in p.items() if k in known}) for p in values.get(name, [])]
    tail = values.get("throughput_tail")
    if isinstance(tail, dict):                                  # the second under way, when there is one
        known = {f.name for f in dataclasses.fields(ThroughputPoint)}
        values["throughput_tail"] = ThroughputPoint(**{k: v for k, v in tail.items() if k in known})
    for name in ("workers", "worker_errors"):                  # JSON keys are text; workers are numbers
        values[name] = {int(k): v for k, v in values.get(name, {}).items()}
    return LiveSnapshot(**values)


def read_live(folder: Path) -> LiveSnapshot | None:
    """The run's latest published snapshot, or None before the first."""
    data = read_json(Path(folder) / LIVE_FILE, None)
    return snapshot_from_dict(data) if data else None


def request_stop(folder: Path) -> None:
    (Path(folder) / STOP_FILE).touch()


class LivePublisher:
    """In the process running a run: publish ``snapshot()`` every ``PUBLISH_S`` and obey a stop
    request; ``close()`` publishes the last one."""

    def __init__(self, folder: Path, snapshot, cancel, interval_s: float = PUBLISH_S):
        self.folder, self._snapshot, self._cancel, self.interval_s = Path(folder), snapshot, cancel, interval_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="tickbench-live", daemon=True)

    def start(self) -> "LivePublisher":
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._done.wait(self.interval_s):
            self.publish()
            if (self.folder / STOP_FILE).exists():
                self._cancel()

    def publish(self) -> None:
        if self.folder.is_dir():              # the runner creates it with the run's record
            try:
                write_json(self.folder / LIVE_FILE, snapshot_to_dict(self._snapshot()))
            except OSError:                   # a full disk: the run's own end says so; the view waits
                pass

    def close(self) -> None:
        self._done.set()
        self._thread.join()
        self.publish()
