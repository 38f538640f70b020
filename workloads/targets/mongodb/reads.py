"""Reads from MongoDB, as its users read into pandas: pymongoarrow (the ``mongodb`` extra),
imported on the first read.

A day or a slice is ``find_arrow_all(collection, filter, schema=..., projection=...)`` with the
dataset's BSON types (``bson_arrow_schema``) and no sort: the rows come in the order the
collection gives them, as every engine's day read does (order is not part of the answer; minute
bars are ordered by minute). Phases: ``query`` = that call (the server's execution, the transfer
and pymongoarrow's BSON -> Arrow in C, interleaved batch by batch), ``decode`` = a cast to the
dataset's Arrow types and ``to_pandas``. Pipelines (minute bars, report 003, suite queries):
``aggregate_arrow_all``, with a schema where the result's types are known, else pymongoarrow's
inference. That call reads raw batches, which pymongo asks for with an ``aggregate`` whose cursor
has ``batchSize: 0``; a server that ignores it and answers documents in the first batch (the
stand-in: pymongo's raw-batch cursor then fails an assertion) is found by asking once in
``open``, and its pipelines go through a cursor of undecoded documents into pymongoarrow's same
decoder (``extra["read_path"]`` and ``describe()`` say so). A stage or operator the server does
not know (its error names it) is ``NotSupported("this server does not support $X")``: the
server's limit, one line per query, and the run goes on.
A server-reported time: in probe operations (``probed_ops``, only when the server answers
``explain``), the same ``find`` as raw batches (``find_raw_batches``: ``server`` + ``transfer``)
then pymongoarrow's decoder (``decode``); ``explain`` with ``executionStats`` afterwards gives
``executionTimeMillis``: ``server`` = that, ``transfer`` = the fetch's time minus it. The stand-in
has no ``explain``: no probes, and no server time. Minute bars and report 003 are aggregation
pipelines ($match, $sort by time and ``_seq``, $group by minute with $first/$last/$max/$min; OLS
from $group sums -> ``quotes.ols_from_sums``), run on the server.
"""
from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import pyarrow as pa

from workloads.datasets.schema import DatasetInfo, Schema, StringMode
from workloads.targets.base import Layout, NotSupported, OpResult, TargetError
from workloads.targets.common.arrow_frames import arrow_schema, frame_from_arrow, key_value
from workloads.targets.common.bars import BAR_COLUMNS, VOLUME, bar_columns, price_columns, volume_dtype
from workloads.targets.common.columns import column_schema
from workloads.targets.common.quotes import (MAX_ASK_BID_RATIO, SESSION_CLOSE, SESSION_OPEN, QuoteColumns, day_span,
                                             ols_from_sums, quote_columns)
from workloads.targets.mongodb.connection import _arrow_api, _now
from workloads.targets.mongodb.dialect import SEQ, bson_arrow_schema, bson_value
from workloads.targets.common.text_tables import text_tables


def _result_frame(table: pa.Table, columns: tuple[str, ...]) -> pd.DataFrame:
    """A pipeline's Arrow table (types inferred by pymongoarrow) as a frame of ``columns`` in that
    order (datetimes as datetime64[ns], strings as objects; a column no document had is all None)."""
    frame = frame_from_arrow(table, StringMode.OBJECT)
    for name in columns:
        if name not in frame.columns:
            frame[name] = pd.Series([None] * len(frame), dtype=object, index=frame.index)
    return frame[list(columns)]


