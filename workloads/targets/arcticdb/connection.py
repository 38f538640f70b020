"""The ArcticDB store: its URI (LMDB folder or a user's S3), opened libraries, the version-map
cache, and each library's writer turn among this machine's processes.

Concurrency, found by trying (ArcticDB 6.28, LMDB): several processes may read one LMDB store
at once (LMDB's MVCC readers), also while another writes. Several processes writing the SAME
symbol at once lose data silently: three processes each appending 30 batches to one symbol
reported 89 successes (one ``E_NON_INCREASING_INDEX_VERSION``) and left 30 batches in it;
ArcticDB documents parallel writes to one symbol as unsupported. Writes to different symbols
are safe. Taking turns is not enough by itself: each process caches the version map (reloaded
every few seconds), so a process appends onto a version it last saw and drops the other's
batches (two processes, 8 serialised appends each: half the rows lost), or fails with
``KeyNotFoundException`` after a clear. So a writer, once its turn is taken, and a count of
written rows first drop their process's cached version map (``flush_version_map``) and read
the current versions; reads keep ArcticDB's default cache, as its users' reads do (a reload
interval of 0 for the whole process, this target's former fix, made every read reload the map).
Every write of a library (prepare, append, import, clear, the map-reduce) takes the library's
writer turn: an ``flock`` on ``<lmdb folder>/.<library>.writers.lock`` (for S3 a lock
file in the temp folder, which serialises this machine's processes only). The wait is part of
the ``query``/``io`` phase and reported in ``extra`` (``lock_wait_s``, ``serialised``, turn
times on the system-wide monotonic clock). Without ``fcntl`` (Windows) there is no turn.

LMDB's ``map_size`` is the most the store may grow to (a reservation of address space, not disk);
``data.mdb`` on disk holds the pages in use. A full map is reported as a TargetError naming it.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from arcticdb import Arctic

from workloads.targets.base import Layout, TargetError
from workloads.targets.common.turns import take_turn
from workloads.targets.common.storage import disk_full_error


DEFAULT_LOCK_TIMEOUT_S = 120.0


def default_uri() -> str:
    from workloads.paths import default_datasets_dir
    return f"lmdb://{default_datasets_dir() / 'arcticdb'}?map_size=4GB"


def lmdb_folder(uri: str) -> Path | None:
    """The folder of an ``lmdb://`` URI; None for S3; TargetError for anything else."""
    scheme = uri.split("://", 1)[0].lower() if "://" in uri else ""
    if scheme in ("s3", "s3s"):
        if not uri.split("://", 1)[1].strip():
            raise TargetError(f"ArcticDB URI {uri!r} names no S3 endpoint or bucket")
        return None
    if scheme != "lmdb":
        raise TargetError(f"ArcticDB URI {uri!r} is not understood: use lmdb://<folder>[?map_size=4GB] "
                          "or a user's s3://... / s3s://... store")
    folder = uri[len("lmdb://"):].split("?", 1)[0]
    if not folder:
        raise TargetError(f"ArcticDB URI {uri!r} names no folder: use lmdb://<folder>[?map_size=4GB]")
    return Path(folder)


def display_uri(uri: str) -> str:
    """The URI without its options for S3 (they may hold access keys): safe to record."""
    if lmdb_folder(uri) is not None:
        return uri
    parts = urlsplit(uri)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


class ArcticDBConnection:
    """The store, its libraries and the writers' turns (mixed into ``ArcticDBTarget``)."""

    # --- configuration -------------------------------------------------------------------
    @property
    def uri(self) -> str:
        return str(self.config.get("uri") or default_uri())

    @property
    def lock_timeout_s(self) -> float:
        return float(self.config.get("lock_timeout_s") or DEFAULT_LOCK_TIMEOUT_S)

    # --- the store -------------------------------------------------------------------------
    def _connect(self) -> Arctic:
        if self._arctic is None:
            folder = lmdb_folder(self.uri)
            if folder is not None:
                folder.mkdir(parents=True, exist_ok=True)
            try:
                self._arctic = Arctic(self.uri)
            except Exception as exc:
                raise TargetError(f"cannot open ArcticDB store {display_uri(self.uri)}: "
                                  f"{type(exc).__name__}: {exc}") from exc
        return self._arctic

    def _library(self, name: str, create: bool = False):
        lib = self._libraries.get(name)
        if lib is None:
            arctic = self._connect()
            if not create and not arctic.has_library(name):
                raise TargetError(f"ArcticDB library {name} does not exist in {display_uri(self.uri)}: "
                                  "prepare the target first")
            lib = self._libraries[name] = arctic.get_library(name, create_if_missing=create)
        return lib

    def _lib(self, layout: Layout):
        return self._library(self.library_name(layout.dataset, layout.scale))

    def _current_versions(self, library: str) -> None:
        """Drop this process's cached version map of ``library`` (ArcticDB keeps one per library
        instance, reloaded every few seconds): the next call reads what other processes wrote since."""
        lib = self._libraries.get(library)
        if lib is not None:
            lib._nvs.version_store.flush_version_map()

    def _mdb_files(self, layout: Layout) -> list[Path]:
        folder = lmdb_folder(self.uri)
        if folder is None:
            return []
        return [folder / self.library_name(layout.dataset, layout.scale) / "data.mdb"]

    @contextmanager
    def _writer_turn(self, library: str):
        """This library's writer turn among this machine's processes (ArcticDB loses concurrent
        writes to one symbol); yields the wait facts an OpResult reports."""
        folder = lmdb_folder(self.uri)
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f".{library}.writers.lock"
        else:
            digest = hashlib.sha1(f"{display_uri(self.uri)}|{library}".encode()).hexdigest()[:16]
            path = Path(tempfile.gettempdir()) / f"tickbench-arcticdb-{digest}.writers.lock"
        asked = time.monotonic()
        fd, _polls = take_turn(path, self.lock_timeout_s,
                               f"no turn to write ArcticDB library {library} within {self.lock_timeout_s:g} s: "
                               "other Tickbench processes kept writing (ArcticDB loses concurrent writes "
                               "to one symbol)")
        taken = time.monotonic()
        facts = {"lock_wait_s": taken - asked, "serialised": fd is not None,
                 "turn_asked": asked, "turn_taken": taken}
        try:
            with self._store_errors():
                self._current_versions(library)     # build on the last writer's version, not a cached one
                yield facts
        finally:
            facts["turn_released"] = time.monotonic()
            if fd is not None:
                os.close(fd)

    @contextmanager
    def _store_errors(self):
        """A full disk or a full LMDB map as errors a user can act on."""
        try:
            yield
        except TargetError:
            raise
        except Exception as exc:
            folder = lmdb_folder(self.uri)
            error = disk_full_error(exc, folder or Path(tempfile.gettempdir()))
            if error is not None:
                raise error from exc
            if "MAP_FULL" in str(exc).upper():
                raise TargetError(f"the LMDB map of {self.uri} is full: raise map_size in the uri "
                                  f"(e.g. ?map_size=16GB): {exc}") from exc
            raise

    def drop_process_cache(self, layout: Layout) -> list[str]:
        """Reopen this process's store (ArcticDB's version-map cache)."""
        if self._arctic is None:
            return []
        self.close()
        self._lib(layout)
        return ["arcticdb reopen"]

    # --- worker side ---------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        folder = lmdb_folder(self.uri)
        if folder is not None and not folder.is_dir():
            raise TargetError(f"ArcticDB store {folder} does not exist: prepare the target first")
        self._lib(layout)

    def close(self) -> None:
        self._libraries.clear()
        self._arctic = None
