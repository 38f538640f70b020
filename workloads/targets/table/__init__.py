"""A table where it already lives, benchmarked in place and read-only: target ``table:<name>``.

A user points Tickbench at a table it did not make (a Parquet file or hive folder, a DuckDB file's
table, a PostgreSQL, QuestDB or ClickHouse table, a DolphinDB ``dfs://`` table) and names its roles.
``add_table_target`` connects, reads the table's schema, checks the roles against it and saves what it
learnt (``workloads.datasets.tables``: the dataset ``tbl_<name>``). ``TableTarget`` then runs the read
workloads (read-day, slice-download, minute-bars, export) and a suite the user writes with each
engine's own client (``sources``, ``parquet``, ``sql``, ``servers``, ``dolphindb``). It never creates,
writes, alters or drops anything there: ``prepare`` only asks bounded questions (the days, a sample of
keys, the engine's own size and row figures), a write workload is refused before it starts
(``read_only``), and ``append``, ``import_csv`` and ``clear_table`` raise ``TargetError``.

Phases: ``read`` (Parquet: the dataset's reader into Arrow) or ``query`` (an engine's execution into
Arrow, with a server's transfer in it: the client call is one exchange), then ``decode`` (Arrow to a
DataFrame with the run's string mode). DolphinDB's client hands its users a DataFrame: there the
decode is inside ``query``, as in the DolphinDB target's measured reads.
"""
from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from workloads.datasets.roles import RoleError, Roles
from workloads.datasets.schema import Scale, Schema, StringMode
from workloads.datasets.tables import SavedTable, check_table_name, load_table, save_table
from workloads.targets.base import Footprint, Layout, NotSupported, OpResult, ProgressCallback, Target, TargetError
from workloads.targets.common.arrow_frames import frame_from_arrow, key_value
from workloads.targets.common.cache import drop_file_cache, system_wide_drop
from workloads.targets.common.columns import column_schema
from workloads.targets.table.sources import Source, Span

TABLE = "table"                    # the target kind; a saved one's key is table:<name>
KEY_PREFIX = "table:"
KINDS = ("parquet", "duckdb", "postgres", "questdb", "clickhouse", "dolphindb")
SERVER_KINDS = ("postgres", "questdb", "clickhouse", "dolphindb")
FILE_KINDS = ("parquet", "duckdb")                  # read from files on this machine: their cache can be emptied
# where a date and a time-of-day column are read in place (QuestDB keeps no DATE or time-of-day type)
DATED_KINDS = ("parquet", "duckdb", "postgres", "clickhouse", "dolphindb")
CONNECTION_KEYS = ("host", "port", "user", "password", "database", "secure", "http_port", "server_key")


def _source_class(kind: str) -> type[Source]:
    if kind == "parquet":
        from workloads.targets.table.parquet import ParquetSource
        return ParquetSource
    if kind == "duckdb":
        from workloads.targets.table.sql import DuckDBSource
        return DuckDBSource
    if kind == "postgres":
        from workloads.targets.table.sql import PostgresSource
        return PostgresSource
    if kind == "questdb":
        from workloads.targets.table.sql import QuestDBSource
        return QuestDBSource
    if kind == "clickhouse":
        from workloads.targets.table.servers import ClickHouseSource
        return ClickHouseSource
    if kind == "dolphindb":
        from workloads.targets.table.dolphindb import DolphinDBSource
        return DolphinDBSource
    raise TargetError(f"table kind {kind!r}: choose one of {', '.join(KINDS)}")


def open_source(saved: SavedTable, config: dict[str, Any]) -> Source:
    """The table's reader (connected); TargetError in one line naming the table when it cannot be reached."""
    return _source_class(saved.kind)(saved, config)


