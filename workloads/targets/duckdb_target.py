"""DuckDB, the embedded default target: one database file, one table per dataset and scale.

Layout: table ``<dataset>_<scale.key()>`` in ``config["path"]`` (default
``<datasets dir>/tickbench_data.duckdb``), no index, rows ordered by (date, key, time) so
DuckDB's zone maps (per-row-group min/max) skip most of the table for a day or key-day. Strings
are VARCHAR; the string mode only changes decoding, so all three modes share the table. Each
day is loaded in its own transaction (chunks from the generator via Arrow into a temp table,
then one sorted INSERT), so an interrupted ``prepare`` resumes at the first missing day. The
manifest lives in the table ``_tickbench_layouts``.

Phases: the timed call is ``con.sql(query).to_arrow_table()`` then ``to_pandas`` in the string
mode (a user's fastest path from DuckDB to pandas); ``query`` = the first (execution into Arrow,
in-process: no transfer), ``decode`` = the second. Minute bars are computed by DuckDB (SQL).
Bytes actually read are not known (DuckDB reads its own pages): ``wire_bytes`` stays empty.

Concurrency, honestly: DuckDB lets ONE process open a file read-write, or several processes
open it read-only, never both at once. So:
- ``prepare`` closes its read-write connection before returning; workers ``open`` read-only.
- ``append`` releases this process's read-only connection, then opens read-write for the one
  INSERT and closes again, so concurrent appends from several processes are serialised, one
  at a time. Tickbench's writers queue on a kernel lock (``flock`` on ``<file>.writers.lock``,
  POSIX) rather than by retrying DuckDB's open, because a refused open costs ~10 ms of CPU.
  When DuckDB still refuses (a reader or another program holds the file) we retry with
  backoff, up to ``lock_timeout_s``. The wait is part of the ``query`` phase and is also
  reported in ``OpResult.extra`` (``lock_wait_s``; ``lock_retries``: refused DuckDB opens;
  ``queue_polls``: checks of the writer queue). Each append pays an open
  and a close (checkpoint) of the file: tens of ms, the price of a multi-process writer.
- Readers opening while a writer holds the file wait the same way (outside timing in ``open``).
For ``append``, ``decode`` is the reverse conversion (DataFrame -> Arrow).
"""
from __future__ import annotations

import datetime as dt
import json
import os
import random
import re
import time
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from workloads.datasets.base import side_tables
from workloads.datasets.schema import DatasetInfo, Scale, Schema, StringMode
from workloads.targets.arrow_frames import arrow_schema, arrow_table, frame_from_arrow, key_value, library_versions
from workloads.targets.bars import price_columns
from workloads.targets.base import (IMPORT_TABLE, Footprint, Layout, NotSupported, OpResult,
                                    ProgressCallback, Target, TargetError)
from workloads.targets.cache import drop_file_cache, system_wide_drop
from workloads.targets.columns import column_schema
from workloads.targets.storage import disk_full_error
from workloads.targets.turns import take_turn
from workloads.targets.sizes import rows_bytes
from workloads.targets.quotes import (MAX_ASK_BID_RATIO, SESSION_CLOSE, SESSION_OPEN, QuoteColumns, day_span,
                                     ols_from_sums, quote_columns)
from workloads.targets.lazy import get_dataset as _get_dataset

LAYOUT_FORMAT = 1
KEYS_SAMPLE = 100
DEFAULT_CHUNK_ROWS = 1_000_000
MANIFEST_TABLE = "_tickbench_layouts"
DEFAULT_LOCK_TIMEOUT_S = 120.0

_SQL_TYPES = {
    "BOOL": "BOOLEAN", "CHAR": "TINYINT", "SHORT": "SMALLINT", "INT": "INTEGER", "LONG": "BIGINT",
    "FLOAT": "REAL", "DOUBLE": "DOUBLE", "DATE": "DATE", "SECOND": "TIMESTAMP", "TIME": "TIMESTAMP",
    "TIMESTAMP": "TIMESTAMP", "SYMBOL": "VARCHAR", "STRING": "VARCHAR",
}


