"""ClickHouse: embedded chDB (a data folder on this machine) or a user's ClickHouse server through
``clickhouse-connect``: the same target, a server profile instead of a folder.

Config keys (plain data, rebuilt in every worker process):

- embedded (no ``host``): ``path``, the chDB data folder (default
  ``workloads.paths.default_datasets_dir() / "clickhouse"``); ``session``: ``auto`` (default) or
  ``per_operation`` (see Concurrency); ``lock_timeout_s`` (default 120); ``threads``
  (``max_threads`` of the session; default: chDB's).
- server (``host`` set): ``host``, ``port`` (the HTTP interface, default 8123), ``user`` (default
  ``default``), ``password``, ``database`` (default ``tickbench``), ``secure`` (bool: HTTPS);
  ``timeout`` (connect, s, default 10), ``query_timeout`` (one reply, s, default 3600),
  ``compress`` (clickhouse-connect's compression of inserts and replies, default true).
- both: ``chunk_rows`` (rows per load batch, default 1,000,000), ``drop_caches`` (a cold run may
  also write ``/proc/sys/vm/drop_caches``, default false). Embedded uses the database
  ``tickbench`` inside its folder (``database`` also applies).

chDB and clickhouse-connect are imported only inside the backend that needs them (a missing one
raises ``MissingClient`` naming the ``clickhouse`` extra).

The target is a package, one module per job: ``dialect`` (SQL text, quoting, parameters, the type
map and DDL, Arrow and CSV conversions), ``embedded`` (the chDB folder and its turns between
processes: Concurrency), ``server`` (clickhouse-connect and probes' HTTP requests), and the mixins
of ``ClickHouseTarget``: ``layout`` (prepare, the manifest, footprints: Layout), ``reads`` (days,
slices, bars, suite queries, report 003: Phases), ``writes`` (appends, CSV import and export) and
``cold_cache`` (Cold cache).
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workloads.datasets.schema import DatasetInfo
from workloads.targets.base import Layout, Target, TargetError
from workloads.targets.clickhouse.cold_cache import ClickHouseColdCache
from workloads.targets.clickhouse.dialect import TIME_PRECISION, _first_line, quote, table_name
from workloads.targets.clickhouse.embedded import _ChdbConn, _Folder
from workloads.targets.clickhouse.layout import ClickHouseLayout
from workloads.targets.clickhouse.reads import ClickHouseReads
from workloads.targets.clickhouse.server import _Server, _ServerConn
from workloads.targets.clickhouse.writes import ClickHouseWrites
from workloads.targets.common.arrow_frames import library_versions
from workloads.targets.common.lazy import get_dataset as _get_dataset

DEFAULT_DATABASE = "tickbench"
DEFAULT_LOCK_TIMEOUT_S = 120.0
SESSION_MODES = ("auto", "per_operation")


class ClickHouseTarget(ClickHouseReads, ClickHouseWrites, ClickHouseLayout, ClickHouseColdCache, Target):
    kind = "clickhouse"
    engine_caches_data = True        # a server's mark and uncompressed caches
    read_phases = ("query", "decode")
    query_dialect = "clickhouse"

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.server = bool(str(self.config.get("host") or "").strip())
        self.database = str(self.config.get("database") or DEFAULT_DATABASE)
        mode = str(self.config.get("session") or "auto")
        if mode not in SESSION_MODES:
            raise TargetError(f"chDB session mode {mode!r}: choose one of {', '.join(SESSION_MODES)}")
        self.session_mode = mode
        self._backend: _Folder | _Server | None = None
        self._info: DatasetInfo | None = None
        if self.server:
            self._backend = _Server(self.config)
            # a server's read is one client call: its split comes from probe operations
            self.read_phases = ("server", "transfer", "decode")
            self.probed_ops = frozenset({"read_day", "read_slice", "minute_bars", "spread_by_minute", "ols_spread"})

    # --- configuration ---------------------------------------------------------------------
    @property
    def path(self) -> Path:
        path = self.config.get("path")
        if not path:
            from workloads.paths import default_datasets_dir
            return default_datasets_dir() / "clickhouse"
        return Path(path)

    def _db(self) -> "_Folder | _Server":
        if self._backend is None:
            self._backend = _Folder(self.path, hold=self.session_mode == "auto",
                                    timeout=float(self.config.get("lock_timeout_s") or DEFAULT_LOCK_TIMEOUT_S),
                                    threads=self.config.get("threads"))
        return self._backend

    @contextmanager
    def _conn(self, hold: bool | None = None) -> Iterator[tuple["_ChdbConn | _ServerConn", dict[str, Any]]]:
        """Statements on the engine, with the facts of getting it (embedded: the folder's turn;
        ``hold=False``: close the session after the block, as the parent always does)."""
        db = self._db()
        if isinstance(db, _Server):
            yield _ServerConn(db), {}
            return
        with db.session(hold) as (con, facts):
            yield con, facts

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        if self._info is None or self._info.name != layout.dataset:
            self._info = _get_dataset(layout.dataset).info
        return self._info

    def fq(self, table: str) -> str:
        return f"{quote(self.database)}.{quote(table)}"

    def table(self, layout: Layout) -> str:
        return table_name(layout.dataset, layout.scale)

    def import_table(self, layout: Layout) -> str:
        return self.table(layout) + "_import"

    def minute_table(self, layout: Layout) -> str:
        """Where the map-reduce writes its minute quotes (DolphinDB: ``quotes_minute``)."""
        return self.table(layout) + "_minute"

    @property
    def node(self) -> str:
        return self._backend.address if isinstance(self._backend, _Server) else ""

    # --- parent side (prepare and footprints: layout; cold cache: cold_cache) ----------------
    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {"kind": self.kind, "database": self.database, "time_precision": TIME_PRECISION,
                                "versions": library_versions()}
        if self.server:
            server: _Server = self._backend
            info.update({"mode": "server", "host": server.host, "port": server.port, "user": server.user,
                         "secure": server.secure, "phases": "measured: decode only (query_arrow is one call); "
                         "probes: server (X-ClickHouse-Summary elapsed_ns) / transfer / decode",
                         "cold_cache": "SYSTEM DROP ... caches once per step where the server allows; "
                                       "the server's OS page cache is not controlled"})
            try:
                import clickhouse_connect
                info["clickhouse_connect"] = clickhouse_connect.__version__
                with self._conn() as (con, _):
                    said = con.rows("SELECT version() AS version, timezone() AS timezone")[0]
                info["server_version"], info["server_timezone"] = said["version"], said["timezone"]
                display = {k.lower(): v for k, v in server.ping_headers().items()}.get(
                    "x-clickhouse-server-display-name")
                if display:
                    info["server_display_name"] = display
            except Exception as exc:  # a description must never stop a run
                info["error"] = _first_line(exc)
            return info
        info.update({"mode": "embedded", "engine": "chDB", "path": str(self.path), "session": self.session_mode,
                     "phases": "query (folder turn + execution into Arrow, in-process) / decode",
                     "cold_cache": "SYSTEM DROP ... caches, then the OS cache of the folder's files"})
        try:
            import chdb
            info["chdb"] = chdb.__version__
            with self._conn(hold=False) as (con, _):
                info["clickhouse_engine"] = con.rows("SELECT version() AS v")[0]["v"]
        except Exception as exc:
            info["error"] = _first_line(exc)
        return info

    # --- worker side -----------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        db = self._db()
        if isinstance(db, _Server):
            db.client()                     # connect and log in, outside timing
        else:
            db.ready()                      # load chDB; the folder is taken per operation

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    # --- checks and reports ----------------------------------------------------------------
    def sql_rows(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Rows of a statement on the engine, as dicts (checks and reports; never timed)."""
        with self._conn(hold=False) as (con, _):
            return con.rows(sql, params)
