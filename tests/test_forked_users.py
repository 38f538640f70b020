"""Users forked from a preloaded forkserver (``workloads.run.processes``): what a fork may not share
is kept out of the server, each user states how it was started and run, and a fork refused by the
kernel, or the server dying, ends as the run says rather than in a hang or a process left behind.

The fork refusals are the kernel's own: the forkserver is put in a pids cgroup whose limit it
reaches. Timings are not asserted here (``benchmarks/bench_users.py`` measures them)."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

from workloads.datasets.schema import Scale
from workloads.results.store import ResultsStore
from workloads.run import processes
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.targets.engines import ENGINES, default_config

pytestmark = pytest.mark.timeout(300)
ROOT = Path(__file__).resolve().parent.parent
PIDS_CGROUP = Path("/sys/fs/cgroup/pids")


def _noop(tmp_path: Path, **changes) -> Scenario:
    values = dict(dataset="taq", scale=Scale(days=1, rows_per_day=2_000, symbols=4), target="duckdb",
                  target_config=default_config("duckdb", tmp_path / "data"), workload="noop", users=(3,),
                  operations=5, probe_ops=0)
    return Scenario(**{**values, **changes})


def _run(tmp_path: Path, **changes):
    store = ResultsStore(tmp_path / "results")
    result = Runner(_noop(tmp_path, **changes), store).run()
    return store, result


@pytest.fixture(autouse=True)
def _own_forkserver():
    """Each test starts from no forkserver and leaves none (another test's may have been killed)."""
    processes.stop_forkserver()
    yield
    processes.stop_forkserver()


def _threads(pid: int) -> list[str]:
    task = Path(f"/proc/{pid}/task")
    return [(task / t / "comm").read_text().strip() for t in os.listdir(task)]


def test_users_are_forked_from_a_server_that_preloaded_the_targets_client_and_say_so(tmp_path):
    store, result = _run(tmp_path)
    assert result.status == "completed", result.message
    conditions = store.run(result.run_id)["environment"]["process"]
    assert conditions["start"] == "forkserver" and conditions["process"] == "settled"
    # what the users found imported when they began: the engine's client among them
    assert {"duckdb", "pandas", "pyarrow", "workloads.run.worker"} <= set(conditions["preloaded"])
    assert conditions["allocator"].startswith("glibc, settled")
    facts = store.step_facts(result.run_id)[0]
    assert facts["users_ready_s"] > 0
    server = processes.forkserver_pid()
    assert server is not None and psutil.Process(server).ppid() == os.getpid()
    assert processes.describe_conditions(conditions).startswith("forked from a preloaded server (duckdb, numpy")


def test_start_spawn_gives_each_user_a_fresh_interpreter_with_nothing_preloaded(tmp_path):
    store, result = _run(tmp_path, start="spawn", users=(2,))
    assert result.status == "completed", result.message
    conditions = store.run(result.run_id)["environment"]["process"]
    assert conditions["start"] == "spawn" and conditions["preloaded"] == [] and conditions["preload"] == []


def test_the_server_is_one_thread_after_importing_every_engines_preload():
    """A fork copies one thread: a lock another thread held stays held in the child for good."""
    wanted = tuple(dict.fromkeys(m for e in ENGINES for kind in (e.kind,) for m in processes.preload_for(kind)))
    context = processes.user_context("forkserver", wanted)
    try:
        first = context.Process(target=os.getpid)      # served only once the preload is imported
        first.start()
        first.join(120)
        server = processes.forkserver_pid()
        assert server is not None
        maps = Path(f"/proc/{server}/maps").read_text()
        assert "duckdb" in maps and "libarrow" in maps          # the clients are loaded there...
        assert _threads(server) == ["python"], _threads(server)   # ...and started no thread
    finally:
        processes.stop_forkserver()


def _draw(process: str, seed: list[int], out) -> None:
    processes.enter_user(process, seed, processes.preload_for("duckdb"))
    out.put((random.random(), float(np.random.random()), os.getpid()))


def test_forked_users_draw_their_own_random_numbers_not_their_servers():
    context = processes.user_context("forkserver", processes.preload_for("duckdb"))
    out = context.Queue()
    users = [context.Process(target=_draw, args=("settled", [7, 0, i], out)) for i in range(3)]
    for user in users:
        user.start()
    draws = [out.get(timeout=60) for _ in users]
    for user in users:
        user.join(30)
    assert len({d[2] for d in draws}) == 3
    assert len({d[0] for d in draws}) == 3 and len({d[1] for d in draws}) == 3, draws


def _conditions(process: str, out) -> None:
    import pandas as pd
    conditions = processes.enter_user(process, [1, 0, 0], processes.preload_for("duckdb"))
    out.put((conditions, pd.get_option("future.infer_string"), os.environ.get("NUMEXPR_NUM_THREADS"),
             _threads(os.getpid())))


def test_a_plain_process_keeps_pandas_and_glibcs_defaults_and_a_user_gets_its_threads_back():
    import pandas as pd
    context = processes.user_context("forkserver", processes.preload_for("duckdb"))
    out = context.Queue()
    for process in ("settled", "plain"):
        user = context.Process(target=_conditions, args=(process, out))
        user.start()
        conditions, infer, numexpr_threads, _ = out.get(timeout=60)
        user.join(30)
        assert numexpr_threads is None                 # the server's one-thread setting is not the user's
        if process == "settled":
            assert infer is True and conditions["allocator"].startswith("glibc, settled")
        else:
            pandas2 = int(pd.__version__.split(".")[0]) < 3
            assert infer is (not pandas2) and conditions["allocator"].startswith("glibc defaults")
            assert conditions["strings"].startswith("pandas 2's" if pandas2 else "pandas 3's")


def _pids_cgroup(name: str, limit: int) -> Path:
    group = PIDS_CGROUP / name
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(limit))
    except OSError as exc:
        pytest.skip(f"no writable pids cgroup here to make the kernel refuse a fork ({exc})")
    return group


