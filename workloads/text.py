"""Words for counts and rates: "1 user", "2 users", "1,000 rows", "3 queries"; "3.2 k ops/s"; and
text from elsewhere made printable."""
from __future__ import annotations

import re

# C0 and C1 controls but newline and tab (a terminal's escape sequences start with them), and the
# bidirectional overrides and isolates (text that reads in another order than it is stored)
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """Text from a file, a run or a server as it may be shown: each control character written as
    its escape (ESC as ``\\x1b``), so none can move a cursor, colour or link a terminal, or reorder
    what is read; everything else as it is."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def plural(n: float, word: str, plural_word: str | None = None) -> str:
    """`n` and the word in its number: plural(1, "day") -> "1 day", plural(2, "query", "queries")
    -> "2 queries", plural(12000, "row") -> "12,000 rows". Only exactly 1 is singular."""
    count = f"{n:,}" if isinstance(n, int) else f"{n:,g}"
    return f"{count} {word if n == 1 else (plural_word or word + 's')}"


def rate(value: float | None, unit: str = "") -> str:
    """A rate in three figures with k / M / G: rate(3200, "ops/s") -> "3.2 k ops/s"; "" for None."""
    if value is None:
        return ""
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix} {unit}".rstrip()
    return f"{value:.3g} {unit}".rstrip()


def error_words(exc: BaseException) -> str:
    """What an error says, for one line: a KeyError's message without the quotes its str() adds (a
    ValueError's own quotes, as in "not 'lukewarm'", are kept)."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value):
    """A CSV cell a spreadsheet shows, never runs: text that would start a formula (``=HYPERLINK(...)``,
    ``+1``, ``@SUM``) gets a leading apostrophe, as OWASP advises; numbers and other text as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value
