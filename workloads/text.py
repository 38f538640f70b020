"""Words for counts and rates: "1 user", "2 users", "1,000 rows", "3 queries"; "3.2 k ops/s"."""
from __future__ import annotations


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
