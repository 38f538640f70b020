"""`tickbench agent`: a real agent process on 127.0.0.1 drops the page cache of the files under its
folder for a signed request, and for nothing else; floods, replays and slow clients do not move it."""
from __future__ import annotations

import http.client
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from workloads.agent.client import AgentError, AgentReply, drop_host_cache, host_facts, new_token
from workloads.agent.protocol import WINDOW_S, Verifier, signed_headers
from workloads.agent.server import CONNECTION_DEADLINE_S, SOCKET_TIMEOUT_S, THREADS
from workloads.targets.common.cache import DROP_CACHES, resident_bytes

ROOT = Path(__file__).resolve().parent.parent
TOKEN = new_token()


@dataclass
class RunningAgent:
    proc: subprocess.Popen
    port: int
    log: Path
    banner: str

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def lines(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def stop(self, sig=signal.SIGTERM) -> str:
        self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=20)
        assert self.proc.returncode == 0, err
        return out


def agent_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "app", "agent", *args]


def start_agent(tmp_path: Path, *args: str, token: str = TOKEN) -> RunningAgent:
    log = tmp_path / "agent.log"
    proc = subprocess.Popen(agent_command("--listen", "127.0.0.1:0", "--log", str(log), *args), cwd=ROOT,
                            env={**os.environ, "TICKBENCH_AGENT_TOKEN": token},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    banner = proc.stdout.readline() if ready else ""
    if "listening on 127.0.0.1:" not in banner:
        proc.kill()
        pytest.fail(f"the agent did not start: {banner!r} {proc.stderr.read()!r}")
    port = int(banner.split("listening on 127.0.0.1:")[1].split(";")[0])
    return RunningAgent(proc, port, log, banner)


@pytest.fixture
def cached_file(tmp_path):
    """A 4 MB file under its own folder, read so that it is in the page cache."""
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / "day.bin"
    path.write_bytes(os.urandom(4 << 20))
    warm(path)
    return path


def warm(path: Path) -> None:
    path.read_bytes()
    assert resident_bytes(path) == path.stat().st_size, "the test file did not enter the page cache"


@pytest.fixture
def agent(tmp_path, cached_file):
    running = start_agent(tmp_path, "--files", str(cached_file.parent))
    yield running
    if running.proc.poll() is None:
        running.proc.kill()
        running.proc.communicate()


def send(port: int, method: str = "POST", path: str = "/drop", headers: dict | None = None,
         body: bytes | None = None) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else {}
    finally:
        connection.close()


def test_a_signed_request_drops_the_files_under_its_folder_and_is_logged(agent, cached_file):
    assert "posix_fadvise(DONTNEED) on the files under" in agent.banner
    reply = drop_host_cache(agent.address, token=TOKEN, timeout_s=30)

    assert resident_bytes(cached_file) == 0
    assert isinstance(reply, AgentReply) and reply.agent == agent.address
    assert reply.method == f"fsync + posix_fadvise(DONTNEED) on 1 files under {cached_file.parent.resolve()}"
    assert reply.host == socket.gethostname() and 0 <= reply.seconds < 30
    [line] = agent.lines()
    assert line["outcome"] == "dropped" and line["request_id"] == reply.request_id
    assert line["method"] == reply.method and line["seconds"] == reply.seconds
    assert line["peer"].startswith("127.0.0.1:") and line["started"] <= line["ended"]
    assert "stopped" in agent.stop(signal.SIGINT)


def test_requests_without_a_good_signature_or_to_anything_else_drop_nothing(agent, cached_file):
    other_token = new_token()
    no_headers = {}
    cases = [
        ("wrong token", "POST", "/drop", signed_headers(other_token), 401, "wrong signature"),
        ("no headers", "POST", "/drop", no_headers, 401, "malformed or missing headers"),
        ("a signature cut short", "POST", "/drop", {**signed_headers(TOKEN), "X-Tickbench-Signature": "ab"},
         401, "malformed or missing headers"),
        ("stale", "POST", "/drop", signed_headers(TOKEN, now=time.time() - WINDOW_S - 5), 401,
         "timestamp outside the window"),
        ("from the future", "POST", "/drop", signed_headers(TOKEN, now=time.time() + WINDOW_S + 5), 401,
         "timestamp outside the window"),
        ("a GET", "GET", "/drop", signed_headers(TOKEN), 405, "method GET"),
        ("another path", "POST", "/drop/../etc", signed_headers(TOKEN), 404, "path '/drop/../etc'"),
        ("the root", "GET", "/", signed_headers(TOKEN), 404, "path '/'"),
    ]
    for name, method, path, headers, status, reason in cases:
        got, body = send(agent.port, method, path, headers)
        assert got == status, name
        assert resident_bytes(cached_file) == cached_file.stat().st_size, f"{name}: dropped"
        line = agent.lines()[-1]
        assert (line["outcome"], line["reason"], line["status"]) == ("refused", reason, status), name
        if status == 401:               # which part failed is in the log, never in the reply
            assert body == {"error": "unauthorized"}, name
    assert len(agent.lines()) == len(cases)
    assert all(line["outcome"] == "refused" for line in agent.lines())


def test_a_signed_info_request_tells_the_hosts_threads_and_drops_nothing(agent, cached_file):
    facts = host_facts(agent.address, token=TOKEN)
    assert (facts.host, facts.threads) == (socket.gethostname(), os.cpu_count())
    assert resident_bytes(cached_file) == cached_file.stat().st_size          # asked, not dropped
    # each request's signature is bound to its path: an info request's headers never drop, nor the
    # reverse, and a wrong token learns nothing
    assert send(agent.port, path="/drop", headers=signed_headers(TOKEN, verb="info"))[0] == 401
    assert resident_bytes(cached_file) == cached_file.stat().st_size
    assert send(agent.port, path="/info", headers=signed_headers(TOKEN))[0] == 401
    assert send(agent.port, path="/info", headers=signed_headers(new_token(), verb="info")) == \
        (401, {"error": "unauthorized"})
    assert [line["outcome"] for line in agent.lines()] == ["informed", "refused", "refused", "refused"]
    with pytest.raises(AgentError, match="wrong token"):
        host_facts(agent.address, token=new_token())


def test_a_runs_environment_records_the_servers_threads_from_its_agents(agent, monkeypatch):
    """The runner's description of a server target names its agents' hosts' threads (each host
    once); without a token, or with an agent gone, it says why they are not recorded."""
    from types import SimpleNamespace

    from workloads.run.runner import _safe_describe

    monkeypatch.delenv("TICKBENCH_AGENT_TOKEN", raising=False)

    def target(config):
        return SimpleNamespace(kind="dolphindb", config=config, describe=lambda: {"kind": "dolphindb"})

    described = _safe_describe(target({"agents": [agent.address, agent.address], "agent_token": TOKEN}))
    assert described["server_threads"] == os.cpu_count()                     # one host, named twice
    assert described["server_threads_from"] == f"tickbench agent ({socket.gethostname()} {os.cpu_count()})"
    gone = _safe_describe(target({"agents": [f"127.0.0.1:{free_port_refused()}"], "agent_token": TOKEN}))
    assert "server_threads" not in gone and gone["server_threads_note"].startswith("not recorded: agent 127.0.0.1:")
    without = _safe_describe(target({"agents": [agent.address]}))
    assert "server_threads" not in without and "no agent token" in without["server_threads_note"]


def free_port_refused() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_replayed_request_is_refused_and_drops_nothing(agent, cached_file):
    headers = signed_headers(TOKEN)
    assert send(agent.port, headers=headers)[0] == 200
    assert resident_bytes(cached_file) == 0
    warm(cached_file)

    status, body = send(agent.port, headers=headers)

    assert (status, body) == (401, {"error": "unauthorized"})
    assert resident_bytes(cached_file) == cached_file.stat().st_size
    first, second = agent.lines()
    assert first["outcome"] == "dropped"
    assert (second["outcome"], second["reason"]) == ("refused", "nonce already used (replay)")
    assert first["request_id"] == second["request_id"] == headers["X-Tickbench-Nonce"]


def test_a_body_is_capped_and_never_used(agent, cached_file):
    status, _ = send(agent.port, headers=signed_headers(TOKEN), body=b"x" * 100_000)
    assert status == 413 and resident_bytes(cached_file) == cached_file.stat().st_size
    status, _ = send(agent.port, headers=signed_headers(TOKEN), body=b'{"path": "/", "command": "rm"}')
    assert status == 200 and agent.lines()[-1]["outcome"] == "dropped"


def test_a_flood_of_good_and_bad_requests_runs_one_drop_at_a_time_and_answers_each(tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(1000):          # a drop of ~0.1 s: long enough for requests to meet one running
        (folder / f"part{i}").write_bytes(b"t" * 8192)
    running = start_agent(tmp_path, "--files", str(folder))
    try:
        statuses: list[int | str] = []
        lock = threading.Lock()
        gate = threading.Barrier(200)

        def good():
            gate.wait()
            try:
                drop_host_cache(running.address, token=TOKEN, timeout_s=60)
                outcome = 200
            except AgentError as exc:
                outcome = 429 if str(exc).endswith("busy (another drop is running there)") else str(exc)
            with lock:
                statuses.append(outcome)

        def bad():
            gate.wait()
            try:
                outcome = send(running.port, headers=signed_headers("not-the-token-" * 3))[0]
            except OSError as exc:
                outcome = repr(exc)
            with lock:
                statuses.append(outcome)

        threads = [threading.Thread(target=good if i % 2 else bad) for i in range(200)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)

        assert running.proc.poll() is None, "the agent died in the flood"
        assert set(statuses) == {200, 401, 429}, statuses
        assert statuses.count(401) == 100 and len(statuses) == 200
        lines = running.lines()
        assert len(lines) == 200
        drops = sorted((line["started"], line["ended"]) for line in lines if line["outcome"] == "dropped")
        assert len(drops) == statuses.count(200)
        assert all(later[0] >= earlier[1] for earlier, later in zip(drops, drops[1:])), "two drops overlapped"
        assert sum(line["outcome"] == "busy" for line in lines) == statuses.count(429)

        after = drop_host_cache(running.address, token=TOKEN, timeout_s=30)
        assert after.method.endswith(f"on 1000 files under {folder.resolve()}")
        running.stop()
    finally:
        if running.proc.poll() is None:
            running.proc.kill()


def test_users_clears_that_meet_at_a_busy_agent_each_get_a_drop_of_their_own(tmp_path):
    """Each worker's warm-up clears at once: the agent runs one drop at a time and answers the
    others busy; a worker asks again until it has a drop that began after it asked."""
    from workloads.targets.common.host_agents import drop_host_caches
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(1000):          # a drop of ~0.1 s, so the users' clears meet one running
        (folder / f"part{i}").write_bytes(b"t" * 8192)
    running = start_agent(tmp_path, "--files", str(folder))
    try:
        gate = threading.Barrier(4)
        methods: list[list[str]] = []

        def clear():
            gate.wait()
            asked = time.time()
            methods.append([*drop_host_caches([running.address], TOKEN), asked])

        threads = [threading.Thread(target=clear) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        lines = running.lines()
        running.stop()
    finally:
        if running.proc.poll() is None:
            running.proc.kill()
    assert any(line["outcome"] == "busy" for line in lines), "the clears never met: the test proves nothing"
    drops = {line["request_id"]: line for line in lines if line["outcome"] == "dropped"}
    assert len(methods) == 4 and len(drops) == 4
    for method, asked in methods:
        named = method.split("[")[-1].rstrip("]")
        assert "dropped by its agent" in method and named in drops, method
        assert drops[named]["started"] >= asked - 0.5       # its own drop, not one under way before


def test_clients_that_drip_bytes_or_stay_silent_cannot_hold_the_agent(agent, cached_file):
    stop = threading.Event()
    cut_off: list[float] = []

    def drip():                        # a request line one byte a second, for far longer than allowed
        with socket.create_connection(("127.0.0.1", agent.port)) as sock:
            opened = time.monotonic()
            for byte in b"POST /drop HTTP/1.1\r\nX-Tickbench-Nonce: " + b"a" * 60:
                closed = select.select([sock], [], [], 1.0)[0]    # readable: the agent ended it
                if stop.is_set():
                    return
                try:
                    if not closed:
                        sock.sendall(bytes([byte]))
                        continue
                except OSError:
                    pass
                cut_off.append(time.monotonic() - opened)
                return

    drippers = [threading.Thread(target=drip) for _ in range(THREADS + 1)]   # every agent thread and one more
    for thread in drippers:
        thread.start()
    try:
        time.sleep(1.0)
        began = time.monotonic()
        drop_host_cache(agent.address, token=TOKEN, timeout_s=40)
        assert time.monotonic() - began < CONNECTION_DEADLINE_S + 5
        time.sleep(2.0)                # for the drippers to see they were cut off
    finally:
        stop.set()
        for thread in drippers:
            thread.join(30)
    assert len(cut_off) >= THREADS and max(cut_off) < CONNECTION_DEADLINE_S + 5, cut_off

    warm(cached_file)
    silent = [socket.create_connection(("127.0.0.1", agent.port)) for _ in range(THREADS)]   # every agent thread
    try:
        began = time.monotonic()
        drop_host_cache(agent.address, token=TOKEN, timeout_s=40)
        assert time.monotonic() - began < SOCKET_TIMEOUT_S + 3
        assert resident_bytes(cached_file) == 0
    finally:
        for sock in silent:
            sock.close()
    assert agent.proc.poll() is None


def test_an_agent_that_is_not_there_is_named_in_one_line():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]          # closed again: nothing listens there
    with pytest.raises(AgentError) as caught:
        drop_host_cache(f"127.0.0.1:{port}", token=TOKEN, timeout_s=10)
    assert str(caught.value) == \
        f"agent 127.0.0.1:{port} refused the connection (is `tickbench agent` running there?)"


def refused_start(*args: str, token: str = TOKEN, user: list[str] | None = None) -> str:
    done = subprocess.run([*(user or []), *agent_command("--listen", "127.0.0.1:0", *args)], cwd=ROOT,
                          env={**os.environ, "TICKBENCH_AGENT_TOKEN": token}, capture_output=True, text=True,
                          timeout=30)
    assert done.returncode != 0 and "listening" not in done.stdout, done.stdout
    [line] = done.stderr.strip().splitlines()
    return line


def test_it_refuses_to_start_with_a_short_token_or_a_missing_folder(tmp_path):
    assert "at least 16" in refused_start("--files", str(tmp_path), token="short-token")
    assert "needs a token" in refused_start("--files", str(tmp_path), token="")
    assert "not a folder" in refused_start("--files", str(tmp_path / "nowhere"))


def as_another_user() -> list[str]:
    """A prefix that runs the agent as a user who may not write drop_caches (skip where none can)."""
    if os.geteuid() != 0:
        if os.access(DROP_CACHES, os.W_OK):
            pytest.skip(f"{DROP_CACHES} is writable by this non-root user")
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot run the agent as another user")
    if any(folder.stat().st_mode & 0o005 != 0o005 for folder in (ROOT, *ROOT.parents)):
        pytest.skip(f"nobody cannot read {ROOT} (a private copy): the agent would run another tree's code")
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]


def in_a_read_only_proc_sys() -> list[str]:
    """A prefix that runs the agent where /proc/sys is read-only, as in a container: a mount
    namespace of its own, so the rest of the machine keeps its writable drop_caches."""
    prefix = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
              'mount -o bind,ro "$0" "$0" && exec "$@"', str(DROP_CACHES)]
    if shutil.which("unshare") is None or subprocess.run([*prefix, "true"], capture_output=True).returncode:
        pytest.skip("cannot make a mount namespace here (unshare, or root, missing)")
    return prefix


