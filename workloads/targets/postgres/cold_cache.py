"""Cold cache for PostgreSQL (``drop_cache``, between a cold step's rounds).

The layout's relations and their indexes are evicted from the shared buffers with
``pg_buffercache_evict_relation`` (PostgreSQL 18's ``pg_buffercache``, superuser only; the
extension is created if missing), and with ``local_engine`` the OS page cache of their files
(``pg_relation_filepath``; ``cache.drop_file_cache``). A server that offers neither gets nothing
applied, and its operations are not called cold.
"""
from __future__ import annotations

from pathlib import Path

from workloads.targets.base import Layout, TargetError
from workloads.targets.common.cache import drop_file_cache
from workloads.targets.postgres.dialect import quote


class PostgresColdCache:
    """PostgresTarget's cold cache: the layout's files and buffers evicted."""

    def _relation_files(self, layout: Layout) -> list[Path]:
        data = self.db.rows("SELECT current_setting('data_directory') AS d")[0]["d"]
        files: list[Path] = []
        table = self.table(layout)
        for name in self._relations(table):
            for rel in self.db.rows(
                    "SELECT pg_relation_filepath(c.oid) AS f FROM pg_class c WHERE c.oid = %s::regclass "
                    "OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = %s::regclass)",
                    (quote(name), quote(name))):
                if rel["f"]:
                    base = Path(data) / rel["f"]
                    files.extend(p for p in base.parent.glob(base.name + "*") if p.is_file())
        return files

    def data_files(self, layout: Layout) -> list[Path]:
        if not self.config.get("local_engine"):
            return []
        try:
            return self._relation_files(layout)
        except TargetError:
            return []

    def drop_cache(self, layout: Layout) -> list[str]:
        """The layout's pages out of the shared buffers, and (local engine) out of the OS cache."""
        applied = self._evict_shared_buffers(layout)
        files = self.data_files(layout)
        return applied + (drop_file_cache(files, system_wide=False) if files else [])

    def _evict_shared_buffers(self, layout: Layout) -> list[str]:
        """``pg_buffercache_evict_relation`` on every relation of the layout and its indexes; [] where
        the server lacks it (before 18, no extension, not a superuser) or a buffer stayed pinned."""
        try:
            self.db.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
            skipped = 0
            for name in self._relations(self.table(layout)):
                for row in self.db.rows(
                        "SELECT e.buffers_skipped AS s FROM pg_class c, pg_buffercache_evict_relation(c.oid) e "
                        "WHERE c.oid = %s::regclass OR c.oid IN (SELECT indexrelid FROM pg_index "
                        "WHERE indrelid = %s::regclass)", (quote(name), quote(name))):
                    skipped += int(row["s"] or 0)
        except TargetError:
            return []
        return ["pg_buffercache_evict_relation (shared buffers)"] if skipped == 0 else []
