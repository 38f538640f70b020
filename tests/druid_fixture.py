"""A real Apache Druid for the tests: started ONCE per test session with Tickbench's own launcher
(``workloads.local_engines.druid.start``: five JVMs on free 127.0.0.1 ports, ~3 GB, ~20-40 s),
stopped by its PIDs. A missing prerequisite fails naming what to install; nothing is skipped."""
from __future__ import annotations

import shutil

import pytest

from workloads.local_engines import druid
from workloads.local_engines.base import stop_pids


@pytest.fixture(scope="session")
def druid_engine(tmp_path_factory):
    for tool, what in (("java", "a JDK 17+ (apt-get install openjdk-17-jdk-headless)"), ("mvn", "maven")):
        if shutil.which(tool) is None:
            pytest.fail(f"the Druid tests need {what}")
    engine = druid.start(tmp_path_factory.mktemp("druid_home"))
    yield engine
    stop_pids(engine.pids)
