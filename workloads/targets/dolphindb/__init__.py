"""DolphinDB: a cluster (or a single node) reached through the ``dolphindb`` Python client.

The target is put together from mixins beside this module, one job each: ``connection``
(sessions, the probe's bare socket, the sweep of what a run shared on the nodes), ``layout``
(databases, partitions, ``prepare``, the ARROW reply check, footprints), ``reads`` (measured reads
and their server/transfer/decode probes, minute bars, report 003, suite queries), ``writes``
(appends, ``loadTextEx`` import, ``saveText`` export, clears) and ``cold_cache`` (``drop_cache``);
``frames`` types frames for upload. The scripts they send are built in ``scripts`` from parts
quoted by ``quote``; ``wire`` reads raw replies; ``cluster`` holds profiles and node discovery.

PROTOCOL_PICKLE is refused on Python 3.13 and later, where the client silently sends DDB
(``workloads.targets.dolphindb.cluster.pickle_refusal``).

Config keys: ``host``/``port``/``user``/``password`` (one node) or ``profile`` (a
``ClusterProfile`` dict) plus ``password``; ``db_prefix`` (default ``dfs://tickbench``);
``protocol`` (DDB|PICKLE|ARROW) and ``compress`` (override the profile's); ``node_policy``
(one|round_robin|random) and ``seed``; ``use_compute_nodes`` (users on the profile's compute nodes
instead of its data nodes; default false); ``priority`` (0-8) and ``parallelism`` (1-64): the job
priority and parallelism every ``session.run`` asks for (default the client's own 4 and 64; the
reproduced reports set parallelism 2, as their API sent); the server grants at most the user's caps
(``setMaxJobPriority``, ``setMaxJobParallelism``: a user other than an administrator gets
parallelism 2 unless raised), and the run records what it granted, read back from
``getConsoleJobs()``; ``timeout`` (connect/login, s, default 10);
``query_timeout`` (one reply, s, default 3600); ``chunk_rows`` (load batch, default 200,000);
``measure_transfer`` (default true; probes read the raw reply); ``csv_dir_on_server`` (the folder
where the server reads imported and writes exported CSV files, when it is not the client's).
"""
from __future__ import annotations

from typing import Any

from workloads.targets.base import Target, TargetError
from workloads.targets.dolphindb import quote as q
from workloads.targets.dolphindb import console_jobs, scripts
from workloads.targets.dolphindb.cluster import ClusterProfile, Node, pickle_refusal
from workloads.targets.dolphindb.cold_cache import DolphinDBColdCache
from workloads.targets.dolphindb.connection import (CLIENT_PARALLELISM, CLIENT_PRIORITY, MAX_PRIORITY,
                                                    DolphinDBConnection, job_setting, scheduling_note)
from workloads.targets.dolphindb.layout import DolphinDBLayout
from workloads.targets.dolphindb.made import DolphinDBMade
from workloads.targets.dolphindb.reads import PICKLE_TRANSFER_FROM, DolphinDBReads
from workloads.targets.dolphindb.wire import RawConnection
from workloads.targets.dolphindb.writes import DolphinDBWrites


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
    overrides = {k: config[k] for k in ("protocol", "compress", "node_policy", "use_compute_nodes") if k in config}
    if overrides:
        data = profile.to_dict() | overrides
        data["protocol"] = str(data["protocol"]).upper()
        profile = ClusterProfile.from_dict(data, password=password)
    return profile


