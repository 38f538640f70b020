"""Bad input and rude endings, as a user meets them (issue 23, the command line's half): each case
gets one clear line on standard error and an exit code other than 0, never a traceback, and loses
nothing that was measured. The real CLI in a subprocess wherever the behaviour is the CLI's."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _env(home: Path) -> dict[str, str]:
    return {"TICKBENCH_HOME": str(home), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen",
            "COLUMNS": "200", "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


def tickbench(*args: str, home: Path, timeout: float = 240, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, input=stdin,
                          timeout=timeout, env=_env(home), cwd=ROOT)


def one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> str:
    """The one line a refused command prints; it must name every fragment."""
    assert result.returncode not in (0, None), result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def _run_folders(home: Path) -> list[Path]:
    return sorted(p for p in home.glob("results*/runs/*") if p.is_dir())   # results/ (or the older results.duckdb/)


def _measured_on_disk(home: Path) -> bool:
    from workloads.results.run_files import RunFolder, read_ops_file
    for folder in _run_folders(home):
        for path in RunFolder(folder).ops_files():
            try:
                if "measured" in read_ops_file(path, ["kind"]).column("kind").to_pylist():
                    return True
            except Exception:       # a part or stream being written: read it again next time
                continue
    return False


def _alive(pid: int) -> bool:
    """``pid`` runs (a zombie, dead and not yet reaped by its parent, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# --- (6) Ctrl-C and SIGTERM on the plain `tickbench run` cancel as --live does -----------------

@pytest.mark.parametrize("sig, group, start", [(signal.SIGINT, True, "forkserver"), (signal.SIGTERM, False, "forkserver"),
                                               (signal.SIGTERM, True, "forkserver"), (signal.SIGTERM, True, "spawn"),
                                               (signal.SIGTERM, "users first", "spawn"),
                                               (signal.SIGTERM, "users first", "forkserver")],
                         ids=["ctrl-c-to-the-terminal-group", "sigterm-to-the-run", "sigterm-to-the-run-s-group",
                              "sigterm-to-the-group-of-spawned-users", "sigterm-reaching-spawned-users-first",
                              "sigterm-reaching-forked-users-first"])
def test_a_signal_cancels_the_plain_run_and_keeps_its_records(tmp_path, sig, group, start):
    proc = subprocess.Popen([sys.executable, "-m", "app", "run", "--workload", "noop", "--users", "2",
                             "--duration", "120", "--start", start], cwd=ROOT, env=_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    # the workers are measuring once a measured record reaches the run's folder (spawned users on a
    # loaded machine take many seconds to start: a fixed wait signalled them before they measured)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not _measured_on_disk(tmp_path):
        time.sleep(0.5)
    time.sleep(1.0)
    if group == "users first":
        # a group's signal reaches its processes in no set order: here the users get it a second
        # before the run does. A user that died of it ended the step before the run cancelled it
        # (the step read "completed" in a run "cancelled"); users leave the signal to their run
        folder, = _run_folders(tmp_path)
        users = [w["pid"] for w in json.loads((folder / "workers.json").read_text())]
        for pid in users:
            os.kill(pid, sig)
        time.sleep(1.0)
        assert proc.poll() is None and all(_alive(pid) for pid in users), "a user died of the run's signal"
    (os.killpg if group is True else os.kill)(proc.pid, sig)   # Ctrl-C reaches every process of the terminal's group
    out, err = proc.communicate(timeout=90)
    assert "Traceback" not in err and "IndexError" not in err, err
    assert proc.returncode == 1, err
    folder, = _run_folders(tmp_path)
    run = json.loads((folder / "run.json").read_text())
    assert run["status"] == "cancelled", run
    steps = json.loads((folder / "steps.json").read_text())
    assert [s["status"] for s in steps] == ["cancelled"]
    workers = json.loads((folder / "workers.json").read_text())
    assert [w["state"] for w in workers] == ["cancelled", "cancelled"], workers
    assert f"run {run['run_id']}: cancelled" in out
    shown = tickbench("show", run["run_id"], home=tmp_path)
    assert shown.returncode == 0 and "cancelled" in shown.stdout
    ops = tickbench("export", run["run_id"], "--format", "parquet", "--out", str(tmp_path / "x"), home=tmp_path)
    assert ops.returncode == 0, ops.stderr
    import pandas as pd
    assert (pd.read_parquet(tmp_path / "x" / f"{run['run_id']}_ops.parquet")["kind"] == "measured").sum() > 0
    leftovers = [p.name for p in folder.rglob("*") if p.name.startswith(".") or p.suffix in (".tmp", ".part")]
    assert not leftovers, leftovers


# --- (8) sizes validated before anything starts ------------------------------------------------

@pytest.mark.parametrize("args, fragments", [
    (["--duration", "nan"], ["--duration", "finite", "nan"]),
    (["--duration", "inf"], ["--duration", "finite", "inf"]),
    (["--duration", "-1"], ["--duration", "above 0"]),
    (["--duration", "0"], ["--duration", "above 0"]),
    (["--users", "100000"], ["users: 100,000", "of memory", "--force"]),
    (["--workload", "read-day", "--operations", "1", "--days", "100000", "--rows-per-day", "1000000000"],
     ["rows per day", "in memory", "of disk", "GB", "--force"]),
    (["--workload", "read-day", "--operations", "1", "--days", "3000", "--rows-per-day", "100000000"],
     ["days x rows per day: 3,000 x 100,000,000", "TB of disk", "--force"]),
    (["--operations", "-2"], ["must not be negative"]),
    (["--days", "0"], ["days must be at least 1"]),
    (["--nice", "-5"], ["--nice takes 0 to 19"]),
])
def test_sizes_beyond_meaning_or_the_machine_are_refused_before_anything_starts(tmp_path, args, fragments):
    result = tickbench("run", "--workload", "noop", *args, home=tmp_path, timeout=60)
    one_line_error(result, *fragments)
    assert not _run_folders(tmp_path)                   # nothing started, nothing stored


def test_the_engine_checks_sizes_for_the_window_too_and_force_goes_past_them():
    from workloads.datasets.schema import Scale
    from workloads.run.limits import TooBig, check_machine, machine_problems
    from workloads.operations.params import Param
    from workloads.scenario import Scenario

    for duration in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite"):
            Scenario(workload="noop", duration_s=duration)
    with pytest.raises(ValueError, match="finite"):
        Param("x", "Rows", "float", 1.0, minimum=0).coerce("nan")
    big = Scenario(users=(64,), scale=Scale(days=5, rows_per_day=20_000_000), target_config={"root": "/"},
                   start="spawn")
    problems = machine_problems(big, memory=2 * 2**30, disk=2**30)
    assert any("users: 64" in p and "spawned" in p and "enough for 32" in p for p in problems), problems
    # forked users hold their own pages only: 120 fit in 2 GiB beside their server, 200 do not
    assert not any("users" in p for p in machine_problems(big.with_changes(users=(120,), start="forkserver"),
                                                          memory=2 * 2**30, disk=2**30))
    forked = machine_problems(big.with_changes(users=(200,), start="forkserver"), memory=2 * 2**30, disk=2**30)
    assert any("users: 200" in p and "forked from a preloaded server" in p and "enough for 124" in p
               for p in forked), forked
    assert any("of disk" in p for p in problems) and any("in memory" in p for p in problems), problems
    assert machine_problems(Scenario(users=(2,), scale=Scale(days=1, rows_per_day=10_000)),
                            memory=2 * 2**30, disk=2**30) == []
    with pytest.raises(TooBig, match="--force"):
        check_machine(Scenario(users=(10**6,)))
    check_machine(Scenario(users=(10**6,)), force=True)
    # users spread over Dask hosts do not need this machine's memory
    assert machine_problems(Scenario(users=(400,), scheduler="tcp://127.0.0.1:1"), memory=2**30, disk=2**40) == []


# --- (9) one line instead of a traceback -------------------------------------------------------

@pytest.mark.parametrize("toml, fragments", [
    ('days = "x"\n', ["days", "unknown scenario key"]),
    ('[scale]\ndays = "x"\n', ["scale.days", "expected a whole number", "str"]),
    ('users = "lots"\n', ["users", "expected a list of whole numbers"]),
    ('users = [1, "x"]\n', ["users", "expected a list of whole numbers"]),
    ('operations = 2.5\n', ["operations", "expected a whole number", "float"]),
    ('duration_s = "10"\n', ["duration_s", "expected a number", "str"]),
    ('target = 3\n', ["target", "expected text", "int"]),
    ('params = 3\n', ["params", "expected a table"]),
    ('warmup = 1\n', ["unknown scenario key(s): warmup"]),
    ('duration_s = nan\n', ["duration", "finite"]),
    ('users = [\n', ["not a valid scenario file"]),
])
def test_a_scenario_file_of_wrong_types_is_one_line_naming_file_key_and_type(tmp_path, toml, fragments):
    path = tmp_path / "bad.toml"
    path.write_text('workload = "noop"\n' + toml)
    result = tickbench("run", "--scenario", str(path), home=tmp_path, timeout=60)
    one_line_error(result, "bad.toml", *fragments)


def test_one_number_of_users_in_a_scenario_file_is_one_step_of_that_many(tmp_path):
    from workloads.scenario import Scenario
    path = tmp_path / "one.toml"
    path.write_text('workload = "noop"\nusers = 4\n')
    assert Scenario.load_toml(path).users == (4,)
    path.write_text('workload = "noop"\nusers = "1,2"\n')
    assert Scenario.load_toml(path).users == (1, 2)


def test_a_missing_scenario_file_is_one_line(tmp_path):
    one_line_error(tickbench("run", "--scenario", str(tmp_path / "nope.toml"), home=tmp_path, timeout=60),
                   "nope.toml", "no such scenario file")


def _bad_suite(home: Path) -> None:
    (home / "queries").mkdir(parents=True, exist_ok=True)
    (home / "queries" / "mine.toml").write_text(
        'dataset = "devices"\n[[query]]\nid = "q1"\ncategory = "x"\ndescription = "d"\ncolumns = "n"\n'
        'duckdb = "select 1 as n"\n')


@pytest.mark.parametrize("text, fragments", [
    ('columns = "n"\nduckdb = "select 1"\n', ["mine.toml", "query 1", "columns", "expected a list"]),
    ('columns = ["n"]\nduckdb = 3\n', ["mine.toml", "query 1", "duckdb", "expected text", "int"]),
    ('columns = ["n"]\nparams = 3\nduckdb = "x"\n', ["mine.toml", "params", "expected a table"]),
    ('columns = ["n"]\ndays = 2\nduckdb = "x"\n', ["mine.toml", "days", "all"]),
])
def test_a_suite_file_of_wrong_types_is_one_suite_error_naming_file_query_and_key(isolated_home, text, fragments):
    from workloads.queries.suites import SuiteError, load_suite
    tmp_path = isolated_home
    (tmp_path / "queries").mkdir()
    (tmp_path / "queries" / "mine.toml").write_text(
        'dataset = "devices"\n[[query]]\nid = "q1"\ncategory = "x"\ndescription = "d"\n' + text)
    with pytest.raises(SuiteError) as caught:
        load_suite("mine")
    assert len(str(caught.value).splitlines()) == 1
    for fragment in fragments:
        assert fragment in str(caught.value)
    (tmp_path / "queries" / "mine.toml").write_text('dataset = "devices"\nquery = 3\n')
    with pytest.raises(SuiteError, match="query: expected a list"):
        load_suite("mine")


def test_one_bad_user_suite_is_skipped_by_verify_with_one_line_and_the_others_run(tmp_path):
    _bad_suite(tmp_path)
    result = tickbench("verify", "--dataset", "devices", "--targets", "duckdb", home=tmp_path, timeout=180)
    line = one_line_error(result, "skipped suite mine", "mine.toml", "columns")
    assert line.startswith("tickbench: ")
    assert "devices004" in result.stdout and "same" in result.stdout     # the built-in suite ran
    assert "skipped" in result.stdout and "mine" in result.stdout
    named = tickbench("verify", "--dataset", "devices", "--targets", "duckdb", "--suite", "mine", home=tmp_path)
    one_line_error(named, "mine.toml", "columns")


def test_a_results_file_that_is_not_a_catalog_is_one_line(tmp_path):
    import duckdb
    path = tmp_path / "other.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t (a INTEGER)")
    one_line_error(tickbench("--results", str(path), "runs", home=tmp_path, timeout=60),
                   "other.duckdb", "not a Tickbench results catalog")
    assert path.is_file()


def test_export_refuses_a_file_and_files_already_there_unless_force(tmp_path):
    # 200 operations: a second of the no-op is ~400,000, and writing their CSV took 4 s an export
    ran = tickbench("run", "--workload", "noop", "--operations", "200", home=tmp_path, timeout=120)
    assert ran.returncode == 0, ran.stderr
    run_id = _run_folders(tmp_path)[0].name
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    one_line_error(tickbench("export", run_id, "--out", str(a_file), home=tmp_path), "notes.txt", "a file is there")
    assert a_file.read_text() == "mine"
    out = tmp_path / "out"
    assert tickbench("export", run_id, "--out", str(out), home=tmp_path).returncode == 0
    (out / f"{run_id}_run.csv").write_text("edited")
    one_line_error(tickbench("export", run_id, "--out", str(out), home=tmp_path), "exist already", "--force")
    assert (out / f"{run_id}_run.csv").read_text() == "edited"
    forced = tickbench("export", run_id, "--out", str(out), "--force", home=tmp_path)
    assert forced.returncode == 0 and (out / f"{run_id}_run.csv").read_text() != "edited"


def test_a_csv_field_over_a_megabyte_imports_or_is_one_line(tmp_path):
    path = tmp_path / "big.csv"
    rows = ["symbol,date,time,bid,ofr,bidsiz,ofrsiz,mode,ex,mmid"] + \
        ["A,2024-01-02,09:30:00,1,2,1,1,12,N,x"] * 3 + ["B,2024-01-02,09:30:01,1,2,1,1,12,N," + "x" * 2_000_000]
    path.write_text("\n".join(rows) + "\n")
    result = tickbench("import", str(path), "--dataset", "taq", "--name", "big", home=tmp_path, timeout=120)
    assert "Traceback" not in result.stderr
    if result.returncode:
        one_line_error(result, "big.csv")


# --- (10) secrets and names --------------------------------------------------------------------

@pytest.mark.parametrize("name, fragment", [
    ("../../x", "a name, not a path"), ("a\nb", "no control characters"), ("x" * 300, "at most 64 characters"),
    ("ch:x", "a name, not a path"), (".hidden", "not '.' first"),
])
def test_profile_names_are_checked_like_every_other_name(tmp_path, name, fragment):
    result = tickbench("targets", "add-server", "clickhouse", name, "--host", "127.0.0.1", home=tmp_path, timeout=60)
    one_line_error(result, "profile name", fragment)
    assert not (tmp_path / "datasets" / "targets.json").exists() or name not in \
        (tmp_path / "datasets" / "targets.json").read_text()


@pytest.mark.parametrize("option", ["password=X", "db_password=X", "api_token=X"])
def test_a_password_given_as_an_option_is_refused_and_written_nowhere(tmp_path, option):
    result = tickbench("targets", "add-server", "clickhouse", "prod", "--host", "127.0.0.1", "--option", option,
                       home=tmp_path, timeout=60)
    one_line_error(result, "--option", "never saved", "keyring")
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert "=X" not in path.read_text(errors="replace") and '"X"' not in path.read_text(errors="replace")
    assert tickbench("targets", "add-server", "clickhouse", "prod", "--host", "127.0.0.1", "--option",
                     "http_port=8124", home=tmp_path, timeout=60).returncode == 0


def test_every_repr_of_a_scenario_and_a_worker_spec_hides_the_password():
    from dask._task_spec import Task

    from workloads.distributed.host_task import run_host
    from workloads.scenario import Scenario
    from workloads.run.worker import WorkerSpec

    secret = "S3cr3t-pw"
    scenario = Scenario(target="clickhouse", target_config={"host": "db", "password": secret, "user": "u"})
    spec = WorkerSpec(scenario=scenario.to_dict(), step={"index": 0}, worker=0, layout=None,
                      target_kind="clickhouse", target_config=dict(scenario.target_config), host="tcp://h:1")
    # what a Dask worker logs when a host's relay fails: repr(run_spec) of the task that carries the specs
    task = Task("tickbench-x-0-host-h", run_host, [spec], "tickbench-x-0", 0.0)
    for text in (repr(scenario), str(scenario), repr(spec), str(spec), repr([spec])):
        assert secret not in text and "***" in text, text
    assert secret not in repr(task) and secret not in repr(task.args) and "***" in repr(task.args)
    assert "'user': 'u'" in repr(spec)
    assert spec.target_config["password"] == secret and scenario.target_config["password"] == secret  # still usable


# --- (12) run states say failed / not supported when nothing was measured ------------------------

def _suite(home: Path, name: str, queries: str) -> None:
    (home / "queries").mkdir(parents=True, exist_ok=True)
    (home / "queries" / f"{name}.toml").write_text('dataset = "taq"\n' + queries)


SMALL = ("--target", "duckdb", "--days", "1", "--rows-per-day", "2000", "--symbols", "10", "--operations", "2")


def test_a_query_suite_run_whose_operations_all_fail_ends_failed(tmp_path):
    _suite(tmp_path, "fails", "".join(
        f'[[query]]\nid = "bad{i}"\ncategory = "x"\ndescription = "d"\ncolumns = ["n"]\n'
        f'duckdb = "select no_such_column_{i} from {{quotes}}"\n' for i in (1, 2)))
    result = tickbench("run", "--workload", "query-suite", "--param", "suite=fails", "--param", "repetitions=1",
                       *SMALL, home=tmp_path, timeout=180)
    assert result.returncode == 1, result.stdout + result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert ": failed — every operation failed" in last and "no_such_column" in last, last
    run = json.loads((_run_folders(tmp_path)[0] / "run.json").read_text())
    assert run["status"] == "failed"


def test_a_workload_the_target_cannot_run_ends_not_supported(tmp_path):
    _suite(tmp_path, "ddbonly", '[[query]]\nid = "q"\ncategory = "x"\ndescription = "d"\ncolumns = ["n"]\n'
                                'dolphindb = "select 1 as n"\n')
    result = tickbench("run", "--workload", "query-suite", "--param", "suite=ddbonly", *SMALL,
                       home=tmp_path, timeout=180)
    assert result.returncode == 1, result.stdout + result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert ": not supported — duckdb cannot run query-suite: query q has no DuckDB text" in last, last
    listing = tickbench("runs", home=tmp_path)
    assert "not supported" in listing.stdout


# --- (11) remote users stop within 2 s of losing their run ---------------------------------------

def _remote_users(cluster) -> set[int]:
    """The user processes the Dask workers started: spawned children of the worker processes, or
    forked from the forkserver a worker started (the users are its children)."""
    import psutil
    found = set()
    for pid in cluster.worker_pids.values():
        try:
            for child in psutil.Process(pid).children(recursive=True):
                line = " ".join(child.cmdline())
                parent = child.parent()
                forked = parent is not None and "forkserver import main" in " ".join(parent.cmdline())
                if ("spawn_main" in line or forked) and "resource_tracker" not in line:
                    found.add(child.pid)
        except psutil.Error:
            continue
    return found


def _running(pids: set[int]) -> list:
    """The processes of ``pids`` still running: one listed may have ended since (a short-lived child
    a worker started and that exited between the listing and this look)."""
    import psutil
    found = []
    for pid in pids:
        try:
            process = psutil.Process(pid)
        except psutil.NoSuchProcess:
            continue
        if process.is_running():
            found.append(process)
    return found


def test_remote_users_of_a_killed_run_process_stop_within_2_s(tmp_path, dask_cluster):
    import psutil
    before = _remote_users(dask_cluster)
    proc = subprocess.Popen([sys.executable, "-m", "app", "run", "--workload", "noop", "--users", "2",
                             "--duration", "120", "--scheduler", dask_cluster.scheduler], cwd=ROOT,
                            env=_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        users: list = []
        while time.monotonic() < deadline and len(users) != 2:
            time.sleep(0.25)
            users = _running(_remote_users(dask_cluster) - before)
        assert len(users) == 2, "the run's users did not start on the Dask hosts"
        time.sleep(3.0)                                  # warmed up and measuring
        # the users as they are now: a child the forkserver forked and that ended in the meantime
        # (seen in about 1 start in 5) is not one of the run's users
        users = _running(_remote_users(dask_cluster) - before)
        assert proc.poll() is None and len(users) == 2
        proc.kill()                                      # kill -9: nothing of the run says goodbye
        killed_at = time.monotonic()
        proc.wait(10)
        gone, alive = psutil.wait_procs(users, timeout=10)
        took = time.monotonic() - killed_at
        assert not alive, f"remote users outlived their run: {[p.pid for p in alive]}"
        assert took <= 2.5, f"remote users stopped {took:.1f} s after their run was killed"
    finally:
        if proc.poll() is None:
            proc.kill()


try:
    from keyring.backend import KeyringBackend
except ImportError:                     # pragma: no cover - keyring is a dependency
    KeyringBackend = object


class FileKeyring(KeyringBackend):
    """A keyring for the tests' subprocesses: a JSON file in TICKBENCH_HOME (PYTHON_KEYRING_BACKEND)."""

    priority = 5

    def _path(self) -> Path:
        return Path(os.environ["TICKBENCH_HOME"]) / "test-keyring.json"

    def _all(self) -> dict:
        return json.loads(self._path().read_text()) if self._path().exists() else {}

    def get_password(self, service, username):
        return self._all().get(f"{service}|{username}")

    def set_password(self, service, username, password):
        self._path().write_text(json.dumps({**self._all(), f"{service}|{username}": password}))

    def delete_password(self, service, username):
        data = self._all()
        data.pop(f"{service}|{username}", None)
        self._path().write_text(json.dumps(data))


def test_a_password_given_on_standard_input_goes_to_the_keyring_and_nowhere_else(tmp_path):
    env = {**_env(tmp_path), "PYTHON_KEYRING_BACKEND": "tests.test_faults.FileKeyring"}
    result = subprocess.run([sys.executable, "-m", "app", "targets", "add-server", "clickhouse", "prod", "--host",
                             "127.0.0.1", "--user", "me", "--password-stdin"], input="pw-Zq81\n", text=True,
                            capture_output=True, env=env, cwd=ROOT, timeout=60)
    assert result.returncode == 0 and "keyring" in result.stdout, result.stdout + result.stderr
    assert json.loads((tmp_path / "test-keyring.json").read_text()) == {"Tickbench|prod/me": "pw-Zq81"}
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.name != "test-keyring.json":
            assert "pw-Zq81" not in path.read_text(errors="replace"), path


def test_force_goes_past_the_machine_limits_on_the_command_line(tmp_path):
    # past the limits, the next check speaks: an unknown workload, not the users
    result = tickbench("run", "--workload", "nope", "--users", "100000", "--force", home=tmp_path, timeout=60)
    one_line_error(result, "unknown workload 'nope'")


def test_a_saved_scenario_file_holds_no_secret(tmp_path):
    from workloads.scenario import Scenario
    scenario = Scenario(target="clickhouse", target_config={"host": "db", "password": "pw1", "api_token": "tk2"})
    scenario.save_toml(tmp_path / "s.toml")
    text = (tmp_path / "s.toml").read_text()
    assert "pw1" not in text and "tk2" not in text and "db" in text
    assert Scenario.load_toml(tmp_path / "s.toml").target_config == {"host": "db"}
