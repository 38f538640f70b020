"""Validation and quoting of everything that goes into a DolphinDB script.

Nothing a user typed (database path, table names, keys) and nothing from data (symbols, dates)
is pasted into a script without passing through one of these functions: names are checked against
strict patterns, strings are quoted and escaped, dates and times are formatted by code. A value that
does not fit raises ``ValueError`` naming what is wrong, so no script injection is possible.
"""
from __future__ import annotations

import datetime as dt
import re

# Matched whole (fullmatch): "^...$" with re.match would let a trailing newline through.
DB_PATH_RE = re.compile(r"dfs://[A-Za-z0-9_/]+")
IDENTIFIER_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,62}")

# DolphinDB type names allowed in schema literals (the types datasets use)
TYPE_LITERALS = frozenset({
    "BOOL", "CHAR", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE", "DATE", "SECOND", "TIME",
    "MINUTE", "DATETIME", "TIMESTAMP", "NANOTIMESTAMP", "SYMBOL", "STRING",
})
# Words a variable or column must not be named, or the script means something else
RESERVED = frozenset({
    "select", "from", "where", "group", "by", "order", "having", "exec", "update", "delete",
    "insert", "into", "values", "and", "or", "not", "in", "between", "like", "as", "def",
    "if", "else", "for", "do", "while", "return", "true", "false", "null", "share", "undef",
    "context", "pivot", "limit", "top", "asc", "desc", "map", "cgroup", "csort", "is",
})


def db_path(value: str) -> str:
    """A DFS database path such as ``dfs://tickbench_taq``; returned unchanged when valid."""
    if not isinstance(value, str) or not DB_PATH_RE.fullmatch(value) or "//" in value[6:]:
        raise ValueError(
            f"database path {value!r} is not valid: use dfs:// followed by letters, digits, "
            "'_' or '/' (for example dfs://tickbench)")
    return value


def identifier(value: str, what: str = "name") -> str:
    """A table, column or variable name: a letter, then letters, digits or '_'."""
    if not isinstance(value, str) or not IDENTIFIER_RE.fullmatch(value):
        raise ValueError(
            f"{what} {value!r} is not valid: start with a letter, then letters, digits or '_' "
            "(at most 63 characters)")
    if value.lower() in RESERVED:
        raise ValueError(f"{what} {value!r} is a DolphinDB keyword")
    return value


def type_literal(value: str) -> str:
    if value not in TYPE_LITERALS:
        raise ValueError(f"column type {value!r} is not one Tickbench writes to DolphinDB")
    return value


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": ""}


def string(value: str) -> str:
    """A double-quoted DolphinDB string literal; backslash, quote and control characters escaped."""
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {type(value).__name__}")
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 32 or ord(ch) == 127:
            raise ValueError(f"text {value!r} holds a control character")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def string_vector(values) -> str:
    """``["a", "b"]``: a STRING vector literal."""
    return "[" + ", ".join(string(v) for v in values) + "]"


def date(value: dt.date) -> str:
    """A DATE literal, ``2007.08.23``."""
    if isinstance(value, dt.datetime):
        value = value.date()
    if not isinstance(value, dt.date):
        raise ValueError(f"expected a date, got {value!r}")
    return f"{value.year:04d}.{value.month:02d}.{value.day:02d}"


def time_of_day(seconds: int, ddb_type: str) -> str:
    """A literal of the time column's own type: SECOND ``09:30:00``, TIME ``09:30:00.000``."""
    seconds = int(seconds)
    if not 0 <= seconds < 86400:
        raise ValueError(f"time of day {seconds} s is outside one day")
    hh, rest = divmod(seconds, 3600)
    mm, ss = divmod(rest, 60)
    text = f"{hh:02d}:{mm:02d}:{ss:02d}"
    if ddb_type == "SECOND":
        return text
    if ddb_type in ("TIME", "TIMESTAMP", "NANOTIMESTAMP", "DATETIME"):
        return text + ".000" if ddb_type != "DATETIME" else text
    raise ValueError(f"no time-of-day literal for a {ddb_type} column")


def timestamp_bounds(day: dt.date) -> tuple[str, str]:
    """The first and last TIMESTAMP of ``day``, for range filters on timestamp columns."""
    d = date(day)
    return f"{d}T00:00:00.000", f"{d}T23:59:59.999"


def nanotimestamp_bounds(day: dt.date) -> tuple[str, str]:
    """The first and last NANOTIMESTAMP of ``day`` (a millisecond bound would miss its last ms's ns)."""
    d = date(day)
    return f"{d}T00:00:00.000000000", f"{d}T23:59:59.999999999"


def positive_int(value: int, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a non-negative whole number, got {value!r}")
    return str(value)


def timestamp(value: dt.datetime) -> str:
    """A TIMESTAMP literal, ``2016.11.15T12:00:00.000`` (naive datetimes, whole milliseconds)."""
    if not isinstance(value, dt.datetime):
        raise ValueError(f"expected a datetime, got {value!r}")
    if value.tzinfo is not None:
        raise ValueError(f"timestamp {value!r} has a time zone: DolphinDB TIMESTAMPs are naive")
    if value.microsecond % 1000:
        raise ValueError(f"timestamp {value!r} is finer than a millisecond")
    return (f"{date(value)}T{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
            f".{value.microsecond // 1000:03d}")


def second(value: dt.time) -> str:
    """A SECOND literal, ``10:00:00`` (a time of day in whole seconds)."""
    if not isinstance(value, dt.time):
        raise ValueError(f"expected a time of day, got {value!r}")
    if value.microsecond or value.tzinfo is not None:
        raise ValueError(f"time of day {value!r} is not a whole second without a time zone")
    return f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"


def number(value: int | float) -> str:
    """An INT/LONG or DOUBLE literal; a DOUBLE always keeps its decimal point (``2.0``, ``0.005``)."""
    import math

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"number {value!r} is not finite")
        text = repr(value)
        if "e" in text or "E" in text:          # DolphinDB literals: positional notation only
            import numpy as np

            text = np.format_float_positional(value, trim="0")
        return text if "." in text else text + ".0"
    raise ValueError(f"expected a number, got {type(value).__name__}")


def literal(value) -> str:
    """A suite parameter as a DolphinDB literal, by its Python type: date -> DATE, datetime ->
    TIMESTAMP, time -> SECOND, str -> STRING, a list of str -> STRING vector, int/float -> number.
    Anything else raises ``ValueError``: nothing is pasted into a script unformatted."""
    if isinstance(value, dt.datetime):
        return timestamp(value)
    if isinstance(value, dt.date):
        return date(value)
    if isinstance(value, dt.time):
        return second(value)
    if isinstance(value, str):
        return string(value)
    if isinstance(value, (list, tuple)):
        if not all(isinstance(v, str) for v in value):
            raise ValueError("only lists of text become DolphinDB vectors")
        return string_vector(value)
    if isinstance(value, (bool, int, float)):
        return number(value)
    raise ValueError(f"no DolphinDB literal for a {type(value).__name__}")
