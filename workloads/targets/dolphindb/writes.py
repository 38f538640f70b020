"""Writes to DolphinDB: appends (to a DFS table or a worker's shared in-memory table), CSV import
and export, and emptying a write workload's table.

Every table written here exists before any worker starts (``prepare`` creates the append, minute
and import tables): two workers that each asked ``existsTable`` and then created the table would
race, and the second create fails on a real server. Each writing worker owns its partitions
(``key_groups`` tells the operations which keys share a RANGE partition; see
``workloads.operations.shares``): DolphinDB locks every chunk a write touches for its transaction,
and with ``atomic="CHUNK"`` retries a locked one for minutes.

Import is ``loadTextEx`` into ``<table>_import`` (same partitioning as the seed table), export is
``saveText`` of one day, both run BY THE SERVER on files it can read or write: the server sees
``<csv_dir_on_server>/<file name>`` when that config key is set, else the client's own path, which
is right only when the server runs on this machine or shares the folder at the same path.
"""
from __future__ import annotations

import bisect
import datetime as dt
import os
import posixpath
import time
from pathlib import Path

import pandas as pd

from workloads.datasets import get_dataset
from workloads.targets.base import IMPORT_TABLE, Layout, OpResult, TargetError
from workloads.targets.common.sizes import rows_bytes
from workloads.targets.dolphindb import quote as q
from workloads.targets.dolphindb import scripts
from workloads.targets.dolphindb.connection import UPLOAD_PREFIX
from workloads.targets.dolphindb.frames import _count, typed_frame, upload_hints
from workloads.targets.dolphindb.layout import DEFAULT_KEY_BUCKETS, KEY_BUCKETS, key_bounds, typed_keys

MEMORY_TABLE_ALIASES = ("upload", "memory")


def _stat(path) -> tuple[int, int] | None:
    """(mtime in ns, size) of a local file, or None when this machine does not see it."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class DolphinDBWrites:
    """Appends, imports, exports and clears (a mixin of ``DolphinDBTarget``)."""

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        self._require_open(layout)
        names = self.names(layout.dataset, layout.scale)
        schema = get_dataset(layout.dataset).info.schema
        if table in MEMORY_TABLE_ALIASES:
            self._ensure_memory_table(layout)
            function = scripts.memory_insert_function(self._upload_name)
        else:
            target = q.identifier(table, "table name") if table else names.append
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

    def key_groups(self, layout: Layout) -> list[frozenset]:
        """The dataset's keys grouped by the RANGE partition they fall in, in boundary order; []
        for a dataset partitioned by day alone. The boundaries are this build's, checked against
        the live scheme (a database reused from a build that cut other ranges would bring the
        lock contention the groups avoid back, silently)."""
        if not self.columns(layout.dataset).key:
            return []
        keys = typed_keys(layout.dataset, get_dataset(layout.dataset).keys(layout.scale))
        bounds = key_bounds(keys, KEY_BUCKETS.get(layout.dataset, DEFAULT_KEY_BUCKETS))
        self._check_key_scheme(layout, bounds)
        groups: list[set] = [set() for _ in bounds[:-1]]
        for key in set(keys):
            groups[bisect.bisect_right(bounds, key) - 1].add(key)
        return [frozenset(g) for g in groups if g]

    def _check_key_scheme(self, layout: Layout, bounds: list) -> None:
        names = self.names(layout.dataset, layout.scale)
        own = self._session is None
        session, node = self._admin_session() if own else (self._session, self._node)
        try:
            live = [str(b) for b in self._run(session, node, scripts.key_scheme(names))]
        finally:
            if own:
                session.close()
        if live != [str(b) for b in bounds]:
            raise TargetError(f"{names.db} holds {len(live) - 1} key ranges ({_span(live)}), not the {len(bounds) - 1} "
                              f"this version cuts ({_span(bounds)}): made by another build; drop it (tickbench "
                              "targets clean) or set another db_prefix")

    # --- reports 001 and 004: import, export ------------------------------------------------------
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
        """``loadTextEx`` of one day's CSV file into ``<table>_import`` (created by ``prepare``,
        partitioned as the seed table), run by the server on ``server_path(path)``. The timed
        call is the load alone; the rows are counted after it, through the table handle
        loadTextEx returned, on the same session. DolphinDB data is queryable once the load
        commits (no index to build): ``queryable_s`` 0."""
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        self._require_open(layout)
        script = scripts.load_text(names, names.imports, list(zip(cols.names, cols.types)),
                                   cols.partition, self.server_path(path))
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


def _span(bounds: list) -> str:
    return f"{bounds[0]} to {bounds[-1]}" if bounds else "none"
