"""Read users' own CSV files (TAQ quotes, device readings, any registry schema) into a dataset's
columns and dtypes, the schema named by its registry name (``workloads.datasets.csv_parse`` does
the parsing, against a schema given)."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pandas as pd

from workloads.datasets import get_dataset
from workloads.datasets.csv_parse import iter_schema_csv, read_schema_csv
from workloads.datasets.schema import Schema, StringMode


def schema_for(dataset_name: str) -> Schema:
    """The schema a CSV is read against: a registry dataset ("taq", "devices"), or one of its
    side tables as "<dataset>.<table>" (e.g. "devices.info")."""
    name, _, table = dataset_name.partition(".")
    dataset = get_dataset(name)
    if not table:
        return dataset.info.schema
    schema = getattr(dataset, f"{table}_schema", None)
    if not isinstance(schema, Schema):
        raise ValueError(f"dataset {name!r} has no table {table!r}")
    return schema


def read_csv(path: str | Path, dataset_name: str, mapping: Mapping[str, str] | None = None,
             strings: StringMode = StringMode.ARROW, *, delimiter: str = ",") -> pd.DataFrame:
    """The whole file as one DataFrame with the schema's columns, in schema order."""
    return read_schema_csv(path, schema_for(dataset_name), dataset_name, mapping, strings, delimiter=delimiter)


def iter_csv(path: str | Path, dataset_name: str, mapping: Mapping[str, str] | None = None,
             chunk_rows: int = 1_000_000, strings: StringMode = StringMode.ARROW, *,
             delimiter: str = ",") -> Iterator[pd.DataFrame]:
    """The file in DataFrames of at most ``chunk_rows`` rows, for files larger than memory."""
    yield from iter_schema_csv(path, schema_for(dataset_name), dataset_name, mapping, chunk_rows, strings,
                               delimiter=delimiter)
