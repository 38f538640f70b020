"""Druid's cold cache, as a mixin of ``DruidTarget``.

Druid has no cache drop for users; its segments are memory-mapped files of the
historical's segment cache. ``drop_cache`` asks the OS to evict those files of this datasource
(``posix_fadvise``; ``drop_caches`` too when asked for) when ``segment_cache`` is a folder here (the
local engine), but the pages the historical has mapped stay: the kernel's count of them after the
clear (``workloads.run.cold``) then says no read was cold, which is the truth. For a remote server
nothing can be applied and nothing is listed.
"""
from __future__ import annotations

from pathlib import Path

from workloads.targets.base import Layout
from workloads.targets.common.cache import drop_file_cache, system_wide_drop


class DruidColdCache:
    """DruidTarget's cold cache: the segment cache's files of a datasource, evicted."""

    def _cache_folder(self, datasource: str) -> Path | None:
        root = self.config.get("segment_cache")
        if not root:
            return None
        folder = Path(root) / datasource
        return folder if folder.is_dir() else None

    def data_files(self, layout: Layout) -> list[Path]:
        folder = self._cache_folder(self.table(layout))
        return [] if folder is None else [f for f in folder.rglob("*") if f.is_file()]

    def drop_cache(self, layout: Layout) -> list[str]:
        files = self.data_files(layout)
        if not files:
            return []
        applied = drop_file_cache(files, system_wide=system_wide_drop(self.config))
        return [f"{m} on the segment cache of {self.table(layout)}" for m in applied]
