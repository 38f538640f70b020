"""Writing safely, shared by every target that writes files: atomic writes, disk-full errors a
user can act on, and the cleanup of temp files left by writers that died.

One place for these, so each target (files, DuckDB, HDF5, ArcticDB, chDB) says "disk full" the
same way and never leaves a half file under a cached name.
"""
from __future__ import annotations

import errno
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from workloads.processes import pid_alive
from workloads.targets.base import TargetError


def free_mb(path: Path) -> int:
    """Megabytes free on the disk holding ``path`` (its nearest existing parent); 0 if unknown."""
    for folder in (path, *path.parents):
        try:
            return shutil.disk_usage(folder).free // (1024 * 1024)
        except OSError:
            continue
    return 0


def disk_full_message(path: Path) -> str:
    return f"disk full while writing {path}: {free_mb(path.parent)} MB free"


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what it wraps: pyarrow, HDF5 and engines chain or reword ENOSPC) is a
    full disk or an exceeded quota."""
    while exc is not None:
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if "No space left" in str(exc) or "Disk quota exceeded" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def disk_full_error(exc: BaseException, path: Path) -> TargetError | None:
    """``exc`` as the clear "disk full" error when it is one (chained to it), else None."""
    if not is_disk_full(exc):
        return None
    error = TargetError(disk_full_message(path))
    error.__cause__ = exc
    return error


@contextmanager
def raising_disk_full(path: Path) -> Iterator[None]:
    """Turn a full disk inside the block into ``TargetError`` naming ``path`` and the space left."""
    try:
        yield
    except TargetError:
        raise
    except Exception as exc:
        error = disk_full_error(exc, path)
        if error is None:
            raise
        raise error from exc


def temp_path(path: Path) -> Path:
    """A hidden sibling of ``path`` naming this process, so ``remove_stale_temp_files`` can tell a
    dead writer's leftovers from a live one's."""
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temp path to write ``path`` through (by any library: HDF5, a database file); renamed onto
    ``path`` when the block succeeds, removed on any failure."""
    tmp = temp_path(path)
    try:
        with raising_disk_full(path):
            yield tmp
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def atomic_file(path: Path, durable: bool = True, private: bool = False) -> Iterator[BinaryIO]:
    """Write ``path`` via a hidden temp file (+ fsync when ``durable``) + rename; remove the temp
    file on any failure. ``private``: readable and writable by its owner alone (mode 600) from its
    first byte (a file holding a password)."""
    with atomic_path(path) as tmp:
        mode = 0o600 if private else 0o666       # 666 less the umask, as open() would
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "wb") as f:
            yield f
            if durable:
                f.flush()
                os.fsync(f.fileno())


def write_bytes_atomic(path: Path, payload: bytes, durable: bool = True, private: bool = False) -> None:
    with atomic_file(path, durable, private) as f:
        f.write(payload)


def remove_stale_temp_files(folder: Path) -> list[Path]:
    """Delete temp files (and temp folders) left by writers that died (kill -9, power loss); keep
    live writers' ones."""
    removed = []
    for tmp in folder.glob(".*.tmp"):
        try:
            pid = int(tmp.name.rsplit(".", 3)[-3])
        except (ValueError, IndexError):
            continue
        if not pid_alive(pid):
            if tmp.is_dir():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink(missing_ok=True)
            removed.append(tmp)
    return removed