def _release_cgroup(group: Path) -> None:
    for _ in range(50):
        for pid in (group / "cgroup.procs").read_text().split():
            try:
                (PIDS_CGROUP / "cgroup.procs").write_text(pid)
            except OSError:             # it ended meanwhile: nothing to move
                pass
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.1)


def test_a_fork_the_kernel_refuses_fails_that_step_with_the_reason_and_keeps_the_steps_before(tmp_path, monkeypatch):
    # a pids cgroup counts threads too: users held at one thread each, so the third fork is the one refused
    # (numexpr ends a process whose pool it cannot start)
    monkeypatch.setenv("NUMEXPR_NUM_THREADS", "1")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    processes.stop_forkserver()
    processes.user_context("forkserver", processes.preload_for("duckdb"))
    server = processes.forkserver_pid()
    group = _pids_cgroup(f"tickbench-test-{os.getpid()}", 3)       # the server and two users
    try:
        (group / "cgroup.procs").write_text(str(server))
        store, result = _run(tmp_path, users=(2, 5, 2))
    finally:
        _release_cgroup(group)
    steps = dict(store.query("SELECT step, status FROM steps WHERE run_id = ?", [result.run_id]))
    assert steps == {0: "completed", 1: "failed", 2: "completed"}   # a new server for the step after
    assert result.status == "completed"
    assert "step 2 (5 users): 2 of 5 users started, then: a fork failed: [Errno 11]" in result.message
    figures = result.figures.set_index("step")
    assert figures.loc[0, "ops"] == 10 and figures.loc[1, "ops"] == 0 and figures.loc[2, "ops"] == 10


def test_the_forkserver_dying_mid_run_fails_the_run_with_the_cause_and_leaves_no_user(tmp_path):
    store = ResultsStore(tmp_path / "results")
    runner = Runner(_noop(tmp_path, users=(3,), operations=0, duration_s=60.0, params={"hold_s": 0.01}), store)
    done: list = []
    thread = threading.Thread(target=lambda: done.append(runner.run()))
    thread.start()
    deadline = time.monotonic() + 120
    while list(runner.snapshot().workers.values()).count("running") < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    server = processes.forkserver_pid()
    users = psutil.Process(server).children()
    assert len(users) == 3
    os.kill(server, signal.SIGKILL)
    thread.join(60)
    assert not thread.is_alive(), "the run hung after its forkserver died"
    result = done[0]
    assert result.status == "failed"
    assert result.message.startswith(f"step 1 (3 users): the forkserver that starts the users (pid {server}) "
                                     "was killed by SIGKILL; the run stopped")
    gone, alive = psutil.wait_procs(users, timeout=10)
    assert not alive, alive