class DolphinDBTarget(DolphinDBReads, DolphinDBWrites, DolphinDBColdCache, DolphinDBLayout, DolphinDBMade,
                      DolphinDBConnection, Target):
    kind = "dolphindb"
    engine_caches_data = True        # its chunk and OLAP caches
    read_phases = ("server", "transfer", "decode")
    probed_ops = frozenset({"read_day", "read_slice", "minute_bars", "spread_by_minute", "ols_spread",
                            "mapreduce_minute_bars"})
    query_dialect = "dolphindb"

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
        self.priority = job_setting(self.config, "priority", CLIENT_PRIORITY, 0, MAX_PRIORITY)
        self.parallelism = job_setting(self.config, "parallelism", CLIENT_PARALLELISM, 1, 64)
        self._session = None
        self._session_id = ""         # the worker session's server id, kept to cancel its lost jobs
        self._raw: RawConnection | None = None
        self._node: Node | None = None
        self._worker = 0
        self._share_name = ""
        self._upload_name = ""
        self._probes = 0
        self._ensured: set[str] = set()
        self._clear_plan: tuple[list[str] | None, list[str]] | None = None   # renewed when a clear fails
        self._cluster_data_nodes: tuple[Node, ...] | None = None   # reported online, when none is listed
        self.cancelled: list[str] = []  # jobs a lost reply left running, cancelled ("node: rootJobId")
        self.cancel_note = ""           # what the last cancel could not do, when it could not
        self.reply_note = ""          # what prepare learnt of the server's reply format
        self.cache_note = ""          # why the last drop_cache applied nothing, when it did not
        self.swept: list[str] = []    # what prepare's sweep undefined ("node: name")

    def _granted(self, session, node: Node) -> str:
        """The job priority and parallelism the server grants this user, read back from the job
        asking (``getConsoleJobs``): a user's caps lower what a run asks, silently."""
        granted = self._run(session, node, console_jobs.job_settings(session.getSessionId()))
        if granted is None or len(granted) == 0:
            return f"priority {self.priority}, parallelism {self.parallelism} asked; what the server granted not read"
        priority, parallelism = int(granted["priority"].iloc[0]), int(granted["parallelism"].iloc[0])
        text = (f"priority {priority}, parallelism {parallelism} on every job (session.run), as the server "
                f"granted them{scheduling_note(priority, parallelism)}")
        if (priority, parallelism) != (self.priority, self.parallelism):
            text += (f"; asked {self.priority} and {self.parallelism}: the user's caps lowered them "
                     "(setMaxJobPriority, setMaxJobParallelism)")
        return text

    def describe(self) -> dict[str, Any]:
        from workloads.targets.dolphindb.cluster import discover_nodes

        info: dict[str, Any] = {
            "kind": self.kind, "profile": self.profile.to_dict(), "db_prefix": self.prefix,
            "transfer_method": (f"probe operations: {PICKLE_TRANSFER_FROM}: the server-kept result re-read "
                                "in DolphinDB's own encoding over a bare socket (the raw reader cannot frame "
                                "the pickle stream), framing walked without decoding; so decode is PICKLE's "
                                "fetch minus a DDB re-read: two encodings, an estimate"
                                if self.profile.protocol == "PICKLE"
                                else "probe operations: bare-socket re-read of the server-kept result, "
                                     "framing walked without decoding"),
            "job_scheduling": f"priority {self.priority}, parallelism {self.parallelism} asked of every job "
                              f"(session.run){scheduling_note(self.priority, self.parallelism)}; "
                              "what the server granted not read",
            "user_nodes": ("compute nodes (use_compute_nodes)" if self.profile.use_compute_nodes
                           else "data nodes"),
            "cold_cache": "before each operation and probe of a cold step, in the worker's session: "
                          "pnodeRun(flushOLAPCache) (fresh writes out of the OLAP cache engine), then "
                          "pnodeRun(clearAllCache) on every data node (and compute node outside a compute "
                          "group), and clearComputeNodeCache on every compute node of a 3.x compute group; "
                          "the servers' OS page cache is dropped by each host's agent where the target "
                          "names agents (--agent), and left as it is where it names none",
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
                info["job_scheduling"] = self._granted(session, node)
            finally:
                session.close()
            discovery = discover_nodes(self.profile, timeout=self.timeout)
            info["nodes"] = [vars(n) for n in discovery.nodes]
            if not discovery.from_cluster:
                info["nodes_note"] = discovery.note
        except (TargetError, ConnectionError, RuntimeError) as exc:
            info["error"] = str(exc)
        return info
