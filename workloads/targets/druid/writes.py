"""Writes on Druid, as a mixin of ``DruidTarget``: appends, CSV import and export, counts,
clearing scratch datasources.

Appends (``append``): each is an ``index_parallel`` task with ``appendToExisting`` and the rows
inline (CSV), timed from the submission until the task succeeds (seconds each: Druid's cost of a
small write); ``extra["queryable_s"]`` is the time after that until the batch's rows are visible
to SQL. ``clear_table`` marks the datasource's segments unused and waits until the broker sees none.

Reports 001/004: Import: native batch ingestion of the CSV file (``local`` input
source) with transforms from DolphinDB's text style. Export: the broker's CSV reply (Druid's own
CSV writer; MSQ export needs an extension the local engine lacks), ISO text, in time order.
"""
from __future__ import annotations

import datetime as dt
import io
import time
from pathlib import Path

import pandas as pd
import pyarrow.csv as pacsv

from workloads.targets.base import IMPORT_TABLE, Layout, OpResult, TargetError
from workloads.targets.common.sizes import rows_bytes
from workloads.targets.common.storage import disk_full_error
from workloads.targets.druid.connection import _now
from workloads.targets.druid.dialect import SEQ, _char_code, _char_letter, _param, quote
from workloads.targets.druid.shape import _Shape


class DruidWrites:
    """DruidTarget's writes: append, import, export, counts, clear."""

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        """One ingestion task with the rows inline (module doc: Appends)."""
        info = self._dataset_info(layout)
        target = table or self.append_table(layout)
        shape = _Shape(info)
        # this batch's ordinals: unique (microseconds, wrapping every ~18 min, x 2^23 rows), so its rows
        # can be found; below 2^53, as Druid's CSV parser passes numbers through a double
        base = (time.time_ns() // 1000 % (1 << 30)) << 23
        t0 = _now()
        buffer = io.BytesIO()
        pacsv.write_csv(shape.input_table(frame, base), buffer)
        t1 = _now()
        task = self.run_task(self._spec(target, {"type": "inline", "data": buffer.getvalue().decode()},
                                        shape.dimensions(True), None, True), f"append to {target}")
        t2 = _now()
        where = f"{quote(SEQ)} >= ? AND {quote(SEQ)} < ?"
        params = _param(base) + _param(base + len(frame))
        queryable = self.wait_visible(lambda: self.count(target, where, params) == len(frame), f"append to {target}")
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema),
                        phases={"decode": t1 - t0, "query": t2 - t1}, node=self.node,
                        extra={"queryable_s": queryable, "task": task})

    def row_count(self, layout: Layout, table: str = "") -> int:
        return self.count(table or self.table(layout))

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self.count(table or self.append_table(layout))

    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """Druid's native batch ingestion of the CSV file (``local`` input source: the indexer reads
        ``path``), converted from DolphinDB's text style by ingestion transforms; timed until the
        task succeeds, ``queryable_s`` until its rows are counted."""
        info = self._dataset_info(layout)
        shape = _Shape(info)
        target = self.import_table(layout)
        path = Path(path).resolve()
        transforms = []
        if len(shape.time_parts) == 2:         # a DATE and a time of day: __time joined by a transform
            d, t = shape.time_parts
            timestamp = {"column": d, "format": "yyyy.MM.dd"}
            transforms.append({"type": "expression", "name": "__time", "expression":
                               f"timestamp_parse(concat(replace(\"{d}\", '.', '-'), 'T', \"{t}\"), null, 'UTC')"})
        else:
            timestamp = {"column": shape.time_parts[0], "format": "yyyy.MM.dd'T'HH:mm:ss.SSS"}
        for c in shape.stored:
            if c.ddb_type == "CHAR":
                transforms.append({"type": "expression", "name": c.name, "expression": _char_code(c.name)})
        before = self.count(target)
        t0 = _now()
        task = self.run_task(self._spec(target, {"type": "local", "files": [str(path)]}, shape.dimensions(False),
                                        None, True, input_format={"type": "csv", "findColumnsFromHeader": True},
                                        transforms=transforms, timestamp=timestamp, strict=True),
                             f"import {path.name}")
        t1 = _now()
        rows_box = {}

        def visible() -> bool:
            rows_box["n"] = self.count(target) - before
            return rows_box["n"] > 0
        queryable = self.wait_visible(visible, f"import into {target}")
        rows = rows_box["n"]
        return OpResult(rows=rows, nbytes=rows_bytes(rows, info.schema), wire_path=path, node=self.node,
                        extra={"queryable_s": queryable, "task": task, "task_s": t1 - t0})

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """The broker's CSV reply (Druid's own CSV writer) streamed to ``path``: ISO dates, times of
        day, CHAR letters; rows in time order."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        shape = _Shape(info)
        parts = []
        for c in info.schema.columns:
            name = quote(c.name)
            if c.name in shape.time_parts:
                fmt = {"DATE": "yyyy-MM-dd", "SECOND": "HH:mm:ss", "TIME": "HH:mm:ss.SSS",
                       "TIMESTAMP": "yyyy-MM-dd HH:mm:ss.SSS"}[c.ddb_type]
                parts.append(f"TIME_FORMAT(__time, '{fmt}') AS {name}")
            elif c.ddb_type == "CHAR":
                parts.append(f"{_char_letter(c.name)} AS {name}")
            else:
                parts.append(name)
        sql = (f"SELECT {', '.join(parts)} FROM {quote(self.table(layout))} WHERE {self._day_where(day)} "
               "ORDER BY __time")
        path = Path(path)
        try:
            with open(path, "wb") as out:
                self.http.sql(sql, None, header=True, sink=out)
        except OSError as exc:
            raise disk_full_error(exc, path.parent) or TargetError(f"cannot write {path}: {exc}") from exc
        table = self.table(layout)
        return OpResult(rows=None, count_rows=lambda: self.count(table, self._day_where(day)), schema=info.schema,
                        wire_path=path, node=self.node)

    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == "minute":
            name = self.minute_table(layout)
        else:
            name = self.import_table(layout) if table == IMPORT_TABLE else (table or self.append_table(layout))
        if name not in self.datasources():
            return
        # every segment of the datasource marked unused; the broker drops them within a coordinator period
        self.http.json("DELETE", f"/druid/coordinator/v1/datasources/{name}", port=self.http.coordinator_port)
        self.wait_visible(lambda: name not in self.datasources() or self.count(name) == 0, f"{name} emptied")