def test_a_run_killed_outright_takes_its_forkserver_and_users_with_it(tmp_path):
    run = subprocess.Popen([sys.executable, "-m", "app", "--results", str(tmp_path / "r.duckdb"), "run", "--target",
                            "duckdb", "--data-dir", str(tmp_path / "data"), "--workload", "noop", "--users", "3",
                            "--duration", "120", "--param", "hold_s=0.01", "--probes", "0"],
                           cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        family: list[psutil.Process] = []
        while len(family) < 4 and time.monotonic() < deadline:       # the server and its 3 users
            family = [p for p in psutil.Process(run.pid).children(recursive=True)
                      if "resource_tracker" not in " ".join(p.cmdline())]
            time.sleep(0.2)
        assert len(family) == 4, family
        run.kill()
        run.wait(10)
        gone, alive = psutil.wait_procs(family, timeout=15)
        assert not alive, [" ".join(p.cmdline())[:80] for p in alive]
    finally:
        if run.poll() is None:
            run.kill()


HOLDER = '''
import sys
from workloads.operations.base import StepPlan
from workloads.run.launch import LocalLauncher
from workloads.run.messages import Ready
from workloads.run.processes import preload_for
from workloads.run.worker import WorkerSpec
from workloads.scenario import Scenario

if __name__ == "__main__":
    step = LocalLauncher("forkserver", preload_for("duckdb")).begin_step("held")
    spec = Scenario(workload="noop", operations=1).to_dict()
    users = step.start([WorkerSpec(spec, StepPlan(0, 2, "2 users").__dict__, i, None, "duckdb", {}) for i in (0, 1)])
    pids = [u.conn.recv().pid for u in users if u.conn.poll(120)]
    print(" ".join(map(str, pids)), flush=True)
    sys.stdin.read()                 # never releases them: the users wait at the barrier
'''


def test_a_run_killed_while_its_users_wait_for_the_release_leaves_none_of_them(tmp_path):
    """Users at the barrier write nothing a dead run could refuse: they go because their server does."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in holder.stdout.readline().split()]
        assert len(pids) == 2, pids
        users = [psutil.Process(p) for p in pids]
        server = users[0].parent()
        assert server is not None and server.ppid() == holder.pid
        holder.kill()
        holder.wait(10)
        gone, alive = psutil.wait_procs([*users, server], timeout=15)
        assert not alive, [" ".join(p.cmdline())[:80] for p in alive]
    finally:
        if holder.poll() is None:
            holder.kill()


@pytest.mark.parametrize("start", ["forkserver", "spawn"])
def test_the_size_checks_memory_per_user_is_what_a_user_holds_with_a_margin(tmp_path, start):
    """``workloads.run.limits`` refuses users past free memory by its estimate per user: never below
    what a user holds of its own (USS) while it runs, nor so far above it that users that fit are refused."""
    from workloads.run.limits import WORKER_BYTES
    store = ResultsStore(tmp_path / "results")
    runner = Runner(_noop(tmp_path, users=(4,), operations=0, duration_s=4.0, params={"hold_s": 0.01}, start=start),
                    store)
    thread = threading.Thread(target=runner.run)
    thread.start()
    try:
        deadline = time.monotonic() + 120
        while list(runner.snapshot().workers.values()).count("running") < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        pids = store.workers(runner.run_id)["pid"].dropna().astype(int)
        held = [psutil.Process(pid).memory_full_info().uss for pid in pids]
    finally:
        thread.join(60)
    assert len(held) == 4, held
    assert max(held) <= WORKER_BYTES[start] <= 2.5 * max(held), (start, [h / 2**20 for h in held])


def test_a_forked_user_runs_in_the_runs_environment_as_it_is_not_as_its_server_found_it(tmp_path, monkeypatch):
    """A user suite in this run's home (TICKBENCH_HOME, set after the server started) is found."""
    from workloads.queries.suites import user_suites_dir
    processes.user_context("forkserver", processes.preload_for("duckdb"))       # started with the old home
    monkeypatch.setenv("TICKBENCH_HOME", str(tmp_path / "home"))
    suites = user_suites_dir()
    suites.mkdir(parents=True, exist_ok=True)
    (suites / "mine.toml").write_text(
        'dataset = "taq"\n[[query]]\nid = "spread"\ncategory = "group by symbol"\ndescription = "spread sums"\n'
        'params = { day = "day:-1" }\ncolumns = ["symbol", "spread"]\ndays = "day"\n'
        'duckdb = "SELECT symbol, sum(ofr - bid) AS spread FROM {quotes} WHERE date = $day GROUP BY symbol"\n'
        'pandas = "taq_spread_sum"\n')
    store, result = _run(tmp_path, workload="query-suite", params={"suite": "mine", "repetitions": 2}, users=(1,),
                         operations=0)
    assert result.status == "completed", result.message
    assert store.run(result.run_id)["environment"]["process"]["start"] == "forkserver"
