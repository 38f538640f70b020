"""A user's ClickHouse server through ``clickhouse-connect`` over HTTP(S): the client, its errors
as one line a user can act on, and the raw HTTP request of probe operations (``wait_end_of_query=1``,
the server's ``X-ClickHouse-Summary``). clickhouse-connect is imported only when a server is used
(a missing one raises ``MissingClient`` naming the ``clickhouse`` extra). Every query, the client's and
the probes', runs on UTC (``targets.common.zones``), whatever the server's own zone.
"""
from __future__ import annotations

import base64
import datetime as dt
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from workloads.targets.base import TargetError
from workloads.targets.clickhouse.dialect import _first_line, _now, _value_text, param_text
from workloads.targets.common.zones import clickhouse_on_utc

DEFAULT_PORT = 8123
DEFAULT_USER = "default"


def _server_value(value: Any) -> Any:
    """A value for clickhouse-connect's server-side binding (it formats and escapes itself; a
    datetime would lose its fraction there, so it goes as text)."""
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        value = pd.Timestamp(value).to_pydatetime()
    if isinstance(value, dt.datetime):
        return _value_text(value)
    return value


class _ServerConn:
    """Statements through clickhouse-connect; its errors as TargetError naming the server."""

    def __init__(self, server: "_Server"):
        self.server = server

    def _call(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TargetError:
            raise
        except Exception as exc:
            raise self.server.error(exc) from None

    @staticmethod
    def _params(params):
        return {k: _server_value(v) for k, v in params.items()} if params else None

    def arrow(self, sql: str, params: dict[str, Any] | None = None) -> pa.Table:
        client = self.server.client()
        return self._call(client.query_arrow, sql, parameters=self._params(params))

    def execute(self, sql: str, params: dict[str, Any] | None = None, data: bytes | None = None) -> int:
        client = self.server.client()
        summary = self._call(client.command, sql, parameters=self._params(params), data=data)
        return int(getattr(summary, "written_rows", 0) or 0)

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return self.arrow(sql, params).to_pylist()

    def insert(self, table: str, data: pa.Table) -> int:
        client = self.server.client()
        summary = self._call(client.insert_arrow, table, data)
        return int(getattr(summary, "written_rows", 0) or 0)

    def stream_to(self, sql: str, params: dict[str, Any] | None, fmt: str, path: Path) -> None:
        client = self.server.client()
        stream = self._call(client.raw_stream, sql, parameters=self._params(params), fmt=fmt)
        try:
            with open(path, "wb") as out:
                for chunk in stream:
                    out.write(chunk)
        except OSError:
            raise
        except Exception as exc:
            raise self.server.error(exc) from None


class _Server:
    def __init__(self, config: dict[str, Any]):
        self.host = str(config["host"]).strip()
        try:
            self.port = int(config.get("port") or DEFAULT_PORT)
        except (TypeError, ValueError):
            raise TargetError(f"ClickHouse port {config.get('port')!r} is not a number") from None
        self.user = str(config.get("user") or DEFAULT_USER)
        self.password = str(config.get("password") or "")
        self.secure = bool(config.get("secure", False))
        self.timeout = float(config.get("timeout") or 10.0)
        self.query_timeout = float(config.get("query_timeout") or 3600.0)
        self.compress = config.get("compress", True)
        self.address = f"{self.host}:{self.port}"
        self._client = None
        self._session: dict[str, str] = {}     # the settings every query is sent with (on UTC)
        self._http = None

    def client(self):
        if self._client is None:
            try:
                import clickhouse_connect
            except ImportError as exc:
                from workloads.targets import MissingClient
                raise MissingClient("clickhouse", "clickhouse_connect") from exc
            quiet = logging.getLogger("clickhouse_connect")   # it logs a refused connection as well
            level = quiet.level
            quiet.setLevel(logging.ERROR)
            try:
                client = clickhouse_connect.get_client(
                    host=self.host, port=self.port, username=self.user, password=self.password,
                    secure=self.secure, connect_timeout=self.timeout, send_receive_timeout=self.query_timeout,
                    compress=self.compress, autogenerate_session_id=False, query_retries=0)
                self._session = clickhouse_on_utc(client)
                self._client = client
            except Exception as exc:
                raise self.error(exc) from None
            finally:
                quiet.setLevel(level)
        return self._client

    def error(self, exc: BaseException) -> TargetError:
        """A client error as one line a user can act on."""
        text = str(exc)
        low = text.lower()
        if getattr(exc, "code", None) == 516 or "AUTHENTICATION_FAILED" in text or "code: 516" in low:
            return TargetError(f"ClickHouse at {self.address}: authentication failed for user {self.user!r} "
                               "(wrong password, or no such user)")
        if "refused" in low:
            return TargetError(f"ClickHouse at {self.address}: connection refused (no server listening there; "
                               f"is {self.port} its HTTP port?)")
        if "timed out" in low or "timeout" in low:
            return TargetError(f"ClickHouse at {self.address}: no answer in time (connect {self.timeout:g} s, "
                               f"reply {self.query_timeout:g} s)")
        if "name or service not known" in low or "failed to resolve" in low or "nodename nor servname" in low:
            return TargetError(f"ClickHouse at {self.address}: cannot resolve host {self.host!r}")
        answer = text.split("server response: ", 1)[-1].split(" (for url", 1)[0]
        return TargetError(f"ClickHouse at {self.address} answered: {_first_line(answer)}")

    def http_request(self, sql: str, params: dict[str, Any], fmt: str, database: str):
        """The query as one HTTP request with ``wait_end_of_query=1`` (probes): (reply bytes,
        server-reported seconds or None, seconds to the reply's headers, response headers)."""
        import http.client
        import urllib.parse

        self.client()                    # its session's settings (made at open, outside timing)
        query = {"database": database, "wait_end_of_query": "1", "output_format_arrow_string_as_string": "1",
                 **self._session, **{f"param_{k}": param_text(v) for k, v in (params or {}).items()}}
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        headers = {"Authorization": f"Basic {token}", "Content-Type": "text/plain; charset=utf-8"}
        body = f"{sql}\nFORMAT {fmt}".encode()
        for attempt in (0, 1):           # a kept-alive connection the server closed: once more, afresh
            if self._http is None:
                cls = http.client.HTTPSConnection if self.secure else http.client.HTTPConnection
                self._http = cls(self.host, self.port, timeout=self.query_timeout)
            try:
                start = _now()
                self._http.request("POST", "/?" + urllib.parse.urlencode(query), body, headers)
                response = self._http.getresponse()
                headed = _now()
                data = response.read()
                break
            except (http.client.HTTPException, OSError) as exc:
                self._http.close()
                self._http = None
                if attempt:
                    raise self.error(exc) from None
        if response.status != 200 or response.getheader("X-ClickHouse-Exception-Code"):
            raise TargetError(f"ClickHouse at {self.address} answered: "
                              f"{_first_line(data.decode(errors='replace'))}")
        try:
            elapsed = json.loads(response.getheader("X-ClickHouse-Summary") or "{}").get("elapsed_ns")
        except ValueError:
            elapsed = None
        server_s = int(elapsed) / 1e9 if elapsed not in (None, "") else None
        return data, server_s, headed - start, dict(response.getheaders())

    def ping_headers(self) -> dict[str, str]:
        """The headers of ``GET /ping`` (a server names itself in X-ClickHouse-Server-Display-Name)."""
        import http.client

        cls = http.client.HTTPSConnection if self.secure else http.client.HTTPConnection
        conn = cls(self.host, self.port, timeout=self.timeout)
        try:
            conn.request("GET", "/ping")
            response = conn.getresponse()
            response.read()
            return dict(response.getheaders())
        finally:
            conn.close()

    def close(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            except Exception:
                pass
            self._client = None
        if self._http is not None:
            self._http.close()
            self._http = None