# --- adding one --------------------------------------------------------------------------------------
def _unsaved(name: str, kind: str, location: str, table: str, roles: Roles | None,
             connection: dict[str, Any]) -> SavedTable:
    if kind not in KINDS:
        raise TargetError(f"table kind {kind!r}: choose one of {', '.join(KINDS)}")
    if kind != "parquet" and not table:
        raise TargetError(f"{kind} at {location}: name the table (--table)")
    return SavedTable(name, kind, str(location), table, Schema(()), roles or Roles(time=""),
                      {k: v for k, v in connection.items() if k in CONNECTION_KEYS and v not in (None, "")})


def _check_time_roles(saved: SavedTable) -> None:
    """A date and a time-of-day column only where this package reads them (``DATED_KINDS``)."""
    if saved.roles.time_of_day and saved.kind not in DATED_KINDS:
        raise TargetError(f"{saved.where}: a date and a time-of-day column are read in place on Parquet, DuckDB, "
                          "PostgreSQL, ClickHouse and DolphinDB tables; give a timestamp column for this kind")


def describe_table(kind: str, location: str, table: str = "", connection: dict[str, Any] | None = None
                   ) -> list[tuple[str, str, str]]:
    """The table's columns for a dialog: (name, Tickbench type, the engine's Arrow type), in its order;
    TargetError in one line for a table that cannot be reached or read."""
    saved = _unsaved("describe", kind, location, table, None, dict(connection or {}))
    source = open_source(saved, dict(connection or {}))
    try:
        arrow = source.arrow_schema()
        schema = source.schema()
        return [(c.name, c.ddb_type, str(f.type)) for c, f in zip(schema.columns, arrow)]
    finally:
        source.close()


def add_table_target(name: str, kind: str, location: str, table: str, roles: Roles,
                     connection: dict[str, Any] | None = None) -> SavedTable:
    """Check the table (reachable, readable, not empty, the roles' columns there and of their types)
    and save it as target ``table:<name>`` (dataset ``tbl_<name>``); its password is never saved here.
    TargetError (or RoleError, a ValueError) in one line naming the table and the problem."""
    check_table_name(name)
    connection = dict(connection or {})
    saved = _unsaved(name, kind, location, table, roles, connection)
    _check_time_roles(saved)
    source = open_source(saved, connection)
    try:
        schema = source.schema()
        roles.check(schema, saved.where)
        saved = SavedTable(saved.name, saved.kind, saved.location, saved.table, schema, roles, saved.connection)
        source.saved = saved
        if source.first_time(None) is None:
            raise source.error("the table has no rows (nothing to benchmark)")
    finally:
        source.close()
    save_table(saved)
    return saved


# --- the target ----------------------------------------------------------------------------------------
def _now() -> float:
    return time.perf_counter()


