"""Words for counts: "1 user", "2 users", "1,000 rows", "1 query", "3 queries"."""
from __future__ import annotations


def plural(n: float, word: str, plural_word: str | None = None) -> str:
    """`n` and the word in its number: plural(1, "day") -> "1 day", plural(2, "query", "queries")
    -> "2 queries", plural(12000, "row") -> "12,000 rows". Only exactly 1 is singular."""
    count = f"{n:,}" if isinstance(n, int) else f"{n:,g}"
    return f"{count} {word if n == 1 else (plural_word or word + 's')}"
