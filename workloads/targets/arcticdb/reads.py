"""ArcticDB's reads: a day (or some of its columns), a key's slice, minute bars by ArcticDB's
``resample`` (or pandas), and the whole days and side tables the pandas suites compute on.

Phases (meanings in ``workloads.targets.base``). ArcticDB decodes its segments straight into pandas
inside ``lib.read(...).data``: one call, no honest split, so it is one ``read`` phase. Strings: with
pandas' future string inference on (as Tickbench runs) ArcticDB builds Arrow-backed ``str`` columns
itself; the object mode reads with that option off, which is ArcticDB's native object output; only
the category mode needs a conversion afterwards, timed as ``decode``. ``query`` is pandas' own work
(concatenating the keys of a per-instrument day, the suites, report 003). Minute bars: ArcticDB's
``QueryBuilder`` (filter to the key in the per-day layout, the key's symbol and the day's
``date_range`` in the per-instrument one, ``apply`` the mid price, ``resample("1min")`` with
first/max/min/last, and the size's sum as volume) computes exactly ``workloads.targets.common.bars.
minute_bars`` (checked on real data by the tests: its first/last follow the stored, i.e. arrival,
order; buckets without rows are left out), so it is used; ``bars_by`` in describe() and in each
OpResult's ``extra`` says so ("arcticdb resample"; config ``bars_by: "pandas"`` computes them in
pandas after a slice read instead, for comparison). Its resample would merge keys over a whole day
symbol: hence the filter first. ``wire_bytes`` stays empty (ArcticDB reads its own keys).
"""
from __future__ import annotations

import datetime as dt
import time
from contextlib import contextmanager

import numpy as np
import pandas as pd
from arcticdb import QueryBuilder, ReadRequest
from arcticdb.exceptions import NoSuchVersionException

from workloads.datasets.base import side_tables
from workloads.datasets.schema import Schema, StringMode, apply_string_mode
from workloads.targets.common.arrow_frames import key_value
from workloads.targets.common.bars import VOLUME, bar_columns, minute_bars, price_columns, volume_dtype
from workloads.targets.base import Layout, OpResult, TargetError
from workloads.targets.common.columns import column_schema
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.common.row_order import key_column
from workloads.text import plural
from workloads.targets.arcticdb.symbols import (INDEX_NAME, _EPOCH, _time_of_day, day_range, day_symbol,
                                                empty_frame)


BARS_ARCTICDB = "arcticdb resample"
BARS_PANDAS = "pandas"


def _now() -> float:
    return time.perf_counter()


