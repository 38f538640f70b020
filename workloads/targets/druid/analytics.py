"""Report 003 on Druid (definitions: ``workloads/targets/common/quotes.py``), as a mixin of
``DruidTarget``: spread by minute and OLS sums in SQL over the quotes that pass report 003's
filters. Its map-reduce into a table: ``map_reduce``.
"""
from __future__ import annotations

import datetime as dt

import pyarrow as pa

from workloads.datasets.schema import StringMode
from workloads.targets.base import Layout, OpResult, TargetError
from workloads.targets.common.arrow_frames import frame_from_arrow
from workloads.targets.common.quotes import (MAX_ASK_BID_RATIO, SESSION_CLOSE, SESSION_OPEN, QuoteColumns, day_span,
                                             ols_from_sums, quote_columns)
from workloads.targets.druid.connection import _now
from workloads.targets.druid.dialect import DAY_MS, _ts_literal, quote
from workloads.targets.druid.replies import _csv_table


class DruidAnalytics:
    """DruidTarget's report 003 computations in SQL: spread by minute, OLS sums."""

    def _quote_where(self, layout: Layout, days) -> tuple[QuoteColumns, str]:
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        b, a = quote(cols.bid), quote(cols.ask)
        tod = f"MOD(TIMESTAMP_TO_MILLIS(__time), {DAY_MS})"
        lo = (SESSION_OPEN.hour * 3600 + SESSION_OPEN.minute * 60 + SESSION_OPEN.second) * 1000
        hi = (SESSION_CLOSE.hour * 3600 + SESSION_CLOSE.minute * 60 + SESSION_CLOSE.second) * 1000
        where = (f"__time >= {_ts_literal(first)} AND __time < {_ts_literal(last + dt.timedelta(days=1))} AND "
                 f"{tod} BETWEEN {lo} AND {hi} AND {a} > {b} AND {b} > 0 AND {a} > 0 AND "
                 f"{a} / {b} < {MAX_ASK_BID_RATIO}")
        return cols, where

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        cols, where = self._quote_where(layout, days)
        b, a = quote(cols.bid), quote(cols.ask)
        sql = (f"SELECT MOD(TIMESTAMP_TO_MILLIS(TIME_FLOOR(__time, 'PT1M')), {DAY_MS}) AS m, "
               f"AVG(({a} - {b}) / ({a} + {b}) * 2) AS s FROM {quote(self.table(layout))} WHERE {where} "
               "GROUP BY 1 ORDER BY 1")
        data, phases = self._exchange(sql, None)
        t0 = _now()
        table = _csv_table(data, {"minute": pa.int64(), "avgSpread": pa.float64()})
        table = table.set_column(0, "minute", table.column(0).cast(pa.timestamp("ms")).cast(pa.timestamp("ns")))
        frame = frame_from_arrow(table, StringMode.ARROW)
        phases["decode"] = _now() - t0
        return OpResult(rows=len(frame), phases=phases, frame=frame, wire_bytes=len(data), node=self.node)

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        cols, where = self._quote_where(layout, days)
        b, a = quote(cols.bid), quote(cols.ask)
        y = f"({a} / {b} - 1)"
        x = f"((CAST({quote(cols.bid_size)} AS DOUBLE) + {quote(cols.ask_size)}) * ({a} + {b}) / 2)"
        sql = (f"SELECT COUNT(*) AS n, SUM({x}) AS sx, SUM({y}) AS sy, SUM({x} * {x}) AS sxx, SUM({y} * {y}) AS syy, "
               f"SUM({x} * {y}) AS sxy FROM {quote(self.table(layout))} WHERE {where}")
        data, phases = self._exchange(sql, None)
        t0 = _now()
        n, sx, sy, sxx, syy, sxy = (float(v) for v in data.decode().strip().split(","))
        try:
            if n == 0:
                raise ValueError("no quote passes report 003's filters in this span")
            ax, ay = sx / n, sy / n
            frame = ols_from_sums(int(n), ax, ay, sxx - n * ax * ax, syy - n * ay * ay, sxy - n * ax * ay)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        phases["decode"] = _now() - t0
        return OpResult(rows=len(frame), phases=phases, frame=frame, wire_bytes=len(data), node=self.node,
                        extra={"observations": int(n)})
