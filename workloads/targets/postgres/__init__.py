"""PostgreSQL: a user's server (or one Tickbench starts, ``workloads.local_engines.postgres``)
read through ADBC's PostgreSQL driver (``adbc-driver-postgresql``), everything else through
psycopg 3 (its binary build).

Config keys (plain data, rebuilt in every worker process): ``host`` (required), ``port`` (default
5432), ``user`` (default ``postgres``), ``password``, ``database`` (default ``tickbench``; created
by ``prepare`` when missing and the user may), ``connect_timeout`` (s, default 10),
``chunk_rows`` (rows per load batch, default 500,000), ``local_engine`` (true when Tickbench
started the server: ``describe`` says so, and a cold run may then also evict the OS page cache of
the server's data files, which are on this machine).

Concurrency: each worker process has its own connections (psycopg's, and ADBC's once it reads:
two server backends each); nothing is serialised on the client side.

This module holds ``PostgresTarget`` (names, ``describe``, open/close); its parts, each
documented in its own module:
- ``dialect``: SQL text: quoting, literals, table names, the type map, text conversions;
- ``copy_formats``: data as COPY carries it (CSV for loads, binary COPY's size, read types);
- ``server``: the psycopg / ADBC client (``_Server``);
- ``layout``: prepare (one partition per day, CLUSTERed), manifest, footprint;
- ``reads``: read_day, read_slice, minute_bars (ADBC into Arrow) and the suite's queries;
- ``analytics``: report 003's computations in SQL;
- ``writes``: appends, CSV import and export, clearing scratch tables;
- ``cold_cache``: evicting a layout from the shared buffers and the OS page cache.
"""
from __future__ import annotations

import datetime as dt
from typing import Any

from workloads.datasets.schema import DatasetInfo
from workloads.targets.common.arrow_frames import library_versions
from workloads.targets.base import Layout, Target
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.postgres.dialect import table_name
from workloads.targets.postgres.server import _first_line, _Server
from workloads.targets.postgres.layout import PostgresLayout
from workloads.targets.postgres.reads import PostgresReads
from workloads.targets.postgres.analytics import PostgresAnalytics
from workloads.targets.postgres.writes import PostgresWrites
from workloads.targets.postgres.cold_cache import PostgresColdCache


# What describe() records of the server's configuration (asked of it: SHOW / pg_settings)
SETTINGS = ("shared_buffers", "work_mem", "effective_cache_size", "maintenance_work_mem",
            "max_parallel_workers_per_gather", "jit", "max_connections")
READ_PATH = ("ADBC's PostgreSQL driver (adbc_driver_postgresql.dbapi, nothing bound: the driver reads the result as "
             "COPY ... TO STDOUT (FORMAT binary) straight into Arrow) -> fetch_arrow_table -> pandas; the fastest "
             "client path measured, and the one workloads/practitioner/postgres_paths.py writes by hand. "
             "1 M-row taq day, local server, warm, median of 7: ADBC 869 ms into Arrow, against 1,080 ms for "
             "psycopg's binary COPY bytes alone (no parse) and 1,161 ms for the CSV COPY's bytes alone. Tickbench's "
             "read_day beside that hand-written path, interleaved, median of 21 on 2 busy cores: 1,647 vs 1,716 ms "
             "(ratio 0.96; its only extra work, the CHAR cast and to_pandas, takes 16 ms as the hand-written "
             "to_pandas does); before clustering and ADBC (ORDER BY over a time-ordered heap, CSV): 3,546 ms")
ORDER = ("read_day and read_slice: stored order, no ORDER BY (each day partition is CLUSTERed on (key, time, _seq), "
         "so that is index order); minute_bars: ORDER BY minute (part of the answer)")


class PostgresTarget(PostgresReads, PostgresAnalytics, PostgresWrites, PostgresLayout, PostgresColdCache, Target):
    kind = "postgres"
    engine_caches_data = True        # its shared buffers
    read_phases = ("server", "transfer", "decode")
    probed_ops = frozenset({"read_day", "read_slice", "minute_bars", "spread_by_minute"})
    query_dialect = "postgres"

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.db = _Server(self.config)
        self._info: DatasetInfo | None = None
        self._whole: tuple | None = None     # (layout, schema, SELECT, ReadShape) of its every-column reads

    # --- names ---------------------------------------------------------------------------
    def table(self, layout: Layout) -> str:
        return table_name(layout.dataset, layout.scale)

    def import_table(self, layout: Layout) -> str:
        return self.table(layout) + "_import"

    def minute_table(self, layout: Layout) -> str:
        return self.table(layout) + "_minute"

    @staticmethod
    def partition(table: str, day: dt.date) -> str:
        return f"{table}_p{day.strftime('%Y%m%d')}"

    @property
    def node(self) -> str:
        return self.db.address

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        if self._info is None or self._info.name != layout.dataset:
            self._info = _get_dataset(layout.dataset).info
        return self._info

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "kind": self.kind, "mode": "server", "host": self.db.host, "port": self.db.port, "user": self.db.user,
            "database": self.db.database, "local_engine": bool(self.config.get("local_engine")),
            "versions": library_versions(),
            "read_path": READ_PATH, "order": ORDER,
            "phases": "measured: decode only (the COPY is one libpq exchange); probes: server (EXPLAIN ANALYZE "
                      "Execution Time of the same SELECT, result kept on the server) / transfer (COPY wall time "
                      "minus server) / decode",
            "cold_cache": "between a cold step's rounds: the layout's relations evicted from the shared buffers "
                          "(pg_buffercache_evict_relation, PostgreSQL 18, superuser); local engine: also the OS "
                          "page cache of their files"}
        from importlib import metadata
        try:
            info["adbc_driver_postgresql"] = metadata.version("adbc-driver-postgresql")
        except metadata.PackageNotFoundError:
            info["adbc_driver_postgresql"] = "not installed (reads need it: tickbench[postgres])"
        try:
            import psycopg
            info["psycopg"] = psycopg.__version__
            info["libpq"] = psycopg.pq.version()
            info["psycopg_impl"] = psycopg.pq.__impl__
            said = self.db.rows("SELECT current_setting('server_version') AS v, version() AS full_version")[0]
            info["server_version"], info["server_version_full"] = said["v"], said["full_version"]
            info["server_settings"] = self.server_settings()
            info["shared_buffers"] = info["server_settings"]["shared_buffers"]
        except Exception as exc:  # a description must never stop a run
            info["error"] = _first_line(exc)
        return info

    def server_settings(self) -> dict[str, str]:
        """The settings in force that size the server's reads (``SHOW``'s text, e.g. ``'6026MB'``),
        asked of the server itself: stored with each run (``describe``)."""
        rows = self.db.rows("SELECT name, current_setting(name) AS value FROM pg_settings WHERE name = ANY(%s)",
                            (list(SETTINGS),))
        said = {r["name"]: r["value"] for r in rows}
        return {name: said[name] for name in SETTINGS if name in said}

    # --- worker side -----------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        self.db.conn()

    def close(self) -> None:
        self.db.close()
