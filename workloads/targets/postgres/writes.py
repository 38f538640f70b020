"""PostgreSQL writes: appends (``COPY ... FROM STDIN``), CSV import and export, row counts and
clearing the scratch tables.

Import (reports 001 and 004): ``COPY <staging> FROM STDIN (FORMAT csv, HEADER)`` of the file's
bytes into a temporary all-text table, then one ``INSERT ... SELECT`` converting DolphinDB's text
style (``2007.08.23``, ``09:30:07``, a CHAR as its letter) into ``_import``; export: ``COPY (SELECT
...) TO STDOUT (FORMAT csv, HEADER)`` streamed into the file in stored order (no ``ORDER BY``: the
partition is clustered), ISO dates, times of day without their date, CHAR as its letter, as
DuckDB writes them.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pandas as pd

from workloads.targets.base import IMPORT_TABLE, Layout, OpResult
from workloads.targets.common.sizes import rows_bytes
from workloads.targets.postgres.dialect import _PG_TYPES, quote, _FROM_TEXT, _TO_TEXT
from workloads.targets.postgres.copy_formats import copy_csv
from workloads.targets.postgres.server import _now


class PostgresWrites:
    """PostgresTarget's writes: append, import, export, counts, clear."""

    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == "minute":
            name = self.minute_table(layout)
        elif table == IMPORT_TABLE:
            name = self.import_table(layout)
        else:
            name = table or self.table(layout) + "_append"
        if self.db.rows("SELECT to_regclass(%s) AS r", (quote(name),))[0]["r"] is not None:
            self.db.execute(f"TRUNCATE {quote(name)}")

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        """Rows into ``<table>_append`` (or ``table``, created on first use) with ``COPY FROM
        STDIN (FORMAT csv)``: ``decode`` = DataFrame -> CSV bytes, ``query`` = the COPY."""
        info = self._dataset_info(layout)
        target = table or self.table(layout) + "_append"
        if table:
            self._ensure_table(info, target)
        t0 = _now()
        data = copy_csv(frame, info.schema)
        t1 = _now()
        self.db.copy_in(f"COPY {quote(target)} FROM STDIN (FORMAT csv)", data)
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema),
                        phases={"decode": t1 - t0, "query": t2 - t1}, wire_bytes=len(data), node=self.node)

    def row_count(self, layout: Layout, table: str = "") -> int:
        return int(self.db.rows(f"SELECT count(*) AS n FROM {quote(table or self.table(layout))}")[0]["n"])

    def sql_rows(self, sql: str, params: Any = None) -> list[dict[str, Any]]:
        return self.db.rows(sql, params)

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self.row_count(layout, table or self.table(layout) + "_append")

    # --- reports 001 and 004 -----------------------------------------------------------------
    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """PostgreSQL's COPY of the file's bytes into a temporary all-text table, then one INSERT
        converting DolphinDB's text style into ``<table>_import`` (module doc)."""
        info = self._dataset_info(layout)
        staging = quote("_tickbench_csv")
        text_cols = ", ".join(f"{quote(c.name)} text" for c in info.schema.columns)
        convert = ", ".join(_FROM_TEXT.get(c.ddb_type, "{c}::" + _PG_TYPES[c.ddb_type]).format(c=quote(c.name))
                            for c in info.schema.columns)
        conn = self.db.conn()
        data = Path(path).read_bytes()

        def load() -> int:
            with conn.transaction():
                conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {staging} ({text_cols}) ON COMMIT DELETE ROWS")
                with conn.cursor() as cur, cur.copy(f"COPY {staging} FROM STDIN (FORMAT csv, HEADER)") as copy:
                    copy.write(data)
                cur = conn.execute(f"INSERT INTO {quote(self.import_table(layout))} SELECT {convert} FROM {staging}")
                return int(cur.rowcount)
        t0 = _now()
        rows = self.db.call(load)
        t1 = _now()
        return OpResult(rows=rows, nbytes=rows_bytes(rows, info.schema), wire_bytes=len(data),
                        phases={"query": t1 - t0}, extra={"queryable_s": 0.0}, node=self.node)

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """``COPY (SELECT ...) TO STDOUT (FORMAT csv, HEADER)`` streamed into ``path``."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        where, params = self._day_where(info, day)
        cols = ", ".join(_TO_TEXT.get(c.ddb_type, "{c}").format(c=quote(c.name)) + f" AS {quote(c.name)}"
                         for c in info.schema.columns)
        table = quote(self.table(layout))
        sql = f"COPY (SELECT {cols} FROM {table} WHERE {where}) TO STDOUT (FORMAT csv, HEADER)"  # stored order
        path = Path(path)
        from workloads.targets.common.storage import raising_disk_full
        with raising_disk_full(path.parent), open(path, "wb") as out:
            size = self.db.copy_out(sql, params, into=out)

        def count() -> int:
            return int(self.db.rows(f"SELECT count(*) AS n FROM {table} WHERE {where}", params)[0]["n"])
        return OpResult(rows=None, count_rows=count, schema=info.schema, wire_bytes=size, node=self.node)
