"""Client resource sampling (CPU, memory, disk I/O) of the parent and its worker processes.

Memory is the processes' PSS where the OS gives it (Linux): each page counted once, split among the
processes sharing it. Users forked from the preloaded server share most of their pages with it and
with each other: the sum of their RSS counted those pages once per user (128 users: ~13 GB where
~2 GB was held). Reading a process's PSS costs the kernel a walk of its pages, so each sample reads
every process it has not seen yet and at most ``PSS_READS`` of the others, the longest unread
first; the figure sums each process's latest reading. Elsewhere it is the RSS, as before.
"""
from __future__ import annotations

import time

import psutil

from workloads.run.snapshot import ResourcePoint

PSS_READS = 16         # per sample, of the processes already seen (each is read again within n/16 samples)


class ResourceSampler:
    def __init__(self) -> None:
        self._me = psutil.Process()
        self._me.cpu_percent(None)
        self._children: dict[int, psutil.Process] = {}
        self._memory: dict[int, int] = {}            # pid -> its latest PSS (or RSS)
        self._read_at: dict[int, float] = {}         # pid -> when it was read
        self._has_pss = _pss_of(self._me) is not None
        self._last_io = self._disk_io()
        self._last_time = time.monotonic()

    @property
    def memory_kind(self) -> str:
        return "PSS" if self._has_pss else "RSS"

    @staticmethod
    def _disk_io() -> tuple[int, int]:
        counters = psutil.disk_io_counters()
        return (counters.read_bytes, counters.write_bytes) if counters else (0, 0)

    def sample(self, t: float) -> ResourcePoint:
        cpu = self._me.cpu_percent(None)
        alive = {self._me.pid: self._me}
        for child in self._me.children(recursive=True):
            proc = self._children.get(child.pid)
            try:
                if proc is None:  # first sight: prime its CPU counter; a reading needs an interval
                    self._children[child.pid] = child
                    child.cpu_percent(None)
                    alive[child.pid] = child
                    continue
                cpu += proc.cpu_percent(None)
                alive[child.pid] = proc
            except psutil.Error:
                self._children.pop(child.pid, None)
        for pid in set(self._memory) - set(alive):
            self._memory.pop(pid, None)
            self._read_at.pop(pid, None)
        for pid in [*(p for p in alive if p not in self._memory), *self._due(alive)]:
            self._read_memory(alive[pid])
        now = time.monotonic()
        io = self._disk_io()
        span = max(now - self._last_time, 1e-6)
        point = ResourcePoint(t=t, cpu_percent=cpu, rss_bytes=sum(self._memory.values()),
                              read_bytes_per_s=(io[0] - self._last_io[0]) / span,
                              write_bytes_per_s=(io[1] - self._last_io[1]) / span)
        self._last_io, self._last_time = io, now
        return point

    def _due(self, alive: dict[int, psutil.Process]) -> list[int]:
        seen = [pid for pid in alive if pid in self._memory]
        return sorted(seen, key=lambda pid: self._read_at.get(pid, 0.0))[:PSS_READS]

    def _read_memory(self, proc: psutil.Process) -> None:
        try:
            value = _pss_of(proc) if self._has_pss else None
            self._memory[proc.pid] = value if value is not None else proc.memory_info().rss
            self._read_at[proc.pid] = time.monotonic()
        except psutil.Error:
            self._memory.pop(proc.pid, None)


def _pss_of(proc: psutil.Process) -> int | None:
    try:
        return int(getattr(proc.memory_full_info(), "pss"))
    except (AttributeError, psutil.AccessDenied, NotImplementedError):
        return None
