"""Existing tables behind SQL, read in place: a DuckDB file's table (``con.sql(q).to_arrow_table()``,
the file opened read-only), a PostgreSQL table (ADBC's driver into Arrow, on a session whose
transactions are read-only: the server itself refuses any write, whatever a query says) and a QuestDB
table (HTTP ``/exp?fmt=parquet``).

The questions are the same on every SQL engine (``SqlSource``); a kind gives its quoting, its
timestamp literal, its minute bars and its client. Days: ``SELECT min(t) ... WHERE t >= <next day>``
once per day (an index lookup where the time column is indexed: PostgreSQL's min/max through a
B-tree, DuckDB's zone maps), keys: ``SELECT key ... WHERE <last day> LIMIT n``.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pyarrow as pa

from workloads.targets.base import Footprint, TargetError
from workloads.targets.common.zones import duckdb_on_utc
from workloads.targets.table.sources import Source, Span


def _text_literal(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


class SqlSource(Source):
    """The SQL every engine here shares; ``fetch``/``scalar`` and the dialect come from a kind."""

    def quote(self, name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    @property
    def table_ref(self) -> str:
        return ".".join(self.quote(part) for part in self.saved.table.split("."))

    def time_literal(self, value: dt.datetime) -> str:
        if not isinstance(value, dt.datetime):
            return f"DATE '{value:%Y-%m-%d}'"
        if value.tzinfo is not None:
            return f"TIMESTAMPTZ '{value.astimezone(dt.timezone.utc):%Y-%m-%d %H:%M:%S.%f}+00'"
        return f"TIMESTAMP '{value:%Y-%m-%d %H:%M:%S.%f}'"

    def value_literal(self, value) -> str:
        return str(int(value)) if isinstance(value, int) else _text_literal(value)

    def fetch(self, sql: str) -> pa.Table:
        raise NotImplementedError

    def suite_text(self, text: str, dataset: str) -> str:
        return text.replace("{quotes}", self.table_ref)      # as user_suites fills the SQL engines' texts

    def query(self, text: str) -> pa.Table:
        return self.fetch(text)

    def scalar(self, sql: str):
        table = self.fetch(sql)
        return table.column(0)[0].as_py() if table.num_rows else None

    # --- the questions ------------------------------------------------------------------------------
    def condition(self, span: Span, key=None) -> str:
        t = self.quote(self.saved.roles.time)
        if self.dated:                   # a date column: the day's rows are its date's
            text = f"{t} = {self.time_literal(span.day)}"
        else:
            text = f"{t} >= {self.time_literal(span.start)} AND {t} < {self.time_literal(span.end)}"
        if key is not None:
            text += f" AND {self.quote(self.saved.roles.key)} = {self.value_literal(key)}"
        return text

    def first_time(self, at_or_after):
        t = self.quote(self.saved.roles.time)
        after = "" if at_or_after is None else f" WHERE {t} >= {self.time_literal(at_or_after)}"
        return self.scalar(f"SELECT min({t}) FROM {self.table_ref}{after}")

    def key_sample(self, span: Span, limit: int) -> list:
        k = self.quote(self.saved.roles.key)
        return self.fetch(f"SELECT {k} FROM {self.table_ref} WHERE {self.condition(span)} LIMIT {int(limit)}"
                          ).column(0).to_pylist()

    def select(self, span: Span, columns: tuple[str, ...], key=None) -> pa.Table:
        names = ", ".join(self.quote(c) for c in columns)
        return self.fetch(f"SELECT {names} FROM {self.table_ref} WHERE {self.condition(span, key)}")

    def instant(self) -> str:
        """The time a bar orders and buckets by: the timestamp, or the date plus the time of day."""
        roles = self.saved.roles
        if self.dated:
            return f"({self.quote(roles.time)} + {self.quote(roles.time_of_day)})"
        return self.quote(roles.time)

    def mid(self) -> str:
        bid, ask = self.saved.roles.price[0], self.saved.roles.price[-1]
        return self.quote(bid) if bid == ask else f"({self.quote(bid)} + {self.quote(ask)}) / 2"

    def bars_sql(self, span: Span, key) -> str:
        """First and last mid of a minute by time (``arg_min``/``arg_max``), as DuckDB writes it."""
        t, mid = self.instant(), self.mid()
        volume = f", sum({self.quote(self.saved.roles.size)}) AS volume" if self.saved.roles.size else ""
        return (f"SELECT date_trunc('minute', {t}) AS minute, arg_min({mid}, {t}) AS open, max({mid}) AS high, "
                f"min({mid}) AS low, arg_max({mid}, {t}) AS close{volume} FROM {self.table_ref} "
                f"WHERE {self.condition(span, key)} GROUP BY 1 ORDER BY 1")

    def bars(self, span: Span, key) -> pa.Table:
        return self.fetch(self.bars_sql(span, key))

    def arrow_schema(self) -> pa.Schema:
        if not hasattr(self, "_schema"):
            self._schema = self.fetch(f"SELECT * FROM {self.table_ref} LIMIT 0").schema
        return self._schema


class DuckDBSource(SqlSource):
    def __init__(self, saved, config):
        super().__init__(saved, config)
        import duckdb
        path = Path(saved.location).expanduser()
        if not path.is_file():
            raise self.error("no such DuckDB file")
        try:
            self.con = duckdb.connect(str(path), read_only=True)
            duckdb_on_utc(self.con)
        except duckdb.Error as exc:
            raise self.error(f"cannot open the file read-only ({' '.join(str(exc).split())[:200]})") from None
        self._duckdb = duckdb

    def suite_text(self, text: str, dataset: str) -> str:
        """DuckDB's suite texts are filled with ``str.format`` (their own braces doubled), as its target does."""
        return text.format(quotes=self.table_ref)

    def fetch(self, sql: str) -> pa.Table:
        try:
            return self.con.sql(sql).to_arrow_table()
        except self._duckdb.CatalogException:
            raise self.error("no such table in the file") from None
        except self._duckdb.Error as exc:
            raise self.error(" ".join(str(exc).split())[:300]) from None

    def rows(self) -> int:
        schema, _, name = self.saved.table.rpartition(".")
        found = self.con.execute("SELECT estimated_size FROM duckdb_tables() WHERE table_name = ? "
                                 "AND (? = '' OR schema_name = ?)", [name, schema, schema]).fetchone()
        return int(found[0]) if found and found[0] is not None else 0

    def footprint(self) -> Footprint:
        return Footprint(Path(self.saved.location).expanduser().stat().st_size, replicas=1,
                         method="size of the whole database file (every table in it)")

    def close(self) -> None:
        self.con.close()


