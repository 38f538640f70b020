"""The tables a suite's texts name, as one layout's tables: one concept for every engine.

A text names the dataset's seed table by its seed name (``{quotes}``, ``{readings}``, ...: any of
them is the layout's main table) and each side table by its own name (``{info}``, ``{trades}``),
which a server engine stores as ``<table>_<name>``. Each engine quotes the names its own way.
"""
from __future__ import annotations

from workloads.datasets.base import side_tables
from workloads.queries.suites import SEED_TABLES


def text_tables(dataset: str, table: str) -> dict[str, str]:
    """Placeholder name -> the layout's table, unquoted."""
    from workloads.datasets import get_dataset          # the registry, imported on use
    names = {seed: table for seed in SEED_TABLES.values()}
    try:
        found = side_tables(get_dataset(dataset))
    except ValueError:                                   # a dataset gone since (a removed import)
        found = {}
    names.update({name: f"{table}_{name}" for name in found})
    return names