class TableTarget(Target):
    """Reads of one existing table, in place (module doc). Config: ``name`` (the saved table) and,
    for a server, its connection (host, port, user, database, password); ``answer = "pandas"`` answers
    a user's suite as a client would: the days' rows read, then DuckDB over the frames (``verify``'s
    second opinion on a table's own SQL)."""

    kind = TABLE
    read_only = True                 # the runner refuses write workloads before anything starts
    read_phases = ("read", "query", "decode")

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.name = check_table_name(str(self.config.get("name") or ""))
        self._saved: SavedTable | None = None
        self.source: Source | None = None

    @property
    def saved(self) -> SavedTable:
        if self._saved is None:
            try:
                self._saved = load_table(self.name)
            except ValueError as exc:
                raise TargetError(str(exc)) from None
        return self._saved

    def _source(self) -> Source:
        if self.source is None:
            self.source = open_source(self.saved, self.config)
        return self.source

    def refuse(self, what: str) -> TargetError:
        return TargetError(f"{KEY_PREFIX}{self.name} is read-only ({self.saved.where}): {what} would write to it")

    # --- parent side ------------------------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        saved = self.saved
        if dataset != saved.dataset:
            raise TargetError(f"{KEY_PREFIX}{self.name} holds dataset {saved.dataset}, not {dataset}: "
                              f"run it with --dataset {saved.dataset}")
        _check_time_roles(saved)
        source = self._source()
        try:
            if progress:
                progress(0, 3, f"finding the days of {saved.where}")
            schema = source.schema()
            saved.roles.check(schema, saved.where)        # the table may have changed since it was added
            days = tuple(source.find_days())
            if progress:
                progress(1, 3, "sampling keys of the most recent day")
            keys = tuple(source.sample_keys(days[-1]))
            if progress:
                progress(2, 3, "asking the engine for its size")
            footprint = source.footprint()
            rows = source.rows()
        except RoleError as exc:
            raise TargetError(str(exc)) from None
        finally:
            self.close()
        self._footprint = footprint
        return Layout(dataset=saved.dataset, scale=scale, strings=strings, days=days, keys_sample=keys,
                      rows=rows, footprint_bytes=footprint.bytes, reused=True, location=saved.where)

    def footprint(self, layout: Layout) -> int:
        return layout.footprint_bytes

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        found = getattr(self, "_footprint", None)
        return found if found is not None and not table else Footprint(layout.footprint_bytes,
                                                                      method="as found by prepare")

    def describe(self) -> dict[str, Any]:
        saved = self.saved
        return {"kind": TABLE, "table": saved.where, "source_kind": saved.kind, "roles": saved.roles.describe(),
                "read_only": True}

    def clear_table(self, layout: Layout, table: str = "") -> None:
        raise self.refuse("emptying a table")

    # --- cold reads: what can be cleared from here ----------------------------------------------------------
    @property
    def engine_caches_data(self) -> bool:
        """A DolphinDB table's data sits in the server's caches, which its clear must empty."""
        return self.saved.kind == "dolphindb"

    def cold_refusal(self) -> str:
        """Why a cold run cannot be honest here ("" when it can): a table on a server keeps its data in
        the server's own caches, which no client may empty (its files are on another machine), but
        DolphinDB's, which a client may (``DolphinDBSource.drop_cache``)."""
        if self.saved.kind in FILE_KINDS or self.saved.kind == "dolphindb":
            return ""
        return (f"{KEY_PREFIX}{self.name} lives on a {self.saved.kind} server ({self.saved.where}): Tickbench "
                f"cannot empty that server's caches from here, so every read would be warm; run it warm "
                f"(--cache warm)")

    def data_files(self, layout: Layout) -> list[Path]:
        """A file table's files (a Parquet folder's, a DuckDB file and its WAL); none on a server."""
        if self.saved.kind == "parquet":
            return sorted(p for p in Path(self.saved.location).expanduser().rglob("*") if p.is_file())
        if self.saved.kind == "duckdb":
            path = Path(self.saved.location).expanduser()
            return [path, path.with_name(path.name + ".wal")]
        return []

    def drop_cache(self, layout: Layout) -> list[str]:
        """The OS cache of a file table's files (read-only: nothing is written to them); a DolphinDB
        table's server caches (its engine's clears: they write nothing to the table)."""
        if self.saved.kind == "dolphindb":
            return self._source().drop_cache()
        files = self.data_files(layout)
        return drop_file_cache(files, system_wide=system_wide_drop(self.config)) if files else []

    def data_hosts(self) -> tuple[str, ...]:
        """A DolphinDB table's data nodes' hosts, as its last clear found them."""
        return getattr(self.source, "hosts", ())

    def drop_process_cache(self, layout: Layout) -> list[str]:
        """A DuckDB file's buffer pool, by reopening this process's connection."""
        if self.saved.kind != "duckdb" or self.source is None:
            return []
        self.close()
        self._source()
        return ["duckdb reconnect"]

    # --- worker side -------------------------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._source()

    def close(self) -> None:
        if self.source is not None:
            source, self.source = self.source, None
            source.close()

    def _span(self, layout: Layout, day: dt.date) -> Span:
        if day not in layout.days:
            raise ValueError(f"{day} is not a day of {self.saved.where}")
        return Span.of_day(day, self._source().time_zoned())

    def _read(self, layout: Layout, span: Span, schema: Schema, key=None) -> OpResult:
        source = self._source()
        t0 = _now()
        table = source.select(span, tuple(schema.names), key)
        t1 = _now()
        frame = table if isinstance(table, pd.DataFrame) else frame_from_arrow(table, layout.strings)
        t2 = _now()
        return OpResult(rows=len(frame), phases={source.read_phase: t1 - t0, "decode": t2 - t1}, frame=frame,
                        schema=schema)

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        schema = column_schema(self.saved.schema, columns, layout.dataset)
        return self._read(layout, self._span(layout, day), schema)

    def _key(self, key: str):
        saved = self.saved
        if not saved.roles.key:
            raise ValueError(f"{saved.where} has no key role: a slice needs one (--key)")
        return key_value(saved.schema.column(saved.roles.key), key)

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        return self._read(layout, self._span(layout, day), self.saved.schema, self._key(key))

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        if not self.saved.roles.price:
            raise ValueError(f"{self.saved.where} has no price role: minute bars need one (--price)")
        span, value = self._span(layout, day), self._key(key)
        t0 = _now()
        result = self._source().bars(span, value)
        t1 = _now()
        frame = result if isinstance(result, pd.DataFrame) else frame_from_arrow(result, StringMode.ARROW)
        t2 = _now()
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": t2 - t1}, frame=frame)

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """The day through the same read, then pyarrow's CSV writer (the table itself is only read)."""
        import pyarrow.csv as pacsv
        source = self._source()
        t0 = _now()
        table = source.select(self._span(layout, day), tuple(self.saved.schema.names))
        t1 = _now()
        if isinstance(table, pd.DataFrame):
            table = pa.Table.from_pandas(table, preserve_index=False)
        pacsv.write_csv(table, str(path))
        t2 = _now()
        return OpResult(rows=table.num_rows, phases={source.read_phase: t1 - t0, "decode": t2 - t1},
                        schema=self.saved.schema, wire_path=path)

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        raise self.refuse("appending rows")

    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        raise self.refuse("importing a CSV file")

    # --- a suite the user writes (workloads.queries.user_suites) ---------------------------------------
    @property
    def query_dialect(self) -> str:
        """The engine's own SQL; a Parquet folder has none (nor a table asked to ``answer`` as pandas):
        its days are read, then DuckDB runs ``pandas``."""
        return "pandas" if self.saved.kind == "parquet" or self.config.get("answer") == "pandas" else self.saved.kind

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        """A user's suite query on the table where it lives: the engine runs its text (``query``), then the
        answer becomes a DataFrame (``decode``); on Parquet the days it needs are read (``read``) and
        DuckDB runs it over them (``query``)."""
        from workloads.queries import query_days, user_suites
        text = query.text(self.query_dialect)
        if text is None or not isinstance(query, user_suites.UserQuery):
            raise NotSupported(f"{KEY_PREFIX}{self.name} runs the suites a user writes for its table (FILE.toml); "
                               f"query {query.id} is not one of them")
        source = self._source()
        if self.query_dialect == "pandas":
            t0 = _now()
            tables = [source.select(self._span(layout, day), tuple(self.saved.schema.names))
                      for day in query_days(query, values, layout.days)]
            t1 = _now()
            frame = pa.concat_tables(tables).to_pandas()
            t2 = _now()
            result = user_suites.frames_sql(text, {query.table: frame}, values)
            return OpResult(rows=len(result), phases={"read": t1 - t0, "decode": t2 - t1, "query": _now() - t2},
                            frame=result, extra={"answered": user_suites.FRAMES_NOTE})
        t0 = _now()
        answer = source.query(source.suite_text(text, layout.dataset))
        t1 = _now()
        frame = answer if isinstance(answer, pd.DataFrame) else frame_from_arrow(answer, StringMode.ARROW)
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": _now() - t1}, frame=frame)


__all__ = ["KINDS", "KEY_PREFIX", "SERVER_KINDS", "TABLE", "TableTarget", "add_table_target", "describe_table",
           "open_source"]
