"""The client of one QuestDB server (``_Server``): PG wire through psycopg, HTTP on one kept
connection (``/exec``, ``/exp``, ``/imp``), ILP over HTTP, the wait for a WAL table to apply its
writes, and errors as TargetError naming the server.

Clients: ``questdb`` (ILP over HTTP, ``Sender.dataframe``) and ``psycopg`` (PG wire), both
imported lazily (a missing one raises ``MissingClient``); the rest is HTTP with the stdlib.
``questdb.connect().query`` is not used: it needs a WebSocket endpoint this server lacks.
"""
from __future__ import annotations

import base64
import json
import time
import http.client
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

import pandas as pd

from workloads.targets.base import TargetError
from workloads.targets.common.kept_http import KeptConnection
from workloads.targets.common.storage import disk_full_error
from workloads.targets.questdb.dialect import literal


DEFAULT_PORT = 8812
DEFAULT_HTTP_PORT = 9000
DEFAULT_USER = "admin"
DEFAULT_PASSWORD = "quest"
DEFAULT_DATABASE = "qdb"


def _now() -> float:
    return time.perf_counter()


def _first_line(text: Any) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


class _Server:
    """PG wire (psycopg) and HTTP (one kept connection) to one QuestDB; errors as TargetError naming it."""

    def __init__(self, config: dict[str, Any]):
        self.host = str(config.get("host") or "127.0.0.1").strip()
        try:
            self.port = int(config.get("port") or DEFAULT_PORT)
            self.http_port = int(config.get("http_port") or DEFAULT_HTTP_PORT)
        except (TypeError, ValueError):
            raise TargetError(f"QuestDB port {config.get('port')!r} / http_port {config.get('http_port')!r} "
                              "is not a number") from None
        self.user = str(config.get("user") or DEFAULT_USER)
        self.password = str(config.get("password") if config.get("password") is not None else DEFAULT_PASSWORD)
        self.database = str(config.get("database") or DEFAULT_DATABASE)
        self.timeout = float(config.get("timeout") or 10.0)
        self.address = f"{self.host}:{self.port}"
        self._pg = None
        self._http = KeptConnection(self.host, self.http_port, max(self.timeout, 3600.0))
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        self._auth = {"Authorization": f"Basic {token}"}

    # --- PG wire ---------------------------------------------------------------------------
    def pg(self):
        if self._pg is None or self._pg.closed:
            try:
                import psycopg
            except ImportError as exc:
                from workloads.targets import MissingClient
                raise MissingClient("questdb", "psycopg") from exc
            try:
                self._pg = psycopg.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                                           dbname=self.database, autocommit=True, connect_timeout=self.timeout)
            except Exception as exc:
                raise self.error(exc) from None
        return self._pg

    def execute(self, sql: str) -> None:
        try:
            self.pg().execute(sql)
        except TargetError:
            raise
        except Exception as exc:
            self._reset_broken()
            raise self.error(exc) from None

    def rows(self, sql: str) -> list[dict[str, Any]]:
        try:
            cur = self.pg().execute(sql)
            names = [d.name for d in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]
        except TargetError:
            raise
        except Exception as exc:
            self._reset_broken()
            raise self.error(exc) from None

    def _reset_broken(self) -> None:
        if self._pg is not None and self._pg.closed:
            self._pg = None

    def error(self, exc: BaseException) -> TargetError:
        text = _first_line(exc)
        low = str(exc).lower()
        if "password" in low or "authentication" in low:
            return TargetError(f"QuestDB at {self.address}: authentication failed for user {self.user!r} "
                               "(wrong password, or no such user)")
        if "refused" in low:
            return TargetError(f"QuestDB at {self.address}: connection refused (no server listening there; "
                               f"is {self.port} its PostgreSQL wire port?)")
        if "timeout" in low or "timed out" in low:
            return TargetError(f"QuestDB at {self.address}: no answer within {self.timeout:g} s")
        if "name or service not known" in low or "failed to resolve" in low:
            return TargetError(f"QuestDB at {self.address}: cannot resolve host {self.host!r}")
        return disk_full_error(exc, Path(".")) or TargetError(f"QuestDB at {self.address}: {text}")

    # --- HTTP ------------------------------------------------------------------------------
    def http(self, path: str, params: dict[str, str], data: bytes | None = None,
             headers: dict[str, str] | None = None) -> bytes:
        """One request on this user's kept connection (``workloads.targets.common.kept_http``)."""
        target = f"{path}?{urllib.parse.urlencode(params)}"
        where = f"QuestDB HTTP at {self.host}:{self.http_port}"
        try:
            status, body = self._http.request("GET" if data is None else "POST", target, data,
                                              {**self._auth, **(headers or {})})
        except ConnectionRefusedError:
            raise TargetError(f"{where}: connection refused (is it the HTTP port?)") from None
        except (OSError, http.client.HTTPException) as exc:
            raise TargetError(f"{where}: {_first_line(exc) or type(exc).__name__}") from None
        if status < 400:
            return body
        if status == 401:
            raise TargetError(f"{where}: authentication failed for user {self.user!r}")
        raise TargetError(f"{where}: {http_error_text(body.decode(errors='replace'))}")

    def parquet(self, sql: str) -> bytes:
        return self.http("/exp", {"query": sql, "fmt": "parquet"})

    def exec_json(self, sql: str, **params: str) -> dict[str, Any]:
        said = json.loads(self.http("/exec", {"query": sql, **params}))
        if "error" in said:
            raise TargetError(f"QuestDB at {self.host}:{self.http_port}: {said['error']}")
        return said

    def sender(self):
        try:
            from questdb import Sender
        except ImportError as exc:
            from workloads.targets import MissingClient
            raise MissingClient("questdb", "questdb") from exc
        conf = f"http::addr={self.host}:{self.http_port};username={self.user};password={self.password};"
        try:
            return Sender.from_conf(conf)
        except Exception as exc:
            raise TargetError(f"QuestDB ILP at {self.host}:{self.http_port}: {_first_line(exc)}") from None

    def ingest(self, table: str, frame: pd.DataFrame, ts: str, symbols: list[str]) -> None:
        try:
            with self.sender() as sender:
                sender.dataframe(frame, table_name=table, symbols=symbols, at=ts)
        except TargetError:
            raise
        except Exception as exc:
            raise disk_full_error(exc, Path(".")) or \
                TargetError(f"QuestDB ILP at {self.host}:{self.http_port}: {_first_line(exc)}") from None

    def wait_applied(self, table: str, timeout: float) -> float:
        """Wait until the WAL table has applied every committed write; seconds waited."""
        start = _now()
        delay = 0.005
        while True:
            found = self.rows(f"SELECT suspended, writerTxn, sequencerTxn, errorMessage FROM wal_tables() "
                              f"WHERE name = {literal(table)}")
            if not found:
                return _now() - start          # not a WAL table: writes are applied at once
            row = found[0]
            if row["suspended"]:
                raise TargetError(f"QuestDB table {table} is suspended: {row['errorMessage']}")
            if row["writerTxn"] >= row["sequencerTxn"]:
                return _now() - start
            if _now() - start > timeout:
                raise TargetError(f"QuestDB table {table} did not apply its WAL within {timeout:g} s")
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def close(self) -> None:
        self._http.close()
        if self._pg is not None:
            try:
                self._pg.close()
            finally:
                self._pg = None


EXPORT_LIMIT = "http_export_connections"


def http_error_text(body: str) -> str:
    """What a QuestDB HTTP error says (its JSON ``error`` or the text), and where the server refused
    a connection over its ``/exp`` limit, what to change."""
    try:
        said = json.loads(body).get("error") or body
    except (ValueError, AttributeError):
        said = body
    text = _first_line(said)
    if EXPORT_LIMIT in text:
        text += (" (the server's limit, not Tickbench's: its /exp serves at most http.export.connection.limit "
                 "connections at once, by default as many as it has CPUs, and every user holds one; raise it "
                 "in its server.conf for more users)")
    return text


def _multipart(fields: dict[str, str], file_field: str, filename: str, payload: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = b"".join(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n".encode()
                    for k, v in fields.items())
    head += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{file_field}\"; filename=\"{filename}\"\r\n"
             "Content-Type: text/csv\r\n\r\n").encode()
    return head + payload + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"
