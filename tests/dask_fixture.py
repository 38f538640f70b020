"""A real Dask cluster on loopback for the tests that run users on several hosts: a scheduler and two
``dask worker`` processes (``workloads.distributed.local_cluster``), once per test process, stopped by
their PIDs."""
from __future__ import annotations

import pytest

from workloads.distributed.local_cluster import start


@pytest.fixture(scope="session")
def dask_cluster(tmp_path_factory):
    cluster = start(tmp_path_factory.mktemp("dask"), workers=2)
    try:
        yield cluster
    finally:
        cluster.stop()
