"""DuckDB, the embedded default target: one database file, one table per dataset and scale.

The target class is here; its parts live beside it, by job:
- ``dialect.py``: the SQL text (quoting, the schema's types, CSV text conversions, table names);
- ``connection.py``: the file's connections and DuckDB's one-writer rule (concurrency);
- ``layout.py``: ``prepare`` (the layout, day by day, resumable), manifest, footprint;
- ``reads.py``: a day, a key's slice, minute bars, the suites' SQL, report 003's computations
  (and the phases of a read);
- ``writes.py``: appends, CSV import and export, clearing, report 003's minute table.
"""
from __future__ import annotations

from typing import Any

import duckdb

from workloads.datasets.schema import DatasetInfo
from workloads.targets.base import Layout, Target
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.duckdb.connection import DuckDBConnection
from workloads.targets.duckdb.dialect import table_name
from workloads.targets.duckdb.layout import DuckDBLayout
from workloads.targets.duckdb.reads import DuckDBReads
from workloads.targets.duckdb.writes import DuckDBWrites


class DuckDBTarget(DuckDBReads, DuckDBWrites, DuckDBLayout, DuckDBConnection, Target):
    kind = "duckdb"
    read_phases = ("query", "decode")
    query_dialect = "duckdb"   # the suites' text it runs (reports 001 and 004)

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self._reader: duckdb.DuckDBPyConnection | None = None
        self._info: DatasetInfo | None = None

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        if self._info is None or self._info.name != layout.dataset:
            self._info = _get_dataset(layout.dataset).info
        return self._info

    def table(self, layout: Layout) -> str:
        return table_name(layout.dataset, layout.scale)
