"""One HTTP/1.1 connection kept open across requests, as a client library's session keeps it
(``requests.Session``, urllib3's pool): a user of a server holds one connection, not a new one per
request. ``urllib.request`` closes each connection after its reply, and a server that counts its
connections (QuestDB's ``/exp`` allows as many as it has CPUs by default) may still count the
closed one when the next opens, refusing a user who never had two at once."""
from __future__ import annotations

import http.client


class KeptConnection:
    def __init__(self, host: str, port: int, timeout: float):
        self.host, self.port, self.timeout = host.strip("[]"), port, timeout
        self._conn: http.client.HTTPConnection | None = None

    def request(self, method: str, target: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        """(status, body) of one request. A GET on a kept connection that the server closed
        meanwhile (an idle timeout) is sent once more on a new one; nothing else is retried."""
        for attempt in (0, 1):
            reused = self._conn is not None
            conn = self._conn or http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                conn.request(method, target, body=body, headers=headers or {})
                reply = conn.getresponse()
                data = reply.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close(conn)
                if reused and method == "GET" and attempt == 0:
                    continue
                raise
            except BaseException:
                self.close(conn)
                raise
            if reply.will_close:
                self.close(conn)
            else:
                self._conn = conn
            return reply.status, data
        raise AssertionError("unreachable")

    def close(self, conn: http.client.HTTPConnection | None = None) -> None:
        conn = conn or self._conn
        if conn is not None:
            conn.close()
        if conn is self._conn:
            self._conn = None
