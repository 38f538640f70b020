"""A run's files written so a reader never sees one half-written, and read back checked.

A JSON file is replaced whole (write, then rename: ``write_json``) or created once (``create_json``);
any file goes through a temporary name no other writer uses (``_written``). A file that cannot be
read back as written (truncated, garbage, wrong types) raises ``DamagedFile`` naming it, so a reader
can set that run aside and read the rest; a write that finds the disk full raises ``DiskFullError``
naming where, and leaves no temporary file behind.
"""
from __future__ import annotations

import errno
import json
import os
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


class DamagedFile(ValueError):
    """A run's file cannot be read back as written."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"{name}: {reason}")
        self.name, self.reason = name, reason


class DiskFullError(OSError):
    """A write found no room (ENOSPC, EDQUOT, EFBIG); ``str()`` is 'disk full at <path>'."""

    def __init__(self, path: Path, cause: OSError):
        super().__init__(cause.errno, f"disk full at {path}")
        self.path = Path(path)

    def __str__(self) -> str:
        return f"disk full at {self.path}"


def disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in FULL_ERRNOS


def _temporary(path: Path) -> Path:
    """A temporary name no other writer (process or thread) uses at the same time."""
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{os.urandom(3).hex()}.tmp")


def _written(path: Path, write) -> None:
    """``write(temporary)`` then rename it to ``path``; on failure the temporary file is removed and
    a full disk is raised as ``DiskFullError``."""
    temporary = _temporary(path)
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException as exc:
        temporary.unlink(missing_ok=True)
        if disk_full(exc):
            raise DiskFullError(path, exc) from None
        raise


def write_json(path: Path, value: Any) -> None:
    """Replace ``path`` whole: a reader sees the old file or the new one, never a part."""
    text = json.dumps(value, default=_jsonable)
    _written(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))


def create_json(path: Path, value: Any) -> bool:
    """Write ``path`` only if it does not exist yet (one creator wins, atomically); False if it did."""
    text = json.dumps(value, default=_jsonable)
    temporary = _temporary(path)
    try:
        temporary.write_text(text, encoding="utf-8")
        os.link(temporary, path)                # fails if path exists: never replaces it
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        if disk_full(exc):
            raise DiskFullError(path, exc) from None
        raise
    finally:
        temporary.unlink(missing_ok=True)


def read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default


def read_checked(path: Path, default: Any, kind: type) -> Any:
    """``path``'s JSON if it is a ``kind`` (of dicts, for a list), else ``DamagedFile``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return default
    except OSError as exc:
        raise DamagedFile(path.name, f"cannot be read ({exc.strerror or exc})") from None
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise DamagedFile(path.name, f"not text ({len(data)} bytes)") from None
    except json.JSONDecodeError as exc:
        if not data.rstrip().endswith((b"}", b"]")):
            raise DamagedFile(path.name, f"truncated (ends after {len(data)} bytes)") from None
        raise DamagedFile(path.name, f"not JSON ({exc.msg} at byte {exc.pos} of {len(data)})") from None
    if not isinstance(value, kind) or (kind is list and not all(isinstance(v, dict) for v in value)):
        raise DamagedFile(path.name, f"holds a {type(value).__name__}, not a {'list of records' if kind is list else 'record'}")
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, np.generic):
        return value.item()
    return str(value)
