"""The MongoDB wire-protocol stand-in (mongo-java-server, NOT MongoDB) for the ``mongodb`` target's
tests: started once per test session through the same ``start()`` Tickbench's launcher has, on a
free loopback port, stopped by its PID. Needs Java 17+ and Maven (the jars are cached)."""
from __future__ import annotations

import pytest

from workloads.local_engines.base import stop_pids
from workloads.local_engines.mongodb import start


@pytest.fixture(scope="session")
def mongo_server(tmp_path_factory):
    engine = start(tmp_path_factory.mktemp("mongo_engines"))
    try:
        yield engine
    finally:
        stop_pids(engine.pids)