@pytest.mark.parametrize("where", [as_another_user, in_a_read_only_proc_sys], ids=["another user", "read-only"])
def test_without_files_it_refuses_to_start_where_drop_caches_is_not_writable(where):
    line = refused_start(user=where())
    assert f"{DROP_CACHES} is not writable here" in line and "--files DIR" in line


@pytest.mark.skipif(not os.access(DROP_CACHES, os.W_OK), reason=f"{DROP_CACHES} is not writable here")
def test_where_drop_caches_is_writable_it_starts_to_drop_the_whole_page_cache(tmp_path):
    running = start_agent(tmp_path)    # no drop is asked: it would empty every process's cache
    assert running.banner.strip().endswith("a drop is: sync + drop_caches (page cache)")
    assert "stopped" in running.stop()


def test_a_stop_sent_as_soon_as_the_banner_is_read_stops_the_agent_cleanly(tmp_path, cached_file):
    for attempt in range(5):          # the banner comes once SIGTERM is handled: never a kill by default
        folder = tmp_path / str(attempt)
        folder.mkdir()
        running = start_agent(folder, "--files", str(cached_file.parent))
        assert "stopped" in running.stop()


def test_the_verifier_forgets_nonces_once_their_timestamps_are_stale():
    verifier = Verifier(TOKEN)
    now = time.time()
    headers = signed_headers(TOKEN, now=now)
    assert verifier.check(headers, now=now).accepted
    assert verifier.check(headers, now=now + 1).reason == "nonce already used (replay)"
    assert verifier.check(signed_headers(TOKEN, now=now + 3 * WINDOW_S), now=now + 3 * WINDOW_S).accepted
    assert len(verifier._seen) == 1     # the first nonce is gone: memory is bounded by the window
    assert verifier.check(headers, now=now + 3 * WINDOW_S).reason == "timestamp outside the window"
