"""Cold cache, one meaning for every target: each measured operation (and each probe) of a cold
step starts with nothing of its data cached.

A cold step runs in rounds. Before each round user 0 empties every cache that could hold the
layout's data (``Target.drop_cache``: each file's pages, the engine's own caches, a server's on
every node), while no operation runs; then every user still going makes one operation, all
released together. The workloads plan a cold step so the users of a round read different days
(``workloads.operations``). An operation held cold when the clear applied at least one method and no
other operation of its round read any of its days, and, where the layout's data lives in files on
this machine (``Target.data_files``), when none of their pages was left in the OS cache after the
clear (asked of the kernel with ``mincore``). Its record says so (``extra``: ``cold``, ``cleared``,
``cached_after_clear`` in bytes where it was asked, ``not_cold`` with the reason), and ``tickbench
show`` counts them per step.

The clears sit between operations, never inside one, and a cold step's window counts only the time
during which at least one of its measured operations ran (``workloads.results.figures``), so an eviction's
time is in no figure.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from workloads.targets.common.cleared import cleared_text, kinds_of, merged

HELD, IDLE, SHARED, NOT_CLEARED = 1, 0, 2, 3       # what user 0 decides for each user of a round


class RoundsBroken(RuntimeError):
    """Another user of the step stopped (it failed, died, or the run was cancelled)."""


def reading(days: Sequence, operation):
    """Mark which days ``operation`` reads, so a cold round can tell whether it shares them."""
    operation.reads = tuple(days)
    return operation


Clear = Callable[[], tuple[list[str], "int | None"]]   # -> (methods applied, bytes of the data files still cached)


@dataclass(frozen=True)
class RoundStart:
    go: bool              # False: every user is done; the step's operations of this kind are over
    cold: bool            # this user's operation starts with its data evicted and unshared
    cleared: str          # the methods the clear applied, or why it applied none
    why_not: str = ""     # when not cold: why, in words
    left_bytes: int | None = None   # bytes of the layout's files still in the OS cache after the clear
    kinds: str = ""       # what the clears emptied (``workloads.targets.common.cleared``): engine caches, host page cache

    def facts(self) -> dict:
        """What an operation's record says of its cache (its ``extra``)."""
        facts = {"cold": self.cold, "cleared": self.cleared, "cleared_kinds": self.kinds}
        if self.left_bytes is not None:
            facts["cached_after_clear"] = self.left_bytes
        if not self.cold:
            facts["not_cold"] = self.why_not
        return facts


def verdict_of(methods: list[str], left_bytes: int | None) -> str:
    """Why a clear left the data cached, or "" when it held."""
    if not kinds_of(methods):
        notes = "; ".join(methods)
        return "nothing could be cleared (the target has no cache it can drop)" + (f": {notes}" if notes else "")
    if left_bytes:
        return f"{left_bytes:,} bytes of the layout's files were still in the OS cache after the clear"
    return ""


CLEARED_BYTES = 1023                # what a round keeps of its clear's text (shared memory, one NUL)


