"""``tickbench targets clean ddb:NAME`` on the DolphinDB stand-in (the real ``dolphindb`` client):
it lists the databases Tickbench made (its prefix alone) with their tables and bytes, drops nothing
without a confirmation, drops what is confirmed, and never a database it did not make."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dolphindb as ddb
import pytest

from tests.ddbserver.fixture import ddb_server_factory  # noqa: F401
from workloads.datasets.schema import Scale, StringMode
from workloads.targets.base import TargetError
from workloads.targets.dolphindb import DolphinDBTarget
from workloads.targets.dolphindb.cluster import ClusterProfile
from workloads.targets.profiles import Profile
from workloads.targets.registry import TargetRegistry

REPO = Path(__file__).resolve().parents[1]
SMALL, OTHER = Scale(days=1, rows_per_day=1_000, symbols=5), Scale(days=1, rows_per_day=2_000, symbols=5)


def _databases(server) -> list[str]:
    session = ddb.session()
    session.connect(server.host, server.port, "admin", "123456")
    try:
        return sorted(session.run("getClusterDFSDatabases()"))
    finally:
        session.close()


def _clean(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TICKBENCH_HOME": str(tmp_path / "home"), "TICKBENCH_DDB_PASSWORD": "123456",
           "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "app", "targets", "--data-dir", str(tmp_path / "data"), "clean",
                           *args], capture_output=True, text=True, env=env, cwd=REPO, stdin=subprocess.DEVNULL,
                          timeout=120)


def test_clean_lists_what_tickbench_made_and_drops_only_what_is_confirmed(ddb_server_factory, tmp_path):  # noqa: F811
    server = ddb_server_factory()
    config = {"profile": server.profile(), "password": "123456", "timeout": 5}
    made = []
    for scale in (SMALL, OTHER):
        target = DolphinDBTarget(config)
        target.prepare("taq", scale, StringMode.ARROW)
        made.append(target.names("taq", scale).db)
        target.close()
    session = ddb.session()
    session.connect(server.host, server.port, "admin", "123456")
    try:                                                    # the user's own, beside: never listed or dropped
        session.run('dbDate = database("", VALUE, 2024.03.01..2024.03.31)\n'
                    'dbKey = database("", RANGE, symbol(["A", "M", "ZZZZ"]))\n'
                    'db = database("dfs://tickbenchmine", COMPO, [dbDate, dbKey], engine="OLAP", atomic="CHUNK")')
    finally:
        session.close()
    registry = TargetRegistry.load(tmp_path / "data")
    key = registry.add(Profile("dolphindb", ClusterProfile.from_dict({**server.profile(), "name": "lab"})))

    listed = _clean(tmp_path, key)
    assert listed.returncode == 0, listed.stderr
    assert all(path in listed.stdout for path in made) and "tickbenchmine" not in listed.stdout
    assert "quotes" in listed.stdout and " KB" in listed.stdout                     # tables and bytes
    assert "Nothing dropped: run again with --yes to drop 2 database(s)" in listed.stdout
    assert _databases(server) == sorted(made + ["dfs://tickbenchmine"])

    refused = _clean(tmp_path, key, "--only", "dfs://tickbenchmine", "--yes")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "dfs://tickbenchmine is not a database Tickbench made" in refused.stderr
    assert _databases(server) == sorted(made + ["dfs://tickbenchmine"])

    dropped = _clean(tmp_path, key, "--only", made[0], "--yes")
    assert dropped.returncode == 0, dropped.stderr
    assert "Dropped 1 database(s)" in dropped.stdout
    assert _databases(server) == sorted([made[1], "dfs://tickbenchmine"])

    target = DolphinDBTarget(config)                     # the engine refuses too, whoever asks it
    with pytest.raises(TargetError, match="dfs://tickbenchmine is not a database Tickbench made here"):
        target.drop_made(["dfs://tickbenchmine", made[1]])
    target.close()
    assert _databases(server) == sorted([made[1], "dfs://tickbenchmine"])      # not even the one it made
