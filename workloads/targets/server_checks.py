"""A verdict on a server profile within seconds: log in and ask the server its version, with the
kind's own client (``check_server(kind, config)`` -> ``workloads.targets.dolphindb.cluster.Verdict``: ok, refused,
timed out, wrong password or error, with the server's words). Used by the targets panel's Test.
DolphinDB clusters have their own checks (``workloads.targets.dolphindb.cluster``)."""
from __future__ import annotations

import base64
import json
import re
import socket
import urllib.error
import urllib.request
from typing import Any

from workloads.targets.dolphindb.cluster import Verdict


def check_server(kind: str, config: dict[str, Any], timeout: float = 2.0) -> Verdict:
    address = f"{config['host']}:{config['port']}"
    check = _CHECKS.get(kind)
    if check is None:
        return Verdict(False, "error", f"no check for {kind} servers")
    try:
        version = check(config, timeout)
    except ImportError as exc:
        return Verdict(False, "error", f"{exc.name or exc} is not installed: install tickbench[{kind}]")
    except Exception as exc:  # the clients' errors name the cause: refused, timed out, authentication
        text = " ".join(str(exc).split()) or type(exc).__name__
        return Verdict(False, _verdict_kind(text), f"{address}: {text[:300]}")
    return Verdict(True, "ok", f"{address} answered: {version}.", server_version=version)


def _verdict_kind(text: str) -> str:
    lower = text.lower()
    # words, never bare numbers: a port such as 55163 holds "516"
    if re.search(r"authentication|password|auth failed|unauthorized|http 401|code: 516\b", lower):
        return "wrong_password"
    if "refused" in lower:
        return "refused"
    if "timed out" in lower or "timeout" in lower:
        return "timed_out"
    return "error"


def _clickhouse(config: dict[str, Any], timeout: float) -> str:
    import clickhouse_connect
    client = clickhouse_connect.get_client(
        host=config["host"], port=int(config["port"]), username=config.get("user") or "default",
        password=config.get("password", ""), secure=bool(config.get("secure")),
        connect_timeout=timeout, send_receive_timeout=timeout)
    try:
        return f"ClickHouse {client.server_version}"
    finally:
        client.close()


def _pg_connect(config: dict[str, Any], timeout: float):
    import psycopg
    return psycopg.connect(host=config["host"], port=int(config["port"]), user=config.get("user") or None,
                           password=config.get("password") or None, dbname=config.get("database") or None,
                           connect_timeout=max(1, round(timeout)))


def _postgres(config: dict[str, Any], timeout: float) -> str:
    with _pg_connect(config, timeout) as con:
        return con.execute("SELECT version()").fetchall()[0][0]       # "PostgreSQL 18.0 on ..."


def _questdb(config: dict[str, Any], timeout: float) -> str:
    """QuestDB's ``version()`` answers "PostgreSQL 12.3, ..." for its wire protocol's sake; its
    ``build()`` names QuestDB and its version."""
    with _pg_connect(config, timeout) as con:
        build = con.execute("SELECT build()").fetchall()[0][0]
    found = re.search(r"QuestDB [\w.\-]+", build)
    return found.group(0) if found else f"QuestDB ({build})"


def _druid(config: dict[str, Any], timeout: float) -> str:
    scheme = "https" if config.get("secure") else "http"
    request = urllib.request.Request(f"{scheme}://{config['host']}:{config['port']}/status")
    if config.get("user"):
        token = base64.b64encode(f"{config['user']}:{config.get('password', '')}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            status = json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f"HTTP {exc.code} {'unauthorized' if exc.code == 401 else exc.reason}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        raise RuntimeError(str(reason) if not isinstance(reason, socket.timeout) else "timed out") from None
    return f"Apache Druid {status.get('version', '?')}"


def _mongodb(config: dict[str, Any], timeout: float) -> str:
    import pymongo
    client = pymongo.MongoClient(host=config["host"], port=int(config["port"]),
                                 username=config.get("user") or None, password=config.get("password") or None,
                                 authSource=config.get("auth_source") or "admin",
                                 serverSelectionTimeoutMS=int(timeout * 1000), connectTimeoutMS=int(timeout * 1000))
    try:
        info = client.admin.command("buildInfo")
    finally:
        client.close()
    return f"MongoDB wire protocol, version {info.get('version', '?')}"


_CHECKS = {"clickhouse": _clickhouse, "questdb": _questdb, "postgres": _postgres,
           "druid": _druid, "mongodb": _mongodb}
