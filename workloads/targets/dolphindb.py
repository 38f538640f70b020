"""DolphinDB: a cluster (or a single node) reached through the ``dolphindb`` Python client.

Layout (``prepare``): one database per dataset and scale, ``<db_prefix>_<dataset>_<scale key>``,
partitioned as in the reports: day (VALUE) x key (RANGE): 128 key buckets cut from the data's
keys (report 001) for TAQ, level 2 and the API table; 10 buckets for devices (report 004). The
database uses ``atomic="CHUNK"`` so concurrent appends may share partitions (report 002 §2). Tables:
the seed table (``quotes``, ``tick``, ``readings``, ``orders``), ``<table>_append`` for concurrent
appends, ``<table>_minute`` for report 003's map-reduce output. Data is generated locally and
loaded through the client in batches (``tableInsert``); days whose row count on the server is
complete are skipped, incomplete days are deleted and loaded again.

A measured read is what a user's ``session.run(query)`` costs and nothing else (the plain query
of ``ddb_scripts.plain``; under PROTOCOL_ARROW also the ``to_pandas`` a user needs for a
DataFrame, as ``decode``). Report 000's breakdown comes from probe operations, run after the
step's measured ones:
- server: measured ON the server. The query runs inside a script that reads ``now(true)`` before
  and after it, keeps the result on the server as a shared table, and returns the nanoseconds.
- transfer: that shared result requested over a bare socket (``ddb_wire``) and read to its last
  byte without decoding; the reply's size is the probe's wire bytes. Not measured under
  PROTOCOL_PICKLE (the raw reader cannot frame the vendor's pickle stream).
- decode: the client's own fetch of the same result into a DataFrame (``session.run``), minus
  the transfer time, clamped at 0. In the real client transfer and decode overlap (it decodes
  while reading), so this split is an estimate, as report 000 says.
The bare socket is opened at a worker's first probe, never before: a run without probes (report
002's) holds one session per user on its node.

Nothing of a run stays on the server. Every object it shares is named ``tickbench_...``: a
probe's result (``tickbench_w<worker>_<pid>_<random>_<n>``, one name per probe) is created inside the probe's
``try/finally`` and undefined on every path, through a fresh session when the probe's own was
lost (a reply lost or timed out); the upload sweep's table (``tickbench_upload_w...``, one per
worker, shared on its node) is undefined when the worker closes. What a killed worker or a query
still running past its client's timeout leaves behind, ``prepare`` sweeps: it undefines every
``tickbench_`` object in the shared namespace (``objs(true)``) of every node the run may use, so
two runs against one cluster at the same time would disturb each other (they would anyway).
Strings come back as the client makes them (pandas' default string type); the string mode of a
scenario does not apply to DolphinDB.

Cold cache: ``drop_cache`` runs in the worker, on its own session, before each operation (and
probe) of a cold step while no other operation of the step runs. It empties every DolphinDB cache
that could hold the layout's data: ``pnodeRun(clearAllCache, <nodes>)`` on every data node (and
compute node outside a compute group), and on a 3.x cluster with compute groups
``clearComputeNodeCache(<database>)`` on every compute node of a group (``clearAllCache`` leaves
their cache alone; DolphinDB says even this "does not guarantee that all cached data will be
cleared"). The nodes come from ``getClusterPerf`` (``mode``, ``computeGroup``), asked once per
worker; a single node is cleared with ``pnodeRun(clearAllCache)``. It returns the methods applied,
and nothing when any of them failed (so no operation is called cold on a partial clear). The
servers' OS page cache cannot be dropped from a client (report 000 did it on the servers).

Set-up and metadata (prepare, footprint, node discovery) use plain DDB sessions whatever the
profile's protocol. PROTOCOL_ARROW is checked at ``prepare`` on every node the run may use (the
first data node under the node policy ``one``, else all): a server without the formatArrow
plugin answers in the DDB format, which is recorded, and a cluster whose nodes would answer some
Arrow and some DDB is refused (its figures would mix two protocols under one label); each
measured read under ARROW that came back DDB says so (``extra["reply_format"]``). PROTOCOL_PICKLE
is refused on Python 3.13 and later, where the client silently sends DDB
(``workloads.cluster.pickle_refusal``).

Reports 001 and 004. A dataset with a side table (devices: ``info``) gets it as a dimension table
(``createTable``) in the same database, loaded once. Suite queries run their ``dolphindb`` text
(``resources/queries/*.toml``) with ``{quotes}``/``{readings}``/``{info}`` as ``loadTable`` calls
and every parameter a literal made by ``ddb_quote.literal``; the timed call is ``session.run``.
Import is ``loadTextEx`` into ``<table>_import`` (same partitioning as the seed table), export is
``saveText`` of one day, both run BY THE SERVER on files it can read or write: the server sees
``<csv_dir_on_server>/<file name>`` when that config key is set, else the client's own path, which
is right only when the server runs on this machine or shares the folder at the same path. Disk
space per table comes from ``getTabletsMeta`` on every node (replicas included, and counted).

Config keys: ``host``/``port``/``user``/``password`` (one node) or ``profile`` (a
``ClusterProfile`` dict) plus ``password``; ``db_prefix`` (default ``dfs://tickbench``);
``protocol`` (DDB|PICKLE|ARROW) and ``compress`` (override the profile's); ``node_policy``
(one|round_robin|random) and ``seed``; ``timeout`` (connect/login, s, default 10);
``query_timeout`` (one reply, s, default 3600); ``chunk_rows`` (load batch, default 200,000);
``measure_transfer`` (default true; probes read the raw reply); ``csv_dir_on_server`` (the folder
where the server reads imported and writes exported CSV files, when it is not the client's).
"""
from __future__ import annotations

