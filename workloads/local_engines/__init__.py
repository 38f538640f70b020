"""Local server engines Tickbench can start on this computer, loopback only, for trying an engine
and for the tests: QuestDB, PostgreSQL, Apache Druid, and (tests only) a MongoDB wire-protocol
stand-in. ``base`` has what every launcher shares; one module per engine."""
from __future__ import annotations


import importlib
from pathlib import Path

from workloads.local_engines.base import (EngineStartError, LocalEngine, Progress, forget, remember, running,
                                          stop_engine)

# Engines a user can start here (the MongoDB stand-in is for the tests only: it is not MongoDB)
LAUNCHERS = {"questdb": "workloads.local_engines.questdb", "postgres": "workloads.local_engines.postgres",
             "druid": "workloads.local_engines.druid"}


def launcher(kind: str):
    """The launcher module of ``kind`` (``KIND``, ``LABEL``, ``NOTE``, ``start``)."""
    if kind not in LAUNCHERS:
        raise EngineStartError(f"no local engine {kind!r}: Tickbench can start {', '.join(LAUNCHERS)}")
    try:
        return importlib.import_module(LAUNCHERS[kind])
    except ImportError as exc:
        raise EngineStartError(f"the {kind} launcher cannot load: {exc}") from exc


def available() -> dict[str, tuple[str, str]]:
    """kind -> (label, what starting it costs) of every launcher that loads."""
    out = {}
    for kind in LAUNCHERS:
        try:
            module = launcher(kind)
        except EngineStartError:
            continue
        out[kind] = (module.LABEL, module.NOTE)
    return out


def start_engine(home: Path, kind: str, progress: Progress | None = None) -> LocalEngine:
    """Start ``kind`` (or find it running) with its data under ``home``; recorded for ``stop``."""
    engine = running(home).get(kind)
    if engine is not None:
        return engine
    engine = launcher(kind).start(home, progress)
    engine.config = {**engine.config, "local_engine": True}
    remember(home, engine)
    return engine


__all__ = ["LAUNCHERS", "EngineStartError", "LocalEngine", "available", "forget", "launcher", "running",
           "start_engine", "stop_engine"]
