"""DolphinDB's per-query partition limit: a query whose partition-column conditions leave more
partitions than ``maxPartitionNumPerQuery`` (65,536 by default) is refused (S02039). Counting a
table day by day over years (report 002's full size: 1,250 trading days x 128 key ranges) asks in
windows of days that stay under it.

A window's partitions are its days times the partitions of one day (the key level's ranges or
buckets); the limit assumed is the default, and a cluster configured lower refuses with its own
message, passed on as it is.
"""
from __future__ import annotations

import datetime as dt

MAX_PARTITIONS_PER_QUERY = 65_536      # maxPartitionNumPerQuery's default
VALUE, RANGE, LIST, COMPO, HASH = 1, 2, 3, 4, 5     # schema(t).partitionType's numbers


def day_windows(first: dt.date, last: dt.date, partitions_per_day: int,
                limit: int = MAX_PARTITIONS_PER_QUERY) -> list[tuple[dt.date, dt.date]]:
    """Consecutive (first, last) day ranges covering ``first``..``last``, each of at most
    ``limit // partitions_per_day`` days (at least one)."""
    span = max(1, limit // max(1, partitions_per_day))
    windows, start = [], first
    while start <= last:
        end = min(last, start + dt.timedelta(days=span - 1))
        windows.append((start, end))
        start = end + dt.timedelta(days=1)
    return windows


def level_size(kind: int, scheme) -> int:
    """Partitions of one level of a scheme: a RANGE's boundaries less one, a HASH's bucket count,
    a VALUE's or LIST's values."""
    if kind == HASH:
        return int(scheme) if not hasattr(scheme, "__len__") else len(scheme)
    return max(1, len(scheme) - 1) if kind == RANGE else max(1, len(scheme))


def levels(types, schemes) -> list[tuple[int, object]]:
    """(type, scheme) of each level, from ``schema(t)``'s ``partitionType`` and
    ``partitionSchema``: one level a number and a vector, a COMPO table's a vector and a tuple."""
    if hasattr(types, "__len__") and not isinstance(types, str):
        return list(zip((int(t) for t in types), schemes))
    return [(int(types), schemes)]
