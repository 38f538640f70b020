"""workloads.text.plural: a count and its word in the right number."""
from workloads.text import plural


def test_one_is_singular_everything_else_plural():
    assert plural(1, "day") == "1 day"
    assert plural(1, "user") == "1 user"
    assert plural(2, "user") == "2 users"
    assert plural(0, "run") == "0 runs"
    assert plural(1.0, "second") == "1 second"
    assert plural(2.5, "second") == "2.5 seconds"


def test_irregular_plurals_and_large_counts():
    assert plural(1, "query", "queries") == "1 query"
    assert plural(3, "query", "queries") == "3 queries"
    assert plural(12_000, "row") == "12,000 rows"

