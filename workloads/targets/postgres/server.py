"""The client of one PostgreSQL server (``_Server``): a psycopg connection (autocommit) for
statements and COPY, an ADBC connection for reads into Arrow, and their errors as TargetError
naming the server.

psycopg and ADBC's driver are imported only when a connection is made (missing: ``MissingClient``
naming the ``postgres`` extra, which installs both).
"""
from __future__ import annotations

import time
from contextlib import suppress
from typing import Any

import pyarrow as pa

from workloads.targets.base import TargetError
from workloads.targets.common.lazy import import_client
from workloads.targets.common.zones import POSTGRES_OPTIONS
from workloads.targets.postgres.dialect import quote, sql_literal


DEFAULT_PORT = 5432
DEFAULT_USER = "postgres"
DEFAULT_DATABASE = "tickbench"


def _now() -> float:
    return time.perf_counter()


def _first_line(text: Any) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def _psycopg():
    return import_client("postgres", "psycopg")


def _adbc():
    return import_client("postgres", "adbc_driver_postgresql.dbapi")


class _Server:
    """One psycopg connection (autocommit) and its errors as TargetError naming the server."""

    OPTIONS = POSTGRES_OPTIONS          # every session on UTC (targets.common.zones)

    def __init__(self, config: dict[str, Any]):
        self.host = str(config.get("host") or "").strip()
        if not self.host:
            raise TargetError("PostgreSQL needs a host (the server's address)")
        try:
            self.port = int(config.get("port") or DEFAULT_PORT)
        except (TypeError, ValueError):
            raise TargetError(f"PostgreSQL port {config.get('port')!r} is not a number") from None
        self.user = str(config.get("user") or DEFAULT_USER)
        self.password = str(config.get("password") or "")
        self.database = str(config.get("database") or DEFAULT_DATABASE)
        self.timeout = float(config.get("connect_timeout") or 10.0)
        self.address = f"{self.host}:{self.port}"
        self._conn = None
        self._arrow = None          # the ADBC connection reads go through (opened on first read)

    def _connect(self, database: str):
        psycopg = _psycopg()
        try:
            conn = psycopg.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                                   dbname=database, connect_timeout=max(1, int(self.timeout)), autocommit=True,
                                   application_name="tickbench", options=self.OPTIONS)
        except psycopg.Error as exc:
            raise self.error(exc) from None
        from psycopg.types.numeric import FloatLoader
        conn.adapters.register_loader("numeric", FloatLoader)     # avg() of integers: a float, as elsewhere
        return conn

    def conn(self, create: bool = False):
        if self._conn is None or self._conn.closed:
            try:
                self._conn = self._connect(self.database)
            except TargetError as exc:
                if not (create and "does not exist" in str(exc)):
                    raise
                with self._connect("postgres") as admin:
                    self.call(admin.execute, f"CREATE DATABASE {quote(self.database)}")
                self._conn = self._connect(self.database)
        return self._conn

    def uri(self) -> str:
        """The libpq URI of this server and database (ADBC connects with one)."""
        from urllib.parse import quote as escape
        host = f"[{self.host}]" if ":" in self.host else self.host
        return (f"postgresql://{escape(self.user, safe='')}:{escape(self.password, safe='')}@{host}:{self.port}/"
                f"{escape(self.database, safe='')}?connect_timeout={max(1, int(self.timeout))}"
                f"&application_name=tickbench&options={escape(self.OPTIONS, safe='')}")

    def inline(self, sql: str, params: Any = None) -> str:
        """The statement with its parameters written in as literals (``reads`` module doc: Reads: ADBC
        reads through COPY only when nothing is bound): the literals a practitioner types
        (``sql_literal``); a value those do not cover is quoted by psycopg for this connection."""
        if not params:
            return sql
        if isinstance(params, dict):
            literals = {name: sql_literal(value) for name, value in params.items()}
            if None not in literals.values():
                return sql % literals
        psycopg = _psycopg()
        return self.call(lambda: psycopg.ClientCursor(self.conn()).mogrify(sql, params))

    def arrow(self, sql: str) -> pa.Table:
        """The statement's result as Arrow through ADBC's PostgreSQL driver (``fetch_arrow_table``)."""
        dbapi = _adbc()
        try:
            if self._arrow is None:
                self._arrow = dbapi.connect(self.uri(), autocommit=True)
            with self._arrow.cursor() as cur:
                cur.execute(sql)
                return cur.fetch_arrow_table()
        except dbapi.Error as exc:
            raise self.error(exc) from None

    def error(self, exc: BaseException) -> TargetError:
        text = str(exc)
        low = text.lower()
        where = f"PostgreSQL at {self.address}"
        if "password authentication failed" in low or "no password supplied" in low:
            return TargetError(f"{where}: authentication failed for user {self.user!r} (wrong password, or no such user)")
        if "refused" in low:
            return TargetError(f"{where}: connection refused (no server listening there)")
        if "timeout" in low or "timed out" in low:
            return TargetError(f"{where}: no answer within {self.timeout:g} s")
        if "could not translate host name" in low:
            return TargetError(f"{where}: cannot resolve host {self.host!r}")
        if "no space left" in low or "could not extend file" in low:
            return TargetError(f"{where}: the server's disk is full ({_first_line(text)})")
        if "no pg_hba.conf entry" in low:
            return TargetError(f"{where}: the server refuses this client (pg_hba.conf): {_first_line(text)}")
        return TargetError(f"{where}: {_first_line(text)}")

    def call(self, fn, *args, **kwargs):
        psycopg = _psycopg()
        try:
            return fn(*args, **kwargs)
        except psycopg.Error as exc:
            raise self.error(exc) from None

    def execute(self, sql: str, params: Any = None) -> int:
        cur = self.call(self.conn().execute, sql, params)
        return max(int(cur.rowcount), 0)

    def rows(self, sql: str, params: Any = None) -> list[dict[str, Any]]:
        def fetch():
            cur = self.conn().execute(sql, params)
            names = [d.name for d in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]
        return self.call(fetch)

    def copy_in(self, sql: str, data: bytes) -> None:
        def run():
            with self.conn().cursor() as cur, cur.copy(sql) as copy:
                copy.write(data)
        self.call(run)

    def copy_out(self, sql: str, params: Any = None, into=None) -> bytearray | int:
        """COPY ... TO STDOUT: the bytes (or, with ``into``, written there: the byte count)."""
        def run():
            buffer, size = bytearray(), 0
            with self.conn().cursor() as cur, cur.copy(sql, params) as copy:
                for block in copy:
                    if into is None:
                        buffer += block
                    else:
                        into.write(block)
                        size += len(block)
            return buffer if into is None else size
        return self.call(run)

    def close(self) -> None:
        for conn in (self._conn, self._arrow):
            if conn is not None:
                with suppress(Exception):   # closing must not hide why the run ended
                    conn.close()
        self._conn = self._arrow = None
