"""Frames in QuestDB's shapes: a generator frame as ILP sends it (symbols categorical, the
arrival ordinal and the designated timestamp added), and a Parquet reply's UTC times as the
datasets' naive UTC.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from workloads.datasets.schema import DatasetInfo
from workloads.targets.questdb.dialect import SEQ


def ilp_frame(frame: pd.DataFrame, info: DatasetInfo, ts: str, seq_start: int | None = None) -> pd.DataFrame:
    """A generator frame as ILP sends it: SYMBOL columns categorical (ILP symbols), STRING as
    Python strings, the arrival ordinal and the designated timestamp added."""
    schema = info.schema
    out = {}
    for c in schema.columns:
        values = frame[c.name]
        if c.ddb_type == "SYMBOL":
            values = values.astype("category")
        elif c.ddb_type == "STRING":
            values = values.astype(object)
        out[c.name] = values.reset_index(drop=True)
    if seq_start is not None:
        out[SEQ] = pd.Series(np.arange(seq_start, seq_start + len(frame), dtype=np.int64))
    if ts not in schema.names:
        date = frame[info.date_column].to_numpy(dtype="datetime64[ns]")
        clock = frame[info.time_column].to_numpy(dtype="datetime64[ns]")
        day = date.astype("datetime64[D]").astype("datetime64[ns]")
        of_day = clock - clock.astype("datetime64[D]").astype("datetime64[ns]")
        out[ts] = pd.Series(day + of_day)
    return pd.DataFrame(out)


def naive_times(table: pa.Table) -> pa.Table:
    """QuestDB's Parquet times are UTC: the datasets' convention is naive UTC."""
    fields, changed = [], False
    for field in table.schema:
        if pa.types.is_timestamp(field.type) and field.type.tz is not None:
            fields.append(pa.field(field.name, pa.timestamp(field.type.unit), field.nullable))
            changed = True
        else:
            fields.append(field)
    return table.cast(pa.schema(fields)) if changed else table
