"""Cold cache on DolphinDB: emptying every cache that could hold a layout's (or a table in
place's) data.

``drop_cache`` runs in the worker, on its own session, before each operation (and probe) of a
cold step while no other operation of the step runs. It empties every DolphinDB cache that could
hold the data (``clear_engine_caches``, shared with tables in place): a TSDB database's cache
engine first (``pnodeRun(flushTSDBCache, <nodes>)``: always on, it holds fresh writes in memory),
then ``pnodeRun(flushOLAPCache, <nodes>)`` (the OLAP cache engine keeps fresh writes in memory until
it is 30 % full; where it is off DolphinDB refuses the flush, noted), then
``pnodeRun(clearAllCache, <nodes>)`` on every data node (and compute node outside a compute group),
and on a 3.x cluster with compute groups ``clearComputeNodeCache(<database>)`` on every compute
node of a group (``clearAllCache`` leaves their cache alone; DolphinDB says even this "does not
guarantee that all cached data will be cleared"). The nodes come from ``getClusterPerf``
(``clear_plan``: ``mode``, ``computeGroup``; a node whose ``state`` is not online is left out),
asked before every clear (a node down at the last clear may be back, its cache warm) and asked
again once when a clear fails (a node gone down since); a single node is cleared with
``pnodeRun(clearAllCache)``. It returns the methods applied, and nothing when any of them failed
(so no operation is called cold on a partial clear). The servers' OS page cache cannot be dropped
from a client: a Tickbench agent on each server host drops it (``workloads.agent``, asked by the
worker after this clear), as report 000 did on the servers; without agents a read is engine-cold
only, and says so.
"""
from __future__ import annotations

from workloads.targets.base import Layout, TargetError
from workloads.targets.common.cleared import NOTE
from workloads.targets.dolphindb import quote as q
from workloads.targets.dolphindb import scripts
from workloads.targets.dolphindb.cluster import node_info
from workloads.targets.dolphindb.frames import _is_arrow_table


class DolphinDBColdCache:
    """``drop_cache`` and the nodes it clears (a mixin of ``DolphinDBTarget``)."""

    def drop_cache(self, layout: Layout) -> list[str]:
        """Empty every DolphinDB cache that could hold the layout's data (see the module doc), on
        this worker's own session; the methods applied, or [] when any of them failed."""
        self._clear_plan = None              # asked anew: a node down at the last clear may be back, warm
        try:
            applied = self._clear_caches(layout)
        except TargetError:
            self._clear_plan = None          # a node may have gone down since the plan: ask again, once
            try:
                applied = self._clear_caches(layout)
            except TargetError as exc:
                self.cache_note = str(exc)
                return []
        self.cache_note = ""
        return applied

    def _clear_caches(self, layout: Layout) -> list[str]:
        """One attempt at every clear of the plan; TargetError when one fails."""
        self._require_open(layout)
        clear, compute = self._cache_nodes()
        run = lambda script: self._run(self._session, self._node, script)  # noqa: E731
        return clear_engine_caches(run, clear, compute, self.names(layout.dataset, layout.scale).db)

    def data_hosts(self) -> tuple[str, ...]:
        """The data nodes' hosts (getClusterPerf's host column) of the last clear's plan."""
        return getattr(self, "_data_hosts", ())

    def _cache_nodes(self) -> tuple[list[str] | None, list[str]]:
        """(aliases clearAllCache runs on, or None for a single node; compute-group aliases),
        from getClusterPerf through this worker's session: online nodes only (``state``), asked
        before every clear and again when one fails."""
        if self._clear_plan is None:
            try:
                perf = self._run(self._session, self._node, scripts.cluster_perf())
            except TargetError:
                if self._session is None or self._node.role == "compute":
                    raise      # lost, or on a compute node where pnodeRun alone reaches only its group
                self._clear_plan = (None, [])          # a single node: it has no controller to ask
                self._data_hosts = (self._node.host,)
            else:
                clear, compute, self._data_hosts = clear_plan(perf)
                self._clear_plan = (clear, compute)
        return self._clear_plan


