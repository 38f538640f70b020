"""A real QuestDB for the tests: started once per test session by Tickbench's own launcher
(``workloads.local_engines.questdb.start``: the Maven jar, free loopback ports, admin/quest set
explicitly) and stopped by its PID. A missing prerequisite fails naming what to install."""
from __future__ import annotations

import shutil

import pytest

from workloads.local_engines.base import EngineStartError, stop_pids


@pytest.fixture(scope="session")
def questdb_server(tmp_path_factory):
    """The ``LocalEngine`` of a QuestDB started for this session (its ``config`` reaches it)."""
    from workloads.local_engines import questdb

    if shutil.which("java") is None:
        pytest.fail("QuestDB tests need Java 17+: install a JDK (apt-get install openjdk-17-jre-headless)")
    home = tmp_path_factory.mktemp("questdb_home")
    try:
        engine = questdb.start(home)
    except EngineStartError as exc:
        pytest.fail(f"QuestDB did not start ({exc}); it needs Java 17+ and Maven (or the jar cached in "
                    "~/.cache/tickbench/engines/questdb)")
    try:
        yield engine
    finally:
        stop_pids(engine.pids)