import datetime as dt
import os
import posixpath
import time
from pathlib import Path
from typing import Any

import pandas as pd

from workloads.cluster import (ClusterProfile, Node, _server_text, node_info, open_session, pick_node,
                               pickle_refusal)
from workloads.targets.sizes import rows_bytes
from workloads.datasets import get_dataset
from workloads.datasets.schema import Scale, StringMode
from workloads.targets import ddb_quote as q
from workloads.targets import ddb_scripts as scripts
from workloads.targets.columns import column_schema
from workloads.targets.base import (IMPORT_TABLE, Footprint, Layout, NotSupported, OpResult,
                                    ProgressCallback, Target, TargetError)
from workloads.targets.ddb_wire import RawConnection, WireError

TABLE_NAMES = {"taq": "quotes", "level2": "tick", "devices": "readings", "api45": "orders"}
KEY_BUCKETS = {"devices": 10}          # report 004; every other dataset: report 001's 128
DEFAULT_KEY_BUCKETS = 128
DATE_ROOM_DAYS = 31                    # VALUE partitions beyond the last day, for appends
KEYS_SAMPLE = 100
MEMORY_TABLE_ALIASES = ("upload", "memory")
OBJECT_PREFIX = "tickbench_"           # every object a run shares on a node is named so
UPLOAD_PREFIX = "tickbench_upload_"
CHECK_CLOSE_S = 1.0                    # how long the pre-login check waits for the server to let go
LOST = "connection lost or reply timed out"


def profile_from_config(config: dict[str, Any]) -> ClusterProfile:
    password = str(config.get("password", ""))
    if config.get("profile"):
        profile = ClusterProfile.from_dict(config["profile"], password=password)
    elif config.get("host"):
        try:
            port = int(config.get("port", 8848))
        except (TypeError, ValueError):
            raise ValueError(f"DolphinDB port {config.get('port')!r} is not a number") from None
        profile = ClusterProfile.single(str(config["host"]), port, str(config.get("user", "admin")), password)
    else:
        raise ValueError("the DolphinDB target needs a host (and port) or a cluster profile")
    overrides = {k: config[k] for k in ("protocol", "compress", "node_policy") if k in config}
    if overrides:
        data = profile.to_dict() | overrides
        data["protocol"] = str(data["protocol"]).upper()
        profile = ClusterProfile.from_dict(data, password=password)
    return profile


