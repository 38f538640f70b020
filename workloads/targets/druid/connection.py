"""The HTTP client of a Druid server (``_Http``). No client library: stdlib ``http.client``, one
kept-alive connection per port (the broker's: SQL ``/druid/v2/sql``, native queries
``/druid/v2``, ``/status``; the coordinator's and the overlord's), HTTP basic auth (Druid's
basic-security extension), failures as one-line ``TargetError``s naming the server.

Query cache off on every query (``CONTEXT``: ``useCache=false, populateCache=false``), as
report 001 ran it.
"""
from __future__ import annotations

import base64
import http.client
import json
import time
from typing import Any

from workloads.targets.base import TargetError
from workloads.targets.druid.dialect import _first_line


DEFAULT_PORT = 8082
DEFAULT_COORDINATOR_PORT = 8081
CONTEXT = {"useCache": False, "populateCache": False, "sqlTimeZone": "Etc/UTC"}


# the clock every timed phase of a read or write is taken by
def _now() -> float:
    return time.perf_counter()


class _Http:
    def __init__(self, config: dict[str, Any]):
        self.host = str(config.get("host") or "").strip()
        if not self.host:
            raise TargetError("Druid: no host configured (host: the broker's address)")
        try:
            self.port = int(config.get("port") or DEFAULT_PORT)
            self.coordinator_port = int(config.get("coordinator_port") or DEFAULT_COORDINATOR_PORT)
            self.overlord_port = int(config.get("overlord_port") or self.coordinator_port)
        except (TypeError, ValueError):
            raise TargetError(f"Druid port {config.get('port')!r} (or coordinator/overlord port) is not a number") \
                from None
        self.user = str(config.get("user") or "")
        self.password = str(config.get("password") or "")
        self.timeout = float(config.get("timeout") or 600.0)
        self.address = f"{self.host}:{self.port}"
        self._conns: dict[int, http.client.HTTPConnection] = {}

    def _headers(self, content_type: str = "application/json") -> dict[str, str]:
        headers = {"Content-Type": content_type}
        if self.user or self.password:
            token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
            headers["Authorization"] = f"Basic {token}"
        return headers

    def exchange(self, method: str, path: str, body: Any = None, port: int | None = None,
                 sink=None) -> tuple[int, bytes, float, float]:
        """One request: (status, reply bytes, seconds to the first byte, seconds in all). ``sink``:
        a file the reply is streamed to instead."""
        port = port or self.port
        payload = json.dumps(body).encode() if body is not None else None
        for attempt in (0, 1):       # a kept-alive connection the server closed: once more, afresh
            conn = self._conns.get(port)
            if conn is None:
                conn = self._conns[port] = http.client.HTTPConnection(self.host, port, timeout=self.timeout)
            try:
                start = _now()
                conn.request(method, path, payload, self._headers())
                response = conn.getresponse()
                first = _now()
                if sink is not None and response.status == 200:
                    while chunk := response.read(1 << 20):
                        sink.write(chunk)
                    data = b""
                else:
                    data = response.read()
                return response.status, data, first - start, _now() - start
            except (http.client.HTTPException, OSError) as exc:
                conn.close()
                self._conns.pop(port, None)
                if attempt or isinstance(exc, ConnectionRefusedError) or sink is not None:
                    raise self.error(exc, port) from None
        raise AssertionError("unreachable")

    def error(self, exc: BaseException, port: int) -> TargetError:
        low = str(exc).lower()
        where = f"Druid at {self.host}:{port}"
        if isinstance(exc, ConnectionRefusedError) or "refused" in low:
            return TargetError(f"{where}: connection refused (no server listening there; is {port} the "
                               f"{'broker' if port == self.port else 'coordinator/overlord'}'s HTTP port?)")
        if "timed out" in low:
            return TargetError(f"{where}: no answer within {self.timeout:g} s")
        if "name or service not known" in low or "nodename nor servname" in low:
            return TargetError(f"{where}: cannot resolve host {self.host!r}")
        return TargetError(f"{where}: {_first_line(exc) or type(exc).__name__}")

    def check(self, status: int, data: bytes, port: int | None = None) -> bytes:
        if status in (200, 202):        # 202 Accepted: /druid/v2/sql/task took a multi-stage query
            return data
        where = f"Druid at {self.host}:{port or self.port}"
        if status in (401, 403):
            return _raise(TargetError(f"{where}: authentication failed for user {self.user!r} (wrong password, "
                                      "or no such user)" if status == 401 else
                                      f"{where}: user {self.user!r} is not allowed to do this (HTTP 403)"))
        text = data.decode(errors="replace")
        try:
            said = json.loads(text)
            text = said.get("errorMessage") or said.get("error") or text
        except (ValueError, AttributeError):
            pass
        raise TargetError(f"{where} answered (HTTP {status}): {_first_line(text)}")

    def json(self, method: str, path: str, body: Any = None, port: int | None = None) -> Any:
        status, data, _, _ = self.exchange(method, path, body, port)
        data = self.check(status, data, port)
        return json.loads(data) if data.strip() else None

    def sql(self, query: str, parameters: list | None = None, fmt: str = "csv", header: bool = False,
            types: bool = False, sink=None) -> tuple[bytes, float, float]:
        body = {"query": query, "resultFormat": fmt, "header": header, "context": CONTEXT}
        if types:
            body.update({"header": True, "typesHeader": True, "sqlTypesHeader": True})
        if parameters:
            body["parameters"] = parameters
        status, data, first, total = self.exchange("POST", "/druid/v2/sql", body, sink=sink)
        return self.check(status, data), first, total

    def rows(self, query: str, parameters: list | None = None) -> list[dict[str, Any]]:
        data, _, _ = self.sql(query, parameters, fmt="object")
        return json.loads(data) if data.strip() else []

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()


def _raise(exc: BaseException):
    raise exc