class ColdRounds:
    """The rounds of one cold step: made by the launcher with the step's users and the layout's
    day count, inherited by every worker process.

    User 0 coordinates: every other user posts ``arrived`` once it has said what its next operation
    reads, and waits on its own ``go``; user 0 waits for them all, clears, decides, and posts each
    ``go``. Only semaphores and shared memory: unlike a multiprocessing Barrier or Condition, no
    lock is held across processes, so a user killed at any moment leaves the others a state they
    can leave (``abort``, or this process's parent gone)."""

    WAIT_SLICE_S = 0.5       # how often a waiting user looks at the abort flag

    def __init__(self, context, users: int, days: int):
        self.users, self.days = users, max(1, days)
        self._arrived = context.Semaphore(0)
        self._go = [context.Semaphore(0) for _ in range(users)]
        self._aborted = context.RawValue("b", 0)
        self._claims = context.RawArray("b", users * self.days)     # which days each user's next operation reads
        self._active = context.RawArray("b", users)
        self._verdict = context.RawArray("b", users)
        self._going = context.RawValue("b", 0)
        self._cleared = context.RawArray("c", CLEARED_BYTES + 1)
        self._kinds = context.RawArray("c", 64)
        self._left = context.RawValue("q", -1)

    def abort(self) -> None:
        """Release every user waiting for a round: a user stopped for good (the parent's call)."""
        self._aborted.value = 1

    def next_round(self, worker: int, active: bool, day_indexes: Sequence[int] | None,
                   clear: Clear) -> RoundStart:
        """Wait for every user, let user 0 clear, and say whether this user's operation (``active``;
        reading the days ``day_indexes``, None = unknown, taken as every day) starts cold."""
        claims = np.frombuffer(self._claims, dtype=np.int8).reshape(self.users, self.days)
        claims[worker] = 0 if day_indexes is not None else 1
        if day_indexes is not None:
            claims[worker, list(day_indexes)] = 1
        self._active[worker] = 1 if active else 0
        if worker == 0:
            for _ in range(self.users - 1):       # every other user has said what it reads; none runs
                self._acquire(self._arrived)
            self._decide(claims, clear)
            for user in range(1, self.users):     # the caches are empty: the round goes together
                self._go[user].release()
        else:
            self._arrived.release()
            self._acquire(self._go[worker])
        text = self._cleared.value.decode(errors="replace")
        verdict = self._verdict[worker]
        left = None if self._left.value < 0 else int(self._left.value)
        shared = "another user's operation of the same round read the same day"
        if self.users > self.days:          # the layout cannot give each user a day of its own
            shared += (f" ({self.users} users, {self.days} day{'s' if self.days != 1 else ''}: give each user a day "
                       f"of its own, at least {self.users} days)")
        why = {SHARED: shared, NOT_CLEARED: text}.get(verdict, "")
        cleared = text if verdict != NOT_CLEARED else ""
        kinds = self._kinds.value.decode() if verdict != NOT_CLEARED else ""
        return RoundStart(go=bool(self._going.value), cold=verdict == HELD, cleared=cleared, why_not=why,
                          left_bytes=left, kinds=kinds)

    def _decide(self, claims: np.ndarray, clear: Clear) -> None:
        active = np.frombuffer(self._active, dtype=np.int8).astype(bool)
        self._going.value = int(active.any())
        if not active.any():
            return
        try:
            methods, left = clear()
            failed = verdict_of(methods, left)
            text = failed or cleared_text(methods, CLEARED_BYTES)
        except Exception as exc:          # a failed clear leaves the round's operations warm, and says so
            methods, left, failed = [], None, "x"
            text = f"the clear failed: {type(exc).__name__}: {str(exc).strip()[:200]}"
        self._left.value = -1 if left is None else int(left)
        readers = claims[active].sum(axis=0)
        for user in range(self.users):
            if not active[user]:
                self._verdict[user] = IDLE
            elif failed:
                self._verdict[user] = NOT_CLEARED
            elif (readers[claims[user] == 1] > 1).any():
                self._verdict[user] = SHARED
            else:
                self._verdict[user] = HELD
        self._cleared.value = text.encode()[:CLEARED_BYTES]
        self._kinds.value = kinds_of(methods).encode()[:63]

    def _acquire(self, semaphore) -> None:
        while not semaphore.acquire(timeout=self.WAIT_SLICE_S):
            if self._aborted.value:
                raise RoundsBroken("another user of this cold step stopped, so its rounds cannot go on")


def with_own_clear(start: RoundStart, own: list[str], own_error: str) -> RoundStart:
    """A round's start with what this user dropped of its own process (``drop_process_cache``)
    before it: listed first, and a failed drop leaves the operation warm."""
    if not start.go:
        return start
    cleared = ", ".join([*own, start.cleared] if start.cleared else own)
    kinds = merged(kinds_of(own), start.kinds) if start.kinds or start.cold else kinds_of(own)
    if own_error:
        return RoundStart(True, False, cleared, f"its own process's cache could not be dropped ({own_error})",
                          start.left_bytes, kinds)
    return RoundStart(True, start.cold, cleared, start.why_not, start.left_bytes, kinds)


def one_user_start(methods: list[str], left_bytes: int | None, users: int) -> RoundStart:
    """The cache facts of an operation cleared by its own worker, without rounds (users on other
    hosts): cold only when it is the step's only user and the clear held."""
    failed = verdict_of(methods, left_bytes)
    if failed:
        return RoundStart(True, False, "", failed, left_bytes)
    if users > 1:
        return RoundStart(True, False, ", ".join(methods),
                          "users on other hosts are not run in rounds: another may have read the same day", left_bytes,
                          kinds_of(methods))
    return RoundStart(True, True, ", ".join(methods), "", left_bytes, kinds_of(methods))


def watch_parent(parent_gone: Callable[[], bool], every_s: float = 1.0) -> None:
    """End this process when its parent is gone: a user waiting for a round would wait for good."""
    import os

    def watch() -> None:
        while not parent_gone():
            time.sleep(every_s)
        os._exit(3)

    threading.Thread(target=watch, name="tickbench-parent-watch", daemon=True).start()
