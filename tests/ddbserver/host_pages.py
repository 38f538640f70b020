"""The server host's OS page cache, for real: each DFS partition a data node reads from disk is a
real file under one folder (``--host-pages DIR``), read through the kernel, so a test can tell a
read served by the host's page cache from one that went to the disk.

A partition's file is written the first time it is read (a real server's chunk files exist from
the write on; the write leaves their pages in the cache, as here). Before every read from disk the
kernel is asked (``mincore``) whether any page of that file is resident; the read then fills the
cache, as a real read does. ``clearAllCache`` never touches these pages: only something on the host
can drop them (``tickbench agent --files DIR``, or ``drop_caches``), which is the point.
"""
from __future__ import annotations

import os
import zlib
from pathlib import Path

from workloads.targets.common.cache import resident_bytes

PARTITION_BYTES = 256 * 1024         # enough pages that a partial eviction would show


class HostPages:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _file(self, partition) -> Path:
        return self.root / f"{zlib.crc32(repr(partition).encode()):08x}.chunk"

    def read(self, partition) -> bool:
        """Read one partition's file from disk; whether the host's page cache held any of it."""
        path = self._file(partition)
        if not path.exists():
            temp = path.with_suffix(f".{os.getpid()}.tmp")
            temp.write_bytes(os.urandom(PARTITION_BYTES))
            temp.replace(path)
        cached = (resident_bytes(path) or 0) > 0
        with open(path, "rb") as f:
            while f.read(1 << 16):
                pass
        return cached