def key_bounds(keys: list[str], buckets: int) -> list[str]:
    """RANGE boundaries splitting the sorted keys into ``buckets`` groups of similar size; the
    last boundary sorts after every key (DolphinDB ranges are [low, high))."""
    ordered = sorted(set(keys))
    if not ordered:
        raise ValueError("the dataset has no keys to partition by")
    count = max(1, min(buckets, len(ordered)))
    bounds = [ordered[i * len(ordered) // count] for i in range(count)]
    return bounds + [ordered[-1] + "~"]


class DolphinDBTarget(Target):
    kind = "dolphindb"
    read_phases = ("server", "transfer", "decode")
    probed_ops = frozenset({"read_day", "read_slice", "minute_bars", "spread_by_minute", "ols_spread",
                            "mapreduce_minute_bars"})

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        try:
            self.profile = profile_from_config(self.config)
            self.prefix = q.db_path(str(self.config.get("db_prefix", "dfs://tickbench")))
        except ValueError as exc:
            raise TargetError(str(exc)) from None
        if self.profile.protocol == "PICKLE" and pickle_refusal():
            raise TargetError(pickle_refusal())
        self.timeout = float(self.config.get("timeout", 10.0))
        self.query_timeout = float(self.config.get("query_timeout", 3600.0))
        self.chunk_rows = int(self.config.get("chunk_rows", 200_000))
        self.measure_transfer = bool(self.config.get("measure_transfer", True))
        self.seed = int(self.config.get("seed", 0))
        self._session = None
        self._raw: RawConnection | None = None
        self._node: Node | None = None
        self._worker = 0
        self._share_name = ""
        self._upload_name = ""
        self._probes = 0
        self._ensured: set[str] = set()
        self._clear_plan: tuple[list[str] | None, list[str]] | None = None   # learnt once per worker
        self.reply_note = ""          # what prepare learnt of the server's reply format
        self.cache_note = ""          # why the last drop_cache applied nothing, when it did not
        self.swept: list[str] = []    # what prepare's sweep undefined ("node: name")

    # --- names ---------------------------------------------------------------------------------
    def names(self, dataset: str, scale: Scale) -> scripts.Names:
        table = TABLE_NAMES.get(dataset, dataset)
        content = get_dataset(dataset).content_id[:12]   # a re-imported CSV gets a database of its own
        db = f"{self.prefix}_{dataset}_{scale.key()}" + (f"_{content}" if content else "")
        return scripts.Names(db=db, table=table, append=f"{table}_append", minute=f"{table}_minute")

    @staticmethod
    def columns(dataset: str) -> scripts.Columns:
        info = get_dataset(dataset).info
        schema = info.schema
        bid, ask = info.price_columns
        return scripts.Columns(
            names=tuple(schema.names), types=tuple(c.ddb_type for c in schema.columns),
            date=info.date_column, date_type=schema.column(info.date_column).ddb_type,
            key=info.key_column, time=info.time_column,
            time_type=schema.column(info.time_column).ddb_type, bid=bid, ask=ask)

    # --- sessions ------------------------------------------------------------------------------
    def _connect(self, node: Node, metadata: bool = False):
        """A client session on ``node``; clear errors when it fails.

        An anonymous handshake over a bare socket comes first and is closed before the login:
        it tells refused and silent apart within ``timeout``, where the client would wait for
        ``query_timeout``; a wrong password or a full node is then told by the client's login."""
        try:
            check = RawConnection(node.host, node.port, protocol="DDB", timeout=self.timeout)
        except WireError as exc:
            raise TargetError(f"DolphinDB at {node.address}: {exc}") from None
        check.close(wait_s=min(self.timeout, CHECK_CLOSE_S))
        try:
            return open_session(self.profile, node, timeout=self.query_timeout, net_timeout=self.timeout,
                                metadata=metadata)
        except ConnectionError as exc:
            raise TargetError(f"DolphinDB at {node.address}: {exc}") from None

    def _admin_session(self, node: Node | None = None):
        """A short-lived DDB session for parent-side work (prepare, footprint, describe)."""
        node = node or self.profile.data_nodes[0]
        return self._connect(node, metadata=True), node

    def _run(self, session, node: Node, script: str, *args):
        try:
            return session.run(script, *args) if args else session.run(script)
        except RuntimeError as exc:
            text = _server_text(exc)
            if "Socket is disconnected" in text or "Failed to read" in text or "IO error" in text:
                if session is self._session:
                    self.close()           # the next operation reconnects
                raise TargetError(f"DolphinDB at {node.address}: {LOST} "
                                  f"({text.split(' with IO error')[0]})") from None
            raise TargetError(f"DolphinDB at {node.address} answered: {text}") from None

    # --- parent side ---------------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        ds = get_dataset(dataset)
        names, cols = self.names(dataset, scale), self.columns(dataset)
        days, keys = ds.trading_days(scale), ds.keys(scale)
        schema_cols = list(zip(cols.names, cols.types))
        session, node = self._admin_session()
        run = lambda script, *a: self._run(session, node, script, *a)  # noqa: E731
        try:
            if not run(scripts.exists_database(names)):
                bounds = key_bounds(keys, KEY_BUCKETS.get(dataset, DEFAULT_KEY_BUCKETS))
                run(scripts.create_database(names, days[0], days[-1] + dt.timedelta(days=DATE_ROOM_DAYS), bounds))
            partition = [cols.date, cols.key]
            for table in (names.table, names.append):
                if not run(scripts.exists_table(names, table)):
                    run(scripts.create_table(names, table, schema_cols, partition))
            if self._has_minute_table(cols) and not run(scripts.exists_table(names, names.minute)):
                run(scripts.create_table(names, names.minute, scripts.minute_table_columns(cols), partition))
            loaded = self._load(session, node, ds, names, cols, scale, days, progress)
            loaded += self._load_side_tables(session, node, ds, names, scale)
            counts = self._rows_per_day(session, node, names, cols)
            rows = sum(counts.get(d, 0) for d in days)
            footprint = self._footprint(session, node, names)
        finally:
            session.close()
        self.swept = self.sweep()
        self.reply_note = self._reply_format(names, cols, days[0], keys[0])
        return Layout(dataset=dataset, scale=scale, strings=StringMode.parse(strings), days=tuple(days),
                      keys_sample=tuple(keys[:KEYS_SAMPLE]), rows=rows, footprint_bytes=footprint,
                      reused=loaded == 0, location=f"{names.db}/{names.table}")

    @staticmethod
    def _has_minute_table(cols: scripts.Columns) -> bool:
        return bool(cols.bid and cols.ask) and cols.bid != cols.ask and cols.date != cols.time

    def _rows_per_day(self, session, node, names, cols) -> dict[dt.date, int]:
        frame = self._run(session, node, scripts.rows_per_day(names, cols))
        if frame is None or len(frame) == 0:
            return {}
        return {pd.Timestamp(d).date(): int(n) for d, n in zip(frame["day"], frame["n"])}

    def _load(self, session, node, ds, names, cols, scale, days, progress) -> int:
        """Load missing days; return the rows loaded now (0 when everything was there)."""
        counts = self._rows_per_day(session, node, names, cols)
        expected = dict(zip(days, ds.day_rows(scale)))
        total = sum(expected.values())
        done, loaded = 0, 0
        insert = scripts.insert_function(names, names.table)
        hints = upload_hints(ds.info.schema)
        for index, day in enumerate(days):
            have = counts.get(day, 0)
            if have == expected[day]:
                done += have
                if progress:
                    progress(done, total, f"{day}: already loaded ({have:,} rows)")
                continue
            if have:
                self._run(session, node, scripts.delete_day(names, cols, day))
            for chunk in ds.generate_day(index, scale, StringMode.ARROW, chunk_rows=self.chunk_rows):
                self._run(session, node, insert, typed_frame(chunk, hints))
                done += len(chunk)
                loaded += len(chunk)
                if progress:
                    progress(done, total, f"{day}: {done:,} of {total:,} rows loaded")
        return loaded

    @staticmethod
    def side_tables(ds) -> dict[str, Any]:
        """The dataset's tables beside the seed table (devices: ``info``), name -> schema; each
        has its rows from ``dataset.<name>_frame(scale)``."""
        name = ds.info.extra.get("info_table")
        schema = getattr(ds, f"{name}_schema", None) if name else None
        if name and schema is not None and callable(getattr(ds, f"{name}_frame", None)):
            return {q.identifier(name, "table name"): schema}
        return {}

    def _load_side_tables(self, session, node, ds, names, scale) -> int:
        """Each side table as a dimension table, loaded once: a complete one is kept, an
        incomplete one dropped and loaded again. Returns the rows loaded now."""
        loaded = 0
        for table, schema in self.side_tables(ds).items():
            frame = getattr(ds, f"{table}_frame")(scale)
            if self._run(session, node, scripts.exists_table(names, table)):
                have = int(self._run(session, node, scripts.count_rows(names, table)))
                if have == len(frame):
                    continue
                self._run(session, node, scripts.drop_table(names, table))
            columns = [(c.name, c.ddb_type) for c in schema.columns]
            self._run(session, node, scripts.create_dimension_table(names, table, columns))
            self._run(session, node, scripts.insert_function(names, table),
                      typed_frame(frame, upload_hints(schema)))
            loaded += len(frame)
        return loaded

    def _footprint(self, session, node, names) -> int:
        value = self._run(session, node, scripts.footprint(names))
        try:
            return int(value) if value is not None and value == value else 0
        except (TypeError, ValueError):
            return 0

    def nodes_in_use(self) -> tuple[Node, ...]:
        """Every node a worker of this run may be given: the first data node under the policy
        ``one``, else all of them (the users of a step are not known here)."""
        nodes = self.profile.data_nodes
        return nodes[:1] if self.profile.node_policy == "one" else nodes

    def _reply_format(self, names, cols, day: dt.date, key: str) -> str:
        """What each node the run may use answers a table query with under PROTOCOL_ARROW (a
        node without the formatArrow plugin answers in the DDB format, silently); refused when
        some would answer Arrow and some DDB."""
        if self.profile.protocol != "ARROW":
            return ""
        script = scripts.plain(scripts.select_slice(names, cols, day, str(key)))
        arrow, ddb = [], []
        for node in self.nodes_in_use():
            session = self._connect(node)
            try:
                result = self._run(session, node, script)
            finally:
                session.close()
            (arrow if _is_arrow_table(result) else ddb).append(node.address)
        if arrow and ddb:
            raise TargetError(
                f"PROTOCOL_ARROW would mix two formats in one run: {', '.join(ddb)} answer in the DDB format "
                f"(no formatArrow plugin), {', '.join(arrow)} with Arrow; load the plugin on every node, "
                "route every user to one kind (node policy), or choose DDB")
        if arrow:
            return f"the server answered PROTOCOL_ARROW with Arrow on {plural_nodes(arrow)}"
        return (f"the server answered PROTOCOL_ARROW in the DDB format (no formatArrow plugin) on "
                f"{plural_nodes(ddb)}: figures are DDB-protocol figures")

    def sweep(self, prefix: str = OBJECT_PREFIX, empty_only: bool = False) -> list[str]:
        """Undefine every shared object named ``prefix...`` on every node the run may use (left
        by a killed worker, or a query that ran on past its client's timeout); "node: name" of
        each. ``empty_only``: empty them instead (tables that live workers still write to). A
        node that cannot be reached holds nothing a run can see: it is passed over."""
        swept = []
        for node in self.nodes_in_use():
            try:
                session, node = self._admin_session(node)
            except TargetError:
                continue
            try:
                names = self._run(session, node, scripts.shared_objects())
                for name in sorted(str(n) for n in (names if names is not None else [])):
                    if name.startswith(prefix) and q.IDENTIFIER_RE.fullmatch(name):
                        self._run(session, node, scripts.clear_memory_table(name) if empty_only
                                  else scripts.drop_shared(name))
                        swept.append(f"{node.address}: {name}")
            finally:
                session.close()
        return swept

    def footprint(self, layout: Layout) -> int:
        session, node = self._admin_session()
        try:
            return self._footprint(session, node, self.names(layout.dataset, layout.scale))
        finally:
            session.close()

    def describe(self) -> dict[str, Any]:
        from workloads.cluster import discover_nodes

        info: dict[str, Any] = {
            "kind": self.kind, "profile": self.profile.to_dict(), "db_prefix": self.prefix,
            "transfer_method": ("not measured under PROTOCOL_PICKLE" if self.profile.protocol == "PICKLE"
                                else "probe operations: bare-socket re-read of the server-kept result, "
                                     "framing walked without decoding"),
            "cold_cache": "before each operation and probe of a cold step, in the worker's session: "
                          "pnodeRun(clearAllCache) on every data node (and compute node outside a compute "
                          "group), and clearComputeNodeCache on every compute node of a 3.x compute group; "
                          "the servers' OS page cache is not controlled",
            "strings": "as the dolphindb client returns them",
        }
        if self.reply_note:
            info["reply_format"] = self.reply_note
        if self.swept:
            info["swept_at_prepare"] = self.swept
        try:
            session, node = self._admin_session()
            try:
                info["server_version"] = str(self._run(session, node, scripts.version()))
            finally:
                session.close()
            discovery = discover_nodes(self.profile, timeout=self.timeout)
            info["nodes"] = [vars(n) for n in discovery.nodes]
            if not discovery.from_cluster:
                info["nodes_note"] = discovery.note
        except (TargetError, ConnectionError, RuntimeError) as exc:
            info["error"] = str(exc)
        return info

    def drop_cache(self, layout: Layout) -> list[str]:
        """Empty every DolphinDB cache that could hold the layout's data (see the module doc), on
        this worker's own session; the methods applied, or [] when any of them failed."""
        self._require_open(layout)
        session, node = self._session, self._node
        try:
            clear, compute = self._cache_nodes()
            self._run(session, node, scripts.clear_all_cache(clear))
            applied = [f"{scripts.clear_all_cache(None)} on this single node" if clear is None else
                       f"{scripts.clear_all_cache(None)} on {', '.join(clear)}"]
            if compute:
                names = self.names(layout.dataset, layout.scale)
                self._run(session, node, scripts.clear_compute_cache(names, compute))
                applied.append(f"clearComputeNodeCache({q.string(names.db)}) on {', '.join(compute)}")
        except TargetError as exc:
            self.cache_note = str(exc)
            return []
        self.cache_note = ""
        return applied

    def _cache_nodes(self) -> tuple[list[str] | None, list[str]]:
        """(aliases clearAllCache runs on, or None for a single node; compute-group aliases),
        from getClusterPerf through this worker's session, asked once."""
        if self._clear_plan is None:
            try:
                perf = self._run(self._session, self._node, scripts.cluster_perf())
            except TargetError:
                if self._session is None or self._node.role == "compute":
                    raise      # lost, or on a compute node where pnodeRun alone reaches only its group
                self._clear_plan = (None, [])          # a single node: it has no controller to ask
            else:
                frame = perf.to_pandas() if _is_arrow_table(perf) else perf
                infos = [node_info(row) for row in frame.to_dict("records")]
                clear = [i.name for i in infos if i.mode == "data" or (i.mode == "compute" and not i.compute_group)]
                compute = [i.name for i in infos if i.mode == "compute" and i.compute_group]
                self._clear_plan = (clear or None, compute)
        return self._clear_plan

    def clear_table(self, layout: Layout, table: str = "") -> None:
        """Empty a write workload's table before a step's release (after its warm-ups, which write
        too): the upload sweep's tables, each worker's own, on every node the run may use (stale
        ones went at ``prepare``); a DFS scratch table (appends, minute bars, imports) with
        ``truncate``."""
        names = self.names(layout.dataset, layout.scale)
        if table in MEMORY_TABLE_ALIASES:
            self.sweep(UPLOAD_PREFIX, empty_only=True)
            return
        target = ({"": names.append, "minute": names.minute, IMPORT_TABLE: names.imports}.get(table)
                  or q.identifier(table, "table name"))
        session, node = self._admin_session()
        try:
            if self._run(session, node, scripts.exists_table(names, target)):
                self._run(session, node, scripts.truncate(names, target))
        finally:
            session.close()

    # --- worker side ---------------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self.close()
        self._worker = worker
        self._node = pick_node(self.profile, worker, self.seed)
        self._session = self._connect(self._node)
        tag = f"w{int(worker)}_{os.getpid()}_{os.urandom(3).hex()}"
        self._share_name = f"{OBJECT_PREFIX}{tag}"
        self._upload_name = f"{UPLOAD_PREFIX}{tag}"

    def close(self) -> None:
        """Undefine this worker's upload table, then drop its connections."""
        session, self._session = self._session, None
        if self._upload_name in self._ensured:
            self._ensured.discard(self._upload_name)
            self._undefine(session, self._upload_name)
        if session is not None:
            session.close()
        self._drop_raw()

    @property
    def node(self) -> str:
        """The node this worker talks to ("" before ``open``): the runner records it per worker."""
        return self._node.address if self._node is not None else ""

    def _require_open(self, layout: Layout) -> None:
        if self._session is None:
            self.open(layout, self._worker)

    def _measured(self, layout: Layout, body: list[str], schema=None) -> OpResult:
        """The user's ``session.run(query)`` (in probe mode: the instrumented probe)."""
        if self.probing:
            return self._probe(layout, body, schema)
        self._require_open(layout)
        frame, phases, extra = self._user_frame(scripts.plain(body))
        return OpResult(rows=len(frame), phases=phases, node=self._node.address, frame=frame, schema=schema,
                        extra=extra)

    def _user_frame(self, script: str) -> tuple[pd.DataFrame, dict[str, float], dict[str, Any]]:
        """What a user does for a DataFrame: ``session.run(script)``, and under PROTOCOL_ARROW
        the ``to_pandas`` of its Arrow table (timed as ``decode``); a DDB answer to an ARROW
        request is said in the extra facts."""
        result = self._run(self._session, self._node, script)
        phases: dict[str, float] = {}
        extra: dict[str, Any] = {}
        if _is_arrow_table(result):            # PROTOCOL_ARROW: a user calls to_pandas for a DataFrame
            start = time.perf_counter()
            result = result.to_pandas()
            phases["decode"] = time.perf_counter() - start
        elif self.profile.protocol == "ARROW":
            extra["reply_format"] = "DDB"
        return self._frame_of(result), phases, extra

    def _probe(self, layout: Layout, body: list[str], schema) -> OpResult:
        """Server time, raw transfer and client fetch of the same result, kept on the server
        under a name of this probe's own, undefined on every path."""
        self._require_open(layout)
        session, node = self._session, self._node
        self._probes += 1
        name = f"{self._share_name}_{self._probes}"
        transfer_s = wire = None
        try:
            # inside the try: the script shares its result even when its reply never arrives
            server_ns = self._run(session, node, scripts.measured(name, body))
            if self.measure_transfer and self.profile.protocol != "PICKLE":
                try:
                    reply = self._raw_connection().run_discard(scripts.fetch(name))
                except WireError as exc:
                    self._drop_raw()              # a half-read reply leaves the socket unusable
                    raise TargetError(f"DolphinDB at {node.address}: {exc}") from None
                transfer_s, wire = reply.seconds, reply.nbytes
            start = time.perf_counter()
            result = self._run(session, node, scripts.fetch(name))
            if _is_arrow_table(result):
                result = result.to_pandas()
            fetch_s = time.perf_counter() - start
        finally:
            self._undefine(self._session, name)
        frame = self._frame_of(result)
        phases = {"server": int(server_ns) / 1e9}
        extra: dict[str, Any] = {"client_fetch_s": fetch_s}
        if transfer_s is not None:
            phases["transfer"] = transfer_s
            phases["decode"] = max(0.0, fetch_s - transfer_s)
        else:
            extra["transfer"] = "not measured" + (" under PROTOCOL_PICKLE" if self.profile.protocol == "PICKLE" else "")
        return OpResult(rows=len(frame), phases=phases, node=node.address, frame=frame, schema=schema,
                        extra=extra, wire_bytes=wire)

    def _raw_connection(self) -> RawConnection:
        """The bare socket of the transfer phase, logged in at this worker's first probe."""
        if self._raw is None:
            try:
                self._raw = RawConnection(self._node.host, self._node.port, self.profile.user,
                                          self.profile.password, protocol=self.profile.protocol,
                                          compress=self.profile.compress, timeout=self.timeout)
            except WireError as exc:
                raise TargetError(f"DolphinDB at {self._node.address}: {exc}") from None
            self._raw.sock.settimeout(self.query_timeout)
        return self._raw

    def _drop_raw(self) -> None:
        if self._raw is not None:
            self._raw.close()
            self._raw = None

    def _undefine(self, session, name: str) -> None:
        """Undefine a shared object on this worker's node: through ``session`` when it can, else
        through a fresh session (``session`` may have died with the reply it was waiting for: its
        error cannot tell that from "no such object", so any error gets the second try); an
        unreachable node keeps it until the next ``prepare`` sweeps it."""
        if session is not None:
            try:
                self._run(session, self._node, scripts.drop_shared(name))
                return
            except TargetError:   # the probe's session is lost: a fresh one below drops it
                pass
        try:
            fresh, node = self._admin_session(self._node)
        except TargetError:
            return
        try:
            self._run(fresh, node, scripts.drop_shared(name))
        except TargetError:
            pass                                   # gone already, or never made
        finally:
            fresh.close()

    @staticmethod
    def _frame_of(result) -> pd.DataFrame:
        if isinstance(result, pd.DataFrame):
            return result
        raise TargetError(f"expected a table from the server, got {type(result).__name__}")

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        if columns is None:
            return self._measured(layout, scripts.select_day(names, cols, day), self._schema(layout))
        schema = column_schema(self._schema(layout), columns, layout.dataset)
        return self._measured(layout, scripts.select_day(names, cols, day, tuple(schema.names)), schema)

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        return self._measured(layout, scripts.select_slice(names, cols, day, str(key)), self._schema(layout))

    @staticmethod
    def _schema(layout: Layout):
        return get_dataset(layout.dataset).info.schema

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        try:
            body = scripts.minute_bars(names, cols, day, str(key))
        except ValueError as exc:
            raise TargetError(f"minute bars on {layout.dataset}: {exc}") from None
        return self._measured(layout, body)

    # report 003's three computations ------------------------------------------------------------
    def _day_span(self, layout: Layout, days) -> tuple[dt.date, dt.date]:
        chosen = sorted(days) if days else sorted(layout.days)
        if not chosen:
            raise TargetError("no days to compute over")
        return chosen[0], chosen[-1]

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        first, last = self._day_span(layout, days)
        try:
            body = scripts.spread_by_minute(names, cols, first, last)
        except ValueError as exc:
            raise TargetError(f"spread by minute on {layout.dataset}: {exc}") from None
        return self._measured(layout, body)

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        if not self._has_minute_table(cols):
            raise TargetError(f"map-reduce minute bars need distinct bid/ask and date/time columns; "
                              f"{layout.dataset} has none")
        first, last = self._day_span(layout, days)
        return self._measured(layout, scripts.mapreduce_minute_bars(names, cols, first, last))

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        if "bidsiz" not in cols.names or "ofrsiz" not in cols.names:
            raise TargetError(f"the OLS of report 003 needs quote sizes (bidsiz, ofrsiz); "
                              f"{layout.dataset} has none")
        first, last = self._day_span(layout, days)
        return self._measured(layout, scripts.ols_spread(names, cols, first, last, "bidsiz", "ofrsiz"))

    # writes -----------------------------------------------------------------------------------------
    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        self._require_open(layout)
        names = self.names(layout.dataset, layout.scale)
        schema = get_dataset(layout.dataset).info.schema
        if table in MEMORY_TABLE_ALIASES:
            self._ensure_memory_table(layout)
            function = scripts.memory_insert_function(self._upload_name)
        else:
            target = q.identifier(table, "table name") if table else names.append
            self._ensure_table(layout, names, target)
            function = scripts.insert_function(names, target)
        data = typed_frame(frame, upload_hints(schema))       # conversions outside the timing
        start = time.perf_counter()
        self._run(self._session, self._node, function, data)
        seconds = time.perf_counter() - start
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), schema),
                        phases={"transfer": seconds}, node=self._node.address,
                        extra={"transfer_includes_server_insert": True})

    def _ensure_memory_table(self, layout: Layout) -> None:
        """This worker's upload table, shared on its node (report 002 §3's in-memory table),
        created at its first upload, undefined by ``close``."""
        if self._upload_name in self._ensured:
            return
        cols = self.columns(layout.dataset)
        self._run(self._session, self._node,
                  scripts.create_memory_table(self._upload_name, list(zip(cols.names, cols.types))))
        self._ensured.add(self._upload_name)

    def _ensure_table(self, layout: Layout, names: scripts.Names, table: str) -> None:
        if table in self._ensured:
            return
        if not self._run(self._session, self._node, scripts.exists_table(names, table)):
            cols = self.columns(layout.dataset)
            self._run(self._session, self._node,
                      scripts.create_table(names, table, list(zip(cols.names, cols.types)), [cols.date, cols.key]))
        self._ensured.add(table)

    # --- reports 001 and 004: suite queries, import, export, footprint ----------------------------
    query_dialect = "dolphindb"

    def query_tables(self, layout: Layout) -> dict[str, str]:
        """Placeholder -> table of a suite text: the seed table (``{quotes}``, ``{readings}``)
        and the dataset's side tables (``{info}``)."""
        names = self.names(layout.dataset, layout.scale)
        tables = {names.table: names.table}
        tables.update({t: t for t in self.side_tables(get_dataset(layout.dataset))})
        return tables

    def query_script(self, layout: Layout, query, values: dict[str, Any]) -> str:
        """The script ``run_query`` sends: the query's ``dolphindb`` text, placeholders filled."""
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(f"query {query.id} has no DolphinDB text")
        try:
            return scripts.suite_query(text, self.names(layout.dataset, layout.scale),
                                       self.query_tables(layout), values)
        except ValueError as exc:
            raise TargetError(f"query {query.id}: {exc}") from None

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        """The user's ``session.run(script)`` of a suite query (and ``to_pandas`` under ARROW)."""
        script = self.query_script(layout, query, values)
        self._require_open(layout)
        frame, phases, extra = self._user_frame(script)
        return OpResult(rows=len(frame), phases=phases, node=self._node.address, frame=frame, extra=extra)

    def server_path(self, path: Path) -> str:
        """Where the server reads or writes ``path``: ``<csv_dir_on_server>/<file name>`` when that
        key is set (joined in the server folder's own style), else this machine's absolute path."""
        folder = str(self.config.get("csv_dir_on_server") or "")
        name = Path(path).name
        if not folder:
            return str(Path(path).absolute())
        if "\\" in folder and "/" not in folder:          # a Windows server's folder
            return folder.rstrip("\\") + "\\" + name
        return posixpath.join(folder, name)

    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """``loadTextEx`` of one day's CSV file into ``<table>_import`` (created on first use,
        partitioned as the seed table), run by the server on ``server_path(path)``. The timed
        call is the load alone; the rows are counted after it, through the table handle
        loadTextEx returned, on the same session. DolphinDB data is queryable once the load
        commits (no index to build): ``queryable_s`` 0."""
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        self._require_open(layout)
        self._ensure_table(layout, names, names.imports)
        script = scripts.load_text(names, names.imports, list(zip(cols.names, cols.types)),
                                   [cols.date, cols.key], self.server_path(path))
        session, node = self._session, self._node
        self._run(session, node, script)
        count = scripts.count_loaded(scripts.day_filter(cols, day))
        return OpResult(rows=None, count_rows=lambda: _count(self._run(session, node, count)),
                        schema=get_dataset(layout.dataset).info.schema, node=node.address,
                        wire_path=path, extra={"queryable_s": 0.0})

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """``saveText`` of one day of the seed table, written by the server at ``server_path(path)``;
        the day's rows are counted after the timed call. ``wire_bytes``: the file's size when
        this machine sees it at ``path`` (written or rewritten by this call), else unknown."""
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        self._require_open(layout)
        before = _stat(path)
        session, node = self._session, self._node
        self._run(session, node, scripts.save_text(names, cols, day, self.server_path(path)))
        after = _stat(path)
        wire = after[1] if after is not None and after != before else None
        count = scripts.count_rows(names, names.table, scripts.day_filter(cols, day))
        return OpResult(rows=None, count_rows=lambda: _count(self._run(session, node, count)),
                        schema=get_dataset(layout.dataset).info.schema, node=node.address,
                        wire_bytes=wire)

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        """Bytes of the seed table ("") or the import table from ``getTabletsMeta`` on every data
        node: replicas included, and counted (tablet copies / distinct chunks)."""
        names = self.names(layout.dataset, layout.scale)
        target = names.imports if table == IMPORT_TABLE else (q.identifier(table, "table name")
                                                                if table else names.table)
        session, node = self._admin_session()
        try:
            if not self._run(session, node, scripts.exists_table(names, target)):
                return Footprint(bytes=0, method=f"{target} does not exist yet")
            frame = self._run(session, node, scripts.footprint_detail(names, target))
        finally:
            session.close()
        copies, chunks = _count(frame["copies"].iloc[0]), _count(frame["chunks"].iloc[0])
        used = frame["bytes"].iloc[0]
        return Footprint(
            bytes=int(used) if used == used else 0,
            replicas=round(copies / chunks) if chunks else None,
            method="getTabletsMeta diskUsage summed over every data node (pnodeRun), replicas included; "
                   "replicas = tablet copies / distinct chunkIds. No per-column sizes: DolphinDB "
                   "documents none (getTabletsMeta and getChunksMeta report whole tablets and chunks)")


