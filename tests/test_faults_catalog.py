"""Faults injected for real into the results catalog (issue 23, the catalog half): run ids used as
paths or twice, damaged run folders, a full disk, several openers sealing one dead run, kill -9 of a
run's process, and the catalog's old folder name. Real files, real DuckDB, real run processes
(``python -m app``), real ``kill -9``, a real full filesystem (a small tmpfs, as root)."""
from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pyarrow.parquet as pq
import pytest

from workloads.results.figures import step_figures
from workloads.run.records import OpRecord
from workloads.results.run_files import RunFolder
from workloads.results.dead_runs import HostProcess
from workloads.results.store import ResultsStore, StoreError

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = {"name": "t", "dataset": "taq", "target": "duckdb", "workload": "read-day", "users": [1], "cache": "warm"}


def tb(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The command line, as a person runs it, with ``home`` as its data folder."""
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "TICKBENCH_HOME": str(home)})


def _records(n: int, step: int = 0, worker: int = 0, start: int = 0) -> list[OpRecord]:
    return [OpRecord(step=step, worker=worker, seq=start + i, op="noop", t_start=(start + i) * 0.01, total_s=0.01,
                     rows=10, bytes=450, ok=True, kind="measured") for i in range(n)]


def _finished_process() -> HostProcess:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    started = psutil.Process(child.pid).create_time()
    child.wait()
    return HostProcess(socket.gethostname(), child.pid, started)


def _run(store: ResultsStore, run_id: str, ops: int = 200, parts: int = 1, finish: bool = True,
         process: HostProcess | None = None, step_done: bool = False) -> None:
    """A run of one step whose records arrive in ``parts`` batches; ``finish``: the run ended,
    ``step_done``: only its step ended (its records then sit in a Parquet part, not a stream)."""
    store.create_run(run_id, SCENARIO, {}, process)
    store.add_step(run_id, 0, 1, "1 user", {})
    store.release_step(run_id, 0, 0.0)
    store.set_worker(run_id, 0, 0, 123, "", "running")
    for k in range(parts):
        store.add_ops(run_id, _records(ops // parts, start=k * (ops // parts)))
    store.add_resource(run_id, 0.5, 50.0, 1000, 0.0, 0.0)
    if finish or step_done:
        store.finish_step(run_id, 0, ops * 0.01, "completed", [])
    if finish:
        store.set_worker(run_id, 0, 0, 123, "", "done")
        store.finish_run(run_id, "completed")


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("*")) if folder.is_dir() else 0


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*"))}


# --- (1, 2) run ids are names, never paths, and name one run ----------------------------------

@pytest.mark.parametrize("bad", ["../datasets", "/ABS", "a/b", "..", ".hidden", "x\ny", "x\x00y", "r" * 65, ""])
def test_a_run_id_that_is_not_a_name_is_refused_before_anything_is_written(tmp_path, bad):
    store = ResultsStore(tmp_path / "results")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    bad = str(victim) if bad == "/ABS" else bad
    before = _tree(tmp_path)
    with pytest.raises(ValueError) as refused:
        store.create_run(bad, SCENARIO, {})
    message = str(refused.value)
    assert "\n" not in message and message.startswith("run id ") and repr(bad)[:20] in message
    assert _tree(tmp_path) == before
    if bad == "r" * 65:         # still a name (a folder made before the limit is found by it): nothing to delete
        store.delete_run(bad)
    else:
        with pytest.raises(ValueError):
            store.delete_run(bad)
    assert _tree(tmp_path) == before


def test_the_cli_never_deletes_what_a_run_id_points_at(tmp_path):
    """Issue 23 (1): ``--run-id <dir>`` deleted that directory, ``../datasets`` the datasets."""
    home = tmp_path / "home"
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    datasets = home / "datasets"
    datasets.mkdir(parents=True)
    (datasets / "targets.json").write_text("{}")
    for run_id, live in ((str(victim), ()), ("../datasets", ()), (str(victim), ("--live",))):
        # --live too: its view's file must not be written into the folder a bad id names
        done = tb(home, "run", "--workload", "noop", "--users", "1", "--duration", "1", "--run-id", run_id, *live)
        assert done.returncode != 0, done.stdout + done.stderr
        assert (victim / "keep.txt").read_text() == "mine" and sorted(os.listdir(victim)) == ["keep.txt"]
        assert (datasets / "targets.json").read_text() == "{}"
        assert "a name, not a path" in done.stdout + done.stderr


def test_a_run_id_names_one_run(tmp_path):
    """Issue 23 (2): reusing an id mixed two runs' records and overwrote the first run's details."""
    home = tmp_path / "home"
    first = tb(home, "run", "--workload", "noop", "--users", "1", "--operations", "200", "--run-id", "same")
    assert first.returncode == 0, first.stdout + first.stderr
    folder = home / "results" / "runs" / "same"
    before = _tree(folder)
    again = tb(home, "run", "--workload", "noop", "--users", "2", "--operations", "200", "--run-id", "same")
    assert again.returncode != 0 and "already used" in again.stdout + again.stderr
    assert _tree(folder) == before
    store = ResultsStore(home / "results")
    with pytest.raises(ValueError, match="run id 'same': already used"):
        store.create_run("same", SCENARIO, {})
    assert _tree(folder) == before and store.run("same")["users"] == "1"


def test_two_runs_created_at_once_with_one_id_cannot_both_have_it(tmp_path):
    script = ("import sys; from workloads.results.store import ResultsStore\n"
              "s = ResultsStore(sys.argv[1])\n"
              "try:\n    s.create_run('race', {'name': sys.argv[2], 'dataset': 'taq', 'target': 'duckdb', "
              "'workload': 'noop', 'users': [1], 'cache': 'warm'}, {}); print('won')\n"
              "except ValueError as e:\n    print('refused')\n")
    ResultsStore(tmp_path / "results").close()
    racers = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "results"), str(i)], cwd=ROOT,
                               stdout=subprocess.PIPE, text=True) for i in range(4)]
    said = sorted(p.communicate(timeout=60)[0].strip() for p in racers)
    assert said == ["refused"] * 3 + ["won"]


# --- (3) a damaged run folder is set aside; every other run stays readable -----------------------

def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 2)])


DAMAGE = {
    "run.json": lambda f: _truncate(f / "run.json"),
    "steps.json": lambda f: _truncate(f / "steps.json"),
    "workers.json": lambda f: _truncate(f / "workers.json"),
    "ops.parquet": lambda f: (f / "ops.parquet").write_bytes(os.urandom(3000)),
    "ops/000001.parquet": lambda f: (f / "ops" / "000001.parquet").write_bytes(b"PAR1" + os.urandom(500)),
    "ops/000001.arrows": lambda f: (f / "ops" / "000001.arrows").write_bytes(b"PAR1" + os.urandom(500)),
    "resources.jsonl": lambda f: (f / "resources.jsonl").write_bytes(os.urandom(400) + b"\n" + os.urandom(50)),
}


@pytest.fixture
def damaged_catalog(tmp_path):
    """Two sound runs and one run per damage, each damaged for real on disk."""
    path = tmp_path / "results"
    store = ResultsStore(path)
    _run(store, "good-1")
    for name in DAMAGE:
        # a run still going (its process alive: this one) keeps its parts; the others are sealed
        _run(store, f"bad-{name.replace('/', '-')}", parts=3, finish=not name.startswith("ops/"),
             step_done=name.endswith(".parquet"))
    _run(store, "good-2")
    store.close()
    for name, damage in DAMAGE.items():
        damage(path / "runs" / f"bad-{name.replace('/', '-')}")
    return path


def test_every_reader_sets_a_damaged_run_aside(damaged_catalog):
    store = ResultsStore(damaged_catalog)
    runs = store.runs().set_index("run_id")
    assert len(runs) == 2 + len(DAMAGE)
    for name in DAMAGE:
        status = runs.loc[f"bad-{name.replace('/', '-')}", "status"]
        assert status.startswith(f"damaged: {name}: "), status
        with pytest.raises(StoreError, match=f"is damaged: {name}: "):
            store.run(f"bad-{name.replace('/', '-')}")
    for good in ("good-1", "good-2"):
        assert runs.loc[good, "status"] == "completed"
        figures = step_figures(store, good)
        assert int(figures["ops"].iloc[0]) == 200 and not bool(figures["short"].iloc[0])
        assert len(store.ops(good)) == 200 and len(store.resources(good)) == 1
    assert len(store.frame("SELECT * FROM ops")) == 400       # none of a damaged run's records


def test_the_cli_lists_a_damaged_run_and_shows_the_others(damaged_catalog, tmp_path):
    listed = tb(tmp_path, "--results", str(damaged_catalog), "runs")
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    text = listed.stdout.replace("\n", " ")
    assert "good-1" in text and "good-2" in text and text.count("damaged") == len(DAMAGE)
    shown = tb(tmp_path, "--results", str(damaged_catalog), "show", "good-2")
    assert shown.returncode == 0 and "run good-2: completed" in shown.stdout, shown.stderr
    bad = tb(tmp_path, "--results", str(damaged_catalog), "show", "bad-steps.json")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "damaged: steps.json: truncated" in bad.stdout + bad.stderr


def test_records_damaged_past_a_sound_footer_set_only_their_run_aside(tmp_path):
    store = ResultsStore(tmp_path / "results")
    _run(store, "good", ops=300)
    _run(store, "rotten", ops=3000)
    store.close()
    whole = tmp_path / "results" / "runs" / "rotten" / "ops.parquet"
    data = bytearray(whole.read_bytes())
    footer = pq.read_metadata(whole)
    for k in range(footer.row_group(0).column(5).data_page_offset + 8, len(data) - 2000, 7):
        data[k] ^= 0x5A           # the pages past the footer's view are garbage, the footer is sound
    whole.write_bytes(bytes(data))
    store = ResultsStore(tmp_path / "results")
    runs = store.runs().set_index("run_id")
    assert len(store.frame("SELECT * FROM ops")) == 300
    assert runs.loc["rotten", "status"].startswith("damaged: ops.parquet: ")
    assert int(step_figures(store, "good")["ops"].iloc[0]) == 300


def test_the_window_lists_the_damaged_run_with_the_others(damaged_catalog, qtbot):
    from PySide6.QtCore import Qt
    from widgets.history.run_history import COLUMNS, RunHistoryView
    from workloads.results.history import history_rows

    store = ResultsStore(damaged_catalog)
    view = RunHistoryView()
    qtbot.addWidget(view)
    view.set_rows(history_rows(store))
    model = view.model if hasattr(view, "model") and not callable(view.model) else view.table.model().sourceModel()
    status_col = [key for key, _ in COLUMNS].index("status")
    shown = {model.data(model.index(r, 0), Qt.ItemDataRole.UserRole): model.data(model.index(r, status_col))
             for r in range(model.rowCount())}
    assert shown["good-1"] == shown["good-2"] == "completed"
    for name in DAMAGE:
        row = [r for r in range(model.rowCount())
               if model.data(model.index(r, 0), Qt.ItemDataRole.UserRole) == f"bad-{name.replace('/', '-')}"][0]
        assert shown[f"bad-{name.replace('/', '-')}"].startswith(f"damaged: {name}: ")
        assert model.data(model.index(row, status_col), Qt.ItemDataRole.ForegroundRole) is not None


# --- (4) a full disk ends the run with its cause; the catalog stays readable -------------------

@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("a real full disk needs a tmpfs mount (root)")
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(folder: Path) -> Path:
    """The disk filled to its last byte; it may be full already (a fast run's own records can fill
    it before this test's turn comes on a busy machine): either way the run meets a full disk."""
    filler = folder / "filler"
    try:
        with open(filler, "wb") as out:
            while True:
                out.write(b"\1" * 65536)
                out.flush()
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
    return filler


def test_a_full_disk_fails_the_run_with_its_cause_and_the_catalog_stays_readable(small_disk, tmp_path):
    home, results = tmp_path / "home", small_disk / "results"
    # an open loop of 2,000 records a second (~0.3 MB/s in the run's stream): its own records take
    # ~30 s to fill the 8 MB (a closed-loop no-op would fill it before the test's turn)
    run = subprocess.Popen([sys.executable, "-m", "app", "--results", str(results), "run", "--workload", "noop",
                            "--users", "2", "--duration", "60", "--rate", "2000", "--run-id", "full"], cwd=ROOT, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env={**os.environ, "TICKBENCH_HOME": str(home)})
    folder = results / "runs" / "full"
    deadline = time.monotonic() + 90
    while _bytes(folder / "ops") < 600_000 and time.monotonic() < deadline:
        time.sleep(0.05)                              # measuring: a few seconds of records are kept
    assert (folder / ".reserve").is_file()          # space for the run's end, held while it runs
    filler = _fill(small_disk)
    out, err = run.communicate(timeout=120)
    assert run.returncode != 0
    # the run's own process says it in one line (its workers' broken pipes are the runner's, not the catalog's)
    assert not [m for m in ("store.py", "run_files.py", "runner.py", "collector.py") if m in err], err[-3000:]
    assert f"disk full at {folder}" in out
    # the disk is still full: every reader works and writes nothing
    before = _tree(small_disk)
    listed = tb(home, "--results", str(results), "runs")
    shown = tb(home, "--results", str(results), "show", "full")
    assert listed.returncode == 0 and shown.returncode == 0, listed.stderr + shown.stderr
    assert _tree(small_disk) == before
    record = RunFolder(folder).run()
    assert record["status"] == "failed", record
    assert record["message"].startswith(f"disk full at {folder}") and "kept" in record["message"]
    kept = int(record["message"].split("kept ")[1].split()[0].replace(",", ""))
    store = ResultsStore(results)
    assert kept > 0 and len(store.ops("full")) == kept
    assert "failed" in shown.stdout and "disk full at" in shown.stdout and "too short" not in shown.stdout
    figures = step_figures(store, "full")
    assert int(figures["ops"].sum()) > 0 and figures["window_s"].iloc[0] > 0
    assert set(store.workers("full")["state"]) <= {"failed", "done", "cancelled"}
    assert set(store.frame("SELECT status FROM steps")["status"]) != {"running"}
    filler.unlink(missing_ok=True)


# --- (5) one sealer for a dead run; readers opening at once never crash ---------------------------

def test_many_openers_seal_a_dead_run_once_and_none_crashes(tmp_path):
    path = tmp_path / "results"
    store = ResultsStore(path)
    _run(store, "dead", ops=20000, parts=200, finish=False, process=_finished_process())
    # the store above sealed nothing: the run's process was "alive" when it was made; it is not now
    store.close()
    openers = [subprocess.Popen([sys.executable, "-m", "app", "--results", str(path), "runs"], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "TICKBENCH_HOME": str(tmp_path / "home")}) for _ in range(4)]
    results = [(p.wait(120), *p.communicate()) for p in openers]
    for code, out, err in results:
        assert code == 0 and "Traceback" not in err, err
        assert "aborted" in out
    folder = path / "runs" / "dead"
    assert (folder / "ops.parquet").is_file() and not (folder / "ops").exists()
    assert not [p for p in folder.rglob("*") if p.name.endswith(".tmp")]
    store = ResultsStore(path)
    assert store.run("dead")["status"] == "aborted" and len(store.ops("dead")) == 20000


def test_a_dead_run_whose_seal_lock_is_held_is_left_to_its_holder(tmp_path):
    """The lock decides, not the timing: while another sealer holds it, this one seals nothing."""
    from workloads.results.dead_runs import abort_if_dead
    from workloads.results.run_writer import SealLock

    store = ResultsStore(tmp_path / "results")
    _run(store, "dead", ops=200, parts=2, finish=False, process=_finished_process())
    store.close()
    folder = tmp_path / "results" / "runs" / "dead"
    with SealLock(folder) as owner:
        assert owner
        assert abort_if_dead(folder) is False
        assert RunFolder(folder).run()["status"] == "running" and (folder / "ops").is_dir()
    assert abort_if_dead(folder) is True
    assert RunFolder(folder).run()["status"] == "aborted" and (folder / "ops.parquet").is_file()


def test_a_run_file_created_twice_keeps_the_first_and_says_so(tmp_path):
    """``create_json`` never replaces: a second creator (one that passed any check before it) loses."""
    from workloads.results.atomic_files import create_json, read_json

    path = tmp_path / "run.json"
    assert create_json(path, {"name": "first"}) is True
    assert create_json(path, {"name": "second"}) is False
    assert read_json(path, None) == {"name": "first"}
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]        # no temporary left


