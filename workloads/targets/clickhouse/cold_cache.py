"""Cold cache for ClickHouse, as a mixin of ``ClickHouseTarget``.

Embedded, before each operation (outside timing): ``SYSTEM DROP MARK CACHE``,
``UNCOMPRESSED CACHE``, index/primary-index/mmap/query/query-condition/page caches (each listed
when it succeeded), then the OS page cache of every file in the folder (``cache.drop_file_cache``).
Server: the same ``SYSTEM DROP ...`` once per step before the release (``drop_cache_for_step``:
they need the SYSTEM privilege; those refused are not listed); a server's OS page cache cannot be
dropped from a client.
"""
from __future__ import annotations

import os
from pathlib import Path

from workloads.targets.base import Layout, TargetError
from workloads.targets.common.cache import drop_file_cache, system_wide_drop

# The caches a cold operation drops, in this order; those the engine refuses are left out
CACHE_COMMANDS = (
    "SYSTEM DROP MARK CACHE", "SYSTEM DROP UNCOMPRESSED CACHE", "SYSTEM DROP INDEX MARK CACHE",
    "SYSTEM DROP INDEX UNCOMPRESSED CACHE", "SYSTEM DROP PRIMARY INDEX CACHE", "SYSTEM DROP MMAP CACHE",
    "SYSTEM DROP QUERY CACHE", "SYSTEM DROP QUERY CONDITION CACHE", "SYSTEM DROP PAGE CACHE",
)


class ClickHouseColdCache:
    """The engine's caches and the folder's files, dropped for a cold operation."""

    def _drop_engine_caches(self, con) -> list[str]:
        applied = []
        for command in CACHE_COMMANDS:
            try:
                con.execute(command)
                applied.append(command)
            except TargetError:
                continue
        return applied

    def drop_cache(self, layout: Layout) -> list[str]:
        """Server: its caches (``SYSTEM DROP ... CACHE``). Embedded: the OS cache of the folder's
        files (the engine's own caches live in each process: ``drop_process_cache``)."""
        if self.server:
            with self._conn() as (con, _):
                return self._drop_engine_caches(con)
        return drop_file_cache(self.data_files(layout), system_wide=system_wide_drop(self.config))

    def data_files(self, layout: Layout) -> list[Path]:
        if self.server:
            return []
        return [Path(root) / name for root, _, names in os.walk(self.path) for name in names]

    def drop_process_cache(self, layout: Layout) -> list[str]:
        if self.server:
            return []
        with self._conn() as (con, _):
            return self._drop_engine_caches(con)
