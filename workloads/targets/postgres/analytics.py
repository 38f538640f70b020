"""Report 003's computations in PostgreSQL's SQL (definitions: workloads/targets/common/quotes.py):
the average spread by minute, the spread regression from six sums computed on the server, and
the map-reduce of minute quotes into the layout's ``_minute`` table.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa

from workloads.datasets.schema import StringMode
from workloads.targets.base import Layout, OpResult, TargetError
from workloads.targets.common.quotes import (MAX_ASK_BID_RATIO, SESSION_CLOSE, SESSION_OPEN, QuoteColumns, day_span,
                                     ols_from_sums, quote_columns)
from workloads.targets.postgres.copy_formats import ReadShape
from workloads.targets.postgres.dialect import quote
from workloads.targets.postgres.server import _now


class PostgresAnalytics:
    """PostgresTarget's report 003 computations."""

    def _quote_sql(self, layout: Layout, days) -> tuple[QuoteColumns, str, dict[str, Any]]:
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        return cols, f"{quote(cols.date)} BETWEEN %(first)s AND %(last)s", {"first": first, "last": last}

    @staticmethod
    def _seed_filter(cols: QuoteColumns) -> str:
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        lo = SESSION_OPEN.strftime("%H:%M:%S")
        hi = SESSION_CLOSE.strftime("%H:%M:%S")
        return (f"date_trunc('second', {t})::time BETWEEN '{lo}' AND '{hi}' AND {a} > {b} AND {b} > 0 "
                f"AND {a} > 0 AND {a} / {b} < {MAX_ASK_BID_RATIO}")

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        cols, where, params = self._quote_sql(layout, days)
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        sql = (f"SELECT date_trunc('minute', {t}) AS minute, avg(({a} - {b}) / ({a} + {b}) * 2) AS \"avgSpread\" "
               f"FROM {quote(self.table(layout))} WHERE {where} AND {self._seed_filter(cols)} GROUP BY 1 ORDER BY 1")
        return self._arrow_select(sql, params, ReadShape(["minute", "avgSpread"], [pa.timestamp("ns"), pa.float64()]),
                                 StringMode.ARROW)

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        cols, where, params = self._quote_sql(layout, days)
        b, a = quote(cols.bid), quote(cols.ask)
        size = f"({quote(cols.bid_size)}::float8 + {quote(cols.ask_size)})"
        sql = ("SELECT count(*) AS n, avg(x) AS ax, avg(y) AS ay, var_pop(x) * count(*) AS sxx, "
               "var_pop(y) * count(*) AS syy, covar_pop(x, y) * count(*) AS sxy "
               f"FROM (SELECT {a} / {b} - 1 AS y, {size} * ({a} + {b}) / 2 AS x "
               f"FROM {quote(self.table(layout))} WHERE {where} AND {self._seed_filter(cols)}) s")
        t0 = _now()
        sums = list(self.db.rows(sql, params)[0].values())
        t1 = _now()
        try:
            frame = ols_from_sums(*sums)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        return OpResult(rows=len(frame), phases={"decode": _now() - t1}, frame=frame, node=self.node,
                        extra={"observations": int(sums[0] or 0), "fetch_s": t1 - t0})

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Report 003 (b): minute quotes of the span INSERTed into the layout's minute table; the
        answer is the number of bars written (the INSERT's row count)."""
        cols, where, params = self._quote_sql(layout, days)
        k, d, t, b, a = (quote(c) for c in (cols.key, cols.date, cols.time, cols.bid, cols.ask))
        minute = quote(self.minute_table(layout))
        self.db.execute(f"CREATE TABLE IF NOT EXISTS {minute} ({k} text, {d} date, minute timestamp, "
                        f"{b} double precision, {a} double precision)")
        t0 = _now()
        bars = self.db.execute(f"INSERT INTO {minute} SELECT {k}, {d}, date_trunc('minute', {t}), avg({b}), avg({a}) "
                               f"FROM {quote(self.table(layout))} WHERE {where} GROUP BY 1, 2, 3", params)
        t1 = _now()
        frame = pd.DataFrame({"bars": [int(bars)]})
        return OpResult(rows=1, phases={"query": t1 - t0, "decode": _now() - t1}, frame=frame, node=self.node,
                        extra={"bars": int(bars)})
