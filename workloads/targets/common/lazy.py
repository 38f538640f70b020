"""What a target imports only when it is used: the datasets' registry (the datasets package imports
the targets package, so a target asks for it at run time) and an engine's optional client, whose
absence names the extra that installs it."""
from __future__ import annotations

import importlib
from types import ModuleType

from workloads.targets.base import TargetError

# The pip extra that installs a lazily loaded target's client: ``pip install tickbench[<extra>]``
EXTRAS: dict[str, str] = {kind: kind for kind in ("clickhouse", "arcticdb", "hdf5", "questdb", "postgres", "druid",
                                                 "mongodb")}


class MissingClient(TargetError):
    """A target whose client library is not installed: the message names the extra to install."""

    def __init__(self, kind: str, library: str):
        extra = EXTRAS.get(kind, kind)
        super().__init__(f"{kind} needs the {library} package: install tickbench[{extra}] "
                         f"(pip install 'tickbench[{extra}]')")
        self.kind, self.library, self.extra = kind, library, extra


def get_dataset(name: str):
    """The generators' registry entry ``name`` (``workloads.datasets.get_dataset``)."""
    from workloads.datasets import get_dataset as registry_entry
    return registry_entry(name)


def import_client(kind: str, module: str) -> ModuleType:
    """An engine's client module, or ``MissingClient`` saying "install tickbench[kind]"."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingClient(kind, module.split(".")[0]) from exc
