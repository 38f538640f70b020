"""ArcticDB's writes: appends, CSV import and export, clearing, report 003's minute quotes; each
write in its library's writer turn (``connection.py``).

ArcticDB has no CSV loader: imports read with Tickbench's pyarrow reader (``read``) then
``lib.write`` / ``update_batch`` (``io``); exports read the day then write the CSV (``io``).
"""
from __future__ import annotations

import datetime as dt
import re
import time
from pathlib import Path
from typing import Any

import pandas as pd
from arcticdb import UpdatePayload

from workloads.datasets.csv_files import STYLE as CSV_STYLE
from workloads.datasets.csvread import read_csv
from workloads.datasets.csvwrite import write_csv
from workloads.targets.base import IMPORT_TABLE, Layout, OpResult, TargetError
from workloads.targets.common.quotes import minute_quotes
from workloads.targets.common.sizes import rows_bytes
from workloads.text import plural
from workloads.targets.arcticdb.symbols import MINUTE_SYMBOL, day_symbol, time_indexed


def _now() -> float:
    return time.perf_counter()


class ArcticDBWrites:
    """The write operations into scratch symbols (mixed into ``ArcticDBTarget``)."""

    # --- writes ------------------------------------------------------------------------------
    @staticmethod
    def append_symbol(table: str = "") -> str:
        name = table or "scratch"
        if not re.fullmatch(r"[A-Za-z0-9_]{1,64}", name):
            raise ValueError(f"append table name {name!r}: use 1-64 letters, digits or underscores")
        return f"_append_{name}"

    def _writable(self, frame: pd.DataFrame, phases: dict[str, float]) -> pd.DataFrame:
        """Row-numbered, categories as strings (ArcticDB stores strings, not pandas categories)."""
        t0 = _now()
        out = frame.reset_index(drop=True)
        categories = [name for name, dtype in out.dtypes.items() if isinstance(dtype, pd.CategoricalDtype)]
        if categories:
            out = out.astype({name: str for name in categories})
            phases["decode"] = _now() - t0
        return out

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        info = self._dataset_info(layout)
        symbol = self.append_symbol(table)
        phases: dict[str, float] = {}
        rows = self._writable(frame, phases)
        lib = self._lib(layout)
        t0 = _now()
        with self._writer_turn(lib.name) as waits:
            lib.append(symbol, rows)
        phases["query"] = _now() - t0
        return OpResult(rows=len(rows), nbytes=rows_bytes(len(rows), info.schema), phases=phases, extra=waits)

    def _row_count(self, layout: Layout, symbol: str) -> int:
        lib = self._lib(layout)
        self._current_versions(lib.name)
        return lib.get_description(symbol).row_count if lib.has_symbol(symbol) else 0

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self._row_count(layout, self.append_symbol(table))

    def clear_table(self, layout: Layout, table: str = "") -> None:
        lib = self._lib(layout)
        with self._writer_turn(lib.name):        # which symbols exist is asked after the turn's fresh map
            if table == IMPORT_TABLE:
                doomed = [s for s in lib.list_symbols() if s.startswith("_import_")]
            else:
                doomed = [MINUTE_SYMBOL if table == "minute" else self.append_symbol(table)]
            for symbol in doomed:
                if lib.has_symbol(symbol):
                    lib.delete(symbol)

    # --- reports 001 and 004: import, export (the suites: client_pandas.py) ---------------------
    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """Tickbench's pyarrow CSV reader (``read``: ArcticDB has no CSV loader), then the layout's
        write (``io``): the day's import symbol rewritten, or each key's import symbol updated over
        the day (``update_batch`` with upsert: a day imported again replaces itself)."""
        info = self._dataset_info(layout)
        lib = self._lib(layout)
        t0 = _now()
        frame = read_csv(path, layout.dataset)
        t1 = _now()
        with self._writer_turn(lib.name) as waits:
            indexed = time_indexed(frame, info)
            if self.symbol_per == "day":
                lib.write(f"_import_{day_symbol(day)}", indexed, prune_previous_versions=True)
            else:
                payloads = [UpdatePayload(f"_import_{key}", rows) for key, rows in
                            indexed.groupby(indexed[info.key_column].astype(str), sort=True, observed=True)]
                failed = [r for r in lib.update_batch(payloads, upsert=True) if not hasattr(r, "version")]
                if failed:
                    raise TargetError(f"ArcticDB refused {plural(len(failed), 'import symbol')}: {failed[0]}")
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema), wire_path=path,
                        phases={"read": t1 - t0, "io": t2 - t1}, extra={**waits, "queryable_s": 0.0})

    def imported_rows(self, layout: Layout) -> int:
        lib = self._lib(layout)
        self._current_versions(lib.name)        # symbols another process imported since
        return sum(self._row_count(layout, s) for s in lib.list_symbols() if s.startswith("_import_"))

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """The day read as a user reads it, then Tickbench's CSV writer (``io``)."""
        schema = self._dataset_info(layout).schema
        frame, phases = self._read_day(layout, day, layout.strings)
        t0 = _now()
        write_csv(frame, path, schema, style=CSV_STYLE)
        phases["io"] = _now() - t0
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), schema), wire_path=path, phases=phases)

    # --- report 003 (b): the map-reduce's minute quotes, written back ------------------------------
    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Minute quotes of each day (pandas, ``query``) appended to ``_minute`` (``io``)."""
        lib = self._lib(layout)
        written = {"io": 0.0}
        waits: dict[str, Any] = {}

        def save_minute_quotes(frame: pd.DataFrame, cols) -> int:
            bars = minute_quotes(frame, cols)
            t0 = _now()
            with self._writer_turn(lib.name) as facts:
                lib.append(MINUTE_SYMBOL, bars)
            written["io"] += _now() - t0
            waits["lock_wait_s"] = waits.get("lock_wait_s", 0.0) + facts["lock_wait_s"]
            return len(bars)

        counts, _, phases = self._each_day(layout, days, save_minute_quotes)
        phases["io"] = written["io"]
        phases["query"] -= written["io"]
        frame = pd.DataFrame({"bars": [sum(counts)]})
        return OpResult(rows=len(frame), phases=phases, frame=frame, extra={"bars": sum(counts), **waits})

    def minute_rows(self, layout: Layout) -> int:
        return self._row_count(layout, MINUTE_SYMBOL)
