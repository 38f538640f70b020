"""Frames on their way to a DolphinDB server (typed for the client's upload) and answers on their
way back (an Arrow table under PROTOCOL_ARROW, a count)."""
from __future__ import annotations

import pandas as pd

from workloads.targets.base import TargetError

_HINT_TYPES = ("DATE", "SECOND", "TIME", "TIMESTAMP", "SYMBOL", "STRING", "MINUTE", "DATETIME")


def upload_hints(schema) -> dict[str, int]:
    """``__DolphinDB_Type__`` for the client: without it datetime64 goes up as NANOTIMESTAMP and
    strings as STRING, which DolphinDB will not insert into DATE/SECOND/SYMBOL columns."""
    import dolphindb.settings as keys

    return {c.name: getattr(keys, f"DT_{c.ddb_type}") for c in schema.columns if c.ddb_type in _HINT_TYPES}


def typed_frame(frame: pd.DataFrame, hints: dict[str, int]) -> pd.DataFrame:
    """The frame ready for upload: categories as strings (the client refuses category), hints set."""
    categories = [n for n in frame.columns if isinstance(frame[n].dtype, pd.CategoricalDtype)]
    if categories:
        frame = frame.copy()
        for name in categories:
            frame[name] = frame[name].astype("str")
    object.__setattr__(frame, "__DolphinDB_Type__", {k: v for k, v in hints.items() if k in frame.columns})
    return frame


def _is_arrow_table(result) -> bool:
    return hasattr(result, "to_pandas") and hasattr(result, "schema") and not isinstance(result, pd.DataFrame)


def _count(value) -> int:
    """A count the server sent (a scalar, or NaN/None for an empty table) as an int."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TargetError(f"expected a row count from the server, got {value!r}") from None
    return int(number) if number == number else 0