class MongoDBReads:
    """Day and slice reads, minute bars, suite queries and report 003's pipelines (a mixin of
    ``MongoDBTarget``)."""

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    def _find(self, layout: Layout, filter_: dict[str, Any], info: DatasetInfo,
              schema: Schema | None = None) -> OpResult:
        """The user's call: pymongoarrow's ``find_arrow_all`` with the schema's BSON types (query:
        the server's execution, the transfer and pymongoarrow's BSON -> Arrow in C, batch by batch),
        then Arrow -> DataFrame (decode: a cast to the dataset's Arrow types, ``to_pandas``). No sort:
        the rows come in the order the collection gives them. The projection names the schema's
        fields, or only ``schema``'s (some of them)."""
        schema = schema or info.schema
        api = _arrow_api()
        collection = self.db()[self.table(layout)]
        projection = {"_id": 0, **{name: 1 for name in schema.names}}
        wanted = api.Schema.from_arrow(bson_arrow_schema(schema))
        if self.probing and self._explain:
            return self._probed_find(layout, collection, filter_, projection, wanted, schema)
        t0 = _now()
        table = self._call(api.find_arrow_all, collection, filter_, schema=wanted, projection=projection)
        t1 = _now()
        frame = frame_from_arrow(table.cast(arrow_schema(schema)), layout.strings)
        t2 = _now()
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": t2 - t1}, frame=frame,
                        schema=schema, node=self.address, extra=self._extra(read_path="pymongoarrow find_arrow_all"))

    def _probed_find(self, layout: Layout, collection, filter_, projection, wanted, schema: Schema) -> OpResult:
        """A probe: the same find as raw BSON batches (server + transfer, nothing decoded), then
        pymongoarrow's decoder and ``to_pandas`` (decode); ``explain`` afterwards for the server's time."""
        from pymongoarrow.context import PyMongoArrowContext
        t0 = _now()
        batches = self._call(lambda: list(collection.find_raw_batches(filter_, projection)))
        t1 = _now()
        context = PyMongoArrowContext(wanted, codec_options=collection.codec_options)
        for batch in batches:
            context.process_bson_stream(batch)
        frame = frame_from_arrow(context.finish().cast(arrow_schema(schema)), layout.strings)
        t2 = _now()
        result = OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": t2 - t1}, frame=frame, schema=schema,
                          node=self.address, wire_bytes=sum(len(b) for b in batches),
                          extra=self._extra(read_path="pymongoarrow decoder over find_raw_batches (probe)"))
        said = self._call(self.db().command, "explain", {"find": collection.name, "filter": filter_,
                                                         "projection": projection}, verbosity="executionStats")
        ms = (said.get("executionStats") or {}).get("executionTimeMillis")
        if ms is not None:
            server = min(ms / 1000, t1 - t0)
            result.phases = {"server": server, "transfer": t1 - t0 - server, "decode": t2 - t1}
            result.extra["server_time"] = "explain executionStats executionTimeMillis (a second run)"
        return result

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        """The day's rows in the order the collection gives them (no sort: order is not part of a
        day read's answer)."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        return self._find(layout, self._day_filter(info, day), info,
                          column_schema(info.schema, columns, layout.dataset))

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        """A key's rows of the day, in the order the collection gives them (no sort)."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        filter_ = {**self._day_filter(info, day),
                   info.key_column: key_value(info.schema.column(info.key_column), key)}
        return self._find(layout, filter_, info)

    def _aggregate(self, collection: str, pipeline: list[dict], columns: tuple[str, ...],
                   schema: pa.Schema | None = None, strings: StringMode = StringMode.ARROW) -> OpResult:
        """A pipeline through pymongoarrow's ``aggregate_arrow_all`` (query: execution, transfer,
        BSON -> Arrow), then Arrow -> DataFrame (decode). ``schema``: the result's Arrow types (BSON's:
        datetimes in ms, 32/64-bit ints, doubles, strings), else pymongoarrow infers them. On a
        server that ignores batchSize 0 (``_honours_batch_size_zero``) the same decoder reads a
        cursor of undecoded documents, and ``extra["read_path"]`` says so."""
        api = _arrow_api()
        coll = self.db()[collection]
        wanted = api.Schema.from_arrow(schema) if schema is not None else None
        if self._raw_batches is None:
            self._raw_batches = self._honours_batch_size_zero(collection)
        t0 = _now()
        if self._raw_batches:
            table = self._call(api.aggregate_arrow_all, coll, pipeline, schema=wanted, allowDiskUse=True)
            path = "pymongoarrow aggregate_arrow_all"
        else:
            table = self._call(self._documents_to_arrow, coll, pipeline, wanted)
            path = ("pymongoarrow's decoder over a cursor of undecoded documents (this server ignores "
                    "aggregate's batchSize 0: aggregate_arrow_all cannot run)")
        t1 = _now()
        frame = frame_from_arrow(table, strings) if schema is not None else _result_frame(table, columns)
        t2 = _now()
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": t2 - t1}, frame=frame,
                        node=self.address, extra=self._extra(read_path=path))

    def _documents_to_arrow(self, coll, pipeline: list[dict], wanted) -> pa.Table:
        from bson import CodecOptions
        from bson.raw_bson import RawBSONDocument
        from pymongoarrow.context import PyMongoArrowContext
        raw = coll.with_options(codec_options=CodecOptions(document_class=RawBSONDocument, tz_aware=False))
        if wanted is not None:
            pipeline = [*pipeline, {"$project": wanted._get_projection()}]    # as aggregate_arrow_all does
        context = PyMongoArrowContext(wanted, codec_options=raw.codec_options)
        stream = b"".join(doc.raw for doc in raw.aggregate(pipeline, allowDiskUse=True))
        if stream:
            context.process_bson_stream(stream)
        return context.finish()

    @staticmethod
    def _minute(field: str) -> dict:
        return {"$subtract": [f"${field}", {"$mod": [{"$toLong": f"${field}"}, 60_000]}]}

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        """An aggregation pipeline on the server: the key-day's quotes sorted by time and arrival
        ordinal, grouped by minute with $first/$last/$max/$min of the mid."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        t = info.time_column
        mid = {"$divide": [{"$add": [f"${bid}", f"${ask}"]}, 2]}
        volume = {VOLUME: {"$sum": f"${info.size_column}"}} if info.size_column else {}
        pipeline = [
            {"$match": {**self._day_filter(info, day), info.key_column: key_value(info.schema.column(info.key_column), key)}},
            {"$sort": {t: 1, SEQ: 1}},
            {"$group": {"_id": self._minute(t), "open": {"$first": mid}, "high": {"$max": mid},
                        "low": {"$min": mid}, "close": {"$last": mid}, **volume}},
            {"$sort": {"_id": 1}},
            {"$project": {"_id": 0, "minute": "$_id", "open": 1, "high": 1, "low": 1, "close": 1,
                          **{name: 1 for name in volume}}}]
        fields = [pa.field("minute", pa.timestamp("ms"))] + [pa.field(c, pa.float64()) for c in BAR_COLUMNS[1:]]
        if volume:
            fields.append(pa.field(VOLUME, pa.int64() if volume_dtype(info) == "int64" else pa.float64()))
        return self._aggregate(self.table(layout), pipeline, bar_columns(info), pa.schema(fields))


    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        """The suite's ``mongodb`` text names a function of ``workloads.queries.mongo_suite``
        that builds the pipeline; the pipeline runs on the server."""
        from workloads.queries import mongo_suite
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(query.missing(self.query_dialect, "MongoDB"))
        if text.lstrip().startswith("["):      # a user suite's own pipeline, placeholders filled
            from workloads.queries.user_suites import pipeline
            return self._aggregate(self.table(layout), pipeline(text), tuple(query.columns))
        build = getattr(mongo_suite, text.strip(), None)
        if build is None:
            raise TargetError(f"query {query.id}: no pipeline function {text.strip()!r} in mongo_suite")
        table = self.table(layout)
        names = text_tables(layout.dataset, table)
        source, pipeline = build({k: bson_value(v) for k, v in values.items()}, names)
        return self._aggregate(names[source], pipeline, tuple(query.columns))


    # --- report 003 (definitions: workloads/targets/common/quotes.py) ---------------------------------------
    def _quote_match(self, layout: Layout, days) -> tuple[QuoteColumns, dict[str, Any]]:
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        return cols, {cols.date: {"$gte": bson_value(first), "$lte": bson_value(last)}}

    @staticmethod
    def _seed_filter(cols: QuoteColumns) -> dict[str, Any]:
        lo = (SESSION_OPEN.hour * 3600 + SESSION_OPEN.minute * 60 + SESSION_OPEN.second) * 1000
        hi = (SESSION_CLOSE.hour * 3600 + SESSION_CLOSE.minute * 60 + SESSION_CLOSE.second + 1) * 1000
        ms = {"$mod": [{"$toLong": f"${cols.time}"}, 86_400_000]}
        b, a = f"${cols.bid}", f"${cols.ask}"
        return {"$and": [{"$gte": [ms, lo]}, {"$lt": [ms, hi]}, {"$gt": [a, b]}, {"$gt": [b, 0]},
                         {"$gt": [a, 0]}, {"$lt": [{"$divide": [a, b]}, MAX_ASK_BID_RATIO]}]}

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        cols, match = self._quote_match(layout, days)
        a, b = f"${cols.ask}", f"${cols.bid}"
        spread = {"$multiply": [{"$divide": [{"$subtract": [a, b]}, {"$add": [a, b]}]}, 2]}
        pipeline = [{"$match": {**match, "$expr": self._seed_filter(cols)}},
                    {"$group": {"_id": self._minute(cols.time), "avgSpread": {"$avg": spread}}},
                    {"$sort": {"_id": 1}},
                    {"$project": {"_id": 0, "minute": "$_id", "avgSpread": 1}}]
        schema = pa.schema([pa.field("minute", pa.timestamp("ms")), pa.field("avgSpread", pa.float64())])
        return self._aggregate(self.table(layout), pipeline, ("minute", "avgSpread"), schema)

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        """Sums on the server ($group: n, Σx, Σy, Σx², Σy², Σxy), the table from them on the client."""
        cols, match = self._quote_match(layout, days)
        a, b = f"${cols.ask}", f"${cols.bid}"
        y = {"$subtract": [{"$divide": [a, b]}, 1]}
        x = {"$multiply": [{"$add": [f"${cols.bid_size}", f"${cols.ask_size}"]}, {"$divide": [{"$add": [a, b]}, 2]}]}
        pipeline = [{"$match": {**match, "$expr": self._seed_filter(cols)}},
                    {"$project": {"_id": 0, "x": x, "y": y}},
                    {"$group": {"_id": None, "n": {"$sum": 1}, "sx": {"$sum": "$x"}, "sy": {"$sum": "$y"},
                                "xx": {"$sum": {"$multiply": ["$x", "$x"]}},
                                "yy": {"$sum": {"$multiply": ["$y", "$y"]}},
                                "xy": {"$sum": {"$multiply": ["$x", "$y"]}}}}]
        result = self._aggregate(self.table(layout), pipeline, ("n", "sx", "sy", "xx", "yy", "xy"))
        start = _now()
        row = result.frame.iloc[0].to_dict() if len(result.frame) else {"n": 0}
        n = int(row.get("n") or 0)
        ax, ay = (row["sx"] / n, row["sy"] / n) if n else (0.0, 0.0)
        try:
            frame = ols_from_sums(n, ax, ay, row.get("xx", 0) - n * ax * ax, row.get("yy", 0) - n * ay * ay,
                                  row.get("xy", 0) - n * ax * ay)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        result.phases["decode"] += _now() - start
        result.frame, result.rows = frame, len(frame)
        result.extra["observations"] = n
        return result

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Report 003 (b): avg bid/ask per (symbol, date, minute) of the span, ``$merge``d into the
        layout's minute collection on the server; the answer is the number of bars written."""
        cols, match = self._quote_match(layout, days)
        minute = self.minute_table(layout)
        pipeline = [{"$match": match},
                    {"$group": {"_id": {cols.key: f"${cols.key}", cols.date: f"${cols.date}",
                                        "minute": self._minute(cols.time)},
                                cols.bid: {"$avg": f"${cols.bid}"}, cols.ask: {"$avg": f"${cols.ask}"}}},
                    {"$merge": {"into": minute, "whenMatched": "replace", "whenNotMatched": "insert"}}]
        coll = self.db()[self.table(layout)]
        before = self.row_count(layout, minute)
        t0 = _now()
        self._call(lambda: list(coll.aggregate(pipeline, allowDiskUse=True)))
        t1 = _now()
        bars = self.row_count(layout, minute) - before
        frame = pd.DataFrame({"bars": [int(bars)]})
        return OpResult(rows=1, phases={"query": t1 - t0, "decode": _now() - t1}, frame=frame, node=self.address,
                        extra=self._extra(bars=int(bars)))
