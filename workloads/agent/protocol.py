"""How a request is signed and checked: ``POST /drop`` (drop the page cache) or ``POST /info`` (the
host's name and hardware threads, for the figures that scale by them), each with three headers.

The client sends a timestamp, a random nonce and HMAC-SHA256(token, "{verb}\\n{timestamp}\\n{nonce}"),
the verb being the path's ("drop" or "info": a signed info request cannot be replayed as a drop).
The agent answers only a signature made with its token (compared in constant time), a timestamp
within ``WINDOW_S`` of its clock, and a nonce it has not accepted within that window (a captured
request replayed is refused). Nothing else is read from a request: it carries no command or path.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

PATH = "/drop"
INFO_PATH = "/info"
VERBS = {PATH: "drop", INFO_PATH: "info"}
TIMESTAMP_HEADER = "X-Tickbench-Timestamp"
NONCE_HEADER = "X-Tickbench-Nonce"
SIGNATURE_HEADER = "X-Tickbench-Signature"

WINDOW_S = 30.0
MIN_TOKEN_CHARS = 16
TOKEN_ENV = "TICKBENCH_AGENT_TOKEN"

# strict shapes: a header that is not one of these is refused before any work
_TIMESTAMP = re.compile(r"\d{1,12}(\.\d{1,6})?")
_NONCE = re.compile(r"[A-Za-z0-9_-]{16,64}")
_SIGNATURE = re.compile(r"[0-9a-f]{64}")

# refusal reasons, for the agent's log only: the reply never says which part failed
MALFORMED = "malformed or missing headers"
WRONG_TOKEN = "wrong signature"
STALE = "timestamp outside the window"
REPLAY = "nonce already used (replay)"


def signature(token: str, timestamp: str, nonce: str, verb: str = "drop") -> str:
    message = f"{verb}\n{timestamp}\n{nonce}".encode()
    return hmac.new(token.encode(), message, hashlib.sha256).hexdigest()


def signed_headers(token: str, now: float | None = None, nonce: str | None = None,
                   verb: str = "drop") -> dict[str, str]:
    """The headers of one request (a new nonce each call unless one is given)."""
    timestamp = f"{time.time() if now is None else now:.3f}"
    nonce = nonce or secrets.token_urlsafe(16)
    return {TIMESTAMP_HEADER: timestamp, NONCE_HEADER: nonce,
            SIGNATURE_HEADER: signature(token, timestamp, nonce, verb)}


def token_problem(token: str) -> str:
    """Why a token cannot be used ('' when it can)."""
    if len(token) < MIN_TOKEN_CHARS:
        return f"the token has {len(token)} characters; at least {MIN_TOKEN_CHARS} are needed " \
               f"(make one with `tickbench agent --new-token`)"
    return ""


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    reason: str          # why refused ('' when accepted); logged, never sent
    nonce: str           # the request's id ('' when its nonce header was unusable)


class Verifier:
    """Checks requests against one token; remembers the nonces it accepted within the window."""

    def __init__(self, token: str, window_s: float = WINDOW_S):
        if problem := token_problem(token):
            raise ValueError(problem)
        self._key = token
        self._window_s = window_s
        self._seen: dict[str, float] = {}      # nonce -> when accepted; only signed ones enter
        self._lock = threading.Lock()

    def check(self, headers: Mapping[str, str], now: float | None = None, verb: str = "drop") -> Verdict:
        now = time.time() if now is None else now
        timestamp = headers.get(TIMESTAMP_HEADER) or ""
        nonce = headers.get(NONCE_HEADER) or ""
        sent = headers.get(SIGNATURE_HEADER) or ""
        if not (_TIMESTAMP.fullmatch(timestamp) and _NONCE.fullmatch(nonce) and _SIGNATURE.fullmatch(sent)):
            return Verdict(False, MALFORMED, nonce if _NONCE.fullmatch(nonce) else "")
        if not hmac.compare_digest(signature(self._key, timestamp, nonce, verb), sent):
            return Verdict(False, WRONG_TOKEN, nonce)
        if abs(now - float(timestamp)) > self._window_s:
            return Verdict(False, STALE, nonce)
        with self._lock:
            # a nonce older than the window needs no memory: its timestamp is refused as stale
            self._seen = {n: t for n, t in self._seen.items() if now - t <= 2 * self._window_s}
            if nonce in self._seen:
                return Verdict(False, REPLAY, nonce)
            self._seen[nonce] = now
        return Verdict(True, "", nonce)
