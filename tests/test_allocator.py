"""Workers settle glibc's malloc as a long-lived client's (``workloads.run.allocator``): a read that
frees and allocates the same ~48 MB again must reuse memory, not fault fresh pages in each time.
Measured by minor page faults, a count the kernel keeps: each 4 KiB page faulted in is one."""
from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import resource, sys
sys.path.insert(0, {root!r})
import numpy as np
if {settle}:
    from workloads.run.allocator import settle_allocator
    settle_allocator()
def one_read():
    # a 1 M-row day's columns and more: ten 8 MB arrays (80 MB, past glibc's own 64 MiB trim
    # threshold), written (so touched), then all freed
    arrays = [np.ones(1_000_000) for _ in range(10)]
    del arrays
one_read(); one_read()                 # the first reads may fault (the heap grows once)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    one_read()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) // 10)
"""

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                                reason="glibc's malloc only: elsewhere the allocator is left as it is")


def faults_per_read(settle: bool) -> int:
    root = str(Path(__file__).resolve().parent.parent)
    out = subprocess.run([sys.executable, "-c", PROBE.format(root=root, settle=settle)], capture_output=True,
                         text=True, check=True)
    return int(out.stdout.strip())


def test_a_settled_process_reuses_a_reads_memory_where_a_fresh_one_faults_it_in_again():
    fresh, settled = faults_per_read(False), faults_per_read(True)
    assert fresh >= 2_000, fresh           # glibc's defaults: 8 MB or more given back and faulted in again (3,000 here)
    assert settled < 100, settled          # settled: the same pages reused (0 here), even 80 MB freed at the heap's top


def test_the_run_records_what_its_workers_do_to_the_allocator():
    from workloads.run.environment import capture_environment

    assert capture_environment()["allocator"] == ("glibc, settled in every worker as a long-lived client's: "
                                                  "mmap threshold 32 MiB, trim threshold 1024 MiB")


def test_a_worker_settles_its_allocator_before_it_says_ready():
    import multiprocessing as mp

    from workloads.run.allocator import describe_allocator
    from workloads.operations.base import StepPlan
    from workloads.run.launch import LocalStep
    from workloads.run.messages import Ready
    from workloads.scenario import Scenario
    from workloads.run.worker import WorkerSpec

    launch = LocalStep(mp.get_context("spawn"))
    spec = WorkerSpec(Scenario(workload="noop", operations=1).to_dict(),
                      StepPlan(0, 1, "1 user").__dict__, 0, None, "duckdb", {})
    handle = launch.start([spec])[0]
    try:
        assert handle.conn.poll(120), "the worker never said ready"
        ready = handle.conn.recv()
        assert isinstance(ready, Ready) and ready.conditions["allocator"] == describe_allocator()
    finally:
        launch.stop.set()
        handle.process.join(30)
        if handle.process.is_alive():
            handle.process.kill()
