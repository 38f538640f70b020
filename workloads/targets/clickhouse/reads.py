"""Reads on ClickHouse, as a mixin of ``ClickHouseTarget``: a day, a slice, minute bars, the
suites' queries and report 003's computations, each the user's call timed in its phases.

Phases, honestly:
- embedded: the timed call is ``session.query(sql, "Arrow")`` read as Arrow (uncompressed:
  in-process there is no wire) then ``to_pandas``:
  ``query`` = getting the folder's turn (see ``embedded``) + the query into Arrow, in-process (no
  transfer), ``decode`` = Arrow to DataFrame. ``extra``: ``lock_wait_s``, ``open_s``,
  ``close_s``, ``session`` ("held" or "opened").
- server: the timed call is ``client.query_arrow(sql, parameters)`` then ``to_pandas``. The first
  is one clickhouse-connect call in which the server's execution, the transfer and the Arrow read
  cannot be told apart, so a measured operation has only ``decode``. Probe operations
  (``probed_ops``) split it: the same query as one HTTP request with ``wait_end_of_query=1``;
  ``server`` = the ``elapsed_ns`` the server reports in ``X-ClickHouse-Summary`` (or, when it
  reports none, the time to the reply's headers), ``transfer`` = the rest of the exchange up to
  the reply's last byte (request, round trips, the bytes), ``decode`` = Arrow read + to_pandas;
  ``wire_bytes`` = the reply's size.

Reports 001 and 004: suite queries run their ``clickhouse`` text with ``{quotes}``,
``{readings}`` and ``{info}`` replaced by this layout's tables (a regex on those three names only:
ClickHouse's own ``{name:Type}`` query parameters stay as they are) and parameters bound by the
engine (chDB ``params``, clickhouse-connect server-side binding).
"""
from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import pyarrow as pa

from workloads.datasets.schema import DatasetInfo, Schema, StringMode
from workloads.targets.base import Layout, NotSupported, OpResult, TargetError
from workloads.targets.clickhouse.dialect import (SEQ, _CH_TYPES, _INT_PARAM, _PARAMETER, _TABLE_PLACEHOLDER, _now,
                                                  naive_times, quote)
from workloads.targets.clickhouse.server import _Server
from workloads.targets.common.arrow_frames import frame_from_arrow, key_value
from workloads.targets.common.bars import VOLUME, price_columns, volume_dtype
from workloads.targets.common.columns import column_schema
from workloads.targets.common.row_order import key_column, order_columns
from workloads.targets.common.quotes import (MAX_ASK_BID_RATIO, SESSION_CLOSE, SESSION_OPEN, QuoteColumns, day_span,
                                             ols_from_sums, quote_columns)
from workloads.targets.common.text_tables import text_tables


_VOLUME_CAST = {"int64": "toInt64", "float64": "toFloat64"}   # the bars' volume type (common/bars.py)


