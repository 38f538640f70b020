"""Turns between Tickbench processes on one store: a kernel lock (``flock``) on a file beside it.

Engines that allow one writing process (DuckDB's file, chDB's folder, an ArcticDB library whose
concurrent writers lose rows) make several workers take turns. A refused open of the engine itself
is an error, not a queue, so Tickbench queues on the kernel instead: a non-blocking ``flock`` polled
every <= 2 ms (cheap syscalls, and the timeout is kept). Closing the descriptor ends the turn.
A holder that keeps an idle turn learns that somebody waits from a ``Doorbell`` the waiter rings.
POSIX only: without ``fcntl`` (Windows) there is no queue and the engine's own refusal remains.
"""
from __future__ import annotations

import os
import select
import stat
import time
from contextlib import suppress
from pathlib import Path

from workloads.targets.base import TargetError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

FIRST_POLL_S = 0.0002
LONGEST_POLL_S = 0.002


def can_queue() -> bool:
    return fcntl is not None


def take_turn(lock_path: Path, timeout_s: float, refusal: str, waiters_path: Path | None = None,
              doorbell_path: Path | None = None) -> tuple[int | None, int]:
    """Wait for the turn on ``lock_path``: (descriptor to close when done, failed polls).

    The wait itself is the caller's to time, from asking to holding on ``time.monotonic``, the
    clock its turns are compared on: a process preempted on the way in still waited.

    ``refusal`` is the TargetError's text when no turn came within ``timeout_s``. While waiting,
    a process holds a shared lock on ``waiters_path`` when given, so a holder can tell that
    somebody waits (``others_waiting``) and hand an idle turn over, and rings ``doorbell_path``
    when given each time it looks (a ring the holder could not act on, mid-operation, comes again).
    """
    if fcntl is None:
        return None, 0
    fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd, 0
    except BlockingIOError:
        pass
    waiting = None
    if waiters_path is not None:
        waiting = os.open(waiters_path, os.O_CREAT | os.O_RDWR, 0o644)
        fcntl.flock(waiting, fcntl.LOCK_SH)
    start, polls, delay = time.perf_counter(), 0, FIRST_POLL_S
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd, polls
            except BlockingIOError:
                if doorbell_path is not None:
                    ring(doorbell_path)
                if time.perf_counter() - start > timeout_s:
                    os.close(fd)
                    raise TargetError(refusal) from None
                polls += 1
                time.sleep(delay)
                delay = min(delay * 2, LONGEST_POLL_S)
    finally:
        if waiting is not None:
            os.close(waiting)


def others_waiting(waiters_fd: int) -> bool:
    """Whether another process waits for the turn (holds the waiters file shared)."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(waiters_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(waiters_fd, fcntl.LOCK_UN)
    return False


class Doorbell:
    """How a process waiting for a turn wakes the holder's watcher: a FIFO beside the store.

    The holder's watcher thread blocks reading it, so while nobody waits it never wakes (polling
    for waiters every 2 ms beside a single user's operations cost a 5 ms chDB slice ~1 %). Opened
    for reading and writing, the FIFO always has a writer and never reads as ended between rings.
    """

    def __init__(self, path: Path):
        with suppress(FileExistsError):
            os.mkfifo(path, 0o644)
        self._fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        if not stat.S_ISFIFO(os.fstat(self._fd).st_mode):
            os.close(self._fd)
            raise TargetError(f"{path} is not a FIFO: remove it (Tickbench makes it again)")
        self._stop_read, self._stop_write = os.pipe()

    def wait(self) -> bool:
        """Sleep until a ring (True, the rings so far taken) or ``stop`` (False)."""
        ready, _, _ = select.select([self._fd, self._stop_read], [], [])
        if self._stop_read in ready:
            return False
        try:
            while os.read(self._fd, 4096):
                pass
        except BlockingIOError:
            pass
        return True

    def stop(self) -> None:
        """Ends ``wait`` (from any thread); the waiting thread then calls ``close``."""
        os.write(self._stop_write, b"x")

    def close(self) -> None:
        for fd in (self._fd, self._stop_read, self._stop_write):
            os.close(fd)


def ring(path: Path) -> None:
    """Wake the holder's watcher, if one listens (nobody has the FIFO open: nothing to wake)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:          # ENXIO: no reader; ENOENT: no holder ever listened
        return
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.write(fd, b"\0")
    except OSError:          # EAGAIN: rung often enough already
        pass
    finally:
        os.close(fd)

