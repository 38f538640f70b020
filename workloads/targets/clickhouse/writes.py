"""Writes on ClickHouse, as a mixin of ``ClickHouseTarget``: appends, CSV import and export
(reports 001 and 004), the checks of what was written, and clearing the scratch tables.

Import: ClickHouse's own CSV reader converting DolphinDB's text style (2007.08.23, 09:30:07, a CHAR
as its letter): embedded ``INSERT ... SELECT <conversions> FROM file(path, CSVWithNames, <text
columns>)``; server the same SELECT over ``input(<text columns>)`` with the file's bytes as the
request body (``client.command(..., data=...)``). Export: ClickHouse's own writer, ``SELECT ...
INTO OUTFILE ... FORMAT CSVWithNames`` (embedded) or the ``CSVWithNames`` reply streamed to the
file (server): ISO dates and timestamps, times of day and CHAR letters as DuckDB writes them
(ClickHouse quotes every string field; a CSV reader reads both alike). The conversions themselves:
``dialect``.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd

from workloads.targets.base import IMPORT_TABLE, Layout, OpResult
from workloads.targets.clickhouse.dialect import (_from_text_sql, _now, _text_structure, _to_text_sql, insert_arrow,
                                                  literal)
from workloads.targets.common.sizes import rows_bytes


class ClickHouseWrites:
    """Appends, imports, exports and clears (the day's condition and order come from the reads)."""

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        """Rows into ``<table>_append`` (or ``table``, created on first use): an Arrow insert
        (embedded: ``INSERT ... SELECT * FROM Python(arrow)`` in the folder's turn; server:
        ``client.insert_arrow``, sending included). ``decode`` is DataFrame -> Arrow."""
        info = self._dataset_info(layout)
        target = table or self.table(layout) + "_append"
        t0 = _now()
        arrow = insert_arrow(frame, info.schema)
        t1 = _now()
        with self._conn() as (con, facts):
            if table:
                self._ensure_table(con, info, target)
            con.insert(self.fq(target), arrow)
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema),
                        phases={"decode": t1 - t0, "query": t2 - t1}, extra=facts, node=self.node)

    def row_count(self, layout: Layout, table: str = "") -> int:
        """Rows in ``table`` (default: the layout's main table), for checks and reports."""
        with self._conn(hold=False) as (con, _):
            return int(con.rows(f"SELECT count() AS n FROM {self.fq(table or self.table(layout))}")[0]["n"])

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self.row_count(layout, table or self.table(layout) + "_append")

    # --- reports 001 and 004 -----------------------------------------------------------------
    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """ClickHouse's own CSV reader into ``<table>_import``, every column read as text and
        converted from DolphinDB's text style (module doc)."""
        info = self._dataset_info(layout)
        target = self.fq(self.import_table(layout))
        select = f"INSERT INTO {target} SELECT {_from_text_sql(info.schema)} FROM "
        structure = literal(_text_structure(info.schema))
        with self._conn() as (con, facts):
            if self.server:
                rows = con.execute(select + f"input({structure}) FORMAT CSVWithNames", data=Path(path).read_bytes())
            else:
                rows = con.execute(select + f"file({literal(str(Path(path).resolve()))}, 'CSVWithNames', {structure})")
        return OpResult(rows=int(rows), nbytes=rows_bytes(int(rows), info.schema), wire_path=path,
                        extra={**facts, "queryable_s": 0.0}, node=self.node)

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """ClickHouse's own CSV writer (``CSVWithNames``), one day in stored order; the rows are
        counted after the timed span."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        # the text columns keep the columns' names: the condition and order name the table's own
        where, params = self._day_where(info, day, "src.")
        table = self.fq(self.table(layout))
        sql = (f"SELECT {_to_text_sql(info.schema, 'src.')} FROM {table} AS src WHERE {where} "
               f"ORDER BY {self._stored_order(info, 'src.')}")
        path = Path(path)
        with self._conn() as (con, facts):
            if self.server:
                con.stream_to(sql, params, "CSVWithNames", path)
            else:
                con.execute(f"{sql} INTO OUTFILE {literal(str(path.resolve()))} TRUNCATE FORMAT CSVWithNames", params)

        def count() -> int:
            with self._conn() as (counter, _):
                return int(counter.rows(f"SELECT count() AS n FROM {table} AS src WHERE {where}", params)[0]["n"])
        return OpResult(rows=None, count_rows=count, schema=info.schema, wire_path=path, extra=facts, node=self.node)

    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == "minute":
            name = self.minute_table(layout)
        elif table == IMPORT_TABLE:
            name = self.import_table(layout)
        else:
            name = table or self.table(layout) + "_append"
        with self._conn(hold=False) as (con, _):
            con.execute(f"TRUNCATE TABLE IF EXISTS {self.fq(name)}")