def _now() -> float:
    return time.perf_counter()


def quote(name: str) -> str:
    """A SQL identifier, quoted (names come from schemas and callers, never from SQL text)."""
    return '"' + name.replace('"', '""') + '"'


def table_name(dataset: str, scale: Scale) -> str:
    return f"{dataset}_{scale.key()}"


def _columns_sql(schema: Schema) -> str:
    return ", ".join(f"{quote(c.name)} {_SQL_TYPES[c.ddb_type]}" for c in schema.columns)


def _select_cast_sql(schema: Schema) -> str:
    """Arrow's timestamp[ns] etc. cast to the table's types (DATE, TIMESTAMP, ...)."""
    return ", ".join(f"CAST({quote(c.name)} AS {_SQL_TYPES[c.ddb_type]}) AS {quote(c.name)}"
                     for c in schema.columns)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# DolphinDB's text style (workloads.datasets.csv_files) to the table's types, column by column
_FROM_TEXT = {
    "DATE": "CAST(strptime({c}, '%Y.%m.%d') AS DATE)",
    "SECOND": "strptime('1970.01.01 ' || {c}, '%Y.%m.%d %H:%M:%S')",
    "TIME": "strptime('1970.01.01 ' || {c}, '%Y.%m.%d %H:%M:%S.%g')",
    "TIMESTAMP": "strptime({c}, '%Y.%m.%dT%H:%M:%S.%g')",
    "CHAR": "CAST(ascii(nullif({c}, '')) AS TINYINT)",
}


def _from_text_sql(schema: Schema) -> str:
    parts = []
    for c in schema.columns:
        name = quote(c.name)
        expr = _FROM_TEXT.get(c.ddb_type, f"CAST(nullif({name}, '') AS {_SQL_TYPES[c.ddb_type]})")
        parts.append(expr.format(c=name) + f" AS {name}")
    return ", ".join(parts)


# The table's types as a CSV holds them: a time of day without the 1970-01-01 it is stored on,
# a CHAR as its letter (as the dataset's CSV files and DolphinDB's saveText write them)
_TO_TEXT = {
    "SECOND": "CAST({c} AS TIME)",
    "TIME": "CAST({c} AS TIME)",
    "CHAR": "chr(CAST({c} AS INTEGER))",
}


def _to_text_sql(schema: Schema) -> str:
    return ", ".join(_TO_TEXT.get(c.ddb_type, "{c}").format(c=quote(c.name)) + f" AS {quote(c.name)}"
                     for c in schema.columns)



def _is_lock_error(exc: Exception) -> bool:
    return isinstance(exc, duckdb.IOException) and "lock" in str(exc).lower()


