"""Report 003's computations in QuestDB's SQL (definitions: workloads/targets/common/quotes.py):
the average spread by minute, the spread regression from sums computed on the server, and the
map-reduce of minute quotes into the layout's ``_minute`` table.
"""
from __future__ import annotations

import datetime as dt

import pandas as pd

from workloads.datasets.schema import StringMode
from workloads.targets.base import Layout, OpResult, TargetError
from workloads.targets.common.quotes import (MAX_ASK_BID_RATIO, SESSION_CLOSE, SESSION_OPEN, QuoteColumns, day_span,
                                     ols_from_sums, quote_columns)
from workloads.targets.questdb.dialect import TS, quote, literal, designated
from workloads.targets.questdb.server import _now


class QuestDBAnalytics:
    """QuestDBTarget's report 003 computations."""

    def _quote_sql(self, layout: Layout, days) -> tuple[QuoteColumns, str]:
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        ts = quote(designated(self._dataset_info(layout)))
        end = last + dt.timedelta(days=1)
        return cols, f"{ts} >= {literal(first.isoformat())} AND {ts} < {literal(end.isoformat())}"

    @staticmethod
    def _seed_filter(cols: QuoteColumns) -> str:
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        second = f"(hour({t}) * 3600 + minute({t}) * 60 + second({t}))"
        lo = SESSION_OPEN.hour * 3600 + SESSION_OPEN.minute * 60 + SESSION_OPEN.second
        hi = SESSION_CLOSE.hour * 3600 + SESSION_CLOSE.minute * 60 + SESSION_CLOSE.second
        return (f"{second} BETWEEN {lo} AND {hi} AND {a} > {b} AND {b} > 0 AND {a} > 0 "
                f"AND {a} / {b} < {MAX_ASK_BID_RATIO}")

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        cols, where = self._quote_sql(layout, days)
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        sql = (f"SELECT timestamp_floor('m', {t}) AS minute, avg(({a} - {b}) / ({a} + {b}) * 2) AS avgSpread "
               f"FROM {quote(self.table(layout))} WHERE {where} AND {self._seed_filter(cols)} "
               "GROUP BY minute ORDER BY minute")
        return self._select(sql, StringMode.ARROW)

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        """Six sums on the server (one row over PG wire), the regression from them on the client."""
        cols, where = self._quote_sql(layout, days)
        b, a = quote(cols.bid), quote(cols.ask)
        size = f"(cast({quote(cols.bid_size)} AS DOUBLE) + {quote(cols.ask_size)})"
        sql = ("SELECT count() AS n, avg(x) AS ax, avg(y) AS ay, sum(x * x) AS sxx0, sum(y * y) AS syy0, "
               f"sum(x * y) AS sxy0 FROM (SELECT {a} / {b} - 1 AS y, {size} * ({a} + {b}) / 2 AS x "
               f"FROM {quote(self.table(layout))} WHERE {where} AND {self._seed_filter(cols)})")
        t0 = _now()
        row = self._server.rows(sql)[0]
        t1 = _now()
        n = int(row["n"] or 0)
        ax, ay = float(row["ax"] or 0.0), float(row["ay"] or 0.0)
        sums = (n, ax, ay, float(row["sxx0"] or 0.0) - n * ax * ax, float(row["syy0"] or 0.0) - n * ay * ay,
                float(row["sxy0"] or 0.0) - n * ax * ay)
        try:
            frame = ols_from_sums(*sums)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        return OpResult(rows=len(frame), phases={"decode": _now() - t1}, frame=frame, node=self.node,
                        extra={"observations": n, "fetch_s": t1 - t0})

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Report 003 (b): minute quotes of the span INSERTed into the minute table; the answer is
        the number of bars written (counted after the WAL applied them, outside the timing)."""
        cols, where = self._quote_sql(layout, days)
        k, d, t, b, a = (quote(c) for c in (cols.key, cols.date, cols.time, cols.bid, cols.ask))
        info = self._dataset_info(layout)
        ts = quote(designated(info))
        minute = self.minute_table(layout)
        self._server.execute(f"CREATE TABLE IF NOT EXISTS {quote(minute)} ({k} SYMBOL, {d} DATE, minute TIMESTAMP, "
                             f"{b} DOUBLE, {a} DOUBLE, {quote(TS)} TIMESTAMP) TIMESTAMP({quote(TS)}) "
                             "PARTITION BY DAY WAL")
        before = self.row_count(layout, minute)
        t0 = _now()
        self._server.execute(
            f"INSERT INTO {quote(minute)} SELECT {k}, {d}, timestamp_floor('m', {t}) AS minute, avg({b}) AS {b}, "
            f"avg({a}) AS {a}, timestamp_floor('m', {ts}) AS {quote(TS)} FROM {quote(self.table(layout))} "
            f"WHERE {where} GROUP BY {k}, {d}, minute, {quote(TS)}")
        t1 = _now()
        bars = self.row_count(layout, minute) - before
        frame = pd.DataFrame({"bars": [int(bars)]})
        return OpResult(rows=len(frame), phases={}, frame=frame, extra={"bars": int(bars), "insert_s": t1 - t0},
                        node=self.node)
