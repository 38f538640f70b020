"""Client resource sampling (CPU, memory, disk I/O) of the parent and its worker processes."""
from __future__ import annotations

import time

import psutil

from workloads.run.snapshot import ResourcePoint


class ResourceSampler:
    def __init__(self) -> None:
        self._me = psutil.Process()
        self._me.cpu_percent(None)
        self._children: dict[int, psutil.Process] = {}
        self._last_io = self._disk_io()
        self._last_time = time.monotonic()

    @staticmethod
    def _disk_io() -> tuple[int, int]:
        counters = psutil.disk_io_counters()
        return (counters.read_bytes, counters.write_bytes) if counters else (0, 0)

    def sample(self, t: float) -> ResourcePoint:
        cpu = self._me.cpu_percent(None)
        rss = self._me.memory_info().rss
        for child in self._me.children(recursive=True):
            proc = self._children.get(child.pid)
            try:
                if proc is None:  # first sight: prime its CPU counter; a reading needs an interval
                    self._children[child.pid] = child
                    child.cpu_percent(None)
                    rss += child.memory_info().rss
                    continue
                cpu += proc.cpu_percent(None)
                rss += proc.memory_info().rss
            except psutil.Error:
                self._children.pop(child.pid, None)
        now = time.monotonic()
        io = self._disk_io()
        span = max(now - self._last_time, 1e-6)
        point = ResourcePoint(t=t, cpu_percent=cpu, rss_bytes=rss,
                              read_bytes_per_s=(io[0] - self._last_io[0]) / span,
                              write_bytes_per_s=(io[1] - self._last_io[1]) / span)
        self._last_io, self._last_time = io, now
        return point