def clear_plan(perf) -> tuple[list[str] | None, list[str], tuple[str, ...]]:
    """From a getClusterPerf answer: (aliases clearAllCache runs on, or None when none is listed;
    compute-group aliases; the data nodes' hosts), online nodes only (``state``)."""
    frame = perf.to_pandas() if _is_arrow_table(perf) else perf
    infos = [i for i in (node_info(row) for row in frame.to_dict("records")) if i.state]
    clear = [i.name for i in infos if i.mode == "data" or (i.mode == "compute" and not i.compute_group)]
    compute = [i.name for i in infos if i.mode == "compute" and i.compute_group]
    return clear or None, compute, tuple(dict.fromkeys(i.lan_host or i.host for i in infos if i.mode == "data"))


def clear_engine_caches(run, clear: list[str] | None, compute: list[str], database: str,
                        engine: str = "OLAP") -> list[str]:
    """Every clear of one plan through ``run`` (a script -> its answer; TargetError when it fails):
    a TSDB database's cache engine flushed (always on: its fresh writes are in memory), the OLAP
    cache engine's (a failure noted: DolphinDB documents it for an engine that is on), every
    node's caches, and a compute group's cache of ``database``. The methods applied."""
    where = "this single node" if clear is None else ", ".join(clear)
    applied = []
    if engine == "TSDB":
        run(flush_tsdb_cache(clear))
        applied.append(f"{flush_tsdb_cache(None)} on {where}")
    # fresh writes the OLAP cache engine still holds are in memory, not on disk: flushed first,
    # or the clears leave them there and a cold read of them reads memory
    try:
        run(flush_olap_cache(clear))
        applied.append(f"{flush_olap_cache(None)} on {where}")
    except TargetError as exc:
        applied.append(f"{NOTE}{flush_olap_cache(None)} failed ({str(exc).strip()[:160]}): writes an "
                       "OLAP cache engine holds, if one is on, stay in memory")
    run(clear_all_cache(clear))
    applied.append(f"{clear_all_cache(None)} on {where}")
    if compute:
        run(clear_compute_cache(database, compute))
        applied.append(f"clearComputeNodeCache({q.string(database)}) on {', '.join(compute)}")
    return applied


# --- the clears' texts ------------------------------------------------------------------------
def clear_all_cache(nodes: list[str] | None = None) -> str:
    """``clearAllCache`` on ``nodes`` (aliases), or where ``pnodeRun`` runs without a list."""
    if nodes is None:
        return "pnodeRun(clearAllCache)"
    return f"pnodeRun(clearAllCache, {q.string_vector(nodes)})"


def clear_compute_cache(database: str, nodes: list[str]) -> str:
    """``clearComputeNodeCache`` of ``database`` on each compute node of ``nodes`` (it runs on the
    compute node it clears, so through pnodeRun with their aliases)."""
    return f"pnodeRun(clearComputeNodeCache{{{q.string(database)}}}, {q.string_vector(nodes)})"


def flush_tsdb_cache(nodes: list[str] | None = None) -> str:
    """``flushTSDBCache`` (a TSDB database's fresh writes, held by its always-on cache engine, to
    disk) on ``nodes`` (aliases), or where ``pnodeRun`` runs without a list."""
    if nodes is None:
        return "pnodeRun(flushTSDBCache)"
    return f"pnodeRun(flushTSDBCache, {q.string_vector(nodes)})"


def flush_olap_cache(nodes: list[str] | None = None) -> str:
    """``flushOLAPCache`` (fresh writes the OLAP cache engine still holds in memory, to disk) on
    ``nodes`` (aliases), or where ``pnodeRun`` runs without a list."""
    if nodes is None:
        return "pnodeRun(flushOLAPCache)"
    return f"pnodeRun(flushOLAPCache, {q.string_vector(nodes)})"