class ArcticDBReads:
    """The read operations, each a ``lib.read`` (mixed into ``ArcticDBTarget``)."""

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    @contextmanager
    def _string_output(self, strings: StringMode):
        """Object strings are ArcticDB's native output: read them with pandas' inference off."""
        if strings is StringMode.OBJECT:
            with pd.option_context("future.infer_string", False):
                yield
        else:
            yield

    def _conform(self, frame: pd.DataFrame, schema: Schema, strings: StringMode,
                 phases: dict[str, float]) -> pd.DataFrame:
        """The string columns in the layout's mode where the read did not give it (``decode``)."""
        if frame.empty:
            return empty_frame(schema, strings)
        t0 = _now()
        wrong = [c for c in schema.columns if c.is_string and c.name in frame.columns
                 and frame[c.name].dtype != c.pandas_dtype(strings)]
        if wrong:
            frame = apply_string_mode(frame, Schema(tuple(wrong)), strings)
            phases["decode"] = _now() - t0
        return frame

    def _read(self, layout: Layout, symbol: str, strings: StringMode, schema: Schema | None = None,
              **kwargs) -> tuple[pd.DataFrame, dict[str, float]]:
        """``lib.read(symbol, ...).data`` with the index dropped: (frame, phases); ``schema``: the
        columns read (``columns=`` passed in ``kwargs``), default every column."""
        schema = schema or self._dataset_info(layout).schema
        lib = self._lib(layout)
        t0 = _now()
        try:
            with self._string_output(strings):
                frame = lib.read(symbol, **kwargs).data.reset_index(drop=True)
            frame.columns = pd.Index(list(frame.columns))  # labels as every other read gives them
        except NoSuchVersionException:   # a key the store has never seen: no rows
            frame = empty_frame(schema, strings)
        phases = {"read": _now() - t0}
        return self._conform(frame, schema, strings, phases), phases

    def _read_day(self, layout: Layout, day: dt.date, strings: StringMode,
                  columns: tuple[str, ...] | None = None) -> tuple[pd.DataFrame, dict[str, float]]:
        """The day (only ``columns``, ArcticDB's ``columns=``, when given): (frame, phases)."""
        self._check_day(layout, day)
        schema = self._columns_schema(layout, columns)
        wanted = None if columns is None else list(schema.names)
        if self.symbol_per == "day":
            if wanted is None:
                return self._read(layout, day_symbol(day), strings)
            return self._read(layout, day_symbol(day), strings, schema, columns=wanted)
        lib = self._lib(layout)
        span = day_range(day)
        requests = [ReadRequest(symbol, date_range=span, columns=wanted) for symbol in self._key_symbols(layout)]
        t0 = _now()
        with self._string_output(strings):
            items = lib.read_batch(requests)
        t1 = _now()
        failed = [item for item in items if not hasattr(item, "data")]
        if failed:
            raise TargetError(f"ArcticDB could not read {plural(len(failed), 'key symbol')}: {failed[0]}")
        frames = [item.data for item in items if len(item.data)]
        frame = pd.concat(frames, ignore_index=True) if frames else empty_frame(schema, strings)
        frame.columns = pd.Index(list(frame.columns))  # labels as every other read gives them
        phases = {"read": t1 - t0, "query": _now() - t1}
        return self._conform(frame, schema, strings, phases), phases

    def _key_symbols(self, layout: Layout) -> list[str]:
        name = self.library_name(layout.dataset, layout.scale)
        if name not in self._symbols:
            self._symbols[name] = self._read_manifest(self._lib(layout))["symbols"]
        return self._symbols[name]

    def _columns_schema(self, layout: Layout, columns: tuple[str, ...] | None) -> Schema:
        return column_schema(self._dataset_info(layout).schema, columns, layout.dataset)

    def _result(self, layout: Layout, frame: pd.DataFrame, phases: dict[str, float], schema: Schema | None = None,
                **extra) -> OpResult:
        return OpResult(rows=len(frame), phases=phases, frame=frame, extra=extra,
                        schema=schema or self._dataset_info(layout).schema)

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        frame, phases = self._read_day(layout, day, layout.strings, columns)
        return self._result(layout, frame, phases, self._columns_schema(layout, columns))

    def _read_key(self, layout: Layout, day: dt.date, key: str, strings: StringMode):
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        key_name = key_column(info, "a slice")
        value = key_value(info.schema.column(key_name), key)
        if self.symbol_per == "day":
            q = QueryBuilder()
            return self._read(layout, day_symbol(day), strings, query_builder=q[q[key_name] == value])
        return self._read(layout, str(value), strings, date_range=day_range(day))

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        frame, phases = self._read_key(layout, day, key, layout.strings)
        return self._result(layout, frame, phases)

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        if self.bars_by == BARS_PANDAS:
            frame, phases = self._read_key(layout, day, key, StringMode.ARROW)
            t0 = _now()
            bars = minute_bars(frame, info.time_column, bid, ask, info.size_column)
            phases["query"] = _now() - t0
            return OpResult(rows=len(bars), phases=phases, frame=bars, extra={"bars_by": BARS_PANDAS})
        self._check_day(layout, day)
        key_name = key_column(info, "minute bars")
        value = key_value(info.schema.column(key_name), key)
        q = QueryBuilder()
        if self.symbol_per == "day":
            q = q[q[key_name] == value]
            symbol, kwargs = day_symbol(day), {}
        else:
            symbol, kwargs = str(value), {"date_range": day_range(day)}
        q = q.apply("_mid", (q[bid] + q[ask]) / 2)
        # ArcticDB 6 returns the aggregates in the reverse of the dict's order: asked in reverse they
        # come back as the answer's columns, with no reordering copy (~0.7 ms a call on 390 rows)
        volume = {VOLUME: (info.size_column, "sum")} if info.size_column else {}
        q = q.resample("1min").agg({**volume, "close": ("_mid", "last"), "low": ("_mid", "min"),
                                    "high": ("_mid", "max"), "open": ("_mid", "first")})
        lib = self._lib(layout)
        t0 = _now()
        try:
            raw = lib.read(symbol, query_builder=q, **kwargs).data
        except NoSuchVersionException:
            raw = pd.DataFrame({c: pd.Series(dtype=float) for c in bar_columns(info)[1:]},
                               index=pd.DatetimeIndex([], name=INDEX_NAME))
        t1 = _now()
        columns = list(bar_columns(info)[1:])
        bars = raw if list(raw.columns) == columns else raw[columns]
        bars = bars.copy(deep=False)
        if info.size_column and bars[VOLUME].dtype != volume_dtype(info):
            bars[VOLUME] = bars[VOLUME].astype(volume_dtype(info))
        minute = raw.index.to_numpy()
        if _time_of_day(info):   # back onto the time column's clock (a time of day on 1970-01-01)
            minute = minute - (np.datetime64(day, "ns") - _EPOCH)
        bars.index = pd.DatetimeIndex(minute, name="minute")
        bars = bars.reset_index()   # the index becomes the first column as the practitioner's does
        phases = {"query": t1 - t0, "decode": _now() - t1}
        return OpResult(rows=len(bars), phases=phases, frame=bars, extra={"bars_by": BARS_ARCTICDB})

    def _day_frame(self, layout: Layout, day: dt.date) -> tuple[pd.DataFrame, dict[str, float], int | None]:
        frame, phases = self._read_day(layout, day, layout.strings)
        return frame, phases, None

    def _side_frame(self, layout: Layout, name: str, day: dt.date | None = None) -> pd.DataFrame:
        """The side table's symbol; with ``day``, its rows of that day, filtered by ArcticDB's
        ``QueryBuilder`` as it reads."""
        dataset = _get_dataset(layout.dataset)
        schema = side_tables(dataset)[name]
        query = None
        if day is not None:
            query = QueryBuilder()
            query = query[query[dataset.info.date_column] == pd.Timestamp(day)]
        with self._string_output(layout.strings):
            frame = self._lib(layout).read(f"_side_{name}", query_builder=query).data.reset_index(drop=True)
        frame.columns = pd.Index(list(frame.columns))
        return self._conform(frame, schema, layout.strings, {})
