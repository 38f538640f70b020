"""A real Apache Druid for the tests: started ONCE per test session with Tickbench's own launcher
(``workloads.local_engines.druid.start``: five JVMs on free 127.0.0.1 ports, ~3 GB, ~20-40 s),
stopped by its PIDs. A missing prerequisite fails naming what to install; nothing is skipped.

``druid_msq_engine``: Druid 27.0.0 with its multi-stage-query extension (the newest the package
registry serves; the session's 33 has none), started for one module and stopped at its end."""
from __future__ import annotations

import shutil

import pytest

from workloads.datasets.schema import StringMode
from workloads.local_engines import druid
from workloads.local_engines.base import stop_pids
from workloads.targets import make_target


def _require_java_and_maven() -> None:
    for tool, what in (("java", "a JDK 17+ (apt-get install openjdk-17-jdk-headless)"), ("mvn", "maven")):
        if shutil.which(tool) is None:
            pytest.fail(f"the Druid tests need {what}")


@pytest.fixture(scope="session")
def druid_engine(tmp_path_factory):
    _require_java_and_maven()
    engine = druid.start(tmp_path_factory.mktemp("druid_home"))
    yield engine
    stop_pids(engine.pids)


@pytest.fixture(scope="module")
def druid_msq_engine(tmp_path_factory):
    _require_java_and_maven()
    engine = druid.start(tmp_path_factory.mktemp("druid_msq_home"), version=druid.MSQ_VERSION)
    yield engine
    stop_pids(engine.pids)


def laid_out(config: dict, scale):
    """A module fixture's body: a Druid target with TAQ at ``scale`` prepared and open, closed after."""
    target = make_target("druid", config)
    layout = target.prepare("taq", scale, StringMode.ARROW)
    target.open(layout)
    yield target, layout
    target.close()
