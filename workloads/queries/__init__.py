"""Analytic query suites (reports 001 and 004) as data: ``resources/queries/<suite>.toml``, and the
user's own suite files (``user_suites``)."""
from workloads.queries.suites import Query, Suite, draw_values, query_days, suite_names
from workloads.queries.user_suites import load_suite     # by name, or a user's FILE.toml

__all__ = ["Query", "Suite", "draw_values", "load_suite", "query_days", "suite_names"]
