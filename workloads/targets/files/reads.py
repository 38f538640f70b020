"""Reading day files: a day (or some of its columns), a key's slice, minute bars, and the whole
days and side tables the pandas suites compute on (``client_pandas.py``). Each format's own
timed call is its ``_read`` (the module doc of ``workloads.targets.files``).

Wire bytes of a read: the file's size (every byte of a day file is read: rows are in time order,
so a slice's Parquet filter skips no row group).
"""
from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import pandas as pd

from workloads.datasets.schema import DatasetInfo
from workloads.targets.common.arrow_frames import key_value
from workloads.targets.common.bars import minute_bars, price_columns
from workloads.targets.base import Layout, OpResult, TargetError
from workloads.targets.common.columns import column_schema
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.common.row_order import key_column


def _now() -> float:
    return time.perf_counter()


class FileReads:
    """The read operations over a format's ``_read`` (mixed into ``FileTarget``)."""

    # --- worker side ---------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        if not Path(layout.location).is_dir():
            raise TargetError(f"layout folder {layout.location} is missing: prepare the target first")
        self._info: DatasetInfo = _get_dataset(layout.dataset).info

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        info = getattr(self, "_info", None)
        if info is None or info.name != layout.dataset:
            self._info = info = _get_dataset(layout.dataset).info
        return info

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        path = self.day_path(layout, day)
        if columns is None:
            frame, phases = self._read(path, layout, None)
            return self._result(frame, phases, layout, path)
        schema = column_schema(self._dataset_info(layout).schema, columns, layout.dataset)
        frame, phases = self._read(path, layout, None, tuple(schema.names))
        return OpResult(rows=len(frame), phases=phases, frame=frame, schema=schema,
                        **self._columns_wire(path, tuple(schema.names)))

    def _columns_wire(self, path: Path, columns: tuple[str, ...]) -> dict[str, Any]:
        """How the wire bytes of a read of ``columns`` of ``path`` are known (OpResult's keywords)."""
        return {"wire_path": path}

    def _result(self, frame: pd.DataFrame, phases: dict[str, float], layout: Layout, path: Path) -> OpResult:
        return OpResult(rows=len(frame), phases=phases, frame=frame,
                        schema=self._dataset_info(layout).schema, wire_path=path)

    def _read_key(self, layout: Layout, day: dt.date, key: str) -> tuple[pd.DataFrame, dict[str, float], Path]:
        """One key-day as a DataFrame, with the phases (pandas' filter as query)."""
        info = self._dataset_info(layout)
        key_name = key_column(info, "a slice")
        value = key_value(info.schema.column(key_name), key)
        path = self.day_path(layout, day)
        frame, phases = self._read(path, layout, (key_name, value))
        if not self.filters_in_arrow:
            t0 = _now()
            frame = frame[frame[key_name] == value].reset_index(drop=True)
            phases["query"] = phases.get("query", 0.0) + (_now() - t0)
        return frame, phases, path

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        frame, phases, path = self._read_key(layout, day, key)
        return self._result(frame, phases, layout, path)

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        frame, phases, path = self._read_key(layout, day, key)
        t0 = _now()
        bars = minute_bars(frame, info.time_column, bid, ask, info.size_column)
        phases["query"] = phases.get("query", 0.0) + (_now() - t0)
        return OpResult(rows=len(bars), phases=phases, frame=bars, wire_path=path)

    def _day_frame(self, layout: Layout, day: dt.date) -> tuple[pd.DataFrame, dict[str, float], int | None]:
        path = self.day_path(layout, day)
        frame, phases = self._read(path, layout, None)
        return frame, phases, path.stat().st_size

    def _side_frame(self, layout: Layout, name: str, day: dt.date | None = None) -> pd.DataFrame:
        """The side table's file; with ``day``, its rows of that day, filtered by the format's reader
        where it can (Parquet's filters, Feather in Arrow), else in pandas (a pickle is read whole)."""
        if day is None:
            return self._read(self.side_path(layout, name), layout, None)[0]
        date = self._dataset_info(layout).date_column
        value = pd.Timestamp(day)
        frame, _ = self._read(self.side_path(layout, name), layout, (date, value))
        if not self.filters_in_arrow:
            frame = frame[frame[date] == value].reset_index(drop=True)
        return frame
