"""DuckDB's reads: a day, a key's slice, minute bars, the suites' SQL and report 003's computations.

Phases: the timed call is ``con.sql(query).to_arrow_table()`` then ``to_pandas`` in the string
mode (a user's fastest path from DuckDB to pandas); ``query`` = the first (execution into Arrow,
in-process: no transfer), ``decode`` = the second. Minute bars are computed by DuckDB (SQL).
Bytes actually read are not known (DuckDB reads its own pages): ``wire_bytes`` stays empty.
"""
from __future__ import annotations

import datetime as dt
import re
import time
from typing import Any

from workloads.datasets.schema import DatasetInfo, Schema, StringMode
from workloads.targets.common.arrow_frames import frame_from_arrow, key_value
from workloads.targets.common.bars import VOLUME, price_columns, volume_dtype
from workloads.targets.base import Layout, NotSupported, OpResult, TargetError
from workloads.targets.common.columns import column_schema
from workloads.targets.common.row_order import key_column
from workloads.targets.common.quotes import (MAX_ASK_BID_RATIO, SESSION_CLOSE, SESSION_OPEN, QuoteColumns, day_span,
                                     ols_from_sums, quote_columns)
from workloads.targets.duckdb.dialect import quote
from workloads.targets.common.text_tables import text_tables


_VOLUME_SQL = {"int64": "BIGINT", "float64": "DOUBLE"}


def _now() -> float:
    return time.perf_counter()


