"""Laying a dataset out on DolphinDB: database and table names, partitions, loading (``prepare``),
the reply-format check and disk footprints.

Layout (``prepare``): one database per dataset and scale, ``<db_prefix>_<dataset>_<scale key>``,
partitioned as in the reports: day (VALUE) x key (RANGE): 128 key buckets cut from the data's
keys (report 001) for TAQ, level 2, the API table and a user's import; 10 buckets for devices
(report 004). A dataset without a key is partitioned by day alone, its rows stored in time order
(each day is loaded as the dataset yields it, sorted by time; the OLAP engine keeps that order). The
database uses ``atomic="CHUNK"`` so concurrent appends may share partitions (report 002 §2). Tables:
the seed table (``quotes``, ``tick``, ``readings``, ``orders``), ``<table>_append`` for concurrent
appends, ``<table>_minute`` for report 003's map-reduce output, ``<table>_import`` for CSV imports. Data is generated locally and
loaded through the client in batches (``tableInsert``); days whose row count on the server is
complete are skipped, incomplete days are deleted and loaded again. A dataset's side tables are
loaded once into the same database: one with the seed table's partitioning columns (TAQ's
``trades``: date, symbol) partitioned as the seed table is, any other (devices' ``info``) as a
dimension table (``createTable``). Each side table's rows are recorded in the dimension table
``side_rows`` once it is loaded whole, so a reused layout's are counted, not drawn again (TAQ's
trades are drawn from every day's quotes).

PROTOCOL_ARROW is checked at ``prepare`` on every node the run may use (the first data node under
the node policy ``one``, else all): a server without the formatArrow plugin answers in the DDB
format, which is recorded, and a cluster whose nodes would answer some Arrow and some DDB is
refused (its figures would mix two protocols under one label).

Disk space per table comes from ``getTabletsMeta`` on every node (replicas included, and counted).
"""
from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd

from workloads.datasets import get_dataset
from workloads.datasets.base import side_tables as common_side_tables
from workloads.datasets.roles import rounding_note
from workloads.datasets.schema import Scale, StringMode
from workloads.targets.base import IMPORT_TABLE, Footprint, Layout, ProgressCallback, TargetError
from workloads.targets.common.arrow_frames import key_value
from workloads.targets.dolphindb import quote as q
from workloads.targets.dolphindb import scripts
from workloads.targets.dolphindb.partition_limit import day_windows
from workloads.targets.dolphindb.frames import _count, _is_arrow_table, typed_frame, upload_hints

SIDE_ROWS = "side_rows"      # each side table's rows, recorded once it is loaded whole

TABLE_NAMES = {"taq": "quotes", "level2": "tick", "devices": "readings", "api45": "orders"}
KEY_BUCKETS = {"devices": 10}          # report 004; every other dataset: report 001's 128
DEFAULT_KEY_BUCKETS = 128
KEYS_SAMPLE = 100


