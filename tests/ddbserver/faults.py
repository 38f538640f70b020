"""Fault injection, set at start (flags / TICKBENCH_DDB_FAULTS) or at run time by a control call.

A test changes faults with ``session.run("testServerControl", json_text)``; the JSON object's keys
are the field names below (unknown keys are an error). Patterns are regular expressions searched
in the script text or function name of each request.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field, fields


@dataclass
class Faults:
    refuse_login: bool = False        # every login fails as if the password were wrong
    not_initialised: bool = False     # isNodeInitialized() answers false
    silent: bool = False              # accept connections, never answer anything
    delay: float = 0.0                # seconds to wait before answering a matching request
    delay_match: str = ""             # "" = every script/function request
    close_match: str = ""             # close the socket halfway through the reply of a match
    lose_match: str = ""              # run a match but never send its reply (the connection stays)
    error_match: str = ""             # answer a matching request with error_message
    error_message: str = "Server error injected by the Tickbench test server"
    write_delay: float = 0.0          # seconds a DFS write or create holds its transaction (transactions.py)
    chunk_retry_s: float = 120.0      # atomic='CHUNK': how long a locked chunk is attempted
    olap_cache_rows: int = 0          # the OLAP cache engine's size in rows (0: off; olap_cache.py)
    connections: dict = field(default_factory=dict)   # port -> connections accepted (read only)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    SETTABLE = ("refuse_login", "not_initialised", "silent", "delay", "delay_match",
                "close_match", "lose_match", "error_match", "error_message", "write_delay",
                "chunk_retry_s", "olap_cache_rows")

    def update(self, values: dict) -> None:
        with self._lock:
            for key, value in values.items():
                if key not in self.SETTABLE:
                    raise ValueError(f"unknown fault {key!r}; known: {', '.join(self.SETTABLE)}")
                current = getattr(self, key)
                if isinstance(current, bool):
                    value = bool(value)
                elif isinstance(current, float):
                    value = float(value)
                elif isinstance(current, int):
                    value = int(value)
                else:
                    value = str(value)
                    if key.endswith("_match") and value:
                        re.compile(value)
                setattr(self, key, value)

    def reset(self) -> None:
        defaults = Faults()
        self.update({k: getattr(defaults, k) for k in self.SETTABLE})

    def control(self, text: str) -> str:
        """Apply a JSON object of fault settings; ``{"reset": true}`` restores the defaults."""
        values = json.loads(text)
        if not isinstance(values, dict):
            raise ValueError("testServerControl expects a JSON object")
        if values.pop("reset", False):
            self.reset()
        self.update(values)
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self)
                           if f.name in self.SETTABLE})

    def matches(self, pattern: str, text: str, empty_matches: bool = False) -> bool:
        if not pattern:
            return empty_matches
        return re.search(pattern, text) is not None

    def count_connection(self, port: int) -> None:
        with self._lock:
            self.connections[port] = self.connections.get(port, 0) + 1
