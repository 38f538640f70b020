"""Nothing of a run is left on the server: after a server error, a lost probe reply, a timed-out
transfer, a worker killed mid-probe and an upload sweep, the test server's shared namespace of
every node holds nothing of the run (listed, not inferred). (Timings are the test server's.)"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ddbserver.fixture import ddb_server_factory  # noqa: F401
from workloads.datasets.schema import Scale, StringMode
from workloads.targets.base import TargetError
from workloads.targets.dolphindb import DolphinDBTarget

pytestmark = pytest.mark.timeout(120)
SMALL = Scale(days=2, rows_per_day=2_000, symbols=20)
PASSWORD = "123456"
REPO = Path(__file__).resolve().parent.parent
PROBE_SCRIPT = "^tickbench_t0"            # the server-timed probe script


def config_for(server, **extra) -> dict:
    return {"host": server.host, "port": server.port, "user": "admin", "password": PASSWORD,
            "timeout": 3, "query_timeout": 2, **extra}


def ours(server) -> list[str]:
    """Every tickbench_ object in any node's shared namespace."""
    return [f"{node}: {name}" for node, names in server.stats()["shared"].items() for name in names
            if name.startswith("tickbench_")]


@pytest.fixture
def laid_out(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory()
    layout = DolphinDBTarget(config_for(server)).prepare("taq", SMALL, StringMode.ARROW)
    return server, layout


@pytest.mark.parametrize("fault,message", [
    ({"error_match": PROBE_SCRIPT, "error_message": "Out of memory"}, "answered: Out of memory"),
    ({"error_match": r"^tickbench_w\d+_\d+_[0-9a-f]+_1$", "error_message": "Not allowed"}, "server error: Not allowed"),
    ({"lose_match": PROBE_SCRIPT}, "connection lost or reply timed out"),
    ({"delay": 4.0, "delay_match": r"^tickbench_w\d+_\d+_[0-9a-f]+_1$"}, "timed out"),
])
def test_a_failed_probe_leaves_nothing_shared(laid_out, fault, message):
    server, layout = laid_out
    target = DolphinDBTarget(config_for(server))
    target.open(layout, 0)
    try:
        server.control(**fault)
        with target.probe_mode(), pytest.raises(TargetError, match=message):
            target.read_day(layout, layout.days[0])
        server.control(reset=True)
        assert ours(server) == []
        with target.probe_mode():                                  # and the next probe works
            assert target.read_day(layout, layout.days[0]).rows == 2_000
        assert ours(server) == []
    finally:
        server.control(reset=True)
        target.close()


KILLED_WORKER = """
import json, sys
from workloads.datasets import get_dataset
from workloads.datasets.schema import Scale, StringMode
from workloads.targets.dolphindb import DolphinDBTarget
scale = Scale(days=2, rows_per_day=2_000, symbols=20)
target = DolphinDBTarget(json.loads(sys.argv[1]))
layout = target.prepare("taq", scale, StringMode.ARROW)
target.open(layout, 3)
target.append(layout, get_dataset("taq").day_frame(0, scale).head(50), table="upload")
print("probing", flush=True)
with target.probe_mode():
    target.read_day(layout, layout.days[0])
"""


def test_a_killed_worker_leaves_objects_the_next_prepare_sweeps(laid_out):
    server, layout = laid_out
    server.control(delay=1.5, delay_match=PROBE_SCRIPT)      # the probe script runs after the kill
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    worker = subprocess.Popen([sys.executable, "-c", KILLED_WORKER, json.dumps(config_for(server, query_timeout=30))],
                              cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert worker.stdout.readline().strip() == "probing"
        time.sleep(0.5)                                         # the probe's request is on the server
        worker.kill()                                           # a cancel that runs no finally
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
    deadline = time.monotonic() + 10
    while len(ours(server)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    server.control(reset=True)
    left = ours(server)
    assert len(left) == 2 and any("tickbench_upload_w3_" in n for n in left)   # its upload table and probe result
    target = DolphinDBTarget(config_for(server))
    target.prepare("taq", SMALL, StringMode.ARROW)
    assert ours(server) == []
    assert sorted(target.swept) == sorted(f"127.0.0.1:{server.port}: {n.split(': ')[1]}" for n in left)
    assert target.describe()["swept_at_prepare"] == target.swept


def test_an_upload_table_is_undefined_when_its_worker_closes(laid_out):
    from workloads.datasets import get_dataset

    server, layout = laid_out
    target = DolphinDBTarget(config_for(server))
    target.open(layout, 0)
    target.append(layout, get_dataset("taq").day_frame(0, SMALL).head(20), table="upload")
    assert [n.split(": ")[1][:19] for n in ours(server)] == ["tickbench_upload_w0"]
    target.close()
    assert ours(server) == []


def test_an_upload_table_of_a_lost_session_is_undefined_through_a_fresh_one(laid_out):
    from workloads.datasets import get_dataset

    server, layout = laid_out
    target = DolphinDBTarget(config_for(server))
    target.open(layout, 0)
    try:
        target.append(layout, get_dataset("taq").day_frame(0, SMALL).head(20), table="upload")
        server.control(close_match=r"^select \* from loadTable")      # the session dies mid-reply
        with pytest.raises(TargetError, match="connection lost"):
            target.read_day(layout, layout.days[0])
        server.control(reset=True)
        assert ours(server) == []
    finally:
        server.control(reset=True)
        target.close()