class PostgresSource(SqlSource):
    def __init__(self, saved, config):
        super().__init__(saved, config)
        self.server = _read_only_server(config)

    def fetch(self, sql: str) -> pa.Table:
        try:
            return self.server.arrow(sql)
        except TargetError as exc:
            raise self._named(exc) from None

    def _named(self, exc: TargetError) -> TargetError:
        text = str(exc)
        low = text.lower()
        if "does not exist" in low and "relation" in low:
            return self.error("no such table (or it is not visible to this user)")
        if "permission denied" in low:
            return self.error(f"user {self.server.user!r} may not read it (permission denied)")
        if "column" in low and "does not exist" in low:
            return self.error(text.partition(": ")[2] or text)
        return TargetError(text if self.saved.table in text else f"{self.where}: {text.partition(': ')[2] or text}")

    def bars_sql(self, span: Span, key) -> str:
        """PostgreSQL has no first/last aggregate: the ordered ``array_agg`` idiom."""
        t, mid = self.instant(), self.mid()
        volume = f", sum({self.quote(self.saved.roles.size)})::float8 AS volume" if self.saved.roles.size else ""
        return (f"SELECT date_trunc('minute', {t}) AS minute, (array_agg({mid} ORDER BY {t}))[1]::float8 AS open, "
                f"max({mid})::float8 AS high, min({mid})::float8 AS low, "
                f"(array_agg({mid} ORDER BY {t} DESC))[1]::float8 AS close{volume} "
                f"FROM {self.table_ref} WHERE {self.condition(span, key)} GROUP BY 1 ORDER BY 1")

    def time_literal(self, value: dt.datetime) -> str:
        if not isinstance(value, dt.datetime):
            return f"DATE '{value:%Y-%m-%d}'"
        if value.tzinfo is not None:
            return f"'{value.astimezone(dt.timezone.utc):%Y-%m-%d %H:%M:%S.%f}+00'::timestamptz"
        return f"'{value:%Y-%m-%d %H:%M:%S.%f}'::timestamp"

    def query(self, text: str) -> pd.DataFrame:
        """A suite's answer through psycopg, as the PostgreSQL target fetches one (ADBC gives NUMERIC,
        e.g. a bigint's sum, as text)."""
        def fetch():
            cur = self.server.conn().execute(text)
            return [d.name for d in cur.description], cur.fetchall()
        try:
            names, rows = self.server.call(fetch)
        except TargetError as exc:
            raise self._named(exc) from None
        return pd.DataFrame.from_records(rows, columns=names)

    def _regclass(self) -> str:
        return _text_literal(self.table_ref)

    def rows(self) -> int:
        """The planner's estimate (``reltuples``): exact after ANALYZE, -1 (told as 0) before any."""
        return max(int(self.scalar(f"SELECT reltuples::bigint FROM pg_class WHERE oid = {self._regclass()}::regclass")
                       or 0), 0)

    def footprint(self) -> Footprint:
        size = self.scalar(f"SELECT pg_total_relation_size({self._regclass()}::regclass)")
        return Footprint(int(size or 0), replicas=1, method="pg_total_relation_size (heap, indexes, TOAST)")

    def close(self) -> None:
        self.server.close()


