"""QuestDB writes: appends (ILP over HTTP), CSV import and export, row counts and clearing the
scratch tables.

Import (reports 001 and 004): QuestDB's own CSV loader, HTTP ``/imp`` with a schema (``DATE``
pattern ``yyyy.MM.dd``, ``TIMESTAMP`` ``HH:mm:ss`` or ``yyyy.MM.ddTHH:mm:ss.SSS``, a CHAR as
``CHAR``) into a staging table (``_import_stage``, overwritten), then ``INSERT INTO <table>_import
SELECT`` converting to the table's types (a CHAR letter to its code by a ``CASE`` over printable
ASCII: QuestDB casts no CHAR to a number), the designated ``_ts`` computed; the wait for the WAL
is ``queryable_s``. Export: HTTP ``/exp`` CSV (QuestDB's own writer) streamed to the file, times
of day and dates as text in DuckDB's style (``to_str``), CHAR as its letter.
"""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pandas as pd

from workloads.targets.base import IMPORT_TABLE, Layout, OpResult, TargetError
from workloads.targets.common.sizes import rows_bytes
from workloads.targets.common.storage import disk_full_error
from workloads.targets.questdb.dialect import (_QDB_TYPES, _IMP_PATTERNS, _TO_TEXT, quote, literal,
                                               char_code, designated)
from workloads.targets.questdb.frames import ilp_frame
from workloads.targets.questdb.server import _now, _multipart


class QuestDBWrites:
    """QuestDBTarget's writes: append, import, export, counts, clear."""

    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == "minute":
            name = self.minute_table(layout)
        elif table == IMPORT_TABLE:
            name = self.import_table(layout)
        else:
            name = table or self.table(layout) + "_append"
        exists = self._server.rows(f"SELECT count() AS n FROM tables() WHERE table_name = {literal(name)}")
        if int(exists[0]["n"]):
            self._server.execute(f"TRUNCATE TABLE {quote(name)}")
            self._server.wait_applied(name, self.wal_timeout)

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        """Rows into ``<table>_append`` (or ``table``, created on first use) by ILP over HTTP:
        ``decode`` = DataFrame to the ILP frame, ``transfer`` = ``Sender.dataframe`` and its flush
        (the server has committed the rows to its WAL when it returns)."""
        info = self._dataset_info(layout)
        target = table or self.table(layout) + "_append"
        ts = designated(info)
        if table:
            self._ensure_table(info, target)
        t0 = _now()
        ilp = ilp_frame(frame, info, ts)
        t1 = _now()
        self._server.ingest(target, ilp, ts, self._symbols(info.schema))
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema),
                        phases={"decode": t1 - t0, "transfer": t2 - t1}, node=self.node)

    def row_count(self, layout: Layout, table: str = "") -> int:
        """Rows in ``table`` (default: the main table) once its WAL is applied."""
        name = table or self.table(layout)
        self._server.wait_applied(name, self.wal_timeout)
        return int(self._server.rows(f"SELECT count() AS n FROM {quote(name)}")[0]["n"])

    def sql_rows(self, sql: str) -> list[dict[str, Any]]:
        """Rows of a statement over PG wire (checks; never timed)."""
        return self._server.rows(sql)

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self.row_count(layout, table or self.table(layout) + "_append")

    # --- reports 001 and 004 -------------------------------------------------------------------
    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """``/imp`` into ``<table>_import_stage`` (overwritten), then ``INSERT INTO <table>_import
        SELECT`` with the conversions; ``queryable_s``: the wait for the WAL to apply it."""
        info = self._dataset_info(layout)
        server = self._server
        stage, target = self.table(layout) + "_import_stage", self.import_table(layout)
        schema = []
        for c in info.schema.columns:
            item: dict[str, Any] = {"name": c.name, "type": "CHAR" if c.ddb_type == "CHAR" else _QDB_TYPES[c.ddb_type]}
            if c.ddb_type in _IMP_PATTERNS:
                item["pattern"] = _IMP_PATTERNS[c.ddb_type]
            schema.append(item)
        ts = designated(info)
        converted = []
        for c in info.schema.columns:
            expr = char_code(quote(c.name)) if c.ddb_type == "CHAR" else quote(c.name)
            converted.append(f"{expr} AS {quote(c.name)}")
        names = list(info.schema.names)
        if ts not in names:
            converted.append(f"{quote(info.date_column)} + {quote(info.time_column)} AS {quote(ts)}")
            names.append(ts)
        t0 = _now()
        body, content_type = _multipart({"schema": json.dumps(schema)}, "data", Path(path).name, Path(path).read_bytes())
        said = json.loads(server.http("/imp", {"name": stage, "overwrite": "true", "fmt": "json",
                                                "forceHeader": "true", "atomicity": "abort"},
                                      data=body, headers={"Content-Type": content_type}))
        if said.get("status") != "OK":
            raise TargetError(f"QuestDB /imp of {path}: {said.get('status') or said}")
        server.execute(f"INSERT INTO {quote(target)} ({', '.join(quote(n) for n in names)}) "
                       f"SELECT {', '.join(converted)} FROM {quote(stage)}")
        t1 = _now()
        queryable = server.wait_applied(target, self.wal_timeout)
        rows = int(said.get("rowsImported") or 0)
        return OpResult(rows=rows, nbytes=rows_bytes(rows, info.schema), wire_path=path, node=self.node,
                        phases={}, extra={"queryable_s": queryable, "loader": "HTTP /imp + INSERT ... SELECT",
                                          "load_s": t1 - t0, "rows_rejected": int(said.get("rowsRejected") or 0)})

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """QuestDB's own CSV writer (HTTP ``/exp``), one day in stored order, streamed to ``path``."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        parts = [_TO_TEXT.get(c.ddb_type, "{c}").format(c=quote(c.name)) + f" AS {quote(c.name)}"
                 for c in info.schema.columns]
        table, ts = quote(self.table(layout)), quote(designated(info))
        sql = f"SELECT {', '.join(parts)} FROM {table} WHERE {ts} IN {literal(day.isoformat())}"
        data = self._server.http("/exp", {"query": sql, "fmt": "csv"})
        path = Path(path)
        try:
            path.write_bytes(data)
        except OSError as exc:
            raise disk_full_error(exc, path.parent) or exc

        def count() -> int:
            return int(self._server.rows(f"SELECT count() AS n FROM {table} WHERE {ts} IN "
                                         f"{literal(day.isoformat())}")[0]["n"])
        return OpResult(rows=None, count_rows=count, schema=info.schema, wire_path=path, node=self.node)
