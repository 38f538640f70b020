"""Cold cache on DolphinDB: emptying every cache that could hold a layout's data.

``drop_cache`` runs in the worker, on its own session, before each operation (and probe) of a
cold step while no other operation of the step runs. It empties every DolphinDB cache that could
hold the layout's data: ``pnodeRun(flushOLAPCache, <nodes>)`` first (the OLAP cache engine keeps
fresh writes in memory until it is 30 % full), then ``pnodeRun(clearAllCache, <nodes>)`` on every
data node (and compute node
outside a compute group), and on a 3.x cluster with compute groups
``clearComputeNodeCache(<database>)`` on every compute node of a group (``clearAllCache`` leaves
their cache alone; DolphinDB says even this "does not guarantee that all cached data will be
cleared"). The nodes come from ``getClusterPerf`` (``mode``, ``computeGroup``; a node whose
``state`` is not online is left out), asked before every clear (a node down at the last clear
may be back, its cache warm) and asked again once when a clear fails (a node gone down since); a single node is cleared with ``pnodeRun(clearAllCache)``. It returns the methods applied,
and nothing when any of them failed (so no operation is called cold on a partial clear). The
servers' OS page cache cannot be dropped from a client: a Tickbench agent on each server host
drops it (``workloads.agent``, asked by the worker after this clear), as report 000 did on the
servers; without agents a read is engine-cold only, and says so.
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
        session, node = self._session, self._node
        clear, compute = self._cache_nodes()
        # fresh writes the OLAP cache engine still holds are in memory, not on disk: flushed first,
        # or the clears leave them there and a cold read of them reads memory
        where = "this single node" if clear is None else ", ".join(clear)
        try:
            self._run(session, node, scripts.flush_olap_cache(clear))
            flushed = f"{scripts.flush_olap_cache(None)} on {where}"
        except TargetError as exc:       # DolphinDB documents it for a node with the cache engine on only
            flushed = (f"{NOTE}{scripts.flush_olap_cache(None)} failed ({str(exc).strip()[:160]}): writes an "
                       "OLAP cache engine holds, if one is on, stay in memory")
        self._run(session, node, scripts.clear_all_cache(clear))
        applied = [flushed, f"{scripts.clear_all_cache(None)} on {where}"]
        if compute:
            names = self.names(layout.dataset, layout.scale)
            self._run(session, node, scripts.clear_compute_cache(names, compute))
            applied.append(f"clearComputeNodeCache({q.string(names.db)}) on {', '.join(compute)}")
        return applied

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
                frame = perf.to_pandas() if _is_arrow_table(perf) else perf
                infos = [i for i in (node_info(row) for row in frame.to_dict("records")) if i.state]
                clear = [i.name for i in infos if i.mode == "data" or (i.mode == "compute" and not i.compute_group)]
                compute = [i.name for i in infos if i.mode == "compute" and i.compute_group]
                self._clear_plan = (clear or None, compute)
                self._data_hosts = tuple(dict.fromkeys(i.lan_host or i.host for i in infos if i.mode == "data"))
        return self._clear_plan