class DuckDBTarget(Target):
    kind = "duckdb"
    read_phases = ("query", "decode")

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self._reader: duckdb.DuckDBPyConnection | None = None
        self._info: DatasetInfo | None = None

    # --- configuration -------------------------------------------------------------------
    @property
    def path(self) -> Path:
        path = self.config.get("path")
        if not path:
            from workloads.paths import default_datasets_dir
            return default_datasets_dir() / "tickbench_data.duckdb"
        return Path(path)

    @property
    def lock_timeout_s(self) -> float:
        return float(self.config.get("lock_timeout_s") or DEFAULT_LOCK_TIMEOUT_S)

    @contextmanager
    def _writer(self):
        """The file's read-write connection, taken in turn with other processes (DuckDB allows one
        writing process per file); yields it with the wait facts an OpResult reports."""
        self.close()  # a read-only handle in this process would block our own read-write open
        asked = time.monotonic()          # the system-wide clock: turns compare across processes
        turn, polls = self._queue_for_writing()
        taken = time.monotonic()
        try:
            con, waited, retries = self._connect(read_only=False)
        except BaseException:
            if turn is not None:
                os.close(turn)
            raise
        facts = {"lock_wait_s": (taken - asked) + waited, "lock_retries": retries, "queue_polls": polls,
                 "serialised": True, "turn_asked": asked, "turn_taken": taken}
        try:
            yield con, facts
        except duckdb.Error as exc:
            raise self._disk_full(exc) or exc
        finally:
            con.close()  # hand the file to the next writer
            facts["turn_released"] = time.monotonic()
            if turn is not None:
                os.close(turn)

    def _queue_for_writing(self) -> tuple[int | None, int]:
        """Wait for this file's writer turn among Tickbench processes: (fd, polls)."""
        return take_turn(self.path.with_name(self.path.name + ".writers.lock"), self.lock_timeout_s,
                         f"no turn to write {self.path} within {self.lock_timeout_s:g} s: other Tickbench "
                         "processes kept appending (DuckDB allows one writing process per file)")

    def _connect(self, read_only: bool) -> tuple[duckdb.DuckDBPyConnection, float, int]:
        """Open the file, waiting while another process holds a conflicting lock.

        Returns (connection, seconds spent waiting for the lock, failed attempts).
        """
        config: dict[str, Any] = {}
        if self.config.get("threads"):
            config["threads"] = int(self.config["threads"])
        if self.config.get("memory_limit"):  # e.g. "2GB": several worker processes share the RAM
            config["memory_limit"] = str(self.config["memory_limit"])
        timeout = self.lock_timeout_s
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.is_file():
            raise TargetError(f"DuckDB file {self.path} does not exist: prepare the target first")
        start = _now()
        retries, delay = 0, 0.001
        while True:
            attempt = _now()
            try:
                con = duckdb.connect(str(self.path), read_only=read_only, config=config)
                return con, attempt - start, retries
            except duckdb.ConnectionException as exc:  # this process already has it open otherwise
                raise TargetError(f"DuckDB file {self.path} is already open in this process in another "
                                  f"mode (read-only vs read-write); close that connection first: {exc}") from exc
            except duckdb.Error as exc:
                if not _is_lock_error(exc):
                    raise TargetError(f"cannot open DuckDB file {self.path}: {exc}") from exc
                if _now() - start > timeout:
                    raise TargetError(
                        f"DuckDB file {self.path} stayed locked by another process for {timeout:g} s "
                        f"(DuckDB allows one writing process per file): {exc}") from exc
                retries += 1
                time.sleep(delay * (1 + random.random()))  # jitter: writers must not retry in lockstep
                delay = min(delay * 2, 0.05)

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        if self._info is None or self._info.name != layout.dataset:
            self._info = _get_dataset(layout.dataset).info
        return self._info

    # --- parent side ---------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        table = table_name(dataset, scale)
        days = list(ds.trading_days(scale))
        scale_json = json.dumps({**asdict(scale), "content": ds.content_id}, sort_keys=True)
        self.close()  # our own read-only connection would block the read-write open
        con, _, _ = self._connect(read_only=False)
        try:
            return self._prepare(con, ds, dataset, scale, strings, table, days, scale_json, progress)
        except duckdb.Error as exc:
            raise self._disk_full(exc) or exc
        finally:
            con.close()  # workers open read-only; a read-write handle here would lock them out

    def _disk_full(self, exc: duckdb.Error) -> TargetError | None:
        """DuckDB's "No space left on device" as the clear error the files targets give."""
        return disk_full_error(exc, self.path)

    def _prepare(self, con, ds, dataset: str, scale: Scale, strings: StringMode, table: str,
                 days: list[dt.date], scale_json: str, progress: ProgressCallback | None) -> Layout:
        info: DatasetInfo = ds.info
        con.execute(f"CREATE TABLE IF NOT EXISTS {MANIFEST_TABLE} (table_name VARCHAR, format INTEGER, "
                    "dataset VARCHAR, scale VARCHAR, days VARCHAR, keys_sample VARCHAR, "
                    "schema VARCHAR, versions VARCHAR, complete BOOLEAN, created TIMESTAMP)")
        found = con.execute(f"SELECT format, scale, days, keys_sample, complete FROM {MANIFEST_TABLE} "
                            "WHERE table_name = ?", [table]).fetchall()
        row = found[0] if found else None
        compatible = row is not None and row[0] == LAYOUT_FORMAT and row[1] == scale_json
        entries = json.loads(row[2]) if compatible else []
        if compatible and row[4] and [e["date"] for e in entries] == [d.isoformat() for d in days]:
            self._ensure_append_table(con, table, table + "_append")
            self._ensure_side_tables(con, ds, scale, table)
            return self._layout(dataset, scale, strings, entries, json.loads(row[3]), table, reused=True)
        if not compatible:  # a different format or scale under this name: start over
            con.execute(f"DROP TABLE IF EXISTS {quote(table)}")
            con.execute(f"DELETE FROM {MANIFEST_TABLE} WHERE table_name = ?", [table])
        con.execute(f"CREATE TABLE IF NOT EXISTS {quote(table)} ({_columns_sql(info.schema)})")
        self._ensure_append_table(con, table, table + "_append")
        self._ensure_side_tables(con, ds, scale, table)
        keys = [str(k) for k in ds.keys(scale)[:KEYS_SAMPLE]]
        manifest = {"format": LAYOUT_FORMAT, "dataset": dataset, "scale": scale_json,
                    "keys_sample": json.dumps(keys),
                    "schema": json.dumps([[c.name, c.ddb_type] for c in info.schema.columns]),
                    "versions": json.dumps(library_versions())}
        done = {e["date"] for e in entries}
        total = scale.days * scale.rows_per_day
        rows_done = sum(e["rows"] for e in entries)
        for index, day in enumerate(days):
            if day.isoformat() in done:
                continue
            con.begin()  # one day = one transaction: a crash leaves no half day
            rows = self._load_day(con, ds, index, scale, table, rows_done, total, progress)
            entries.append({"date": day.isoformat(), "rows": rows})
            entries.sort(key=lambda e: e["date"])
            self._write_manifest(con, table, manifest, entries, complete=False)
            con.commit()
            rows_done += rows
            if progress is not None:
                progress(min(rows_done, total), total, f"{day.isoformat()} loaded into {table}")
        self._write_manifest(con, table, manifest, entries, complete=True)
        con.execute("CHECKPOINT")  # fold the WAL into the file: readers and footprint see it all
        return self._layout(dataset, scale, strings, entries, keys, table, reused=False)

    def _load_day(self, con, ds, index: int, scale: Scale, table: str, rows_done: int, total: int,
                  progress: ProgressCallback | None) -> int:
        info: DatasetInfo = ds.info
        schema = arrow_schema(info.schema)
        con.execute(f"CREATE OR REPLACE TEMP TABLE _tb_stage ({_columns_sql(info.schema)})")
        rows = 0
        chunk_rows = int(self.config.get("chunk_rows") or DEFAULT_CHUNK_ROWS)
        for chunk in ds.generate_day(index, scale, StringMode.ARROW, chunk_rows):
            con.register("_tb_chunk", arrow_table(chunk, schema))
            con.execute(f"INSERT INTO _tb_stage SELECT {_select_cast_sql(info.schema)} FROM _tb_chunk")
            con.unregister("_tb_chunk")
            rows += len(chunk)
            if progress is not None:
                progress(min(rows_done + rows, total), total, f"loading day {index + 1} into {table}")
        # rowid (arrival order) breaks ties in time, so first/last quote of a minute is well defined
        con.execute(f"INSERT INTO {quote(table)} SELECT * EXCLUDE (_arrival) FROM "
                    f"(SELECT *, rowid AS _arrival FROM _tb_stage) "
                    f"ORDER BY {quote(info.key_column)}, {quote(info.time_column)}, _arrival")
        con.execute("DROP TABLE _tb_stage")
        return rows

    @staticmethod
    def _ensure_side_tables(con, ds, scale: Scale, table: str) -> None:
        """A dataset's side tables (devices: ``info``) as ``<table>_<name>``, loaded once."""
        for name, schema in side_tables(ds).items():
            side = f"{table}_{name}"
            exists = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                                 [side]).fetchall()[0][0]
            if exists and con.execute(f"SELECT count(*) FROM {quote(side)}").fetchall()[0][0]:
                continue
            frame = getattr(ds, f"{name}_frame")(scale)
            con.execute(f"CREATE OR REPLACE TABLE {quote(side)} ({_columns_sql(schema)})")
            con.register("_tb_side", arrow_table(frame, arrow_schema(schema)))
            con.execute(f"INSERT INTO {quote(side)} SELECT {_select_cast_sql(schema)} FROM _tb_side")
            con.unregister("_tb_side")

    @staticmethod
    def _ensure_append_table(con, table: str, append_table: str) -> None:
        con.execute(f"CREATE TABLE IF NOT EXISTS {quote(append_table)} AS "
                    f"SELECT * FROM {quote(table)} LIMIT 0")

    @staticmethod
    def _write_manifest(con, table: str, manifest: dict[str, Any], entries: list[dict], complete: bool) -> None:
        con.execute(f"DELETE FROM {MANIFEST_TABLE} WHERE table_name = ?", [table])
        con.execute(f"INSERT INTO {MANIFEST_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, now()::TIMESTAMP)",
                    [table, manifest["format"], manifest["dataset"], manifest["scale"], json.dumps(entries),
                     manifest["keys_sample"], manifest["schema"], manifest["versions"], complete])

    def _layout(self, dataset, scale, strings, entries, keys, table, reused) -> Layout:
        return Layout(dataset=dataset, scale=scale, strings=strings,
                      days=tuple(dt.date.fromisoformat(e["date"]) for e in entries),
                      keys_sample=tuple(keys), rows=sum(e["rows"] for e in entries),
                      footprint_bytes=self._file_bytes(), reused=reused, location=f"{self.path}:{table}")

    def _files(self) -> list[Path]:
        return [self.path, self.path.with_name(self.path.name + ".wal")]

    def _file_bytes(self) -> int:
        return sum(p.stat().st_size for p in self._files() if p.is_file())

    def footprint(self, layout: Layout) -> int:
        """The database file's size (+ WAL): every table in it, as the file holds them together."""
        return self._file_bytes()

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": str(self.path), "duckdb": duckdb.__version__,
                "threads": self.config.get("threads") or "default", "versions": library_versions()}

    def data_files(self, layout: Layout) -> list[Path]:
        return self._files()

    def drop_cache(self, layout: Layout) -> list[str]:
        """The OS cache of the database file."""
        return drop_file_cache(self._files(), system_wide=system_wide_drop(self.config))

    def drop_process_cache(self, layout: Layout) -> list[str]:
        """DuckDB's own buffer pool, by reopening this process's connection."""
        if self._reader is None:
            return []
        self.close()
        self._reader, _, _ = self._connect(read_only=True)
        return ["duckdb reconnect"]

    # --- worker side ---------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        if self._reader is None:
            self._reader, _, _ = self._connect(read_only=True)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _con(self, layout: Layout) -> duckdb.DuckDBPyConnection:
        if self._reader is None:  # not opened (or released by an append): connect before timing
            self.open(layout)
        return self._reader

    def table(self, layout: Layout) -> str:
        return table_name(layout.dataset, layout.scale)

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
        value = key_value(info.schema.column(info.key_column), key)
        sql = f"SELECT * FROM {quote(self.table(layout))} WHERE {where} AND {quote(info.key_column)} = ?"
        return self._run(layout, sql, params + [value], None)

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        where, params = self._day_where(info, day)
        value = key_value(info.schema.column(info.key_column), key)
        # rowid follows the stored (key, time, arrival) order: arg_min/arg_max give first/last quote
        sql = (f"SELECT date_trunc('minute', {quote(info.time_column)}) AS minute, "
               "arg_min(mid, rowid) AS open, max(mid) AS high, min(mid) AS low, arg_max(mid, rowid) AS close "
               f"FROM (SELECT rowid, {quote(info.time_column)}, ({quote(bid)} + {quote(ask)}) / 2 AS mid "
               f"FROM {quote(self.table(layout))} WHERE {where} AND {quote(info.key_column)} = ?) "
               "GROUP BY minute ORDER BY minute")
        return self._run(layout, sql, params + [value], StringMode.ARROW)

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        info = self._dataset_info(layout)
        target_table = table or self.table(layout) + "_append"
        t0 = _now()
        arrow = arrow_table(frame, arrow_schema(info.schema))
        t1 = _now()
        with self._writer() as (con, waits):
            if table:
                self._ensure_append_table(con, self.table(layout), target_table)
            con.register("_tb_append", arrow)
            con.execute(f"INSERT INTO {quote(target_table)} SELECT {_select_cast_sql(info.schema)} FROM _tb_append")
            con.unregister("_tb_append")
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema),
                        phases={"decode": t1 - t0, "query": t2 - t1}, extra=waits)

    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == "minute":
            name = self.minute_table(layout)
        elif table == IMPORT_TABLE:
            name = self.import_table(layout)
        else:
            name = self.table(layout) + "_append" if not table else table
        with self._writer() as (con, _waits):
            exists = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                                 [name]).fetchall()[0][0]
            if exists:
                con.execute(f"DELETE FROM {quote(name)}")

    # --- reports 001 and 004 -------------------------------------------------------------------
    query_dialect = "duckdb"

    def import_table(self, layout: Layout) -> str:
        return self.table(layout) + "_import"

    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """``INSERT INTO <table>_import SELECT ... FROM read_csv(path)``: DuckDB's own CSV reader,
        every column read as text and converted from DolphinDB's text style (2007.08.23, 09:30:07,
        a CHAR as its letter); the writer's turn is taken as for appends."""
        info = self._dataset_info(layout)
        target = quote(self.import_table(layout))
        with self._writer() as (con, waits):
            con.execute(f"CREATE TABLE IF NOT EXISTS {target} AS SELECT * FROM {quote(self.table(layout))} LIMIT 0")
            rows = con.execute(f"INSERT INTO {target} SELECT {_from_text_sql(info.schema)} FROM "
                               "read_csv(?, header = true, all_varchar = true, quote = '\"')",
                               [str(path)]).fetchall()[0][0]
        return OpResult(rows=int(rows), nbytes=rows_bytes(int(rows), info.schema), wire_path=path,
                        extra={**waits, "queryable_s": 0.0})

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """``COPY (SELECT ... one day) TO path``: DuckDB's own CSV writer (ISO dates and
        timestamps; times of day and CHAR letters as the dataset's CSV files hold them)."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        where, params = self._day_where(info, day)
        con = self._con(layout)
        # COPY takes no prepared parameters: the day is a date literal made by code, the path quoted
        literal = where.replace("?", "{}").format(*(f"TIMESTAMP '{p.isoformat(sep=' ')}'" if isinstance(p, dt.datetime)
                                                    else f"DATE '{p.isoformat()}'" for p in params))
        target = "'" + str(path).replace("'", "''") + "'"
        # COPY answers with the rows it wrote: no second query inside the timed span
        rows = con.execute(f"COPY (SELECT {_to_text_sql(info.schema)} FROM {quote(self.table(layout))} "
                           f"WHERE {literal}) "
                           f"TO {target} (HEADER)").fetchall()[0][0]
        return OpResult(rows=int(rows), nbytes=rows_bytes(int(rows), info.schema), wire_path=path)

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        """Bytes of the table's column segments (``pragma_storage_info``): a segment runs from its
        offset to the next segment's in the same block, the last one of a block to the block's end
        (256 KB blocks: a slight overcount), plus any whole blocks it spans."""
        name = self.import_table(layout) if table == IMPORT_TABLE else self.table(layout)
        held = self._reader is not None
        con = self._con(layout)
        try:
            if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                               [name]).fetchall()[0][0]:
                return Footprint(bytes=0, method=f"{name} does not exist yet")
            segments = con.sql("SELECT column_name, block_id, block_offset, additional_block_ids "
                               f"FROM pragma_storage_info({_literal(name)}) WHERE persistent").df()
            block = con.execute("SELECT block_size FROM pragma_database_size()").fetchall()[0][0]
        finally:
            if not held:     # the runner asks between steps: hold no lock the workers' writers need
                self.close()
        columns: dict[str, int] = {}
        for _, in_block in segments.groupby("block_id"):
            ordered = in_block.sort_values("block_offset")
            offsets = ordered["block_offset"].tolist() + [block]
            for (_, row), start, end in zip(ordered.iterrows(), offsets, offsets[1:]):
                extra = len(row["additional_block_ids"]) if row["additional_block_ids"] is not None else 0
                columns[row["column_name"]] = columns.get(row["column_name"], 0) + (end - start) + extra * block
        return Footprint(bytes=sum(columns.values()), columns=columns, replicas=1,
                         method="pragma_storage_info segments (block-level estimate)")

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        """The suite's SQL with ``{quotes}``/``{readings}``/``{info}`` as this layout's tables and
        ``$name`` parameters bound: ``con.sql(sql, params).to_arrow_table()``, then to_pandas."""
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(f"query {query.id} has no DuckDB text")
        table = self.table(layout)
        sql = text.format(quotes=quote(table), readings=quote(table), info=quote(f"{table}_info"))
        # DuckDB refuses a parameter the text does not use: bind only those it names
        used = {name: value for name, value in values.items() if re.search(rf"\${name}\b", sql)}
        return self._run(layout, sql, used, StringMode.ARROW)

    def row_count(self, layout: Layout, table: str = "") -> int:
        """Rows in ``table`` (default: the layout's main table), for checks and reports."""
        con = self._con(layout)
        return con.execute(f"SELECT count(*) FROM {quote(table or self.table(layout))}").fetchall()[0][0]

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self.row_count(layout, table or self.table(layout) + "_append")

    # --- report 003's computations, in SQL (definitions: workloads/targets/quotes.py) -------------
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

    def minute_table(self, layout: Layout) -> str:
        """Where the map-reduce writes its minute quotes (DolphinDB: ``quotes_minute``)."""
        return self.table(layout) + "_minute"

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Report 003 (b): minute quotes of the span INSERTed into the layout's minute table.

        A write, so it takes the writer's turn like ``append`` (DuckDB: one writing process per
        file); the wait is part of ``query`` and reported in ``extra``.
        """
        cols, where, params = self._quote_sql(layout, days)
        k, d, t, b, a = (quote(c) for c in (cols.key, cols.date, cols.time, cols.bid, cols.ask))
        minute_table = quote(self.minute_table(layout))
        t0 = _now()
        with self._writer() as (con, waits):
            con.execute(f"CREATE TABLE IF NOT EXISTS {minute_table} ({k} VARCHAR, {d} DATE, minute TIMESTAMP, "
                        f"{b} DOUBLE, {a} DOUBLE)")
            bars = con.execute(
                f"INSERT INTO {minute_table} SELECT {k}, {d}, date_trunc('minute', {t}) AS minute, "
                f"avg({b}), avg({a}) FROM {quote(self.table(layout))} WHERE {where} GROUP BY ALL",
                params).fetchall()[0][0]        # read to the end: DuckDB 2 keeps the connection busy until then
        t1 = _now()
        frame = pd.DataFrame({"bars": [int(bars)]})
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": _now() - t1}, frame=frame,
                        extra={"bars": int(bars), **waits})
