"""DuckDB's writes: appends, CSV import and export, clearing a table, report 003's minute table.

Every write takes the file's writer turn (``connection.py``). For ``append``, ``decode`` is the
reverse conversion (DataFrame -> Arrow).
"""
from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pandas as pd

from workloads.targets.common.arrow_frames import arrow_schema, arrow_table
from workloads.targets.base import IMPORT_TABLE, Layout, OpResult
from workloads.targets.common.sizes import rows_bytes
from workloads.targets.duckdb.dialect import _from_text_sql, _select_cast_sql, _to_text_sql, quote


def _now() -> float:
    return time.perf_counter()


class DuckDBWrites:
    """The write operations and the tables they fill (mixed into ``DuckDBTarget``)."""

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        info = self._dataset_info(layout)
        target_table = table or self.table(layout) + "_append"
        t0 = _now()
        arrow = arrow_table(frame, arrow_schema(info.schema))
        t1 = _now()
        with self._writer() as (con, waits):
            if table:
                self._ensure_append_table(con, self.table(layout), target_table)
            con.register("_tb_append", arrow)
            con.execute(f"INSERT INTO {quote(target_table)} SELECT {_select_cast_sql(info.schema)} FROM _tb_append")
            con.unregister("_tb_append")
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema),
                        phases={"decode": t1 - t0, "query": t2 - t1}, extra=waits)

    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == "minute":
            name = self.minute_table(layout)
        elif table == IMPORT_TABLE:
            name = self.import_table(layout)
        else:
            name = self.table(layout) + "_append" if not table else table
        with self._writer() as (con, _waits):
            exists = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                                 [name]).fetchall()[0][0]
            if exists:
                con.execute(f"DELETE FROM {quote(name)}")

    # --- reports 001 and 004 -------------------------------------------------------------------
    def import_table(self, layout: Layout) -> str:
        return self.table(layout) + "_import"

    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """``INSERT INTO <table>_import SELECT ... FROM read_csv(path)``: DuckDB's own CSV reader,
        every column read as text and converted from DolphinDB's text style (2007.08.23, 09:30:07,
        a CHAR as its letter); the writer's turn is taken as for appends."""
        info = self._dataset_info(layout)
        target = quote(self.import_table(layout))
        with self._writer() as (con, waits):
            con.execute(f"CREATE TABLE IF NOT EXISTS {target} AS SELECT * FROM {quote(self.table(layout))} LIMIT 0")
            rows = con.execute(f"INSERT INTO {target} SELECT {_from_text_sql(info.schema)} FROM "
                               "read_csv(?, header = true, all_varchar = true, quote = '\"')",
                               [str(path)]).fetchall()[0][0]
        return OpResult(rows=int(rows), nbytes=rows_bytes(int(rows), info.schema), wire_path=path,
                        extra={**waits, "queryable_s": 0.0})

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """``COPY (SELECT ... one day) TO path``: DuckDB's own CSV writer (ISO dates and
        timestamps; times of day and CHAR letters as the dataset's CSV files hold them)."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        where, params = self._day_where(info, day)
        con = self._con(layout)
        # COPY takes no prepared parameters: the day is a date literal made by code, the path quoted
        literal = where.replace("?", "{}").format(*(f"TIMESTAMP '{p.isoformat(sep=' ')}'" if isinstance(p, dt.datetime)
                                                    else f"DATE '{p.isoformat()}'" for p in params))
        target = "'" + str(path).replace("'", "''") + "'"
        # COPY answers with the rows it wrote: no second query inside the timed span
        rows = con.execute(f"COPY (SELECT {_to_text_sql(info.schema)} FROM {quote(self.table(layout))} "
                           f"WHERE {literal}) "
                           f"TO {target} (HEADER)").fetchall()[0][0]
        return OpResult(rows=int(rows), nbytes=rows_bytes(int(rows), info.schema), wire_path=path)

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self.row_count(layout, table or self.table(layout) + "_append")

    def minute_table(self, layout: Layout) -> str:
        """Where the map-reduce writes its minute quotes (DolphinDB: ``quotes_minute``)."""
        return self.table(layout) + "_minute"

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Report 003 (b): minute quotes of the span INSERTed into the layout's minute table.

        A write, so it takes the writer's turn like ``append`` (DuckDB: one writing process per
        file); the wait is part of ``query`` and reported in ``extra``.
        """
        cols, where, params = self._quote_sql(layout, days)
        k, d, t, b, a = (quote(c) for c in (cols.key, cols.date, cols.time, cols.bid, cols.ask))
        minute_table = quote(self.minute_table(layout))
        t0 = _now()
        with self._writer() as (con, waits):
            con.execute(f"CREATE TABLE IF NOT EXISTS {minute_table} ({k} VARCHAR, {d} DATE, minute TIMESTAMP, "
                        f"{b} DOUBLE, {a} DOUBLE)")
            bars = con.execute(
                f"INSERT INTO {minute_table} SELECT {k}, {d}, date_trunc('minute', {t}) AS minute, "
                f"avg({b}), avg({a}) FROM {quote(self.table(layout))} WHERE {where} GROUP BY ALL",
                params).fetchall()[0][0]        # read to the end: DuckDB 2 keeps the connection busy until then
        t1 = _now()
        frame = pd.DataFrame({"bars": [int(bars)]})
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": _now() - t1}, frame=frame,
                        extra={"bars": int(bars), **waits})
