"""How any dataset's rows are ordered in an engine's layout, and the key a slice needs, from its roles.

Practitioners store tick data by (key, time) within a day, so a key-day is one contiguous run (zone
maps, sort keys and row groups skip the rest); a dataset without a key (``key_column == ""``) is stored
in time order. Ties in time keep their arrival order wherever an engine can say so.
"""
from __future__ import annotations

from workloads.datasets.schema import DatasetInfo


def order_columns(info: DatasetInfo) -> tuple[str, ...]:
    """The columns a day's rows are sorted by: (key, time), or (time,) without a key."""
    return (info.key_column, info.time_column) if info.key_column else (info.time_column,)


def key_column(info: DatasetInfo, what: str) -> str:
    """The key column ``what`` (a slice, minute bars) selects on; ValueError for a dataset without one."""
    if not info.key_column:
        raise ValueError(f"dataset {info.name!r} has no key column: {what} needs one "
                         "(name it with --key when importing)")
    return info.key_column