def test_files_a_part_stands_for_are_not_read_again_when_a_crash_left_them(tmp_path):
    """A crash between a part's write and its sources' deletes leaves both (a stream and the part
    made of it; parts an earlier version merged and the merged part): each record is read once."""
    import pyarrow as pa
    from workloads.results.ops_stream import read_stream

    store = ResultsStore(tmp_path / "results")
    _run(store, "crashed", ops=100, finish=False, step_done=True)
    for step in (1, 2, 3):
        store.add_step("crashed", step, 1, "1 user", {})
        store.add_ops("crashed", _records(100, step=step, start=100 * step))
        if step < 3:
            store.finish_step("crashed", step, 1.0, "completed", [])
    store.close()
    ops = tmp_path / "results" / "runs" / "crashed" / "ops"
    assert sorted(p.name for p in ops.iterdir()) == ["000001.parquet", "000002.parquet", "000003.parquet",
                                                   "000004.arrows"]
    merged = pa.concat_tables([pq.read_table(ops / f"00000{n}.parquet") for n in (1, 2)])
    pq.write_table(merged, ops / "000001-000002.parquet")          # an earlier version's merge, its deletes not yet
    pq.write_table(read_stream(ops / "000004.arrows"), ops / "000004.parquet")   # the stream's part, its delete not yet
    files = RunFolder(ops.parent).ops_files()
    assert [p.name for p in files] == ["000001-000002.parquet", "000003.parquet", "000004.parquet"]
    assert sorted(ResultsStore(tmp_path / "results").ops("crashed")["seq"]) == list(range(400))


