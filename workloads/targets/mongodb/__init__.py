"""MongoDB: a user's MongoDB server through ``pymongo``.

Config keys (plain data, rebuilt in every worker process): ``host`` (required), ``port`` (default
27017), ``user`` and ``password`` (none: no authentication), ``database`` (default
``tickbench``), ``auth_source`` (the database holding the user; default pymongo's: ``database``
or ``admin``), ``local_engine`` (true when Tickbench started the server: described),
``timeout_ms`` (server selection and connect, default 3000: a refused port fails fast),
``batch_rows`` (documents per ``insert_many``, default 50,000), ``layout`` (``documents``, the
default, or ``timeseries``: module ``layout``) and ``granularity`` (a time-series collection's:
``seconds``, the default, ``minutes`` or ``hours``). pymongo is imported only when a connection is made,
pymongoarrow on the first read (``MissingClient`` names the ``mongodb`` extra for either).

No real MongoDB server is obtainable on the machines this is developed on: the tests run against
``mongo-java-server`` (``workloads.local_engines.mongodb``), an independent implementation of the
wire protocol. Its timings are not MongoDB's. ``describe()`` records the server's ``buildInfo``
version and, when the server is that stand-in (its ``buildInfo`` has no ``gitVersion``, which every
``mongod`` reports), says so in ``server``; every operation's ``extra["server"]`` carries the same
label so reports can flag it.

The target is put together from mixins beside this module: ``connection`` (the client, its errors,
what the server can do), ``layout`` (collections, index, ``prepare``, manifest, footprint),
``reads`` (pymongoarrow's ``find``/``aggregate``, minute bars, suite queries, report 003),
``writes`` (appends, CSV import and export, clears); ``dialect`` holds the names and BSON types.

Cold cache: MongoDB has no command to empty its WiredTiger cache; ``planCacheClear`` once per step
(``drop_cache_for_step``) where the server has it; the server's OS page cache cannot be dropped
from a client. Concurrency: every worker has its own client; MongoDB serves them concurrently.
"""
from __future__ import annotations

from typing import Any

from workloads.datasets.schema import DatasetInfo
from workloads.targets.base import Layout, Target, TargetError
from workloads.targets.common.lazy import import_client
from workloads.targets.mongodb.connection import MongoDBConnection, _first_line, _pymongo
from workloads.targets.mongodb.dialect import DOCUMENTS, VARIANTS
from workloads.targets.mongodb.layout import MongoDBLayout
from workloads.targets.mongodb.reads import MongoDBReads
from workloads.targets.mongodb.writes import MongoDBWrites

DEFAULT_PORT = 27017
DEFAULT_DATABASE = "tickbench"
DEFAULT_TIMEOUT_MS = 3000
DEFAULT_BATCH_ROWS = 50_000
DEFAULT_GRANULARITY = "seconds"
GRANULARITIES = ("seconds", "minutes", "hours")


class MongoDBTarget(MongoDBReads, MongoDBWrites, MongoDBLayout, MongoDBConnection, Target):
    kind = "mongodb"
    engine_caches_data = True        # WiredTiger's cache, which no client can empty
    read_phases = ("query", "decode")
    query_dialect = "mongodb"

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.host = str(self.config.get("host") or "").strip()
        if not self.host:
            raise TargetError("MongoDB: no host given")
        try:
            self.port = int(self.config.get("port") or DEFAULT_PORT)
        except (TypeError, ValueError):
            raise TargetError(f"MongoDB port {self.config.get('port')!r} is not a number") from None
        self.user = str(self.config.get("user") or "")
        self.password = str(self.config.get("password") or "")
        self.database = str(self.config.get("database") or DEFAULT_DATABASE)
        self.auth_source = str(self.config.get("auth_source") or "")
        self.timeout_ms = int(self.config.get("timeout_ms") or DEFAULT_TIMEOUT_MS)
        self.batch_rows = int(self.config.get("batch_rows") or DEFAULT_BATCH_ROWS)
        self.variant = str(self.config.get("layout") or DOCUMENTS).strip().lower()
        if self.variant not in VARIANTS:
            raise TargetError(f"MongoDB layout {self.config.get('layout')!r}: choose one of {', '.join(VARIANTS)}")
        self.granularity = str(self.config.get("granularity") or DEFAULT_GRANULARITY).strip().lower()
        if self.granularity not in GRANULARITIES:
            raise TargetError(f"MongoDB time-series granularity {self.config.get('granularity')!r}: choose one "
                              f"of {', '.join(GRANULARITIES)}")
        self.address = f"{self.host}:{self.port}"
        self._client = None
        self._build: dict[str, Any] | None = None
        self._info: DatasetInfo | None = None
        self._explain: bool | None = None
        self._raw_batches: bool | None = None    # the server honours aggregate's cursor batchSize 0

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "kind": self.kind, "host": self.host, "port": self.port, "database": self.database,
            "user": self.user, "local_engine": bool(self.config.get("local_engine", False)),
            "layout": self._layout_text(),
            "read_path": ("pymongoarrow: find_arrow_all (day, slice) and aggregate_arrow_all (bars, suite "
                          "queries) with the dataset's schema, BSON decoded into Arrow in C; no sort on a day or "
                          "slice read (the collection's order). This is the client path MongoDB documents for "
                          "Arrow and pandas; no faster path is known to Tickbench"),
            "phases": "query (pymongoarrow's call: server execution, transfer and BSON -> Arrow merged: it "
                      "decodes each batch as it arrives) / decode (Arrow -> DataFrame); probes: server (explain "
                      "executionStats executionTimeMillis) / transfer (raw batches) / decode where the server has "
                      "explain",
            "cold_cache": "planCacheClear once per step where the server has it; MongoDB's cache and the "
                          "server's OS page cache are not controlled"}
        try:
            info["pymongo"] = _pymongo().version
            try:
                info["pymongoarrow"] = import_client("mongodb", "pymongoarrow").__version__
            except TargetError as exc:
                info["pymongoarrow"] = str(exc)
            self.client()
            info["server_version"] = self._build.get("version")
            info["server"] = self.server_label
            if self.stand_in:
                info["warning"] = ("this server is mongo-java-server, a wire-protocol stand-in: its timings "
                                   "are not MongoDB's")
            if self._raw_batches is False:
                info["read_path"] += ("; NOT on this server for pipelines: it ignores aggregate's batchSize 0, so "
                                      "aggregate_arrow_all cannot run and pipelines are read as a cursor of "
                                      "undecoded documents decoded by pymongoarrow's decoder")
        except Exception as exc:  # a description must never stop a run
            info["error"] = _first_line(exc)
        return info

    def drop_cache(self, layout: Layout) -> list[str]:
        """Nothing: WiredTiger's cache is emptied only by a restart, and the plan cache
        (``planCacheClear``) holds plans, not data, so clearing it would make no read cold."""
        return []
