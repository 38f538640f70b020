"""Cold cache for local files: push a target's files out of the OS page cache.

What ARCHITECTURE.md asks for, in order: ``fsync`` each file (dirty pages cannot be dropped),
``posix_fadvise(POSIX_FADV_DONTNEED)`` on each file (drops that file's clean pages; works
without privileges), then ``/proc/sys/vm/drop_caches`` when it is writable (root only; drops the
whole machine's clean page cache, dentries and inodes stay). Every step is best effort and
the function returns only the methods that actually succeeded, so a run records the truth.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

DROP_CACHES = Path("/proc/sys/vm/drop_caches")

FSYNC = "fsync"
FADVISE = "posix_fadvise(DONTNEED)"
DROP = "drop_caches"


def drop_file_cache(paths: Iterable[str | os.PathLike], system_wide: bool = True) -> list[str]:
    """Evict ``paths`` (regular files; missing ones are skipped) from the page cache.

    ``system_wide=False`` skips ``drop_caches`` (it evicts every process's cache on the machine).
    A method is listed only if it succeeded on every existing file.
    """
    files = [Path(p) for p in paths if Path(p).is_file()]
    fsynced = advised = bool(files)
    for path in files:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            fsynced = advised = False
            continue
        try:
            try:
                os.fsync(fd)  # Linux accepts fsync on a read-only descriptor
            except OSError:
                fsynced = False
            if hasattr(os, "posix_fadvise"):  # absent on macOS and Windows
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                except OSError:
                    advised = False
            else:
                advised = False
        finally:
            os.close(fd)
    applied = []
    if fsynced:
        applied.append(FSYNC)
    if advised:
        applied.append(FADVISE)
    if system_wide and _drop_system_caches():
        applied.append(DROP)
    return applied


def _drop_system_caches() -> bool:
    """Write 1 (page cache only) to drop_caches; False when not allowed (not root, container)."""
    if not DROP_CACHES.exists() or not os.access(DROP_CACHES, os.W_OK):
        return False
    try:
        os.sync()  # drop_caches only frees clean pages
        with open(DROP_CACHES, "w") as f:
            f.write("1\n")
        return True
    except OSError:
        return False


def resident_bytes(path: str | os.PathLike) -> int | None:
    """Bytes of ``path`` now in the page cache (util-linux ``fincore``); None if unavailable."""
    import shutil
    import subprocess

    exe = shutil.which("fincore")
    if exe is None:
        return None
    result = subprocess.run([exe, "--bytes", "--noheadings", "--output", "RES", str(path)],
                            capture_output=True, text=True, check=False)
    text = result.stdout.strip()
    return int(text) if result.returncode == 0 and text.isdigit() else None