def test_a_streams_torn_last_batch_loses_that_batch_alone(tmp_path):
    """A crash or a full disk in the middle of an append: every whole batch before it is read, and
    sealed when the dead run is."""
    store = ResultsStore(tmp_path / "results")
    _run(store, "torn", ops=300, parts=3, finish=False, process=_finished_process())
    store.close()
    stream = tmp_path / "results" / "runs" / "torn" / "ops" / "000001.arrows"
    stream.write_bytes(stream.read_bytes()[:-100])                  # the third batch cut short
    again = ResultsStore(tmp_path / "results")
    assert sorted(again.ops("torn")["seq"]) == list(range(200))
    assert again.run("torn")["status"] == "aborted"
    assert RunFolder(stream.parent.parent).ops_files() == [stream.parent.parent / "ops.parquet"]


# --- (7) kill -9 of a run's process loses at most 0.2 s or 1 % ----------------------------------

def test_kill_9_of_the_run_process_loses_at_most_a_fifth_of_a_second(tmp_path):
    home = tmp_path / "home"
    results = home / "results"
    run = subprocess.Popen([sys.executable, "-m", "app", "run", "--workload", "noop", "--users", "2",
                            "--duration", "120", "--run-id", "killed", "--live"], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                           env={**os.environ, "TICKBENCH_HOME": str(home)})
    live = results / "runs" / "killed" / "live.json"
    try:
        deadline = time.monotonic() + 120
        seen = measuring = None
        while time.monotonic() < deadline:          # measuring for a few seconds
            try:
                snap = json.loads(live.read_text())
                if snap["ops_done"] and measuring is None:
                    measuring = time.monotonic()
                if measuring is not None and time.monotonic() - measuring > 4 and seen is None:
                    seen = live.stat().st_mtime_ns
                if seen is not None and live.stat().st_mtime_ns != seen:
                    break                               # a snapshot this very moment: kill now
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.002)
        snap = json.loads(live.read_text())
        os.kill(run.pid, signal.SIGKILL)
        run.wait(10)
    finally:
        try:
            os.killpg(run.pid, signal.SIGKILL)      # its workers (the run's own session)
        except ProcessLookupError:
            pass
    counted = snap["ops_done"]
    store = ResultsStore(results)
    stored = int(store.frame("SELECT count(*) AS n FROM ops WHERE run_id = 'killed' AND kind = 'measured' "
                             "AND ok")["n"].iloc[0])
    figures = step_figures(store, "killed")
    rate = float(figures["ops_per_s"].iloc[0])          # while measuring (the snapshot's clock counts start-up)
    lost = counted - stored
    print(f"kill -9: live snapshot counted {counted:,}, stored {stored:,}, lost {max(lost, 0):,} "
          f"= {100 * max(lost, 0) / counted:.2f} % = {max(lost, 0) / rate:.3f} s at {rate:,.0f} ops/s")
    assert lost <= max(0.01 * counted, 0.2 * rate)
    run_row = store.run("killed")
    assert run_row["status"] == "aborted"
    steps = store.frame("SELECT status FROM steps WHERE run_id = 'killed'")
    workers = store.workers("killed")
    assert "running" not in set(steps["status"]) and not set(workers["state"]) & {"ready", "running", "starting"}
    assert figures["window_s"].iloc[0] > 3 and not bool(figures["short"].iloc[0])
    shown = tb(home, "show", "killed")
    assert shown.returncode == 0 and "too short" not in shown.stdout and "0.00 s" not in shown.stdout


