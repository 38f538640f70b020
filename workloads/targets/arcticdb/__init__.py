"""ArcticDB (Man Group's DataFrame database), embedded: LMDB on the local disk, or a user's S3 store.

The target class is here (its configuration); its parts live beside it, by job:
- ``symbols.py``: symbol names, a day's ``date_range``, the rows' timestamp index;
- ``connection.py``: the store's URI, libraries, version-map cache and writer turns (concurrency);
- ``layout.py``: library names, ``prepare`` (per day or per instrument, resumable), footprint;
- ``reads.py``: a day, a key's slice, minute bars (``resample``), whole days for the pandas suites
  (phases and strings);
- ``writes.py``: appends, CSV import and export, clearing, report 003's minute quotes.

Configuration (plain data; the registry and the GUI use exactly these keys):
- ``uri``: where the store lives. Default ``lmdb://<datasets dir>/arcticdb?map_size=4GB``. Any
  ``lmdb://<folder>[?options]`` or a user's ``s3://...`` / ``s3s://...`` URI, passed to
  ``Arctic()`` unchanged (Tickbench never contacts S3 itself; its access keys are never recorded).
- ``symbol_per``: ``"day"`` (default: one symbol per trading day, ``d20070823``) or
  ``"instrument"`` (one symbol per key, ``AAPL``, holding every day; a day is a ``date_range``).
- ``library``: an optional prefix of the library's name.
Also ``lock_timeout_s`` (writer turns, ``connection.py``) and ``drop_caches`` (cold reads, as the files do).
"""
from __future__ import annotations

from typing import Any

from arcticdb import Arctic

from workloads.datasets.schema import DatasetInfo
from workloads.targets.arcticdb.connection import ArcticDBConnection, lmdb_folder
from workloads.targets.arcticdb.layout import ArcticDBLayout
from workloads.targets.arcticdb.reads import BARS_ARCTICDB, BARS_PANDAS, ArcticDBReads
from workloads.targets.arcticdb.writes import ArcticDBWrites
from workloads.targets.base import Layout, Target, TargetError
from workloads.targets.common.client_pandas import ClientPandas
from workloads.targets.common.lazy import get_dataset as _get_dataset

SYMBOL_LAYOUTS = ("day", "instrument")


class ArcticDBTarget(ArcticDBReads, ArcticDBWrites, ArcticDBLayout, ArcticDBConnection, ClientPandas, Target):
    kind = "arcticdb"
    read_phases = ("read", "query", "decode")

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self._arctic: Arctic | None = None
        self._libraries: dict[str, Any] = {}
        self._info: DatasetInfo | None = None
        self._symbols: dict[str, list[str]] = {}   # per library: the key symbols (per-instrument)
        if self.symbol_per not in SYMBOL_LAYOUTS:
            raise TargetError(f"symbol_per {self.symbol_per!r}: choose one of {', '.join(SYMBOL_LAYOUTS)}")
        if self.bars_by not in (BARS_ARCTICDB, BARS_PANDAS):
            raise TargetError(f"bars_by {self.bars_by!r}: choose {BARS_ARCTICDB!r} or {BARS_PANDAS!r}")
        lmdb_folder(self.uri)  # a malformed URI is refused at once, by name

    # --- configuration -------------------------------------------------------------------
    @property
    def symbol_per(self) -> str:
        return str(self.config.get("symbol_per") or "day")

    @property
    def bars_by(self) -> str:
        return BARS_PANDAS if self.config.get("bars_by") == BARS_PANDAS else BARS_ARCTICDB

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        if self._info is None or self._info.name != layout.dataset:
            self._info = _get_dataset(layout.dataset).info
        return self._info
