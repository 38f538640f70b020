"""QuestDB reads: ``read_day``, ``read_slice``, ``minute_bars`` and the suite's queries, all
through HTTP ``/exp`` Parquet.

Meaning of the reads (issue 21): ``read_day`` and ``read_slice`` return the day's (the key-day's)
rows in the order QuestDB stores them, with no ``ORDER BY`` (designated timestamp, ties in
arrival order; order is not part of those answers, ``verify`` compares them order-free);
``minute_bars`` returns bars ordered by minute (``SAMPLE BY 1m``'s own order, part of the answer).

Phases, honestly. A measured read is the user's plain call: the query as an HTTP ``/exp`` request
with ``fmt=parquet`` (QuestDB's fastest documented whole-result path, typed columns: psycopg's
binary fetch and ``/exp`` CSV + pyarrow's CSV reader were both slower here), in the table's stored
order, then ``pq.read_table`` and ``to_pandas``, nothing else: the same calls a QuestDB user
writes (``workloads/practitioner/questdb_paths.py``), so Tickbench's path IS the fastest one
measured (``describe()["read_path"]`` gives the figures). The ``/exp`` exchange is one request:
the server's execution and the transfer cannot be told apart, so a measured operation has only
``decode``. Probe operations (``probed_ops``) split it: the same
query through ``/exec?timings=true&count=true`` gives the server's own ``compiler + execute +
count`` nanoseconds (``count``: the whole result iterated on the server, nothing sent), then the
``/exp`` exchange: ``server`` = that reported time (at most the exchange), ``transfer`` = the rest
of the exchange, ``decode`` = Parquet read + to_pandas; ``wire_bytes`` the Parquet reply's size.

Reports 001 and 004. A day is chosen by the designated timestamp (``_ts IN '2007-08-23'``: an
Interval forward scan of that partition); t04 does it in a subquery (QuestDB 9.3.4 double-counts
its GROUP BY when the interval and a filter share one WHERE). Suite queries run their ``questdb`` text (``resources/queries/*.questdb.toml``)
with ``{quotes}``/``{readings}``/``{info}`` replaced by this layout's tables and ``{name}``
parameters replaced by QuestDB literals (``'2007-08-23'``, ``'IBM'``, lists as ``'A','B'`` for
``IN (...)``, timestamps as ``'2007-08-23T09:30:00.000000Z'``), formatted here (the engine binds no
lists); results through ``/exp`` Parquet like reads.
"""
from __future__ import annotations

import datetime as dt
import io
from typing import Any

from workloads.datasets.schema import DatasetInfo, Schema, StringMode
from workloads.targets.common.arrow_frames import frame_from_arrow, key_value
from workloads.targets.common.bars import price_columns
from workloads.targets.common.columns import column_schema
from workloads.targets.base import Layout, NotSupported, OpResult
from workloads.targets.questdb.dialect import quote, literal, sql_value, designated
from workloads.targets.questdb.frames import naive_times
from workloads.targets.questdb.server import _now
from workloads.targets.common.text_tables import text_tables


class QuestDBReads:
    """QuestDBTarget's reads: day, slice, minute bars and suite queries through /exp Parquet."""

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    def _select(self, sql: str, strings: StringMode, schema: Schema | None = None) -> OpResult:
        """The user's call: ``/exp`` Parquet, then Parquet -> Arrow -> pandas (module doc: Phases)."""
        import pyarrow.parquet as pq
        if self.probing:
            return self._probe(sql, strings, schema)
        data = self._server.parquet(sql)
        t1 = _now()
        frame = frame_from_arrow(naive_times(pq.read_table(io.BytesIO(data))), strings)
        return OpResult(rows=len(frame), phases={"decode": _now() - t1}, frame=frame, schema=schema,
                        wire_bytes=len(data), node=self.node)

    def _probe(self, sql: str, strings: StringMode, schema: Schema | None) -> OpResult:
        import pyarrow.parquet as pq
        said = self._server.exec_json(sql, timings="true", count="true", limit="1")
        timings = said.get("timings") or {}
        server_s = sum(int(timings.get(k) or 0) for k in ("compiler", "execute", "count")) / 1e9
        t0 = _now()
        data = self._server.parquet(sql)
        t1 = _now()
        frame = frame_from_arrow(naive_times(pq.read_table(io.BytesIO(data))), strings)
        t2 = _now()
        on_server = min(server_s, t1 - t0)
        return OpResult(rows=len(frame), phases={"server": on_server, "transfer": t1 - t0 - on_server,
                                                 "decode": t2 - t1},
                        frame=frame, schema=schema, wire_bytes=len(data), node=self.node,
                        extra={"server_time": "/exec timings compiler+execute+count"})

    def _columns(self, info: DatasetInfo, schema: Schema | None = None) -> str:
        return ", ".join(quote(n) for n in (schema or info.schema).names)

    def _key_sql(self, info: DatasetInfo, key: str) -> str:
        return sql_value(key_value(info.schema.column(info.key_column), key))

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        schema = column_schema(info.schema, columns, layout.dataset)
        sql = (f"SELECT {self._columns(info, schema)} FROM {quote(self.table(layout))} "
               f"WHERE {quote(designated(info))} IN {literal(day.isoformat())}")
        return self._select(sql, layout.strings, schema)

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        sql = (f"SELECT {self._columns(info)} FROM {quote(self.table(layout))} "
               f"WHERE {quote(designated(info))} IN {literal(day.isoformat())} "
               f"AND {quote(info.key_column)} = {self._key_sql(info, key)}")
        return self._select(sql, layout.strings, info.schema)

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        """``SAMPLE BY 1m`` over the key-day's rows in their stored order (the designated timestamp,
        ties in arrival order), so ``first``/``last`` are the minute's first/last quote by arrival;
        bars ordered by minute (``SAMPLE BY``'s own order)."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        ts, t = quote(designated(info)), quote(info.time_column)
        # within one day the time column follows the designated timestamp, so the subquery (stored
        # order, no sort) can designate it: the bars are labelled as the time column (a time of day
        # stays one)
        size = f", {quote(info.size_column)} AS size" if info.size_column else ""
        sql = (f"SELECT {t} AS minute, first(mid) AS open, max(mid) AS high, min(mid) AS low, last(mid) AS close"
               f"{', sum(size) AS volume' if size else ''} "
               f"FROM (SELECT {t}, ({quote(bid)} + {quote(ask)}) / 2 AS mid{size} FROM {quote(self.table(layout))} "
               f"WHERE {ts} IN {literal(day.isoformat())} AND {quote(info.key_column)} = {self._key_sql(info, key)} "
               f") TIMESTAMP({t}) SAMPLE BY 1m ALIGN TO CALENDAR")
        return self._select(sql, StringMode.ARROW)

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(query.missing(self.query_dialect, "QuestDB"))
        table = self.table(layout)
        names = {name: quote(where) for name, where in text_tables(layout.dataset, table).items()}
        sql = text
        for name, value in names.items():
            sql = sql.replace("{" + name + "}", value)
        for name, value in values.items():
            sql = sql.replace("{" + name + "}", sql_value(value))
        return self._select(sql, StringMode.ARROW)