# --- (13) the catalog is the folder results/; an old results.duckdb/ folder is moved into it ------

def test_the_catalog_is_results_and_an_old_results_duckdb_folder_is_moved_in(tmp_path):
    from workloads.paths import default_results_path
    assert default_results_path().name == "results"
    old = ResultsStore(tmp_path / "old-place")         # a catalog folder as an earlier version named it
    _run(old, "earlier")
    old.close()
    (tmp_path / "old-place").rename(tmp_path / "results.duckdb")
    for given in ("results.duckdb", "results"):
        store = ResultsStore(tmp_path / given)
        assert store.path == tmp_path / "results"
        assert list(store.runs()["run_id"]) == ["earlier"] and len(store.ops("earlier")) == 200
    assert not (tmp_path / "results.duckdb").exists()


def test_a_run_still_going_in_the_old_folder_is_read_where_it_is(tmp_path):
    old = ResultsStore(tmp_path / "x")
    _run(old, "going", finish=False)                  # its process (this one) is alive
    _run(old, "done")
    old.close()
    (tmp_path / "x").rename(tmp_path / "results.duckdb")
    store = ResultsStore(tmp_path / "results")
    assert sorted(store.runs()["run_id"]) == ["done", "going"]
    assert (tmp_path / "results" / "runs" / "done").is_dir()
    assert (tmp_path / "results.duckdb" / "runs" / "going").is_dir()
    assert len(store.ops("going")) == 200 and store.run("going")["status"] == "running"


