"""The engines this install can run: each target kind, its label, what it keeps where and the
client modules it needs (``missing_client(kind)`` says "install tickbench[X]" without importing
anything heavy); the server kinds a profile can describe."""
from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


DDB, CLICKHOUSE = "dolphindb", "clickhouse"
PASSWORD_KEYS = ("password",)        # config keys stripped from anything saved or recorded


@dataclass(frozen=True)
class Engine:
    kind: str
    label: str
    holds: str                       # what its folder holds, in a few words
    modules: tuple[str, ...] = ()    # client modules it imports (checked, not imported)
    extra: str = ""                  # pip extra that installs them
    local: bool = True               # runs on this computer without a server
    # what the users' forkserver imports for it (``workloads.run.processes``): its target module and
    # the client modules that start no thread and open nothing when imported; () : each user imports it
    preload: tuple[str, ...] = ()


ENGINES: tuple[Engine, ...] = (
    Engine("duckdb", "DuckDB (embedded)", "one database file", ("duckdb",), preload=("duckdb",)),
    Engine("pickle", "Pickle files", "one file per day"),
    Engine("parquet", "Parquet files", "one file per day", ("pyarrow",)),
    Engine("feather", "Feather files", "one file per day", ("pyarrow",)),
    Engine("clickhouse", "ClickHouse (chDB, embedded)", "a MergeTree table per dataset, partitioned by day",
           ("chdb",), "clickhouse"),      # chDB starts a dozen threads when imported: never preloaded
    Engine("arcticdb", "ArcticDB (LMDB)", "a library per dataset, a symbol per day", ("arcticdb",), "arcticdb",
           preload=("arcticdb", "workloads.targets.arcticdb")),
    Engine("hdf5", "HDF5 (PyTables)", "a file per day, one table node each", ("tables",), "hdf5",
           preload=("tables", "workloads.targets.hdf5")),
    Engine(DDB, "DolphinDB", "a DFS database per dataset", ("dolphindb",), local=False,
           preload=("dolphindb", "workloads.targets.dolphindb")),
    Engine("questdb", "QuestDB", "a table per dataset, partitioned by day", ("questdb", "psycopg"), "questdb",
           local=False, preload=("questdb.ingress", "psycopg", "workloads.targets.questdb")),
    Engine("postgres", "PostgreSQL", "a table per dataset, partitioned by date", ("psycopg",), "postgres", local=False,
           preload=("psycopg", "workloads.targets.postgres")),
    Engine("druid", "Apache Druid", "a datasource per dataset, day segments", (), "druid", local=False,
           preload=("workloads.targets.druid",)),
    Engine("mongodb", "MongoDB", "a collection per dataset", ("pymongo", "pymongoarrow"), "mongodb", local=False,
           preload=("pymongo", "pymongoarrow.api", "workloads.targets.mongodb")),
)


@dataclass(frozen=True)
class ServerType:
    """A kind of server a profile can describe: its defaults and the client that reaches it."""

    label: str
    prefix: str                      # of the profile's key: ch:NAME
    port: int
    user: str = ""                   # "" : no login by default
    database: str = ""
    module: str = ""                 # the client module (checked, not imported)
    options: tuple[tuple[str, Any], ...] = ()     # the kind's other settings and their defaults
    port_label: str = "Port"


SERVER_TYPES: dict[str, ServerType] = {
    CLICKHOUSE: ServerType("ClickHouse", "ch", 8123, "default", "tickbench", "clickhouse_connect",
                           port_label="HTTP port"),
    "questdb": ServerType("QuestDB", "qdb", 8812, "admin", "qdb", "psycopg", (("http_port", 9000),),
                          port_label="PostgreSQL-wire port"),
    "postgres": ServerType("PostgreSQL", "pg", 5432, "postgres", "tickbench", "psycopg"),
    "druid": ServerType("Apache Druid", "druid", 8082, "", "", "", (("coordinator_port", 8081),),
                        port_label="Broker HTTP port"),
    "mongodb": ServerType("MongoDB", "mongo", 27017, "", "tickbench", "pymongo", (("auth_source", "admin"),
                                                                                      ("layout", "documents"),
                                                                                      ("granularity", "seconds"))),
}


SERVER_CLIENTS = {DDB: ("dolphindb", ""), **{kind: (t.module, kind) for kind, t in SERVER_TYPES.items()}}


def engine(kind: str) -> Engine:
    for item in ENGINES:
        if item.kind == kind:
            return item
    raise KeyError(f"unknown target kind {kind!r}: choose one of {', '.join(e.kind for e in ENGINES)}")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_client(kind: str, server: bool = False) -> str | None:
    """None when ``kind``'s client is installed (or bundled), else what to install."""
    if server and kind in SERVER_CLIENTS:
        module, extra = SERVER_CLIENTS[kind]
        modules = (module,) if module else ()
    else:
        item = engine(kind)
        modules, extra = item.modules, item.extra
    missing = [m for m in modules if not _installed(m)]
    if not missing:
        return None
    if getattr(sys, "frozen", False):        # the double-click app: nothing to pip install into it
        return f"not in this build: pip install 'tickbench[{extra or 'engines'}]'"
    if extra:
        return f"not installed: install tickbench[{extra}] (needs {', '.join(missing)})"
    return f"not installed: pip install {' '.join(missing)}"


def default_config(kind: str, data_dir: Path) -> dict[str, Any]:
    """A local target's config with its default place under ``data_dir``."""
    data_dir = Path(data_dir)
    if kind == "duckdb":
        return {"path": str(data_dir / "tickbench_data.duckdb")}
    if kind == "clickhouse":
        return {"path": str(data_dir / "clickhouse")}
    if kind == "arcticdb":
        return {"uri": f"lmdb://{data_dir / 'arcticdb'}?map_size=4GB"}
    return {"root": str(data_dir)}


def where(config: dict[str, Any]) -> str:
    """Where a config keeps its data, for a person."""
    return str(config.get("path") or config.get("uri") or config.get("root") or config.get("host") or "")


def strip_passwords(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` without secrets, for settings, scenario files and run records."""
    return {k: v for k, v in config.items() if k not in PASSWORD_KEYS}