class ClickHouseReads:
    """The read operations and the query helpers they share (the day's condition, the timed call)."""

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    def _day_where(self, info: DatasetInfo, day: dt.date, qualifier: str = "") -> tuple[str, dict[str, Any]]:
        """The day's condition (``qualifier``: a table alias, where the SELECT's aliases would
        otherwise shadow the columns) and its parameters."""
        column = info.schema.column(info.date_column)
        name = qualifier + quote(column.name)
        if column.ddb_type == "DATE":
            return f"{name} = {{day:Date}}", {"day": day}
        # the day comes from a timestamp (devices): a range on the sorting key's partition
        start = dt.datetime.combine(day, dt.time())
        typ = _CH_TYPES[column.ddb_type]
        return (f"{name} >= {{day_start:{typ}}} AND {name} < {{day_end:{typ}}}",
                {"day_start": start, "day_end": start + dt.timedelta(days=1)})

    @staticmethod
    def _key_param(info: DatasetInfo) -> str:
        return _INT_PARAM.get(info.schema.column(key_column(info, "a slice")).ddb_type, "String")

    def _select(self, layout: Layout, sql: str, params: dict[str, Any], strings: StringMode | None,
                schema: Schema | None = None) -> OpResult:
        """The user's call: the query into Arrow, then to pandas (module doc: Phases)."""
        strings = strings or layout.strings
        if self.server:
            if self.probing:
                return self._probe(sql, params, strings, schema)
            with self._conn() as (con, _):
                arrow = con.arrow(sql, params)
                t1 = _now()
            frame = frame_from_arrow(naive_times(arrow), strings)
            return OpResult(rows=len(frame), phases={"decode": _now() - t1}, frame=frame, schema=schema,
                            node=self.node)
        t0 = _now()
        with self._conn() as (con, facts):
            arrow = con.arrow(sql, params)
        t1 = _now()                          # the turn is handed back before decoding
        frame = frame_from_arrow(naive_times(arrow), strings)
        t2 = _now()
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": t2 - t1}, frame=frame,
                        schema=schema, extra=facts)

    def _probe(self, sql: str, params: dict[str, Any], strings: StringMode, schema: Schema | None) -> OpResult:
        server: _Server = self._backend
        t0 = _now()
        data, server_s, headers_s, _ = server.http_request(sql, params, "ArrowStream", self.database)
        t1 = _now()
        frame = frame_from_arrow(naive_times(pa.ipc.open_stream(data).read_all()), strings)
        t2 = _now()
        fetch = t1 - t0
        told = server_s is not None
        on_server = min(server_s if told else headers_s, fetch)
        return OpResult(rows=len(frame), phases={"server": on_server, "transfer": fetch - on_server, "decode": t2 - t1},
                        frame=frame, schema=schema, wire_bytes=len(data), node=self.node,
                        extra={"server_time": "X-ClickHouse-Summary elapsed_ns" if told else "time to the reply's headers"})

    def _columns(self, info: DatasetInfo, schema: Schema | None = None) -> str:
        return ", ".join(quote(n) for n in (schema or info.schema).names)

    def _stored_order(self, info: DatasetInfo, qualifier: str = "") -> str:
        return ", ".join(qualifier + quote(c) for c in dict.fromkeys((*order_columns(info), SEQ)))

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        schema = column_schema(info.schema, columns, layout.dataset)
        where, params = self._day_where(info, day)
        # no ORDER BY: a day read promises no order (README: one meaning per operation), as its users read it
        sql = f"SELECT {self._columns(info, schema)} FROM {self.fq(self.table(layout))} WHERE {where}"
        return self._select(layout, sql, params, None, schema)

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        where, params = self._day_where(info, day)
        key_name = key_column(info, "a slice")
        params["key"] = key_value(info.schema.column(key_name), key)
        sql = (f"SELECT {self._columns(info)} FROM {self.fq(self.table(layout))} WHERE {where} "
               f"AND {quote(key_name)} = {{key:{self._key_param(info)}}}")
        return self._select(layout, sql, params, None, info.schema)

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        key_name = key_column(info, "minute bars")
        where, params = self._day_where(info, day)
        params["key"] = key_value(info.schema.column(key_name), key)
        t = quote(info.time_column)
        size = f", {quote(info.size_column)}" if info.size_column else ""
        volume = (f", {_VOLUME_CAST[volume_dtype(info)]}(sum({quote(info.size_column)})) AS {VOLUME}"
                  if info.size_column else "")
        # first/last quote of a minute: the mid at the least/greatest arrival ordinal, which follows
        # (time, arrival) order: a day is loaded in time order (checked by _load_day). The minute comes
        # in nanoseconds, the frames' unit: in seconds, converting them cost ~2 % of a bars read
        sql = (f"SELECT toDateTime64(toStartOfMinute({t}), 9, 'UTC') AS minute, argMin(mid, {SEQ}) AS open, "
               f"max(mid) AS high, min(mid) AS low, argMax(mid, {SEQ}) AS close{volume} "
               f"FROM (SELECT {t}, {SEQ}, ({quote(bid)} + {quote(ask)}) / 2 AS mid{size} "
               f"FROM {self.fq(self.table(layout))} "
               f"WHERE {where} AND {quote(key_name)} = {{key:{self._key_param(info)}}}) "
               "GROUP BY minute ORDER BY minute")
        return self._select(layout, sql, params, StringMode.ARROW)

    # --- suite queries (reports 001 and 004) -------------------------------------------------
    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        """The suite's ClickHouse SQL with ``{quotes}``/``{readings}``/``{info}`` as this layout's
        tables and its ``{name:Type}`` parameters bound by the engine."""
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(query.missing(self.query_dialect, "ClickHouse"))
        table = self.table(layout)
        tables = {name: self.fq(where) for name, where in text_tables(layout.dataset, table).items()}
        sql = _TABLE_PLACEHOLDER.sub(lambda m: tables.get(m.group(1), m.group(0)), text)
        used = set(_PARAMETER.findall(sql))
        return self._select(layout, sql, {k: v for k, v in values.items() if k in used}, StringMode.ARROW)

    # --- report 003's computations, in SQL (definitions: workloads/targets/common/quotes.py) -----------
    def _quote_sql(self, layout: Layout, days) -> tuple[QuoteColumns, str, dict[str, Any]]:
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        return cols, f"{quote(cols.date)} BETWEEN {{first:Date}} AND {{last:Date}}", {"first": first, "last": last}

    @staticmethod
    def _seed_filter(cols: QuoteColumns) -> str:
        """Report 003's filters: regular hours (whole seconds of the day), ask > bid > 0, ask/bid < 1.2."""
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        second = f"(toHour({t}) * 3600 + toMinute({t}) * 60 + toSecond({t}))"
        lo = SESSION_OPEN.hour * 3600 + SESSION_OPEN.minute * 60 + SESSION_OPEN.second
        hi = SESSION_CLOSE.hour * 3600 + SESSION_CLOSE.minute * 60 + SESSION_CLOSE.second
        return f"{second} BETWEEN {lo} AND {hi} AND {a} > {b} AND {b} > 0 AND {a} > 0 AND {a} / {b} < {MAX_ASK_BID_RATIO}"

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        cols, where, params = self._quote_sql(layout, days)
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        sql = (f"SELECT toDateTime64(toStartOfMinute({t}), 0, 'UTC') AS minute, "
               f"avg(({a} - {b}) / ({a} + {b}) * 2) AS avgSpread FROM {self.fq(self.table(layout))} "
               f"WHERE {where} AND {self._seed_filter(cols)} GROUP BY minute ORDER BY minute")
        return self._select(layout, sql, params, StringMode.ARROW)

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        cols, where, params = self._quote_sql(layout, days)
        b, a = quote(cols.bid), quote(cols.ask)
        size = f"(toFloat64({quote(cols.bid_size)}) + {quote(cols.ask_size)})"
        sql = ("SELECT count() AS n, avg(x) AS ax, avg(y) AS ay, varPopStable(x) * count() AS sxx, "
               "varPopStable(y) * count() AS syy, covarPopStable(x, y) * count() AS sxy "
               f"FROM (SELECT {a} / {b} - 1 AS y, {size} * ({a} + {b}) / 2 AS x "
               f"FROM {self.fq(self.table(layout))} WHERE {where} AND {self._seed_filter(cols)})")
        if self.server and self.probing:
            probe = self._probe(sql, params, StringMode.ARROW, None)
            sums = probe.frame.iloc[0].tolist()
        else:
            t0 = _now()
            with self._conn() as (con, facts):
                sums = list(con.rows(sql, params)[0].values())
            t1 = _now()
        start = _now()
        try:
            frame = ols_from_sums(*sums)     # two rows from six sums: the decode of this query
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        if self.server and self.probing:
            probe.phases["decode"] += _now() - start
            probe.frame = frame
            probe.rows = len(frame)
            probe.extra["observations"] = int(sums[0] or 0)
            return probe
        phases = {"query": t1 - t0, "decode": _now() - start} if not self.server else {"decode": _now() - start}
        return OpResult(rows=len(frame), phases=phases, frame=frame, node=self.node,
                        extra={**facts, "observations": int(sums[0] or 0)})

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Report 003 (b): minute quotes of the span INSERTed into the layout's minute table; the
        answer is the number of bars written (the engine's written-rows count)."""
        cols, where, params = self._quote_sql(layout, days)
        k, d, t, b, a = (quote(c) for c in (cols.key, cols.date, cols.time, cols.bid, cols.ask))
        minute = self.fq(self.minute_table(layout))
        t0 = _now()
        with self._conn() as (con, facts):
            con.execute(f"CREATE TABLE IF NOT EXISTS {minute} ({k} LowCardinality(String), {d} Date, "
                        f"minute DateTime64(0, 'UTC'), {b} Float64, {a} Float64) "
                        f"ENGINE = MergeTree PARTITION BY {d} ORDER BY ({k}, minute)")
            bars = con.execute(
                f"INSERT INTO {minute} SELECT {k}, {d}, toDateTime64(toStartOfMinute({t}), 0, 'UTC') AS minute, "
                f"avg({b}), avg({a}) FROM {self.fq(self.table(layout))} WHERE {where} GROUP BY {k}, {d}, minute",
                params)
        t1 = _now()
        frame = pd.DataFrame({"bars": [int(bars)]})
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": _now() - t1}, frame=frame,
                        extra={"bars": int(bars), **facts}, node=self.node)
