"""A pytest run killed mid-way leaves no process behind: servers start in sessions of their own, so
only the run's watchdog (``tests/reaper.py``) can stop them. Each test runs an inner pytest that
starts servers and holds them, kills it, and lists what is left."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from tests.reaper import TOKEN_VARIABLE, carriers

ROOT = Path(__file__).resolve().parent.parent

INNER = textwrap.dedent('''
    import json, os, sys, time
    from pathlib import Path

    from workloads.local_engines.base import spawn

    # a server in a session of its own that starts a child in another session (as a JVM launcher does)
    SERVER = """
    import subprocess, sys, time
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
    time.sleep(300)
    """

    def test_holds_servers(tmp_path):
        pids = [spawn([sys.executable, "-c", SERVER], tmp_path / "server.log").pid]
        if os.environ.get("WITH_DASK"):
            from workloads.distributed.local_cluster import start
            pids += start(tmp_path / "dask", workers=1).pids
        Path(os.environ["PIDS_FILE"]).write_text(json.dumps({"pids": pids, "token": os.environ["%s"]}))
        time.sleep(300)
''' % TOKEN_VARIABLE)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _describe(pids: list[int]) -> str:
    lines = []
    for pid in pids:
        try:
            lines.append(f"{pid}: {' '.join(psutil.Process(pid).cmdline())[:120]}")
        except psutil.Error:             # ended since it was listed: nothing left to name
            pass
    return "\n".join(lines)


@pytest.mark.parametrize("sig, with_dask", [(signal.SIGTERM, False), (signal.SIGKILL, False), (signal.SIGTERM, True)],
                         ids=["SIGTERM", "SIGKILL", "SIGTERM-dask"])
def test_a_killed_pytest_run_leaves_no_process_behind(tmp_path, sig, with_dask):
    (tmp_path / "test_inner.py").write_text(INNER)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    pids_file = tmp_path / "pids.json"
    env = {**os.environ, "PIDS_FILE": str(pids_file), "WITH_DASK": "1" if with_dask else "",
           "PYTHONPATH": str(ROOT)}
    inner = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "tests.reaper", "-p", "no:cacheprovider",
                              "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path),
                              str(tmp_path / "test_inner.py")], cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    held: dict = {}
    try:
        deadline = time.monotonic() + 120
        while not pids_file.exists() and inner.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pids_file.exists(), f"the inner run never started its servers (exit {inner.poll()})"
        time.sleep(0.2)                                     # the file is whole once the size settles
        held = json.loads(pids_file.read_text())
        started = carriers(held["token"])
        # the servers and the child the first started in a session of its own (pytest's own
        # environment in /proc is the one it started with: it carries no token)
        assert set(held["pids"]) <= set(started) and len(started) > len(held["pids"])
        assert all(_alive(pid) for pid in started)

        inner.send_signal(sig)
        inner.wait(30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(pid) for pid in started):
            time.sleep(0.2)
        left = [pid for pid in started if _alive(pid)]
        assert not left, f"left behind after {sig.name}:\n{_describe(left)}"
    finally:
        if inner.poll() is None:
            inner.kill()
        if held:
            for pid in carriers(held["token"]):
                os.kill(pid, signal.SIGKILL)
