"""Targets with no query engine of their own: the suites and report 003's computations run in
pandas on the client, over whole days read as a user of that store reads them.

Shared by the file targets, HDF5 and ArcticDB. A target supplies ``_day_frame`` (one day as a
DataFrame, the phases of that read and the bytes it read when known) and ``_side_frame`` (a side
table, e.g. devices' ``info``); this mixin runs:

- the query suites' pandas functions (``workloads.queries.pandas_suite``): the reads' phases, then
  pandas' own work as ``query``;
- report 003's spread and OLS day by day, combining partial results so memory stays at one day.
"""
from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pandas as pd

from workloads.datasets.base import is_day_series, side_tables
from workloads.queries import pandas_suite, query_days, user_suites
from workloads.targets.base import Layout, NotSupported, OpResult, TargetError
from workloads.targets.common.quotes import (Moments, QuoteColumns, day_span, ols_moments, ols_table, quote_columns,
                                     spread_combine, spread_partial)


def _now() -> float:
    return time.perf_counter()


def _add(phases: dict[str, float], more: dict[str, float]) -> None:
    for phase, seconds in more.items():
        phases[phase] = phases.get(phase, 0.0) + seconds


class ClientPandas:
    """Mixin for a ``Target``: pandas on the client over the store's day frames."""

    query_dialect = "pandas"

    def _day_frame(self, layout: Layout, day: dt.date) -> tuple[pd.DataFrame, dict[str, float], int | None]:
        """One whole day as a user of this store reads it: (frame, phases, bytes read or None)."""
        raise NotImplementedError

    def _side_frame(self, layout: Layout, name: str, day: dt.date | None = None) -> pd.DataFrame:
        """A dataset's side table (devices: ``info``) as stored beside the days; with ``day``, a day
        series' rows of that day (TAQ's trades), filtered as the store's reader can."""
        raise NotImplementedError

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        """The query's pandas function over the days it needs (phases of the reads), then pandas'
        own work (``query``)."""
        name = query.text(self.query_dialect)
        if name is None:
            raise NotSupported(query.missing(self.query_dialect, "pandas"))
        phases: dict[str, float] = {}
        frames = []
        days = query_days(query, values, layout.days)
        for day in days:
            frame, read_phases, _ = self._day_frame(layout, day)
            _add(phases, read_phases)
            frames.append(pandas_suite.one_day(frame, day))      # a day's own file: its rows are the day's
        tables = {query.table: frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)}
        from workloads.datasets import get_dataset  # the generators' registry, imported on use
        frames_sql = getattr(query, "frames_sql", False)
        wanted = None if frames_sql else pandas_suite.arguments(name)
        dataset = get_dataset(layout.dataset)
        for side, schema in side_tables(dataset).items():
            if wanted is None or side in wanted:        # a side table is read by the queries that name it
                # a day's query reads a day series (TAQ's trades) of that day only
                one_day = days[0] if len(days) == 1 and is_day_series(dataset.info, schema) else None
                side_frame = self._side_frame(layout, side, one_day)
                tables[side] = side_frame if one_day is None else pandas_suite.one_day(side_frame, one_day)
        t0 = _now()
        if frames_sql:                              # a user's SQL (workloads.queries.user_suites), run by DuckDB
            result = user_suites.frames_sql(name, tables, values)
        else:
            result = pandas_suite.run(name, tables, values)
        phases["query"] = phases.get("query", 0.0) + (_now() - t0)
        return OpResult(rows=len(result), phases=phases, frame=result,
                        extra={"answered": user_suites.FRAMES_NOTE} if getattr(query, "frames_sql", False) else {})

    # --- report 003's computations (definitions: workloads/targets/common/quotes.py) --------------------
    def _span_days(self, layout: Layout, days) -> tuple[QuoteColumns, list[dt.date]]:
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        return cols, [d for d in layout.days if first <= d <= last]

    def _each_day(self, layout: Layout, days, compute):
        """``compute(frame, cols)`` on every day of the span: (results, bytes read or None, phases).
        The reads' phases are kept; ``compute`` is pandas' work (``query``)."""
        cols, span = self._span_days(layout, days)
        results, nbytes = [], 0
        phases = {"query": 0.0}
        for day in span:
            frame, read_phases, wire = self._day_frame(layout, day)
            t0 = _now()
            results.append(compute(frame, cols))
            phases["query"] += _now() - t0
            _add(phases, read_phases)
            nbytes = None if nbytes is None or wire is None else nbytes + wire
            del frame
        return results, nbytes, phases

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        partials, nbytes, phases = self._each_day(layout, days, spread_partial)
        t0 = _now()
        frame = spread_combine(partials)
        phases["query"] += _now() - t0
        return OpResult(rows=len(frame), phases=phases, frame=frame, wire_bytes=nbytes)

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        moments, nbytes, phases = self._each_day(layout, days, ols_moments)
        t0 = _now()
        try:
            frame = ols_table(sum(moments, Moments()))
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        phases["query"] += _now() - t0
        return OpResult(rows=len(frame), phases=phases, frame=frame, wire_bytes=nbytes,
                        extra={"observations": sum(m.n for m in moments)})
