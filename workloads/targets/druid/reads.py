"""Reads on Druid, as a mixin of ``DruidTarget``: a day, a slice, minute bars and the suites'
queries, each one SQL request over HTTP.

Meaning of the reads (issue 21): ``read_day`` and ``read_slice`` return the day's (key-day's) rows
in the order Druid returns them (its segments' order; no ``ORDER BY``, no sort on the client:
order is not part of those answers, ``verify`` compares them order-free); ``minute_bars`` returns
bars ordered by minute (``ORDER BY 1``: order is part of that answer).

Read path: SQL over HTTP with ``resultFormat`` csv read by pyarrow's CSV reader, ``__time`` asked
as milliseconds. Measured for a 1 M-row TAQ day (warm, median of 3): csv 6.05 s, ``objectLines`` +
``pyarrow.json`` 8.55 s, ``array`` + ``json.loads`` 8.57 s, of which Druid's own exchange is 5.7 s;
``__time`` as ISO text instead of milliseconds 0.5 s more. The hand-written path
(``workloads/practitioner/druid_paths.py``) makes the same request: ``describe()["read_path"]``.

Phases: a measured read is ONE HTTP request/response (SQL, ``resultFormat`` csv): the server's
work and the transfer cannot be told apart there, so it has only ``decode`` (CSV to Arrow, the
day and time of day from ``__time``, to pandas). Druid reports no execution time in a SQL reply; probe
operations split it by the clock: ``server`` = time to the reply's first byte (Druid streams
results: work after the first row overlaps the transfer), ``transfer`` = the rest up to the last
byte, ``decode`` as measured. Query cache off on every query (context ``useCache=false,
populateCache=false``), as report 001 ran it.

Reports 001/004: suite texts in the ``druid`` dialect (``resources/queries/*.druid.toml``), with
``{quotes}``/``{readings}``/``{info}`` as datasources and ``{name}`` parameters bound as Druid SQL
``?`` parameters (``dialect._param``).
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from workloads.datasets.schema import Schema, StringMode
from workloads.targets.base import Layout, NotSupported, OpResult, TargetError
from workloads.targets.common.arrow_frames import frame_from_arrow, key_value
from workloads.targets.common.bars import VOLUME, price_columns, volume_dtype
from workloads.targets.common.columns import column_schema
from workloads.targets.druid.connection import _now
from workloads.targets.druid.dialect import _PLACEHOLDER, SEQ, _param, _ts_ms, quote
from workloads.targets.druid.replies import _csv_table, _typed_reply
from workloads.targets.druid.shape import _Shape
from workloads.targets.common.text_tables import text_tables


# issue 21: measured beside the hand-written path (workloads/practitioner/druid_paths.py)
READ_PATH = ("Druid's fastest documented path measured: SQL over HTTP, resultFormat csv (objectLines + pyarrow.json "
             "and array + json.loads were 1.4x slower), pyarrow CSV reader, no sort: the hand-written path's request; "
             "1 M-row TAQ day, warm, median of 7, interleaved, three runs on a shared 2-core machine: day 3.4-7.1 s, "
             "ratio 0.98-1.01 (7,655 ms before, with a client sort into key, time, arrival order), of which Druid's "
             "own exchange is ~95 %; slice 0.99-1.12 (median 1.05 over 8 runs); bars 0.90-1.16 (median 1.02 over 4)")


class DruidReads:
    """DruidTarget's reads: day, slice, minute bars and the suites' queries."""

    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        self.http.json("GET", "/status")            # connect (and log in) outside timing

    def close(self) -> None:
        self.http.close()

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    def _exchange(self, sql: str, parameters: list | None, types: bool = False) -> tuple[bytes, dict[str, float]]:
        data, first, total = self.http.sql(sql, parameters, types=types)
        if self.probing:
            return data, {"server": first, "transfer": total - first}
        return data, {}

    def _read(self, layout: Layout, sql: str, parameters: list | None, schema: Schema | None = None) -> OpResult:
        """A reply of ``_Shape.select_list`` (of ``schema``'s columns when given) in the order Druid
        returns it (its segments' stored order: no sort, here or on the server), decoded into the
        schema's columns."""
        info = self._dataset_info(layout)
        shape = _Shape(info)
        data, phases = self._exchange(sql, parameters)
        t0 = _now()
        table = _csv_table(data, shape.reply_types(names=schema.names if schema is not None else None))
        frame = frame_from_arrow(shape.to_schema(table, schema), layout.strings)
        phases["decode"] = _now() - t0
        return OpResult(rows=len(frame), phases=phases, frame=frame, schema=schema or info.schema, wire_bytes=len(data),
                        node=self.node, extra={"server_time": "time to the reply's first byte"} if self.probing else {})

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        """The day's rows in Druid's stored order; with ``columns`` only theirs are selected (beside
        the timestamp, which the frame leaves out when not asked for)."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        shape = _Shape(info)
        schema = None if columns is None else column_schema(info.schema, columns, layout.dataset)
        names = schema.names if schema is not None else None
        sql = f"SELECT {shape.select_list(names)} FROM {quote(self.table(layout))} WHERE {self._day_where(day)}"
        return self._read(layout, sql, None, schema)

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        shape = _Shape(info)
        sql = (f"SELECT {shape.select_list()} FROM {quote(self.table(layout))} "
               f"WHERE {self._day_where(day)} AND {quote(info.key_column)} = ?")
        return self._read(layout, sql, _param(key_value(info.schema.column(info.key_column), key)))

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        mid = f"(({quote(bid)} + {quote(ask)}) / 2)"
        order = f"MILLIS_TO_TIMESTAMP({quote(SEQ)})"
        minute = "TIMESTAMP_TO_MILLIS(TIME_FLOOR(__time, 'PT1M'))"
        # the time column a time of day (on 1970-01-01): the day taken off the ~390 labels here, not per row there
        shift = _ts_ms(day) if len(_Shape(info).time_parts) == 2 else 0
        sql = (f"SELECT {minute} AS m, EARLIEST_BY({mid}, {order}) AS o, "
               f"MAX({mid}) AS h, MIN({mid}) AS l, LATEST_BY({mid}, {order}) AS c"
               f"{f', SUM({quote(info.size_column)}) AS v' if info.size_column else ''} FROM {quote(self.table(layout))} "
               f"WHERE {self._day_where(day)} AND {quote(info.key_column)} = ? GROUP BY 1 ORDER BY 1")
        data, phases = self._exchange(sql, _param(key_value(info.schema.column(info.key_column), key)))
        t0 = _now()
        types = {"minute": pa.int64(), "open": pa.float64(), "high": pa.float64(), "low": pa.float64(),
                 "close": pa.float64()}
        if info.size_column:
            types[VOLUME] = pa.int64() if volume_dtype(info) == "int64" else pa.float64()
        table = _csv_table(data, types)
        table = table.set_column(0, "minute", pc.subtract(table.column(0), shift).cast(pa.timestamp("ms"))
                                 .cast(pa.timestamp("ns")))
        frame = frame_from_arrow(table, StringMode.ARROW)
        phases["decode"] = _now() - t0
        return OpResult(rows=len(frame), phases=phases, frame=frame, wire_bytes=len(data), node=self.node)

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(query.missing(self.query_dialect, "Druid"))
        table = self.table(layout)
        tables = text_tables(layout.dataset, table)
        parameters: list[dict[str, Any]] = []

        def bind(match: re.Match) -> str:
            name = match.group(1)
            if name in tables:
                return quote(tables[name])
            if name not in values:
                raise TargetError(f"query {query.id}: no value for parameter {name!r}")
            bound = _param(values[name])
            parameters.extend(bound)
            return ", ".join("?" for _ in bound)
        sql = _PLACEHOLDER.sub(bind, text)
        data, phases = self._exchange(sql, parameters, types=True)
        t0 = _now()
        frame = frame_from_arrow(_typed_reply(data), StringMode.ARROW)
        frame.columns = list(query.columns)[:frame.shape[1]] if len(query.columns) == frame.shape[1] else \
            [c.split("_", 1)[1] for c in frame.columns]
        phases["decode"] = _now() - t0
        return OpResult(rows=len(frame), phases=phases, frame=frame, wire_bytes=len(data), node=self.node)
