"""The pieces of DolphinDB script text the test server recognises: literal patterns and their
parsing into raw values, shared by the template dispatcher and the read queries."""
from __future__ import annotations

import datetime as dt
import re

from tests.ddbserver import codec as c

EPOCH = dt.date(1970, 1, 1)
QS = r'(?:[^"\\]|\\.)*'                        # the inside of a double-quoted DolphinDB string
STR = rf'"({QS})"'                              # a double-quoted string literal, captured
IDENT = r"[A-Za-z][A-Za-z0-9_]*"
DATE_LIT = r"\d{4}\.\d{2}\.\d{2}"
TS_LIT = r"\d{4}\.\d{2}\.\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{9}|\.\d{3})?"
TIME_LIT = r"\d{2}:\d{2}:\d{2}(?:\.\d{3})?"
LOAD = rf"loadTable\({STR}, {STR}\)"
TYPE_WORDS = {name: number for number, name in c.TYPE_NAMES.items()}


class ScriptError(RuntimeError):
    """Answered as an error reply with this message."""


def not_recognised(token: str, line: int = 1) -> ScriptError:
    """The error a real server gives for a script it cannot parse or a name it does not know."""
    return ScriptError(f"Syntax Error: [line #{line}] Cannot recognize the token {token}")


def unquote(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r", "t": "\t"}.get(m.group(1), m.group(1)), text)


def parse_date(text: str) -> int:
    y, m, d = (int(p) for p in text.split("."))
    return (dt.date(y, m, d) - EPOCH).days


def parse_timestamp_ms(text: str) -> int:
    day, _, clock = text.partition("T")
    return parse_date(day) * 86_400_000 + parse_time_ms(clock)


def parse_timestamp_ns(text: str) -> int:
    """A TIMESTAMP or NANOTIMESTAMP literal as ns since the epoch (a NANOTIMESTAMP column's values)."""
    day, _, clock = text.partition("T")
    hms, _, fraction = clock.partition(".")
    h, m, s = (int(x) for x in hms.split(":"))
    return (parse_date(day) * 86_400 + h * 3600 + m * 60 + s) * 10**9 + int((fraction or "0").ljust(9, "0"))


def temporal_literal(text: str) -> tuple[int, int]:
    """A ``yyyy.MM.ddTHH:mm:ss[.fff|.nnnnnnnnn]`` literal as (type, raw value), typed as DolphinDB
    types it: no fraction a DATETIME (s), three digits a TIMESTAMP (ms), nine a NANOTIMESTAMP (ns)."""
    fraction = text.partition("T")[2].partition(".")[2]
    if not fraction:
        return c.DATETIME, parse_timestamp_ms(text) // 1000
    if len(fraction) == 9:
        return c.NANOTIMESTAMP, parse_timestamp_ns(text)
    return c.TIMESTAMP, parse_timestamp_ms(text)


def same_temporal_type(column: str, column_type: int, literal_type: int) -> None:
    """DolphinDB compares a temporal column with a literal of its own type only (its error text)."""
    if column_type != literal_type:
        raise ScriptError(f"{column} is {c.TYPE_NAMES.get(column_type, column_type)} but the literal is "
                          f"{c.TYPE_NAMES.get(literal_type, literal_type)}: "
                          "Temporal data comparison should have the same data type.")


def parse_time_ms(text: str) -> int:
    hms, _, ms = text.partition(".")
    h, m, s = (int(p) for p in hms.split(":"))
    return ((h * 60 + m) * 60 + s) * 1000 + (int(ms) if ms else 0)


def time_value(text: str, ddb_type: int) -> int:
    """A time literal in the raw encoding of a column of ``ddb_type``."""
    ms = parse_time_ms(text)
    return {c.SECOND: ms // 1000, c.TIME: ms, c.MINUTE: ms // 60000}.get(ddb_type, ms)


def schema(names_text: str, types_text: str) -> list[tuple[str, int]]:
    """``["a", "b"]`` and ``INT, DOUBLE`` of a ``table(1:0, ...)`` call as (name, type) pairs."""
    names = [unquote(n) for n in re.findall(STR, names_text)]
    types = [t.strip() for t in types_text.split(",")]
    if len(names) != len(types) or not all(t in TYPE_WORDS for t in types):
        raise ScriptError("The column names and types of table() do not match.")
    return list(zip(names, [TYPE_WORDS[t] for t in types]))


def split_conditions(text: str) -> list[str]:
    """Split a DolphinDB where clause on top-level commas (not inside quotes or parentheses)."""
    parts, depth, quote, cur = [], 0, False, []
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            cur.append(ch)
            if ch == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 1
            elif ch == '"':
                quote = False
        elif ch == '"':
            quote = True
            cur.append(ch)
        elif ch in "([":
            depth += 1
            cur.append(ch)
        elif ch in ")]":
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur).strip())
    return [p for p in parts if p]
