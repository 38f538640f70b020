"""QuestDB: a user's QuestDB server (or one Tickbench started on loopback, ``local_engine``).

Config keys (plain data, rebuilt in every worker process): ``host`` (default 127.0.0.1),
``port`` (PostgreSQL wire, default 8812), ``http_port`` (REST: ``/exec``, ``/imp``, ``/exp`` and ILP
over HTTP, default 9000), ``user`` / ``password`` (PG wire; QuestDB's defaults admin / quest; sent to
HTTP as basic auth too, which an open-source server without HTTP users ignores), ``database``
(default ``qdb``: QuestDB has one database, the name is only checked by PG wire), ``timeout``
(connect, s, default 10), ``wal_timeout_s`` (how long to wait for a WAL table to apply its
writes, default 300), ``chunk_rows`` (rows per ILP batch at prepare, default 1,000,000),
``local_engine`` (true when Tickbench started the server: reported by ``describe``).

Writes are ILP over HTTP (``Sender.dataframe``). A WAL table applies committed writes later
(asynchronously to queries): after a write that must be seen (prepare's day counts, appended rows,
imports), the target waits until ``wal_tables()`` shows the table's ``writerTxn`` caught up with
its ``sequencerTxn`` (a suspended table is an error). For an import that wait is
``extra["queryable_s"]``; an append's is not in its timing (a user's ILP append returns when the
server has committed it to the WAL).

Cold cache: QuestDB has no statement that drops its caches (it reads memory-mapped column files;
the OS page cache of a server's files cannot be dropped from a client): nothing is applied, and
``drop_cache``/``drop_cache_for_step`` say so by returning nothing.

This module holds ``QuestDBTarget`` (names, ``describe``, ``drop_cache``, open/close); its parts,
each documented in its own module:
- ``dialect``: SQL text: quoting, literals, table names, the designated timestamp, type maps;
- ``frames``: frames as ILP sends them, Parquet replies' times made naive;
- ``server``: the PG wire and HTTP client (``_Server``: ``/exec``, ``/exp``, ``/imp``, ILP, WAL waits);
- ``layout``: prepare (one WAL table partitioned by day), manifest, footprint;
- ``reads``: read_day, read_slice, minute_bars (``/exp`` Parquet) and the suite's queries;
- ``analytics``: report 003's computations in SQL;
- ``writes``: appends, CSV import and export, clearing scratch tables.
"""
from __future__ import annotations

from typing import Any

from workloads.datasets.schema import DatasetInfo
from workloads.targets.common.arrow_frames import library_versions
from workloads.targets.base import Layout, Target
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.questdb.dialect import table_name
from workloads.targets.questdb.server import _first_line, _Server
from workloads.targets.questdb.layout import QuestDBLayout
from workloads.targets.questdb.reads import QuestDBReads
from workloads.targets.questdb.analytics import QuestDBAnalytics
from workloads.targets.questdb.writes import QuestDBWrites


# issue 21: measured beside the hand-written path (workloads/practitioner/questdb_paths.py)
READ_PATH = ("QuestDB's fastest documented path: /exp?fmt=parquet in stored order + pyarrow.parquet + to_pandas, "
             "nothing else (the hand-written path's calls); 1 M-row TAQ day, warm, median of 7, interleaved, five "
             "runs on a shared 2-core machine: day 238-384 ms, ratio 0.85-1.23 (median 1.03; 1,062 ms before, with "
             "ORDER BY symbol, time, _seq), slice median 1.07, bars median 1.03")


class QuestDBTarget(QuestDBReads, QuestDBAnalytics, QuestDBWrites, QuestDBLayout, Target):
    kind = "questdb"
    query_dialect = "questdb"
    read_phases = ("server", "transfer", "decode")
    probed_ops = frozenset({"read_day", "read_slice", "minute_bars", "run_query", "spread_by_minute"})

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self._server = _Server(self.config)
        self._info: DatasetInfo | None = None
        self.wal_timeout = float(self.config.get("wal_timeout_s") or 300.0)

    @property
    def node(self) -> str:
        return self._server.address

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        if self._info is None or self._info.name != layout.dataset:
            self._info = _get_dataset(layout.dataset).info
        return self._info

    def table(self, layout: Layout) -> str:
        return table_name(layout.dataset, layout.scale)

    def import_table(self, layout: Layout) -> str:
        return self.table(layout) + "_import"

    def minute_table(self, layout: Layout) -> str:
        return self.table(layout) + "_minute"

    def describe(self) -> dict[str, Any]:
        server = self._server
        info: dict[str, Any] = {
            "kind": self.kind, "host": server.host, "port": server.port, "http_port": server.http_port,
            "user": server.user, "database": server.database, "local_engine": bool(self.config.get("local_engine")),
            "versions": library_versions(),
            "reads": "HTTP /exp fmt=parquet, then pyarrow.parquet + to_pandas; day and slice in the table's "
                     "stored order (no ORDER BY), bars by SAMPLE BY 1m",
            "read_path": READ_PATH,
            "writes": "ILP over HTTP (questdb.Sender.dataframe); WAL applied before counting",
            "phases": "measured: decode only (/exp is one exchange); probes: server (/exec timings "
                      "compiler+execute+count) / transfer / decode",
            "cold_cache": "none: QuestDB has no statement dropping its caches; the server's page cache is not "
                          "controlled"}
        try:
            from importlib import metadata
            for package in ("questdb", "psycopg"):
                try:
                    info[package] = metadata.version(package)
                except metadata.PackageNotFoundError:
                    info[package] = ""
            build = server.rows("SELECT build() AS b")[0]["b"]
            info["server_build"] = build
            marker = "QuestDB "
            if marker in build:
                info["server_version"] = build.split(marker, 1)[1].split(",")[0].strip()
        except Exception as exc:       # a description must never stop a run
            info["error"] = _first_line(exc)
        return info

    def drop_cache(self, layout: Layout) -> list[str]:
        return []        # the server maps its column files: no client can evict them (describe says so)

    # --- worker side -----------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        self._server.pg()                 # connect and log in, outside timing

    def close(self) -> None:
        self._server.close()
