"""What a cold clear emptied, in the words every view of a run uses: the engine's caches, the page
cache of the host holding the data (this machine's for the files Tickbench reads or the servers it
starts; a database host's through its agent, ``workloads.agent``), both, or neither.

The reports' cold runs (000, 004: the servers' OS caches dropped; 003: every cache) are "cold" in
the sense of both. A clear that empties only the engine's caches leaves a server whose memory holds
the data reading from memory, so the findings on cold against warm use only operations whose host
page cache was dropped (``HOST_COLD``), and say so when there were none.

A clear's methods are words (``Target.drop_cache``); the ones that drop pages of the OS cache are
the few named here, every other method empties an engine's cache, and a note of a drop that did not
happen (``NOT_DROPPED``) is neither.
"""
from __future__ import annotations

from collections.abc import Iterable

from workloads.targets.common.cache import DROP, FADVISE

ENGINE = "engine caches"
HOST = "host page cache"
AGENT_DROP = "host page cache of"                  # "host page cache of HOST dropped by its agent: ..."
NOT_DROPPED = "host page cache NOT dropped"        # "host page cache NOT dropped (agent HOST: why)"
NOTE = "note: "                                    # a word on a clear that empties nothing itself
_PAGE_METHODS = (FADVISE, DROP, AGENT_DROP)


def kind_of(method: str) -> str | None:
    """The kind of cache one clear method emptied (None: a note, nothing emptied)."""
    if method.startswith((NOT_DROPPED, NOTE, "fsync")):
        return None
    return HOST if method.startswith(_PAGE_METHODS) else ENGINE


def kinds_of(methods: Iterable[str]) -> str:
    """The kinds a clear's methods emptied, as one canonical text: "engine caches, host page cache",
    "engine caches", "host page cache" or "" (neither). The host page cache counts only when no
    host's drop failed: one host dropped and another not is no host-cold read."""
    methods = list(methods)
    found = {kind_of(m) for m in methods}
    if any(m.startswith(NOT_DROPPED) for m in methods):
        found.discard(HOST)
    return ", ".join(k for k in (ENGINE, HOST) if k in found)


def cleared_text(methods: Iterable[str], limit: int) -> str:
    """A clear's methods as one text of at most ``limit`` bytes (UTF-8): where they are longer, the
    notes of a drop that did not happen first, so that a cut never loses why a read was not cold."""
    methods = list(methods)
    text = ", ".join(methods)
    if len(text.encode()) <= limit:
        return text
    failed = [m for m in methods if m.startswith(NOT_DROPPED)]
    text = ", ".join(failed + [m for m in methods if not m.startswith(NOT_DROPPED)])
    return text.encode()[:limit - 3].decode(errors="ignore") + "…"


def merged(*kinds: str) -> str:
    """Several clears' kinds as one (a user's own process clear and the round's)."""
    found = {k for text in kinds for k in text.split(", ")}
    return ", ".join(k for k in (ENGINE, HOST) if k in found)


def in_words(kinds: str | None) -> str:
    """What a user reads: "engine caches, host page cache", "engine caches only", "host page cache"
    (files with no engine of their own), "neither", or "not recorded" (runs stored before it)."""
    if kinds is None:
        return "not recorded"
    if kinds == ENGINE:
        return "engine caches only"
    return kinds or "neither"


def host_cold(kinds: str | None) -> bool:
    """Cold in the reports' sense: the host page cache holding the data was dropped too."""
    return bool(kinds) and HOST in kinds.split(", ")


# The SQL twin of ``host_cold`` over an operation's record (``extra`` JSON), for the figures
HOST_COLD_SQL = ("(CASE WHEN json_valid({extra}) THEN "
                 f"coalesce(json_extract_string({{extra}}, '$.cleared_kinds'), '') END LIKE '%{HOST}%')")
ENGINE_COLD_SQL = HOST_COLD_SQL.replace(HOST, ENGINE)


def cold_words(cold_ops: int, host_ops: int, engine_ops: int) -> str:
    """What the clears of a step's (or run's) cold operations emptied, from their counts: one of
    ``in_words``' answers, or "the host page cache for N of M" when it differed between them."""
    if not cold_ops:
        return "no operation held cold"
    if host_ops == cold_ops:
        return in_words(", ".join(k for k, n in ((ENGINE, engine_ops), (HOST, host_ops)) if n == cold_ops))
    if host_ops == 0:
        return in_words(ENGINE if engine_ops else "")
    return f"the host page cache for {host_ops:,} of {cold_ops:,}"