def test_records_appended_all_step_long_are_one_stream_and_one_part_after_the_steps_end(tmp_path):
    store = ResultsStore(tmp_path / "results")
    _run(store, "long", ops=25000, parts=250, finish=False)
    ops = tmp_path / "results" / "runs" / "long" / "ops"
    assert [p.name for p in ops.iterdir()] == ["000001.arrows"]
    assert sorted(store.ops("long")["seq"]) == list(range(25000))       # read while it runs: none twice, none missing
    store.finish_step("long", 0, 250.0, "completed", [])
    assert [p.name for p in ops.iterdir()] == ["000001.parquet"]
    assert sorted(store.ops("long")["seq"]) == list(range(25000))
    store.add_step("long", 1, 2, "2 users", {})
    store.add_ops("long", _records(10, step=1, start=25000))
    assert sorted(p.name for p in ops.iterdir()) == ["000001.parquet", "000002.arrows"]
    store.finish_run("long", "completed")
    assert len(ResultsStore(tmp_path / "results").ops("long")) == 25010


def test_a_stream_grown_past_its_bound_becomes_a_part_at_once(tmp_path, monkeypatch):
    """Memory and disk stay bounded however long a step runs: the stream's batches are held in
    memory until they become a part."""
    from workloads.results import run_writer
    from workloads.results.run_tables import ops_table
    store = ResultsStore(tmp_path / "results")
    one_batch = ops_table("big", _records(100)).nbytes
    monkeypatch.setattr(run_writer, "ROLL_BYTES", 2 * one_batch)
    _run(store, "big", ops=500, parts=5, finish=False)
    ops = tmp_path / "results" / "runs" / "big" / "ops"
    assert sorted(p.name for p in ops.iterdir()) == ["000001.parquet", "000002.parquet", "000003.arrows"]
    assert sorted(store.ops("big")["seq"]) == list(range(500))


def test_an_old_results_file_never_writes_a_run_outside_the_catalog(tmp_path):
    import duckdb
    from tests.test_store import LEGACY_V1_SCHEMA
    old = tmp_path / "results.duckdb"
    con = duckdb.connect(str(old))
    con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute(LEGACY_V1_SCHEMA)
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    for run_id in ("fine", "../escaped", str(tmp_path / "abs-escaped")):
        con.execute("INSERT INTO runs (run_id, name, created_at, status, dataset, target, workload, users, cache, "
                    "scenario, environment, message) VALUES (?, 'n', now()::TIMESTAMP, 'completed', 'taq', 'duckdb', "
                    "'noop', '1', 'warm', '{}', '{}', '')", [run_id])
    con.close()
    store = ResultsStore(tmp_path / "results")
    assert store.migrated == 1 and list(store.runs()["run_id"]) == ["fine"]
    assert not (tmp_path / "results" / "escaped").exists() and not (tmp_path / "abs-escaped").exists()
    from workloads.paths import scratch_dir
    with pytest.raises(ValueError, match="a name, not a path"):
        scratch_dir("../datasets")
