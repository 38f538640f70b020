"""What a target imports only when it is used: the datasets' registry (the datasets package imports
the targets package, so a target asks for it at run time) and an engine's optional client, whose
absence names the extra that installs it."""
from __future__ import annotations

import importlib
from types import ModuleType


def get_dataset(name: str):
    """The generators' registry entry ``name`` (``workloads.datasets.get_dataset``)."""
    from workloads.datasets import get_dataset as registry_entry
    return registry_entry(name)


def import_client(kind: str, module: str) -> ModuleType:
    """An engine's client module, or ``MissingClient`` saying "install tickbench[kind]"."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        from workloads.targets import MissingClient
        raise MissingClient(kind, module.split(".")[0]) from exc
