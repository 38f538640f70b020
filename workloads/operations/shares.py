"""Which partitions a writing user owns: its own day, and its own share of the key's partitions when
more users write than there are days.

Why: an engine that locks what a write touches serialises users who write the same partitions.
DolphinDB locks every chunk (partition) a write's transaction touches; with ``atomic="CHUNK"`` a
write to a locked chunk is retried for minutes, and a 25,000-row batch of one day spans most of its
128 key ranges, so users all writing day 0 wait on each other. Report 002's users each wrote their
own partitions. Engines that lock nothing per partition get the same number of rows from their
user's own day, which changes nothing they measure.

A share is one concept for every engine: user ``w`` of ``users`` writes day ``w % days``; the users
on one day split the target's key groups (``Target.key_groups``: its key partitions, [] where the
key is no partitioning level) into contiguous runs, one each. A writing computation whose
operations cover several days (the map-reduce into the minute table) takes its windows from the
user's own block of days (``own_days``).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WriteShare:
    day_index: int                       # the layout day whose rows the user writes
    keys: frozenset | None = None        # the keys it writes (None: every key of its day)
    shared_with: int = 0                 # other users writing the same partitions (0: none)


def write_share(worker: int, users: int, days: int, key_groups: list[frozenset]) -> WriteShare:
    """User ``worker``'s partitions among ``users`` writing a layout of ``days`` days whose key is
    stored in ``key_groups`` (see the module doc). When a day has more users than key groups, or
    the key is no partitioning level, users of one day share it (``shared_with`` says how many)."""
    if users < 1 or days < 1 or not 0 <= worker < users:
        raise ValueError(f"user {worker} of {users} writing {days} days has no share")
    day = worker % days
    on_day = len(range(day, users, days))            # users writing this day
    rank = worker // days                            # this user's place among them
    if on_day == 1:
        return WriteShare(day)
    if len(key_groups) < on_day:                     # too few key partitions to own one each
        return WriteShare(day, None, on_day - 1)
    first, last = rank * len(key_groups) // on_day, (rank + 1) * len(key_groups) // on_day
    return WriteShare(day, frozenset().union(*key_groups[first:last]))


def own_days(worker: int, users: int, days: int, per_operation: int) -> range | None:
    """The block of consecutive day indexes user ``worker`` owns when each of ``users`` needs
    ``per_operation`` days of its own; None when the days are too few for every user to own that
    many (then users' windows overlap)."""
    block = days // users if users > 0 else 0
    if block < max(per_operation, 1):
        return None
    return range(worker * block, (worker + 1) * block)
