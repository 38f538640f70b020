"""A local QuestDB for Tickbench: the server's one jar from Maven, started on loopback ports.

``start(home)`` keeps the jar in the engine cache (``maven_artifact``), the data under
``home/questdb/root``, binds HTTP (REST, ``/exec``, ``/imp``, ``/exp``), its health endpoint,
PostgreSQL wire and ILP over TCP to free 127.0.0.1 ports, sets the PG user and password
explicitly (admin / quest, QuestDB's defaults), lets ``/exp`` serve as many users as report 002
runs (``http.export.connection.limit``; by default as many as the machine has CPUs) and waits until
PG wire and HTTP answer.
"""
from __future__ import annotations

import urllib.request
from pathlib import Path

from workloads.local_engines.base import (LOOPBACK, LocalEngine, Progress, cache_dir, free_port, java,
                                          maven_artifact, port_open, spawn, wait_until)

KIND = "questdb"
LABEL = "QuestDB 9.3.4"
NOTE = "one 30 MB jar from Maven (once); one JVM (-Xmx2g), ~4 s to start, ~420 MB resident"
VERSION = "9.3.4"
COORDINATES = f"org.questdb:questdb:{VERSION}"
USER, PASSWORD = "admin", "quest"
START_DEADLINE_S = 90.0
EXPORT_CONNECTIONS = 256


def _http_ready(port: int) -> bool:
    with urllib.request.urlopen(f"http://{LOOPBACK}:{port}/exec?query=SELECT%201", timeout=2) as reply:
        return reply.status == 200


def start(home: Path, progress: Progress | None = None) -> LocalEngine:
    folder = Path(home) / KIND
    root = folder / "root"
    root.mkdir(parents=True, exist_ok=True)          # QuestDB refuses a root that does not exist
    jar = maven_artifact(COORDINATES, cache_dir() / "questdb", progress)
    ports = {"http": free_port(), "http_min": free_port(), "pg": free_port(), "ilp": free_port()}
    env = {
        "QDB_HTTP_BIND_TO": f"{LOOPBACK}:{ports['http']}",
        "QDB_HTTP_MIN_NET_BIND_TO": f"{LOOPBACK}:{ports['http_min']}",
        "QDB_PG_NET_BIND_TO": f"{LOOPBACK}:{ports['pg']}",
        "QDB_LINE_TCP_NET_BIND_TO": f"{LOOPBACK}:{ports['ilp']}",
        "QDB_LINE_UDP_ENABLED": "false",
        "QDB_PG_USER": USER,
        "QDB_PG_PASSWORD": PASSWORD,
        "QDB_TELEMETRY_ENABLED": "false",
        # /exp (every read) serves as many connections as the machine has CPUs by default, and each
        # user holds one: report 002 runs up to 128 users (at most http.net.connection.limit, 256)
        "QDB_HTTP_EXPORT_CONNECTION_LIMIT": str(EXPORT_CONNECTIONS),
    }
    if progress:
        progress(f"starting QuestDB {VERSION}…")
    log = folder / "questdb.log"
    proc = spawn([java(), "-Xmx2g", "-p", str(jar), "-m", "io.questdb/io.questdb.ServerMain", "-d", str(root)],
                 log, env=env, cwd=folder)
    try:
        wait_until(lambda: port_open(ports["pg"]) and _http_ready(ports["http"]), START_DEADLINE_S,
                   f"QuestDB {VERSION}", [proc], log)
    except BaseException:
        from workloads.local_engines.base import stop_pids
        stop_pids([proc.pid])
        raise
    config = {"host": LOOPBACK, "port": ports["pg"], "http_port": ports["http"], "user": USER,
              "password": PASSWORD, "database": "qdb", "local_engine": True}
    return LocalEngine(kind=KIND, pids=[proc.pid], config=config, folder=str(folder), ports=ports)