def key_bounds(keys: list, buckets: int) -> list:
    """RANGE boundaries splitting the sorted keys (text, or whole numbers of an integer key) into
    ``buckets`` groups of similar size; the last boundary sorts after every key (DolphinDB ranges
    are [low, high)): one past the largest number, or the largest text followed by "~"."""
    ordered = sorted(set(keys))
    if not ordered:
        raise ValueError("the dataset has no keys to partition by")
    count = max(1, min(buckets, len(ordered)))
    bounds = [ordered[i * len(ordered) // count] for i in range(count)]
    return bounds + [ordered[-1] + (1 if isinstance(ordered[-1], int) else "~")]


def typed_keys(dataset: str, keys: list[str]) -> list:
    """The dataset's keys (always text) as values of its key column's type: numbers for an integer key."""
    info = get_dataset(dataset).info
    column = info.schema.column(info.key_column)
    return [key_value(column, k) for k in keys]


def plural_nodes(addresses: list[str]) -> str:
    return (f"node {addresses[0]}" if len(addresses) == 1
            else f"all {len(addresses)} nodes ({', '.join(addresses)})")


class DolphinDBLayout:
    """Names, ``prepare``, the reply-format check and footprints (a mixin of ``DolphinDBTarget``)."""

    # --- names ---------------------------------------------------------------------------------
    def names(self, dataset: str, scale: Scale) -> scripts.Names:
        table = TABLE_NAMES.get(dataset, dataset)
        content = get_dataset(dataset).content_id[:12]   # a re-imported CSV gets a database of its own
        db = f"{self.prefix}_{dataset}_{scale.key()}" + (f"_{content}" if content else "")
        return scripts.Names(db=db, table=table, append=f"{table}_append", minute=f"{table}_minute")

    @staticmethod
    def columns(dataset: str) -> scripts.Columns:
        info = get_dataset(dataset).info
        schema = info.schema
        bid, ask = info.price_columns
        return scripts.Columns(
            names=tuple(schema.names), types=tuple(c.ddb_type for c in schema.columns),
            date=info.date_column, date_type=schema.column(info.date_column).ddb_type,
            key=info.key_column, time=info.time_column,
            time_type=schema.column(info.time_column).ddb_type, bid=bid, ask=ask, size=info.size_column)


    # --- parent side ---------------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        ds = get_dataset(dataset)
        names, cols = self.names(dataset, scale), self.columns(dataset)
        days, keys = ds.trading_days(scale), ds.keys(scale)
        schema_cols = list(zip(cols.names, cols.types))
        session, node = self._admin_session()
        run = lambda script, *a: self._run(session, node, script, *a)  # noqa: E731
        try:
            if not run(scripts.exists_database(names)):
                bounds = (key_bounds(typed_keys(dataset, keys), KEY_BUCKETS.get(dataset, DEFAULT_KEY_BUCKETS))
                          if cols.key else [])
                # the dataset's days only: DolphinDB's tutorials advise against pre-made future days,
                # and each one is 128 more partitions in every whole-table count
                run(scripts.create_database(names, days[0], days[-1], bounds, cols.key_type))
            partition = cols.partition
            # every table the workloads write is created here, once, before any worker starts (two
            # workers creating the import table at its first use would race: the second fails)
            for table in (names.table, names.append, names.imports):
                if not run(scripts.exists_table(names, table)):
                    run(scripts.create_table(names, table, schema_cols, partition))
            if self._has_minute_table(cols) and not run(scripts.exists_table(names, names.minute)):
                run(scripts.create_table(names, names.minute, scripts.minute_table_columns(cols), partition))
            windows = self._day_windows(session, node, names, cols, days)
            loaded = self._load(session, node, ds, names, cols, scale, days, windows, progress)
            loaded += self._load_side_tables(session, node, ds, names, cols, scale, windows)
            counts = self._rows_per_day(session, node, names, cols, windows)
            rows = sum(counts.get(d, 0) for d in days)
            footprint = self._footprint(session, node, names)
        finally:
            session.close()
        self.swept = self.sweep()
        self.reply_note = self._reply_format(names, cols, days[0], typed_keys(dataset, keys[:1])[0] if cols.key else "")
        return Layout(dataset=dataset, scale=scale, strings=StringMode.parse(strings), days=tuple(days),
                      keys_sample=tuple(keys[:KEYS_SAMPLE]), rows=rows, footprint_bytes=footprint,
                      reused=loaded == 0, location=f"{names.db}/{names.table}",
                      notes=rounding_note(ds.info.schema, "DolphinDB", "ns"))

    @staticmethod
    def _has_minute_table(cols: scripts.Columns) -> bool:
        return bool(cols.bid and cols.ask and cols.key) and cols.bid != cols.ask and cols.date != cols.time

    def _rows_per_day(self, session, node, names, cols, windows) -> dict[dt.date, int]:
        """Counted in ``windows`` of days under DolphinDB's per-query partition limit (S02039)."""
        counts: dict[dt.date, int] = {}
        for first, last in windows:
            frame = self._run(session, node, scripts.rows_per_day(names, cols, first, last))
            if frame is not None and len(frame):
                counts.update({pd.Timestamp(d).date(): int(n) for d, n in zip(frame["day"], frame["n"])})
        return counts

    def _day_windows(self, session, node, names, cols, days) -> list[tuple[dt.date, dt.date]]:
        """The layout's days in windows under the partition limit; a day's partitions are the
        live key scheme's ranges (a reused database may cut other ones)."""
        per_day = len(self._run(session, node, scripts.key_scheme(names))) - 1 if cols.key else 1
        return day_windows(min(days), max(days), per_day)

    def _load(self, session, node, ds, names, cols, scale, days, windows, progress) -> int:
        """Load missing days; return the rows loaded now (0 when everything was there)."""
        counts = self._rows_per_day(session, node, names, cols, windows)
        expected = dict(zip(days, ds.day_rows(scale)))
        total = sum(expected.values())
        done, loaded = 0, 0
        insert = scripts.insert_function(names, names.table)
        hints = upload_hints(ds.info.schema)
        for index, day in enumerate(days):
            have = counts.get(day, 0)
            if have == expected[day]:
                done += have
                if progress:
                    progress(done, total, f"{day}: already loaded ({have:,} rows)")
                continue
            if have:
                self._run(session, node, scripts.delete_day(names, cols, day))
            for chunk in ds.generate_day(index, scale, StringMode.ARROW, chunk_rows=self.chunk_rows):
                self._run(session, node, insert, typed_frame(chunk, hints))
                done += len(chunk)
                loaded += len(chunk)
                if progress:
                    progress(done, total, f"{day}: {done:,} of {total:,} rows loaded")
        return loaded

    @staticmethod
    def side_tables(ds) -> dict[str, Any]:
        """The dataset's tables beside the seed table (``workloads.datasets.base.side_tables``),
        name -> schema, each name checked as a DolphinDB identifier."""
        return {q.identifier(name, "table name"): schema for name, schema in common_side_tables(ds).items()}

    def _load_side_tables(self, session, node, ds, names, cols, scale, windows) -> int:
        """Each side table loaded once: one holding the rows ``side_rows`` recorded is kept without
        generating it, an incomplete one is dropped and loaded again. One with the seed table's
        partitioning columns (TAQ's trades: date and symbol) is partitioned as the seed table is, in
        the same database (what a DolphinDB user does with trades beside quotes); any other
        (devices' info) is a dimension table. Returns the rows loaded now."""
        run = lambda script, *a: self._run(session, node, script, *a)  # noqa: E731
        recorded = self._recorded_side_rows(session, node, names)
        loaded = 0
        for table, schema in self.side_tables(ds).items():
            have = (self._count_side_rows(session, node, names, cols, table, schema, windows)
                    if run(scripts.exists_table(names, table)) else None)
            if have and recorded.get(table) == have:
                continue
            frame = getattr(ds, f"{table}_frame")(scale)
            if have != len(frame):          # a layout from before the record was kept may be whole
                if have is not None:
                    run(scripts.drop_table(names, table))
                self._load_side_table(session, node, names, cols, table, schema, frame)
                loaded += len(frame)
            recorded[table] = len(frame)
            self._record_side_rows(session, node, names, recorded)
        return loaded

    def _count_side_rows(self, session, node, names, cols, table: str, schema, windows) -> int:
        """A side table partitioned as the seed table is counted in the seed table's day windows
        (the partition limit); a dimension table is one partition, counted whole."""
        if not set(cols.partition) <= set(schema.names):
            return int(self._run(session, node, scripts.count_rows(names, table)))
        return sum(int(self._run(session, node, scripts.count_rows(names, table, scripts.days_filter(cols, a, b))))
                   for a, b in windows)

    def _load_side_table(self, session, node, names, cols, table: str, schema, frame: pd.DataFrame) -> None:
        columns = [(c.name, c.ddb_type) for c in schema.columns]
        if set(cols.partition) <= set(schema.names):
            self._run(session, node, scripts.create_table(names, table, columns, cols.partition))
        else:
            self._run(session, node, scripts.create_dimension_table(names, table, columns))
        insert, hints = scripts.insert_function(names, table), upload_hints(schema)
        for start in range(0, len(frame), self.chunk_rows):
            self._run(session, node, insert, typed_frame(frame.iloc[start:start + self.chunk_rows], hints))

    def _recorded_side_rows(self, session, node, names) -> dict[str, int]:
        if not self._run(session, node, scripts.exists_table(names, SIDE_ROWS)):
            return {}
        frame = self._run(session, node, scripts.select_all(names, SIDE_ROWS))
        return {str(name): int(n) for name, n in zip(frame["name"], frame["n"])}

    def _record_side_rows(self, session, node, names, recorded: dict[str, int]) -> None:
        """The record replaced whole (a few rows; a dimension table is rewritten, not updated in place)."""
        if self._run(session, node, scripts.exists_table(names, SIDE_ROWS)):
            self._run(session, node, scripts.drop_table(names, SIDE_ROWS))
        self._run(session, node, scripts.create_dimension_table(names, SIDE_ROWS, [("name", "STRING"), ("n", "LONG")]))
        self._run(session, node, scripts.insert_function(names, SIDE_ROWS),
                  pd.DataFrame({"name": list(recorded), "n": pd.array(list(recorded.values()), dtype="int64")}))

    def _footprint(self, session, node, names) -> int:
        value = self._run(session, node, scripts.footprint(names))
        try:
            return int(value) if value is not None and value == value else 0
        except (TypeError, ValueError):
            return 0

    def _reply_format(self, names, cols, day: dt.date, key: str | int) -> str:
        """What each node the run may use answers a table query with under PROTOCOL_ARROW (a
        node without the formatArrow plugin answers in the DDB format, silently); refused when
        some would answer Arrow and some DDB."""
        if self.profile.protocol != "ARROW":
            return ""
        read = scripts.select_slice(names, cols, day, key) if cols.key else scripts.select_day(names, cols, day)
        script = scripts.plain(read)
        arrow, ddb = [], []
        for node in self.nodes_in_use():
            session = self._connect(node)
            try:
                result = self._run(session, node, script)
            finally:
                session.close()
            (arrow if _is_arrow_table(result) else ddb).append(node.address)
        if arrow and ddb:
            raise TargetError(
                f"PROTOCOL_ARROW would mix two formats in one run: {', '.join(ddb)} answer in the DDB format "
                f"(no formatArrow plugin), {', '.join(arrow)} with Arrow; load the plugin on every node, "
                "route every user to one kind (node policy), or choose DDB")
        if arrow:
            return f"the server answered PROTOCOL_ARROW with Arrow on {plural_nodes(arrow)}"
        return (f"the server answered PROTOCOL_ARROW in the DDB format (no formatArrow plugin) on "
                f"{plural_nodes(ddb)}: figures are DDB-protocol figures")

    def footprint(self, layout: Layout) -> int:
        session, node = self._admin_session()
        try:
            return self._footprint(session, node, self.names(layout.dataset, layout.scale))
        finally:
            session.close()

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        """Bytes of the seed table ("") or the import table from ``getTabletsMeta`` on every data
        node: replicas included, and counted (tablet copies / distinct chunks)."""
        names = self.names(layout.dataset, layout.scale)
        target = names.imports if table == IMPORT_TABLE else (q.identifier(table, "table name")
                                                                if table else names.table)
        session, node = self._admin_session()
        try:
            if not self._run(session, node, scripts.exists_table(names, target)):
                return Footprint(bytes=0, method=f"{target} does not exist yet")
            frame = self._run(session, node, scripts.footprint_detail(names, target))
        finally:
            session.close()
        copies, chunks = _count(frame["copies"].iloc[0]), _count(frame["chunks"].iloc[0])
        used = frame["bytes"].iloc[0]
        return Footprint(
            bytes=int(used) if used == used else 0,
            replicas=round(copies / chunks) if chunks else None,
            method="getTabletsMeta diskUsage summed over every data node (pnodeRun), replicas included; "
                   "replicas = tablet copies / distinct chunkIds. No per-column sizes: DolphinDB "
                   "documents none (getTabletsMeta and getChunksMeta report whole tablets and chunks)")
