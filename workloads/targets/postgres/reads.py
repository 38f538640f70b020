"""PostgreSQL reads: ``read_day``, ``read_slice``, ``minute_bars`` and the suites' queries
(``run_query``) through ADBC into Arrow.

Meaning of the reads: ``read_day`` and ``read_slice`` return their rows in stored order, with no
``ORDER BY`` (a day partition's sequential scan, or a slice's index or bitmap scan, gives them in
(key, time, ``_seq``) order since the partition is clustered; order is not part of the answer,
``verify`` compares them order-free); ``minute_bars`` is ordered by minute (part of its answer).

Reads: through ADBC's PostgreSQL driver, ``cursor.execute(sql)`` then ``fetch_arrow_table()``:
with no bound parameter the driver runs the query as ``COPY (...) TO STDOUT (FORMAT binary)``
and decodes the stream into Arrow in C (nanoarrow), so the day and key are written into the SQL
as literals quoted by psycopg (``ClientCursor.mogrify``; a bound parameter makes the driver use
the extended protocol, 1,260 ms instead of 869 ms below). A CHAR column is then cast from
``smallint`` to int8 and ``frame_from_arrow`` makes the DataFrame (dates and microsecond
timestamps become ``datetime64[ns]`` there). Measured on one 1 M-row taq day,
clustered, local server, warm, median of 7, interleaved (2 cores, load ~1.3): ADBC into Arrow
869 ms; psycopg's ``COPY ... (FORMAT binary)`` 1,080 ms for its 92 MB alone, before any parsing
(a binary COPY parsed in Python cannot beat a driver that has already parsed it in C, so ADBC is
kept); the former CSV path 1,161 ms for its 62 MB alone, plus ~0.4 s of pyarrow CSV parsing.
Suite queries (``run_query``) are read the same way, their parameters written in as literals: the
tick pack's as-of join returns a row per trade, and a cursor's ``fetchall`` of Python tuples cost
several times ADBC's read for it (the practitioner benchmark's path).

Phases, honestly: the timed call is ADBC's fetch (libpq sends the query, the server runs it and
streams the binary COPY, the driver decodes it into Arrow as it arrives: one call, so execution,
transfer and Arrow decoding cannot be told apart) then the casts and ``to_pandas``. A measured
read has ``decode`` only (Arrow -> DataFrame). Probe operations (``probed_ops``) split the rest:
first ``EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON)`` of the same SELECT, whose ``Execution Time``
is ``server`` (the plan run on the server with its result kept there, not sent; it also warms the
cache for the read that follows), then the read as measured: ``transfer`` = the fetch's wall time
minus ``server`` (at least 0), ``decode`` the casts and ``to_pandas``. ``wire_bytes`` = the size of
the binary COPY stream, counted from the result after the call (``copy_binary_bytes``: equal to
the bytes psycopg receives for the same binary COPY).

Reports 001 and 004 and the tick pack: suite texts of dialect ``postgres`` use psycopg's named
parameters ``%(name)s`` (a literal ``%`` is ``%%``), written in as literals, and ``{quotes}``,
``{trades}``, ``{readings}``, ``{info}`` for the tables; a list parameter is an array
(``= ANY(%(symbols)s)``). ``numeric`` results (avg of integers) arrive as Arrow decimals.
"""
from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pyarrow as pa

from workloads.datasets.schema import DatasetInfo, Schema, StringMode
from workloads.targets.common.arrow_frames import frame_from_arrow, key_value
from workloads.targets.common.bars import bar_columns, price_columns, volume_dtype
from workloads.targets.base import Layout, NotSupported, OpResult
from workloads.targets.common.columns import column_schema
from workloads.targets.postgres.dialect import SEQ, _TABLE_PLACEHOLDER, _PARAMETER, quote
from workloads.targets.postgres.copy_formats import ReadShape, _arrow_read_type, copy_binary_bytes
from workloads.targets.postgres.server import _now
from workloads.targets.common.text_tables import text_tables


