"""Registry of storage targets: ``make_target(kind, config)`` builds one from plain data.

The local targets are imported eagerly. DolphinDB and the optional engines are registered by
dotted path and imported only when asked for, so the engine (and the tests of other targets) do
not need their clients to load; a missing client names the extra that installs it.
"""
from __future__ import annotations

import importlib
from typing import Any

from workloads.targets.base import Layout, OpResult, PHASES, Target, TargetError
from workloads.targets.common.lazy import EXTRAS, MissingClient
from workloads.targets.duckdb import DuckDBTarget
from workloads.targets.files import FeatherTarget, ParquetTarget, PickleTarget

TARGETS: dict[str, type[Target]] = {
    "pickle": PickleTarget,
    "parquet": ParquetTarget,
    "feather": FeatherTarget,
    "duckdb": DuckDBTarget,
}

LAZY_TARGETS: dict[str, str] = {
    "dolphindb": "workloads.targets.dolphindb:DolphinDBTarget",
    "clickhouse": "workloads.targets.clickhouse:ClickHouseTarget",
    "arcticdb": "workloads.targets.arcticdb:ArcticDBTarget",
    "hdf5": "workloads.targets.hdf5:HDF5Target",
    "questdb": "workloads.targets.questdb:QuestDBTarget",
    "postgres": "workloads.targets.postgres:PostgresTarget",
    "druid": "workloads.targets.druid:DruidTarget",
    "mongodb": "workloads.targets.mongodb:MongoDBTarget",
}
# Not an engine of its own: a user's existing table on one of them, read in place (``table:<name>``)
IN_PLACE_TARGETS: dict[str, str] = {"table": "workloads.targets.table:TableTarget"}

def target_kinds() -> list[str]:
    """Every registered kind, local ones first."""
    return [*TARGETS, *LAZY_TARGETS]


def target_class(kind: str) -> type[Target]:
    if kind in TARGETS:
        return TARGETS[kind]
    if kind in IN_PLACE_TARGETS:
        module_name, _, class_name = IN_PLACE_TARGETS[kind].partition(":")
        return getattr(importlib.import_module(module_name), class_name)
    if kind not in LAZY_TARGETS:
        raise ValueError(f"unknown target {kind!r}: choose one of {', '.join(target_kinds())}")
    module_name, _, class_name = LAZY_TARGETS[kind].partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except ModuleNotFoundError as exc:
        if exc.name and not exc.name.startswith("workloads"):
            raise MissingClient(kind, exc.name.split(".")[0]) from exc
        raise TargetError(f"target {kind!r} is unavailable: cannot load {LAZY_TARGETS[kind]} ({exc})") from exc
    except (ImportError, AttributeError) as exc:
        raise TargetError(f"target {kind!r} is unavailable: cannot load {LAZY_TARGETS[kind]} "
                          f"({type(exc).__name__}: {exc})") from exc
    return cls


def make_target(kind: str, config: dict[str, Any] | None = None) -> Target:
    """A target of ``kind`` configured by ``config`` (plain data, also rebuilt in worker processes)."""
    return target_class(kind)(dict(config or {}))


__all__ = ["TARGETS", "LAZY_TARGETS", "EXTRAS", "MissingClient", "PHASES", "Layout", "OpResult", "Target", "TargetError",
           "make_target", "target_class", "target_kinds"]
