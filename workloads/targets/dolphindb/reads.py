"""Reads from DolphinDB: measured reads, probes, minute bars, report 003's computations and suite
queries.

A measured read is what a user's ``session.run(query)`` costs and nothing else (the plain query
of ``ddb_scripts.plain``; under PROTOCOL_ARROW also the ``to_pandas`` a user needs for a
DataFrame, as ``decode``). Report 000's breakdown comes from probe operations, run after the
step's measured ones:
- server: measured ON the server. The query runs inside a script that reads ``now(true)`` before
  and after it, keeps the result on the server as a shared table, and returns the nanoseconds.
- transfer: that shared result requested over a bare socket (``ddb_wire``) and read to its last
  byte without decoding; the reply's size is the probe's wire bytes. Under PROTOCOL_PICKLE (report
  000's method) the raw reader cannot frame the vendor's pickle stream, so it re-reads the result
  in DolphinDB's own encoding instead: a stand-in, said in each probe's facts
  (``extra["transfer_from"]``) and in the target's description.
- decode: the client's own fetch of the same result into a DataFrame (``session.run``), minus
  the transfer time, clamped at 0. In the real client transfer and decode overlap (it decodes
  while reading), so this split is an estimate, as report 000 says.
Each measured read under ARROW that came back DDB says so (``extra["reply_format"]``). Strings come
back as the client makes them (pandas' default string type); the string mode of a scenario does
not apply to DolphinDB.

Suite queries (reports 001 and 004, the tick pack) run their ``dolphindb`` text
(``resources/queries/*.toml``) with ``{quotes}``/``{readings}`` and the side tables
``{trades}``/``{info}`` as ``loadTable`` calls and every parameter a literal made by
``ddb_quote.literal``; the timed call is ``session.run``.
"""
from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pandas as pd

from workloads.datasets import get_dataset
from workloads.datasets.roles import quote_size_columns
from workloads.queries.suites import SEED_TABLES
from workloads.targets.base import Layout, NotSupported, OpResult, TargetError
from workloads.targets.common.columns import column_schema
from workloads.targets.common.arrow_frames import key_value
from workloads.targets.common.row_order import key_column
from workloads.targets.dolphindb import scripts
from workloads.targets.dolphindb.frames import _is_arrow_table
from workloads.targets.dolphindb.wire import WireError

PICKLE_TRANSFER_FROM = "DDB re-read (stand-in for PICKLE)"


