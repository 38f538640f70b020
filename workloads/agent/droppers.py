"""What one drop does on the agent's host, chosen by its owner at start, never by a request.

- the whole page cache: ``os.sync()`` then ``1`` into ``/proc/sys/vm/drop_caches`` (root, or the
  file made writable for the agent's user); refused at start when that file is not writable;
- ``--files DIR``: fsync + ``posix_fadvise(DONTNEED)`` on every regular file under DIR, found again at
  each drop (a server adds and removes files); works unprivileged.

Both go through ``workloads.targets.common.cache``, the same code a local cold round uses.
"""
from __future__ import annotations

import os
from pathlib import Path

from workloads.targets.common import cache


class DropperError(RuntimeError):
    """The agent cannot do what it was asked to at start, or a drop did not happen (one line)."""


class PageCacheDropper:
    """The whole host's page cache (dentries and inodes stay: ``1``, not ``3``)."""

    description = "sync + drop_caches (page cache)"

    def __init__(self) -> None:
        where = cache.DROP_CACHES
        if not where.exists():
            raise DropperError(f"{where} does not exist here (not Linux, or no /proc): give --files DIR instead")
        if not os.access(where, os.W_OK):
            raise DropperError(f"{where} is not writable here: run the agent as root, outside a container's "
                               f"read-only /proc/sys (docs/agent.md), or give --files DIR to drop only that "
                               f"folder's files")

    def drop(self) -> str:
        applied = cache.drop_file_cache([], system_wide=True)
        if cache.DROP not in applied:
            raise DropperError(f"writing to {cache.DROP_CACHES} failed")
        return self.description


class FilesDropper:
    """Every regular file under one folder (symbolic links are not followed out of it)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder).resolve()
        if not self.folder.is_dir():
            raise DropperError(f"--files {folder}: not a folder")
        if not hasattr(os, "posix_fadvise"):
            raise DropperError("posix_fadvise is not available on this system: --files cannot drop anything")
        self.description = f"posix_fadvise(DONTNEED) on the files under {self.folder}"

    def files(self) -> list[Path]:
        found = []
        for root, _dirs, names in os.walk(self.folder):      # followlinks=False: stays inside
            for name in names:
                path = Path(root, name)
                if not path.is_symlink() and path.is_file():
                    found.append(path)
        return found

    def drop(self) -> str:
        files = self.files()
        applied = cache.drop_file_cache(files, system_wide=False)
        if files and cache.FADVISE not in applied:
            raise DropperError(f"posix_fadvise failed on a file under {self.folder}")
        return f"{' + '.join(applied) or 'nothing'} on {len(files)} files under {self.folder}"


def make_dropper(files: Path | None) -> PageCacheDropper | FilesDropper:
    return FilesDropper(files) if files is not None else PageCacheDropper()
