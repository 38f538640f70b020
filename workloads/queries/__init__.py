"""Analytic query suites (reports 001 and 004) as data: ``resources/queries/<suite>.toml``."""
from workloads.queries.suites import Query, Suite, draw_values, load_suite, query_days, suite_names

__all__ = ["Query", "Suite", "draw_values", "load_suite", "query_days", "suite_names"]