class DolphinDBReads:
    """Measured reads and their probes, minute bars, report 003 and suite queries (a mixin of
    ``DolphinDBTarget``)."""

    def _measured(self, layout: Layout, body: list[str], schema=None) -> OpResult:
        """The user's ``session.run(query)`` (in probe mode: the instrumented probe)."""
        if self.probing:
            return self._probe(layout, body, schema)
        self._require_open(layout)
        frame, phases, extra = self._user_frame(scripts.plain(body))
        return OpResult(rows=len(frame), phases=phases, node=self._node.address, frame=frame, schema=schema,
                        extra=extra)

    def _user_frame(self, script: str) -> tuple[pd.DataFrame, dict[str, float], dict[str, Any]]:
        """What a user does for a DataFrame: ``session.run(script)``, and under PROTOCOL_ARROW
        the ``to_pandas`` of its Arrow table (timed as ``decode``); a DDB answer to an ARROW
        request is said in the extra facts."""
        result = self._run(self._session, self._node, script)
        phases: dict[str, float] = {}
        extra: dict[str, Any] = {}
        if _is_arrow_table(result):            # PROTOCOL_ARROW: a user calls to_pandas for a DataFrame
            start = time.perf_counter()
            result = result.to_pandas()
            phases["decode"] = time.perf_counter() - start
        elif self.profile.protocol == "ARROW":
            extra["reply_format"] = "DDB"
        return self._frame_of(result), phases, extra

    def _probe(self, layout: Layout, body: list[str], schema) -> OpResult:
        """Server time, raw transfer and client fetch of the same result, kept on the server
        under a name of this probe's own, undefined on every path."""
        self._require_open(layout)
        session, node = self._session, self._node
        self._probes += 1
        name = f"{self._share_name}_{self._probes}"
        transfer_s = wire = None
        try:
            # inside the try: the script shares its result even when its reply never arrives
            server_ns = self._run(session, node, scripts.measured(name, body))
            if self.measure_transfer:
                try:
                    reply = self._raw_connection().run_discard(scripts.fetch(name), self.priority,
                                                               self.parallelism)
                except WireError as exc:
                    self._drop_raw()              # a half-read reply leaves the socket unusable
                    raise TargetError(f"DolphinDB at {node.address}: {exc}") from None
                transfer_s, wire = reply.seconds, reply.nbytes
            start = time.perf_counter()
            result = self._run(session, node, scripts.fetch(name))
            if _is_arrow_table(result):
                result = result.to_pandas()
            fetch_s = time.perf_counter() - start
        finally:
            self._undefine(self._session, name)
        frame = self._frame_of(result)
        phases = {"server": int(server_ns) / 1e9}
        extra: dict[str, Any] = {"client_fetch_s": fetch_s}
        if transfer_s is not None:
            phases["transfer"] = transfer_s
            phases["decode"] = max(0.0, fetch_s - transfer_s)
            if self.profile.protocol == "PICKLE":
                extra["transfer_from"] = PICKLE_TRANSFER_FROM
        else:
            extra["transfer"] = "not measured"
        return OpResult(rows=len(frame), phases=phases, node=node.address, frame=frame, schema=schema,
                        extra=extra, wire_bytes=wire)

    @staticmethod
    def _frame_of(result) -> pd.DataFrame:
        if isinstance(result, pd.DataFrame):
            return result
        raise TargetError(f"expected a table from the server, got {type(result).__name__}")

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        if columns is None:
            return self._measured(layout, scripts.select_day(names, cols, day), self._schema(layout))
        schema = column_schema(self._schema(layout), columns, layout.dataset)
        return self._measured(layout, scripts.select_day(names, cols, day, tuple(schema.names)), schema)

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        value = self._key_value(layout, key, "a slice")
        return self._measured(layout, scripts.select_slice(names, cols, day, value), self._schema(layout))

    @staticmethod
    def _key_value(layout: Layout, key: str, what: str) -> str | int:
        """The slice key as a value of the key column's type (a number for an integer key)."""
        info = get_dataset(layout.dataset).info
        try:
            return key_value(info.schema.column(key_column(info, what)), str(key))
        except ValueError as exc:
            raise TargetError(str(exc)) from None

    @staticmethod
    def _schema(layout: Layout):
        return get_dataset(layout.dataset).info.schema

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        value = self._key_value(layout, key, "minute bars")
        try:
            body = scripts.minute_bars(names, cols, day, value)
        except ValueError as exc:
            raise TargetError(f"minute bars on {layout.dataset}: {exc}") from None
        return self._measured(layout, body)


    # report 003's three computations ------------------------------------------------------------
    def _day_span(self, layout: Layout, days) -> tuple[dt.date, dt.date]:
        chosen = sorted(days) if days else sorted(layout.days)
        if not chosen:
            raise TargetError("no days to compute over")
        return chosen[0], chosen[-1]

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        first, last = self._day_span(layout, days)
        try:
            body = scripts.spread_by_minute(names, cols, first, last)
        except ValueError as exc:
            raise TargetError(f"spread by minute on {layout.dataset}: {exc}") from None
        return self._measured(layout, body)

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        if not self._has_minute_table(cols):
            raise TargetError(f"map-reduce minute bars need distinct bid/ask and date/time columns; "
                              f"{layout.dataset} has none")
        first, last = self._day_span(layout, days)
        return self._measured(layout, scripts.mapreduce_minute_bars(names, cols, first, last))

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        names, cols = self.names(layout.dataset, layout.scale), self.columns(layout.dataset)
        sizes = quote_size_columns(get_dataset(layout.dataset).info)
        if not sizes:
            raise TargetError(f"the OLS of report 003 needs quote sizes (the quote-size role); "
                              f"{layout.dataset} has none")
        first, last = self._day_span(layout, days)
        return self._measured(layout, scripts.ols_spread(names, cols, first, last, *sizes))


    # --- reports 001 and 004: suite queries -------------------------------------------------------
    def query_tables(self, layout: Layout) -> dict[str, str]:
        """Placeholder -> table of a suite text: the seed table (``{quotes}``, ``{readings}``)
        and the dataset's side tables (``{trades}``, ``{info}``)."""
        names = self.names(layout.dataset, layout.scale)
        # any seed name is the main table (a desk's quotes paired with trades answer {quotes}), as in
        # ``targets.common.text_tables``; side tables keep their own names in the database
        tables = {seed: names.table for seed in SEED_TABLES.values()}
        tables[names.table] = names.table
        tables.update({t: t for t in self.side_tables(get_dataset(layout.dataset))})
        return tables

    def query_script(self, layout: Layout, query, values: dict[str, Any]) -> str:
        """The script ``run_query`` sends: the query's ``dolphindb`` text, placeholders filled."""
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(query.missing(self.query_dialect, "DolphinDB"))
        try:
            return scripts.suite_query(text, self.names(layout.dataset, layout.scale),
                                       self.query_tables(layout), values)
        except ValueError as exc:
            raise TargetError(f"query {query.id}: {exc}") from None

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        """The user's ``session.run(script)`` of a suite query (and ``to_pandas`` under ARROW)."""
        script = self.query_script(layout, query, values)
        self._require_open(layout)
        frame, phases, extra = self._user_frame(script)
        return OpResult(rows=len(frame), phases=phases, node=self._node.address, frame=frame, extra=extra)
