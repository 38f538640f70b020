"""Deterministic generators of the seed reports' datasets, by registry name, and users' imports.

``get_dataset("taq")`` returns the generator; ``Dataset.info`` describes its schema.
``get_dataset("imp_<name>")`` returns a CSV imported with ``imported.import_csv``, read from
``<data dir>/imports/<name>/`` (worker processes inherit ``TICKBENCH_HOME`` and find it too).
``DATASETS`` stays the built-in registry; ``available_datasets()`` adds the imports.
"""
from __future__ import annotations

from workloads.datasets.base import Dataset
from workloads.datasets.builtin import DATASETS, IMPORT_PREFIX, TABLE_PREFIX


def get_dataset(name: str) -> Dataset:
    if name in DATASETS:
        return DATASETS[name]
    if name.startswith(IMPORT_PREFIX):
        from workloads.datasets.imported import load_import  # pyarrow.parquet only when needed
        return load_import(name)
    if name.startswith(TABLE_PREFIX):
        from workloads.datasets.tables import load_table_dataset
        return load_table_dataset(name)
    choices = ", ".join(DATASETS)
    raise ValueError(f"unknown dataset {name!r}: choose one of {choices}, "
                     f"or an imported CSV as {IMPORT_PREFIX}NAME (tickbench import)")


def available_datasets() -> dict[str, Dataset]:
    """The built-in generators, then every import on disk, by registry name."""
    from workloads.datasets.imported import list_imports
    return {**DATASETS, **{d.info.name: d for d in list_imports()}}


def own_size_words(name: str) -> str:
    """An import's or a table's own size, as a form shows it in place of a generator's settings; a
    ValueError naming an import or table that is not there."""
    if name.startswith(IMPORT_PREFIX):
        return get_dataset(name).size_words()
    get_dataset(name)
    return "its own rows, days and keys, as each run finds them (a table where it lives)"


__all__ = ["DATASETS", "IMPORT_PREFIX", "Dataset", "available_datasets", "get_dataset", "own_size_words"]
