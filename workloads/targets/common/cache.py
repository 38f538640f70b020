"""Cold cache for local files: push a target's files out of the OS page cache.

What ARCHITECTURE.md asks for, in order: ``fsync`` each file (dirty pages cannot be dropped),
``posix_fadvise(POSIX_FADV_DONTNEED)`` on each file (drops that file's clean pages; works
without privileges), then ``/proc/sys/vm/drop_caches`` when the target's config asks for it and it is writable (root
only; drops the whole machine's clean page cache, dentries and inodes stay). Every step is best effort and
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


def system_wide_drop(config: dict) -> bool:
    """Whether a target's config asks for the machine-wide ``drop_caches`` too (key ``drop_caches``,
    default false: it evicts every process's cache on the machine and takes seconds, so only an
    explicit request gets it, and then between operations, never inside one)."""
    return bool(config.get("drop_caches", False))


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
    """Bytes of ``path`` now in the page cache (``mincore`` of a read-only mapping, which faults
    nothing in); None where that cannot be asked (not Linux, an unreadable file)."""
    import ctypes
    import mmap

    size = Path(path).stat().st_size
    if size == 0:
        return 0
    libc = _libc()
    if libc is None:
        return None
    page = mmap.PAGESIZE
    pages = (size + page - 1) // page
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            return None
        try:
            vector = (ctypes.c_ubyte * pages)()
            if libc.mincore(ctypes.c_void_p(address), size, vector) != 0:
                return None
            resident = sum(1 for flag in vector if flag & 1)
        finally:
            libc.munmap(ctypes.c_void_p(address), size)
    finally:
        os.close(fd)
    return min(resident * page, size)


def resident_bytes_of(paths: Iterable[str | os.PathLike]) -> int | None:
    """Bytes of all these files (missing ones skipped) in the page cache; None if any cannot be asked."""
    total = 0
    for path in paths:
        if not Path(path).is_file():
            continue
        resident = resident_bytes(path)
        if resident is None:
            return None
        total += resident
    return total


def _libc():
    import ctypes
    import ctypes.util
    import platform

    if platform.system() != "Linux":
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
    libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
    return libc
