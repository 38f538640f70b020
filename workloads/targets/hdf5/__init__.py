"""HDF5 through pandas/PyTables: one file per trading day holding one node per day (``/d20070823``).

The target class is here (its configuration); its parts live beside it, by job:
- ``layout.py``: file and node names, writing a file safely, ``prepare``, footprint (the layout);
- ``reads.py``: a day, a key's slice, minute bars, whole days for the pandas suites (phases and
  the whole-day reader measured);
- ``writes.py``: appends, CSV import and export, clearing, report 003's minute quotes (concurrency).

Report 000 named HDF5 as the other file option beside pickle. There is no query engine: the
suites and report 003 run in pandas on the client (``ClientPandas``), minute bars too.

Config keys (plain data, rebuilt in every worker):
- ``root``: the datasets folder (default ``workloads.paths.default_datasets_dir()``).
- ``format``: ``"table"`` (default; PyTables Table, queryable by ``where``) or ``"fixed"``
  (pandas' fixed format: faster to write, no ``where``).
- ``complib``: PyTables' compressor, default ``"blosc:lz4"`` (fast to write and read, the usual
  choice of PyTables users); ``"none"`` for none; any of ``tables.filters.all_complibs``.
- ``complevel``: 0-9, default 5 (ignored with ``complib`` "none").
"""
from __future__ import annotations

from pathlib import Path

import tables

from workloads.datasets.schema import DatasetInfo
from workloads.targets.base import Layout, Target, TargetError
from workloads.targets.common.client_pandas import ClientPandas
from workloads.targets.common.day_files import root_folder
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.hdf5.layout import HDF5Layout
from workloads.targets.hdf5.reads import HDF5Reads
from workloads.targets.hdf5.writes import HDF5Writes

FORMATS = ("table", "fixed")
DEFAULT_COMPLIB = "blosc:lz4"
DEFAULT_COMPLEVEL = 5
DEFAULT_CHUNK_ROWS = 1_000_000


class HDF5Target(HDF5Reads, HDF5Writes, HDF5Layout, ClientPandas, Target):
    kind = "hdf5"
    read_phases = ("read", "decode", "query")

    # --- configuration -------------------------------------------------------------------
    @property
    def root(self) -> Path:
        return root_folder(self.config)

    @property
    def format(self) -> str:
        value = str(self.config.get("format") or "table").lower()
        if value not in FORMATS:
            raise TargetError(f"HDF5 format {value!r}: choose table or fixed")
        return value

    @property
    def complib(self) -> str | None:
        value = self.config.get("complib")
        value = DEFAULT_COMPLIB if value is None else str(value).lower()
        if value in ("", "none"):
            return None
        if value not in tables.filters.all_complibs:
            raise TargetError(f"HDF5 complib {value!r}: choose none or one of "
                              f"{', '.join(tables.filters.all_complibs)}")
        return value

    @property
    def complevel(self) -> int:
        if self.complib is None:
            return 0
        level = self.config.get("complevel")
        level = DEFAULT_COMPLEVEL if level in (None, "") else int(level)
        if not 0 <= level <= 9:
            raise TargetError(f"HDF5 complevel {level}: choose 0-9")
        return level

    @property
    def chunk_rows(self) -> int:
        return int(self.config.get("chunk_rows") or DEFAULT_CHUNK_ROWS)

    @property
    def codec(self) -> str:
        return f"{self.complib.replace(':', '-')}-{self.complevel}" if self.complib else "none"

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        info = getattr(self, "_info", None)
        if info is None or info.name != layout.dataset:
            self._info = info = _get_dataset(layout.dataset).info
        return info