def _read_only_server(config):
    from workloads.targets.postgres.server import _Server

    class ReadOnlyServer(_Server):
        """Every session read-only (``default_transaction_read_only``): the server refuses writes."""

        OPTIONS = _Server.OPTIONS + " -c default_transaction_read_only=on"

    return ReadOnlyServer(config)


class QuestDBSource(SqlSource):
    """QuestDB's fastest documented read: HTTP ``/exp?fmt=parquet`` read by pyarrow; the small
    questions (first time of a day, rows, size) over its PostgreSQL wire. Bars with ``SAMPLE BY``
    (the time role is the table's designated timestamp)."""

    def __init__(self, saved, config):
        super().__init__(saved, config)
        from workloads.targets.questdb.server import _Server
        self.server = _Server(config)

    def time_literal(self, value: dt.datetime) -> str:
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return f"'{value:%Y-%m-%dT%H:%M:%S.%f}Z'"

    def _named(self, exc: TargetError) -> TargetError:
        low = str(exc).lower()
        if "does not exist" in low or "table does not exist" in low:
            return self.error("no such table")
        return exc if self.saved.table in str(exc) else TargetError(f"{self.where}: {str(exc).partition(': ')[2] or exc}")

    def fetch(self, sql: str) -> pa.Table:
        import pyarrow.parquet as pq
        try:
            return pq.read_table(pa.BufferReader(self.server.parquet(sql)))
        except TargetError as exc:
            raise self._named(exc) from None

    def scalar(self, sql: str):
        try:
            rows = self.server.rows(sql)
        except TargetError as exc:
            raise self._named(exc) from None
        return list(rows[0].values())[0] if rows else None

    def arrow_schema(self) -> pa.Schema:
        if not hasattr(self, "_schema"):
            self._schema = self.fetch(f"SELECT * FROM {self.table_ref} LIMIT 1").schema
        return self._schema

    def bars_sql(self, span: Span, key) -> str:
        t, mid = self.quote(self.saved.roles.time), self.mid()
        volume = f", sum({self.quote(self.saved.roles.size)}) AS volume" if self.saved.roles.size else ""
        return (f"SELECT {t} AS minute, first({mid}) AS open, max({mid}) AS high, min({mid}) AS low, "
                f"last({mid}) AS close{volume} FROM {self.table_ref} WHERE {self.condition(span, key)} "
                "SAMPLE BY 1m ALIGN TO CALENDAR")

    def rows(self) -> int:
        return int(self.scalar(f"SELECT count() FROM {self.table_ref}") or 0)    # kept by QuestDB, not counted

    def footprint(self) -> Footprint:
        try:
            size = self.scalar(f"SELECT sum(diskSize) FROM table_partitions({_text_literal(self.saved.table)})")
        except TargetError:
            return Footprint(0, method="not told (table_partitions refused)")
        return Footprint(int(size or 0), replicas=1, method="table_partitions() diskSize")

    def close(self) -> None:
        self.server.close()
