"""A table where it already lives, as a dataset: ``tbl_<name>``.

``tickbench targets add-table`` (``workloads.targets.table``) reads an existing table's schema,
checks the roles the user named and saves what it learnt here, in ``<data dir>/tables/<name>.json``:
its kind, where it is, its schema and roles (never a password). Every process of a run then gets
the same ``DatasetInfo`` through ``get_dataset("tbl_<name>")``, like a generated or imported dataset.
Its rows stay in the table: the days and keys are found by the target when it is prepared, and
nothing here generates or copies a row.
"""
from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from workloads.datasets.base import Dataset
from workloads.datasets.builtin import TABLE_PREFIX
from workloads.datasets.roles import Roles, dataset_info
from workloads.datasets.schema import Column, DatasetInfo, Scale, Schema, StringMode
from workloads.paths import data_dir

NAME_RULE = re.compile(r"[a-z][a-z0-9_]{0,39}")


def tables_dir() -> Path:
    """``<data dir>/tables``: worker processes inherit ``TICKBENCH_HOME`` and find the same one."""
    return data_dir() / "tables"


def check_table_name(name: object) -> str:
    if not isinstance(name, str) or not NAME_RULE.fullmatch(name):
        raise ValueError(f"table target name {name!r} is not valid: use 1-40 lower-case letters, digits "
                         "and underscores, starting with a letter (e.g. trades)")
    return name


@dataclass(frozen=True)
class SavedTable:
    """What adding a table target learnt: the table's place, schema and roles; no password."""

    name: str
    kind: str                          # parquet, duckdb, postgres, questdb, clickhouse, dolphindb
    location: str                      # a file or folder, a server address, or a dfs:// path
    table: str                         # the table's name in its database ("" for Parquet)
    schema: Schema
    roles: Roles
    connection: dict[str, Any] = field(default_factory=dict)   # host, port, user, database, server_key...

    @property
    def dataset(self) -> str:
        return TABLE_PREFIX + self.name

    @property
    def where(self) -> str:
        """The table as a person names it in a message: ``trades in /data/x.duckdb``."""
        if self.kind == "parquet":
            return f"Parquet {self.location}"
        return f"{self.kind} table {self.table} at {self.location}"

    def info(self) -> DatasetInfo:
        return dataset_info(self.dataset, f"{self.table or Path(self.location).name} ({self.kind}, in place)",
                            self.schema, self.roles,
                            notes=f"read in place from {self.where}; never written",
                            extra={"table_target": self.name})

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "location": self.location, "table": self.table,
                "schema": [[c.name, c.ddb_type] for c in self.schema.columns], "roles": self.roles.to_dict(),
                "connection": {k: v for k, v in self.connection.items() if k != "password"}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SavedTable":
        return cls(check_table_name(data["name"]), str(data["kind"]), str(data["location"]),
                   str(data.get("table") or ""), Schema(tuple(Column(str(n), str(t)) for n, t in data["schema"])),
                   Roles.from_dict(data["roles"]), dict(data.get("connection") or {}))


class TableDataset(Dataset):
    """An existing table's schema and roles; its rows are read where they are, never generated."""

    def __init__(self, saved: SavedTable):
        self.saved = saved
        self.info = saved.info()

    def trading_days(self, scale: Scale) -> list[dt.date]:
        return []                    # found by the target's bounded queries when it is prepared

    def keys(self, scale: Scale) -> list[str]:
        return []

    def generate_day(self, day_index: int, scale: Scale, strings: StringMode = StringMode.ARROW,
                     chunk_rows: int = 1_000_000) -> Iterator[pd.DataFrame]:
        raise ValueError(f"{self.info.name} is {self.saved.where}: it is read in place (target "
                         f"table:{self.saved.name}), never generated or copied")

    @property
    def content_id(self) -> str:
        return f"table:{self.saved.name}"


def save_table(saved: SavedTable) -> Path:
    folder = tables_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{check_table_name(saved.name)}.json"
    partial = path.with_suffix(".json.partial")      # a crash mid-write never leaves half a file
    partial.write_text(json.dumps(saved.to_dict(), indent=1), encoding="utf-8")
    partial.replace(path)
    return path


def load_table(name: str) -> SavedTable:
    path = tables_dir() / f"{check_table_name(name)}.json"
    try:
        return SavedTable.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise ValueError(f"no table target {name!r}: add it with `tickbench targets add-table {name} ...` "
                         f"(looked in {tables_dir()})") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a saved table target ({exc})") from None


def list_tables() -> list[SavedTable]:
    found = []
    for path in sorted(tables_dir().glob("*.json")) if tables_dir().is_dir() else []:
        try:
            found.append(load_table(path.stem))
        except ValueError:
            continue                 # a damaged file is left out, never the others
    return found


def remove_table(name: str) -> None:
    path = tables_dir() / f"{check_table_name(name)}.json"
    if not path.is_file():
        raise ValueError(f"no table target {name!r}")
    path.unlink()


def load_table_dataset(dataset: str) -> TableDataset:
    return TableDataset(load_table(dataset[len(TABLE_PREFIX):]))
