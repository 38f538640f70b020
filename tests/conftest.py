"""Shared fixtures. No test touches the user's files: data, results and settings go to tmp dirs."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("tickbench_home")
    monkeypatch.setenv("TICKBENCH_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    return home


from tests.ddbserver.fixture import ddb_cluster, ddb_server, ddb_server_factory  # noqa: E402,F401