class PostgresReads:
    """PostgresTarget's reads: day, slice, minute bars (ADBC into Arrow) and suite queries."""

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    def _day_where(self, info: DatasetInfo, day: dt.date) -> tuple[str, dict[str, Any]]:
        column = info.schema.column(info.date_column)
        if column.ddb_type == "DATE":
            return f"{quote(column.name)} = %(day)s", {"day": day}
        start = dt.datetime.combine(day, dt.time())
        return (f"{quote(column.name)} >= %(day_start)s AND {quote(column.name)} < %(day_end)s",
                {"day_start": start, "day_end": start + dt.timedelta(days=1)})

    def _arrow_select(self, sql: str, params: dict[str, Any], shape: ReadShape, strings: StringMode,
                      schema: Schema | None = None) -> OpResult:
        """The user's call: the SELECT through ADBC into Arrow, then pandas (module doc: Reads, Phases)."""
        sql = self.db.inline(sql, params)
        server_s = None
        if self.probing:
            plan = self.db.rows(f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {sql}")[0]
            plan = list(plan.values())[0]
            plan = json.loads(plan) if isinstance(plan, str) else plan
            server_s = float(plan[0]["Execution Time"]) / 1000.0
        t0 = _now()
        table = self.db.arrow(sql)
        t1 = _now()
        frame = frame_from_arrow(shape.apply(table), strings)
        t2 = _now()
        wire = {"count_wire": lambda: copy_binary_bytes(table)}
        if server_s is None:
            return OpResult(rows=len(frame), phases={"decode": t2 - t1}, frame=frame, schema=schema,
                            node=self.node, **wire)
        fetch = t1 - t0
        on_server = min(server_s, fetch)
        return OpResult(rows=len(frame), phases={"server": on_server, "transfer": fetch - on_server,
                                                 "decode": t2 - t1},
                        frame=frame, schema=schema, node=self.node, **wire,
                        extra={"server_time": "EXPLAIN (ANALYZE, TIMING OFF) Execution Time, run just before"})

    def _schema_read(self, layout: Layout, where: str, params: dict[str, Any], schema: Schema | None = None) -> OpResult:
        """The rows in stored order (no ORDER BY: each partition is CLUSTERed on its index), every
        column of the schema or of ``schema`` (a part of it)."""
        if schema is None:      # every column: the layout's SELECT and shape, worked out on its first read
            if self._whole is None or self._whole[0] is not layout:
                schema = self._dataset_info(layout).schema
                self._whole = (layout, schema, *self._select(layout, schema))
            _, schema, select, shape = self._whole
        else:
            select, shape = self._select(layout, schema)
        return self._arrow_select(f"{select} WHERE {where}", params, shape, layout.strings, schema)

    def _select(self, layout: Layout, schema: Schema) -> tuple[str, ReadShape]:
        cols = ", ".join(quote(n) for n in schema.names)
        return (f"SELECT {cols} FROM {quote(self.table(layout))}",
                ReadShape(schema.names, [_arrow_read_type(c.ddb_type) for c in schema.columns]))

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        where, params = self._day_where(info, day)
        return self._schema_read(layout, where, params,
                                 None if columns is None else column_schema(info.schema, columns, layout.dataset))

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        where, params = self._day_where(info, day)
        params["key"] = key_value(info.schema.column(info.key_column), key)
        return self._schema_read(layout, f"{where} AND {quote(info.key_column)} = %(key)s", params)

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        where, params = self._day_where(info, day)
        params["key"] = key_value(info.schema.column(info.key_column), key)
        t = quote(info.time_column)
        mid = f"({quote(bid)} + {quote(ask)}) / 2"
        # sum() of a bigint is numeric in PostgreSQL: cast back to the bars' volume type
        volume = "" if not info.size_column else (
            f", sum({quote(info.size_column)})::"
            f"{'bigint' if volume_dtype(info) == 'int64' else 'double precision'} AS volume")
        # first/last quote of a minute by arrival (``layout`` module doc): ordered array_agg, PostgreSQL's
        # idiom where other engines have first/last aggregates
        sql = (f"SELECT date_trunc('minute', {t}) AS minute, (array_agg({mid} ORDER BY {quote(SEQ)}))[1] AS open, "
               f"max({mid}) AS high, min({mid}) AS low, (array_agg({mid} ORDER BY {quote(SEQ)} DESC))[1] AS close"
               f"{volume} FROM {quote(self.table(layout))} WHERE {where} AND {quote(info.key_column)} = %(key)s "
               "GROUP BY 1 ORDER BY 1")
        volume_type = [pa.int64() if volume_dtype(info) == "int64" else pa.float64()] if volume else []
        return self._arrow_select(sql, params, ReadShape(bar_columns(info), [pa.timestamp("ns")] + [pa.float64()] * 4
                                                         + volume_type), StringMode.ARROW)

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        """The suite's ``postgres`` text, tables substituted, parameters written in as a practitioner's
        literals; the result read as reads are, through ADBC into Arrow (``decode``: Arrow -> DataFrame)."""
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(query.missing(self.query_dialect, "PostgreSQL"))
        table = self.table(layout)
        tables = {name: quote(where) for name, where in text_tables(layout.dataset, table).items()}
        sql = _TABLE_PLACEHOLDER.sub(lambda m: tables.get(m.group(1), m.group(0)), text)
        used = set(_PARAMETER.findall(sql))
        sql = self.db.inline(sql, {k: v for k, v in values.items() if k in used})
        t0 = _now()
        result = self.db.arrow(sql)
        t1 = _now()
        frame = frame_from_arrow(_numeric_as_float(result), StringMode.ARROW)
        t2 = _now()
        return OpResult(rows=len(frame), phases={"decode": t2 - t1}, frame=frame, node=self.node,
                        extra={"fetch_s": t1 - t0})


def _numeric_as_float(table: pa.Table) -> pa.Table:
    """ADBC hands PostgreSQL's ``numeric`` (an avg, a sum of bigints) over as its text in an opaque
    extension type: read as a float, as pandas users of a query's result take it."""
    for index, field in enumerate(table.schema):
        if (field.metadata or {}).get(b"POSTGRESQL:type") == b"numeric":
            column = table.column(index)
            text = pa.chunked_array([getattr(chunk, "storage", chunk) for chunk in column.chunks], pa.string())
            table = table.set_column(index, pa.field(field.name, pa.float64()), text.cast(pa.float64()))
    return table