class DuckDBReads:
    """The read operations, each one SQL query (mixed into ``DuckDBTarget``)."""

    def _day_where(self, info: DatasetInfo, day: dt.date) -> tuple[str, list[Any]]:
        column = info.schema.column(info.date_column)
        if column.ddb_type == "DATE":
            return f"{quote(column.name)} = ?", [day]
        # The day comes from a timestamp (devices): a range keeps zone maps usable.
        start = dt.datetime.combine(day, dt.time())
        return f"{quote(column.name)} >= ? AND {quote(column.name)} < ?", [start, start + dt.timedelta(days=1)]

    def _run(self, layout: Layout, sql: str, params: list[Any] | dict[str, Any],
             strings: StringMode | None, schema: Schema | None = None) -> OpResult:
        con = self._con(layout)
        t0 = _now()
        # A relation straight to Arrow (a DB-API result would copy the rows once more)
        arrow = con.sql(sql, params=params).to_arrow_table()
        t1 = _now()
        frame = frame_from_arrow(arrow, strings or layout.strings)
        t2 = _now()
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": t2 - t1}, frame=frame,
                        schema=schema or self._dataset_info(layout).schema)

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        where, params = self._day_where(info, day)
        if columns is None:
            return self._run(layout, f"SELECT * FROM {quote(self.table(layout))} WHERE {where}", params, None)
        schema = column_schema(info.schema, columns, layout.dataset)
        select = ", ".join(quote(n) for n in schema.names)
        return self._run(layout, f"SELECT {select} FROM {quote(self.table(layout))} WHERE {where}", params, None,
                         schema)

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        where, params = self._day_where(info, day)
        key_name = key_column(info, "a slice")
        value = key_value(info.schema.column(key_name), key)
        sql = f"SELECT * FROM {quote(self.table(layout))} WHERE {where} AND {quote(key_name)} = ?"
        return self._run(layout, sql, params + [value], None)

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        key_name = key_column(info, "minute bars")
        where, params = self._day_where(info, day)
        value = key_value(info.schema.column(key_name), key)
        time_name = quote(info.time_column)
        # the size's sum, cast back from DuckDB's wider sum (HUGEINT) to the bars' volume type
        volume = (f", CAST(sum({quote(info.size_column)}) AS {_VOLUME_SQL[volume_dtype(info)]}) AS {VOLUME}"
                  if info.size_column else "")
        size = f", {quote(info.size_column)}" if info.size_column else ""
        # rowid follows the stored (key, time, arrival) order: arg_min/arg_max give first/last quote
        sql = (f"SELECT date_trunc('minute', {time_name}) AS minute, "
               "arg_min(mid, rowid) AS open, max(mid) AS high, min(mid) AS low, arg_max(mid, rowid) AS close"
               f"{volume} FROM (SELECT rowid, {time_name}, ({quote(bid)} + {quote(ask)}) / 2 AS mid{size} "
               f"FROM {quote(self.table(layout))} WHERE {where} AND {quote(key_name)} = ?) "
               "GROUP BY minute ORDER BY minute")
        return self._run(layout, sql, params + [value], StringMode.ARROW)

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        """The suite's SQL with ``{quotes}``/``{readings}``/``{info}`` as this layout's tables and
        ``$name`` parameters bound: ``con.sql(sql, params).to_arrow_table()``, then to_pandas."""
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(query.missing(self.query_dialect, "DuckDB"))
        table = self.table(layout)
        sql = text.format(**{name: quote(where) for name, where in text_tables(layout.dataset, table).items()})
        # DuckDB refuses a parameter the text does not use: bind only those it names
        used = {name: value for name, value in values.items() if re.search(rf"\${name}\b", sql)}
        return self._run(layout, sql, used, StringMode.ARROW)

    def row_count(self, layout: Layout, table: str = "") -> int:
        """Rows in ``table`` (default: the layout's main table), for checks and reports."""
        con = self._con(layout)
        return con.execute(f"SELECT count(*) FROM {quote(table or self.table(layout))}").fetchall()[0][0]

    # --- report 003's computations, in SQL (definitions: workloads/targets/common/quotes.py) -------------
    def _quote_sql(self, layout: Layout, days) -> tuple[QuoteColumns, str, list[Any]]:
        """The quote columns, and the WHERE clause of the day span with its parameters."""
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        return cols, f"{quote(cols.date)} BETWEEN ? AND ?", [first, last]

    @staticmethod
    def _seed_filter(cols: QuoteColumns) -> str:
        """Report 003's filters: regular hours, ask > bid > 0, ask/bid < 1.2."""
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        return (f"CAST({t} AS TIME) BETWEEN TIME '{SESSION_OPEN}' AND TIME '{SESSION_CLOSE}' "
                f"AND {a} > {b} AND {b} > 0 AND {a} > 0 AND {a} / {b} < {MAX_ASK_BID_RATIO}")

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        cols, where, params = self._quote_sql(layout, days)
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        sql = (f"SELECT date_trunc('minute', {t}) AS minute, avg(({a} - {b}) / ({a} + {b}) * 2) AS \"avgSpread\" "
               f"FROM {quote(self.table(layout))} WHERE {where} AND {self._seed_filter(cols)} "
               "GROUP BY minute ORDER BY minute")
        return self._run(layout, sql, params, StringMode.ARROW)

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        cols, where, params = self._quote_sql(layout, days)
        b, a = quote(cols.bid), quote(cols.ask)
        size = f"(CAST({quote(cols.bid_size)} AS DOUBLE) + {quote(cols.ask_size)})"
        sql = ("SELECT regr_count(y, x) AS n, regr_avgx(y, x) AS ax, regr_avgy(y, x) AS ay, "
               "regr_sxx(y, x) AS sxx, regr_syy(y, x) AS syy, regr_sxy(y, x) AS sxy "
               f"FROM (SELECT {a} / {b} - 1 AS y, {size} * ({a} + {b}) / 2 AS x "
               f"FROM {quote(self.table(layout))} WHERE {where} AND {self._seed_filter(cols)})")
        con = self._con(layout)
        t0 = _now()
        sums = con.execute(sql, params).fetchall()[0]
        t1 = _now()
        try:
            frame = ols_from_sums(*sums)   # two rows from six sums: the decode of this query
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        t2 = _now()
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": t2 - t1},
                        frame=frame, extra={"observations": int(sums[0] or 0)})
