"""Who is connected to each node of the test server: open connections, logged-in sessions, logins
made, and the per-node connection limit (DolphinDB's ``maxConnections``).

DolphinDB counts a connection when its socket is made and refuses one past ``maxConnections``
with error S00006 (its error code reference); here the refusal answers the connection's first
request (the ``connect`` handshake), so the client sees the server's own message.
"""
from __future__ import annotations

import threading
from collections import Counter

LIMIT_MESSAGE = ("Maximum connections {limit} reached. Close unused connections or increase "
                 "maxConnections limit. RefId:S00006")


class Sessions:
    def __init__(self, max_connections: int = 0):
        self.max_connections = max_connections      # per node; 0: no limit
        self._lock = threading.Lock()
        self.open = Counter()                       # port -> connections open now
        self.logged_in = Counter()                  # port -> logged-in sessions open now
        self.logins = Counter()                     # port -> logins that succeeded, ever
        self.peak_logged_in = Counter()             # port -> most logged-in sessions open at once
        self.refused = Counter()                    # port -> connections refused by the limit

    def opened(self, port: int) -> None:
        with self._lock:
            self.open[port] += 1

    def closed(self, port: int, logged_in: bool) -> None:
        with self._lock:
            self.open[port] -= 1
            if logged_in:
                self.logged_in[port] -= 1

    def over_limit(self, port: int) -> str:
        """The server's refusal when this connection is past the node's limit, else ""."""
        with self._lock:
            if self.max_connections and self.open[port] > self.max_connections:
                self.refused[port] += 1
                return LIMIT_MESSAGE.format(limit=self.max_connections)
        return ""

    def login(self, port: int) -> None:
        with self._lock:
            self.logins[port] += 1
            self.logged_in[port] += 1
            self.peak_logged_in[port] = max(self.peak_logged_in[port], self.logged_in[port])

    def snapshot(self) -> dict:
        with self._lock:
            ports = sorted(set(self.open) | set(self.logins) | set(self.refused))
            return {str(p): {"open": self.open[p], "logged_in": self.logged_in[p], "logins": self.logins[p],
                             "peak_logged_in": self.peak_logged_in[p], "refused": self.refused[p]}
                    for p in ports}
