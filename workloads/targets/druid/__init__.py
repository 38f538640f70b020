"""Apache Druid: a user's Druid (or Tickbench's local one) over plain HTTP, as report 001 ran it.

Config keys (plain data, rebuilt in every worker process):

- ``host`` (required), ``port``: the broker's (or router's) HTTP port, default 8082: SQL
  (``/druid/v2/sql``), native queries (``/druid/v2``), ``/status``.
- ``coordinator_port`` (default 8081): the coordinator (segments, ``markUnused``);
  ``overlord_port`` (default: the coordinator's, as in the local engine where the coordinator is
  also the overlord): ingestion tasks.
- ``user``, ``password``: HTTP basic auth (Druid's basic-security extension), optional.
- ``data_folder``: where prepare writes the days' input files for native batch ingestion (the
  ``local`` input source): it must be readable by the server's indexer AT THE SAME PATH (the local
  engine's own folder; for a user's server, a shared mount). Default
  ``<datasets dir>/druid-input``. Imports read the dataset's CSV files by their path, the same rule.
- ``segment_cache``: the historical's segment-cache folder when it is on this machine (the local
  engine sets it): footprint's run-time space and the cold cache use it.
- ``drop_caches`` (bool, default false): a cold step may also write ``/proc/sys/vm/drop_caches``.
- ``timeout`` (connect/reply, s, default 600), ``task_timeout_s`` (an ingestion task, default 1800).
- ``local_engine``: true when Tickbench started the server (describe() says so).

This package holds ``DruidTarget`` (configuration, names, ``describe``); its parts, each
documented in its own module:
- ``dialect``: SQL text: quoting, timestamps, datasource names, SQL parameters, CHAR conversions;
- ``shape``: how a dataset's columns map to Druid's (``__time``, dimensions, ``_seq``) and back;
- ``replies``: SQL replies (csv) read into Arrow by pyarrow's CSV reader;
- ``connection``: the HTTP client (stdlib ``http.client``; no client library);
- ``server``: datasources, counts, ingestion tasks, waiting until rows are visible;
- ``layout``: prepare (native batch ingestion of the days, the manifest), footprint;
- ``reads``: read_day, read_slice, minute_bars and the suites' queries;
- ``writes``: appends, CSV import and export, clearing scratch datasources;
- ``analytics``: report 003's spread by minute and OLS sums in SQL;
- ``map_reduce``: report 003's map-reduce into a table by the multi-stage-query engine;
- ``cold_cache``: evicting the segment cache's files from the OS page cache.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from workloads.datasets.schema import DatasetInfo
from workloads.targets.base import Layout, Target
from workloads.targets.common.arrow_frames import library_versions
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.druid.dialect import _first_line, table_name
from workloads.targets.druid.connection import CONTEXT, _Http
from workloads.targets.druid.server import DruidServer
from workloads.targets.druid.layout import DruidLayout
from workloads.targets.druid.cold_cache import DruidColdCache
from workloads.targets.druid.reads import READ_PATH, DruidReads
from workloads.targets.druid.writes import DruidWrites
from workloads.targets.druid.analytics import DruidAnalytics
from workloads.targets.druid.map_reduce import NO_MSQ, DruidMapReduce, msq_loaded


class DruidTarget(DruidReads, DruidWrites, DruidAnalytics, DruidMapReduce, DruidLayout, DruidColdCache,
                  DruidServer, Target):
    kind = "druid"
    query_dialect = "druid"
    read_phases = ("server", "transfer", "decode")
    probed_ops = frozenset({"read_day", "read_slice", "minute_bars", "spread_by_minute", "ols_spread", "run_query"})

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.http = _Http(self.config)
        self._info: DatasetInfo | None = None
        self._msq: bool | None = None

    # --- configuration -----------------------------------------------------------------------
    @property
    def data_folder(self) -> Path:
        folder = self.config.get("data_folder")
        if not folder:
            from workloads.paths import default_datasets_dir
            return default_datasets_dir() / "druid-input"
        return Path(folder)

    @property
    def node(self) -> str:
        return self.http.address

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        if self._info is None or self._info.name != layout.dataset:
            self._info = _get_dataset(layout.dataset).info
        return self._info

    def table(self, layout: Layout) -> str:
        return table_name(layout.dataset, layout.scale)

    def import_table(self, layout: Layout) -> str:
        return self.table(layout) + "_import"

    def append_table(self, layout: Layout) -> str:
        return self.table(layout) + "_append"

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "kind": self.kind, "mode": "server", "host": self.http.host, "port": self.http.port,
            "coordinator_port": self.http.coordinator_port, "overlord_port": self.http.overlord_port,
            "user": self.http.user, "local_engine": bool(self.config.get("local_engine")),
            "client": "HTTP (stdlib http.client), SQL /druid/v2/sql resultFormat csv",
            "reads": "day and slice in Druid's order (no ORDER BY, no client sort); bars by TIME_FLOOR(__time, "
                     "'PT1M') with EARLIEST_BY/LATEST_BY on the arrival ordinal, ordered by minute",
            "read_path": READ_PATH,
            "query_context": CONTEXT,
            "phases": "measured: decode only (one HTTP exchange); probes: server = time to the first byte, "
                      "transfer = the rest of the reply, decode",
            "cold_cache": "local engine: posix_fadvise on the datasource's segment-cache files between a cold "
                          "step's rounds, but the historical maps them, so their pages stay and no read is "
                          "called cold; a remote server's cannot be dropped",
            "versions": library_versions()}
        try:
            status = self.http.json("GET", "/status")
            info["server_version"] = status.get("version")
            self._msq = msq_loaded(status)
            info["map_reduce"] = ("multi-stage query (INSERT ... SELECT via /druid/v2/sql/task)" if self._msq
                                  else NO_MSQ)
        except Exception as exc:            # a description must never stop a run
            info["error"] = _first_line(exc)
        return info
