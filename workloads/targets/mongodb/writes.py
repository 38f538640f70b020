"""Writes to MongoDB: appends, CSV import and export, and emptying a scratch collection.

Import: MongoDB has no server-side CSV loader (``mongoimport`` is a separate tool, not a server
call): the CSV is parsed on the client (``workloads.datasets.csvread``: ``decode``), converted to
documents and inserted with ``insert_many`` in batches (``query``); the index build after it is
timed apart: ``extra["queryable_s"]``. Export: no server-side CSV exporter either: the day is read
(``find``) and written with ``workloads.datasets.csvwrite.write_csv`` (ISO style).
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd

from workloads.targets.base import IMPORT_TABLE, Layout, OpResult
from workloads.targets.common.sizes import rows_bytes
from workloads.targets.mongodb.connection import _now
from workloads.targets.mongodb.dialect import documents


class MongoDBWrites:
    """Appends, imports, exports and clears (a mixin of ``MongoDBTarget``)."""

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        """Rows as documents (``decode``: DataFrame -> documents) into ``<table>_append`` (or
        ``table``) with ``insert_many`` (``query``: encoding, sending, the server's write)."""
        info = self._dataset_info(layout)
        target = self.db()[table or self.table(layout) + "_append"]
        t0 = _now()
        docs = documents(frame, info.schema)
        t1 = _now()
        if docs:
            self._call(target.insert_many, docs, ordered=False)
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema),
                        phases={"decode": t1 - t0, "query": t2 - t1}, node=self.address, extra=self._extra())

    def row_count(self, layout: Layout, table: str = "") -> int:
        return int(self._call(self.db()[table or self.table(layout)].count_documents, {}))

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self.row_count(layout, table or self.table(layout) + "_append")


    # --- reports 001 and 004 ---------------------------------------------------------------------
    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """No server-side CSV loader: parsed on the client (``decode``), ``insert_many`` in
        batches (``query``); the index build afterwards timed apart (``queryable_s``)."""
        from workloads.datasets.csvread import iter_csv
        info = self._dataset_info(layout)
        target = self.db()[self.import_table(layout)]
        decode = query = 0.0
        rows = 0
        t = _now()
        for chunk in iter_csv(path, layout.dataset, chunk_rows=self.batch_rows):
            docs = documents(chunk, info.schema)
            t1 = _now()
            decode += t1 - t
            if docs:
                self._call(target.insert_many, docs, ordered=False)
            rows += len(docs)
            t = _now()
            query += t - t1
        start = _now()
        self._call(target.create_index, self.index_keys(info, main=False), name="day_key")
        indexed = _now() - start
        return OpResult(rows=rows, nbytes=rows_bytes(rows, info.schema), wire_path=path, node=self.address,
                        phases={"decode": decode, "query": query},
                        extra=self._extra(queryable_s=indexed, index="create_index (day, key) after the load"))

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """No server-side CSV exporter: the day read with ``find`` and written with
        ``workloads.datasets.csvwrite.write_csv`` (ISO style)."""
        from workloads.datasets.csvwrite import write_csv
        read = self.read_day(layout, day)
        t0 = _now()
        rows = write_csv(read.frame, path, self._dataset_info(layout).schema, style="iso")
        t1 = _now()
        return OpResult(rows=rows, schema=self._dataset_info(layout).schema, wire_path=path, node=self.address,
                        phases={**read.phases, "decode": read.phases["decode"] + t1 - t0},
                        extra=self._extra(exporter="client: find + write_csv (MongoDB has no server CSV export)"))


    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == "minute":
            name = self.minute_table(layout)
        elif table == IMPORT_TABLE:
            name = self.import_table(layout)
        else:
            name = table or self.table(layout) + "_append"
        self._call(self.db().drop_collection, name)     # its index too: an import builds it again