# --- frames on their way up ------------------------------------------------------------------------
_HINT_TYPES = ("DATE", "SECOND", "TIME", "TIMESTAMP", "SYMBOL", "STRING", "MINUTE", "DATETIME")


def upload_hints(schema) -> dict[str, int]:
    """``__DolphinDB_Type__`` for the client: without it datetime64 goes up as NANOTIMESTAMP and
    strings as STRING, which DolphinDB will not insert into DATE/SECOND/SYMBOL columns."""
    import dolphindb.settings as keys

    return {c.name: getattr(keys, f"DT_{c.ddb_type}") for c in schema.columns if c.ddb_type in _HINT_TYPES}


def typed_frame(frame: pd.DataFrame, hints: dict[str, int]) -> pd.DataFrame:
    """The frame ready for upload: categories as strings (the client refuses category), hints set."""
    categories = [n for n in frame.columns if isinstance(frame[n].dtype, pd.CategoricalDtype)]
    if categories:
        frame = frame.copy()
        for name in categories:
            frame[name] = frame[name].astype("str")
    object.__setattr__(frame, "__DolphinDB_Type__", {k: v for k, v in hints.items() if k in frame.columns})
    return frame


def plural_nodes(addresses: list[str]) -> str:
    return (f"node {addresses[0]}" if len(addresses) == 1
            else f"all {len(addresses)} nodes ({', '.join(addresses)})")


def _is_arrow_table(result) -> bool:
    return hasattr(result, "to_pandas") and hasattr(result, "schema") and not isinstance(result, pd.DataFrame)


def _count(value) -> int:
    """A count the server sent (a scalar, or NaN/None for an empty table) as an int."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TargetError(f"expected a row count from the server, got {value!r}") from None
    return int(number) if number == number else 0


def _stat(path) -> tuple[int, int] | None:
    """(mtime in ns, size) of a local file, or None when this machine does not see it."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size
