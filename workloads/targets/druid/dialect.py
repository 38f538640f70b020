"""SQL text for Druid: identifiers and strings quoted, timestamps as literals or milliseconds,
datasource names (``tickbench_<dataset>_<scale key>``), the columns Tickbench adds (``_seq``, the
ingestion files' ``__ts``), suite values as Druid SQL ``?`` parameters, and DolphinDB's CHAR
letters to and from Druid's longs.

Suite texts (reports 001/004, ``resources/queries/*.druid.toml``) name ``{quotes}``/``{readings}``/
``{info}`` as datasources and ``{name}`` parameters, bound as Druid SQL ``?`` parameters (a list
becomes ``?, ?, ...``; a date or time a TIMESTAMP; a time of day its milliseconds since midnight).
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

import numpy as np
import pandas as pd

from workloads.datasets.schema import Scale


SEQ = "_seq"
TS = "__ts"                        # the ingestion files' timestamp column (ms), becomes __time
DAY_MS = 86_400_000


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ts_literal(value: dt.datetime | dt.date) -> str:
    if not isinstance(value, dt.datetime):
        value = dt.datetime.combine(value, dt.time())
    return f"TIMESTAMP '{value.isoformat(sep=' ', timespec='milliseconds')}'"


def _ts_ms(day: dt.date) -> int:
    """Milliseconds from 1970-01-01 to the day's midnight (UTC)."""
    return (day - dt.date(1970, 1, 1)).days * DAY_MS


def table_name(dataset: str, scale: Scale) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", f"tickbench_{dataset}_{scale.key()}")


def _first_line(text: Any) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def _param(value: Any) -> list[dict[str, Any]]:
    """A suite value as Druid SQL parameters (a list: one per element)."""
    if isinstance(value, (list, tuple)):
        return [p for v in value for p in _param(v)]
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        value = pd.Timestamp(value).to_pydatetime()
    if isinstance(value, dt.datetime):     # ISO with a T: Druid 33 rejects "yyyy-MM-dd HH:mm:ss.SSS" (HTTP 500)
        return [{"type": "TIMESTAMP", "value": value.isoformat(sep="T", timespec="milliseconds")}]
    if isinstance(value, dt.date):
        return [{"type": "TIMESTAMP", "value": f"{value.isoformat()} 00:00:00"}]
    if isinstance(value, dt.time):
        return [{"type": "BIGINT", "value": ((value.hour * 60 + value.minute) * 60 + value.second) * 1000
                 + value.microsecond // 1000}]
    if isinstance(value, (bool, np.bool_)):
        return [{"type": "BOOLEAN", "value": bool(value)}]
    if isinstance(value, (int, np.integer)):
        return [{"type": "BIGINT", "value": int(value)}]
    if isinstance(value, (float, np.floating)):
        return [{"type": "DOUBLE", "value": float(value)}]
    return [{"type": "VARCHAR", "value": str(value)}]


# DolphinDB's text style (workloads.datasets.csv_files) to Druid's values, as ingestion transforms
_LETTERS = [chr(c) for c in range(32, 127) if chr(c) not in "'\\"]


def _char_code(name: str) -> str:
    pairs = ", ".join(f"'{ch}', {ord(ch)}" for ch in _LETTERS)
    return f"case_simple(\"{name}\", {pairs}, null)"


def _char_letter(name: str) -> str:
    pairs = " ".join(f"WHEN {ord(ch)} THEN {literal(ch)}" for ch in _LETTERS)
    return f"CASE {quote(name)} {pairs} END"
