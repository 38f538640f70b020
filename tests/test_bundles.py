"""Run bundles: a real run (DuckDB, real worker processes) leaves one catalog as one file and enters
another as the same run; the same bundle opened twice is added once; hostile or damaged bundles are
refused in one line with nothing written; no secret of the sender's is in a bundle; the command
line and the window open them."""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.hostile_corpus import REFUSED as HOSTILE, make, read_bundle
from workloads.datasets.schema import Scale
from workloads.results.bundle import MANIFEST, BundleError, write_bundle
from workloads.results.bundle_open import open_bundle
from workloads.results.figures import step_figures
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent
TINY = Scale(days=1, rows_per_day=5_000, symbols=10)
SECRET, TOKEN, KEY = "s3cret-Zq9x", "tok-Wv7k", "k3y-Pp4m"


def _run(folder: Path, store: ResultsStore, **config) -> str:
    scenario = Scenario(dataset="taq", scale=TINY, target="duckdb", workload="read-day", users=(1, 2), operations=5,
                        target_config={"path": str(folder / "data.duckdb"), **config})
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    return result.run_id


@pytest.fixture(scope="module")
def sender(tmp_path_factory):
    """A catalog with one real run (a users sweep of 1 and 2) and that run as a bundle."""
    folder = tmp_path_factory.mktemp("sender")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TICKBENCH_HOME", str(folder / "home"))
        store = ResultsStore(folder / "results")
        run_id = _run(folder, store)
        bundle = write_bundle(store, run_id, folder / "run.tbrun")
    yield store, run_id, bundle
    store.close()


@pytest.fixture
def receiver(tmp_path):
    store = ResultsStore(tmp_path / "other")
    yield store
    store.close()


def catalog_state(store: ResultsStore) -> dict[str, tuple[int, str]]:
    """Every file and folder under the catalog, with its size and hash."""
    state = {}
    for path in sorted(store.path.rglob("*")):
        key = str(path.relative_to(store.path))
        state[key] = (-1, "") if path.is_dir() else (path.stat().st_size, hashlib.sha256(path.read_bytes()).hexdigest())
    return state


# --- a bundle made in one catalog opens in another as the same run ------------------------------------

def test_a_bundle_made_in_one_catalog_opens_in_another_with_identical_figures_and_records(sender, receiver):
    store, run_id, bundle = sender
    assert receiver.runs().empty                                  # its views read before the run came in
    opened = open_bundle(receiver, bundle)
    assert (opened.run_id, opened.added) == (run_id, True)
    assert opened.origin_host == store.run(run_id)["environment"]["host"]
    assert opened.message == f"opened run {run_id} from host {opened.origin_host}"
    assert list(receiver.runs()["run_id"]) == [run_id]            # the catalog sees it at once
    pd.testing.assert_frame_equal(step_figures(receiver, run_id), step_figures(store, run_id))
    assert len(step_figures(receiver, run_id)) == 2
    pd.testing.assert_frame_equal(receiver.ops(run_id), store.ops(run_id))
    assert len(receiver.ops(run_id)) > 10
    pd.testing.assert_frame_equal(receiver.workers(run_id), store.workers(run_id))
    pd.testing.assert_frame_equal(receiver.resources(run_id), store.resources(run_id))
    theirs, ours = store.run(run_id), receiver.run(run_id)
    origin = ours["environment"].pop("origin")
    assert origin["bundle"] is True and origin["host"] == opened.origin_host and origin["file"] == "run.tbrun"
    assert ours == theirs                                          # the rest is the run as it was
    assert not [p for p in receiver.runs_dir.iterdir() if p.name.startswith(".")]      # no temp folder left


def test_a_bundle_holds_the_run_and_a_manifest_of_it(sender):
    store, run_id, bundle = sender
    with zipfile.ZipFile(bundle) as z:
        names = z.namelist()
        manifest = json.loads(z.read(MANIFEST))
        for member in manifest["members"]:
            assert hashlib.sha256(z.read(member["name"])).hexdigest() == member["sha256"]
            assert z.getinfo(member["name"]).file_size == member["size"]
    assert sorted(names) == sorted([MANIFEST, "run.json", "steps.json", "workers.json", "ops.parquet"]
                                   + (["resources.jsonl"] if len(store.resources(run_id)) else []))
    assert manifest["run_id"] == run_id and manifest["version"] == 1 and manifest["tickbench"]
    assert manifest["origin_host"] == store.run(run_id)["environment"]["host"]
    assert manifest["counts"] == {"ops": len(store.ops(run_id)), "steps": 2, "workers": 3,
                                  "resources": len(store.resources(run_id))}


def test_opening_the_same_bundle_twice_adds_it_once(sender, receiver):
    store, run_id, bundle = sender
    assert open_bundle(receiver, bundle).added
    before = catalog_state(receiver)
    again = open_bundle(receiver, bundle)
    assert (again.run_id, again.added) == (run_id, False)
    assert again.message == f"run {run_id} is already in the catalog"
    assert catalog_state(receiver) == before
    assert list(receiver.runs()["run_id"]) == [run_id]
    at_home = catalog_state(store)                       # and in the catalog it was made in: it is that run
    assert open_bundle(store, bundle).added is False
    assert catalog_state(store) == at_home


def test_a_bundle_of_a_run_id_held_with_other_content_is_refused(sender, receiver, tmp_path):
    _store, run_id, bundle = sender
    open_bundle(receiver, bundle)
    files, manifest = read_bundle(bundle.read_bytes())
    files["steps.json"] = files["steps.json"].replace(b'"label": "', b'"label": "x', 1)
    other = tmp_path / "other.tbrun"
    other.write_bytes(make(files, manifest))
    before = catalog_state(receiver)
    with pytest.raises(BundleError, match="already in the catalog with other content"):
        open_bundle(receiver, other)
    assert catalog_state(receiver) == before


# --- hostile and damaged bundles (the corpus: tests/hostile_corpus.py) ------------------------------

@pytest.mark.parametrize("case", list(HOSTILE), ids=[re.sub(r"[^a-z0-9]+", "-", c.lower()).strip("-") for c in HOSTILE])
def test_a_hostile_bundle_is_refused_in_one_line_with_nothing_written(case, sender, receiver, tmp_path):
    build, named = HOSTILE[case]
    files, manifest = read_bundle(sender[2].read_bytes())
    bad = tmp_path / "hostile.tbrun"
    bad.write_bytes(build(files, manifest))
    assert bad.stat().st_size < 8 << 20                   # the bomb too is small on disk
    before = catalog_state(receiver)
    with pytest.raises(BundleError) as refused:
        open_bundle(receiver, bad)
    message = str(refused.value)
    assert "\n" not in message and message.startswith("hostile.tbrun: refused: ")
    assert named in message, message
    assert catalog_state(receiver) == before              # nothing written, no temp folder left
    assert receiver.runs().empty
    escaped = [receiver.runs_dir / "x", receiver.path / "x", receiver.path.parent / "evil", Path("/etc/x")]
    assert not [p for p in escaped if p.exists()]


def test_the_good_bundle_itself_passes_every_check_the_hostile_cases_break(sender, receiver, tmp_path):
    files, manifest = read_bundle(sender[2].read_bytes())
    rebuilt = tmp_path / "rebuilt.tbrun"
    rebuilt.write_bytes(make(files, manifest))           # the builder alone refuses nothing
    assert open_bundle(receiver, rebuilt).added


def test_a_run_whose_records_a_full_disk_left_in_parts_leaves_as_one_file_with_every_record(tmp_path, receiver):
    """A run that ended on a full disk keeps its records as parts (``RunWriter.end``); its bundle
    seals them into one file, and its resource samples go with it."""
    from workloads.results.run_tables import PART_WRITE
    store = ResultsStore(tmp_path / "results")
    run_id = _run(tmp_path, store)
    sampled = len(store.resources(run_id))          # the run's own sampler may have caught a second or so
    for t in (1.0, 2.0, 3.0):
        store.add_resource(run_id, t, 50.0 + t, 100_000_000, 0.0, 1024.0)
    folder = store.runs_dir / run_id
    records = pq.read_table(folder / "ops.parquet")
    (folder / "ops").mkdir()
    half = records.num_rows // 2
    pq.write_table(records.slice(0, half), folder / "ops" / "000001.parquet", **PART_WRITE)
    pq.write_table(records.slice(half), folder / "ops" / "000002.parquet", **PART_WRITE)
    (folder / "ops.parquet").unlink()
    store.close()
    store = ResultsStore(tmp_path / "results")
    bundle = write_bundle(store, run_id, tmp_path / "parts.tbrun")
    with zipfile.ZipFile(bundle) as z:
        assert sorted(z.namelist()) == sorted([MANIFEST, "run.json", "steps.json", "workers.json", "ops.parquet",
                                               "resources.jsonl"])
        assert json.loads(z.read(MANIFEST))["counts"]["resources"] == sampled + 3
    assert open_bundle(receiver, bundle).added
    pd.testing.assert_frame_equal(receiver.ops(run_id), store.ops(run_id))
    pd.testing.assert_frame_equal(receiver.resources(run_id), store.resources(run_id))
    pd.testing.assert_frame_equal(step_figures(receiver, run_id), step_figures(store, run_id))
    assert len(receiver.resources(run_id)) == sampled + 3 and len(receiver.ops(run_id)) == records.num_rows
    store.close()


def test_a_run_still_going_does_not_leave_as_a_bundle(tmp_path):
    store = ResultsStore(tmp_path / "results")
    store.create_run("going", {"dataset": "taq", "target": "duckdb", "workload": "read-day", "users": [1],
                               "cache": "warm"}, {"host": "here"})          # its process (this one) is alive
    with pytest.raises(BundleError, match="run going is still going"):
        write_bundle(store, "going", tmp_path / "going.tbrun")
    with pytest.raises(BundleError, match="no run 'absent'"):
        write_bundle(store, "absent", tmp_path / "absent.tbrun")
    assert not list(tmp_path.glob("*.tbrun")) and not list(tmp_path.glob(".*.tmp"))
    store.close()


# --- no secret of the sender's -----------------------------------------------------------------------

def test_no_secret_of_the_senders_is_in_a_bundle(tmp_path, receiver):
    store = ResultsStore(tmp_path / "results")
    run_id = _run(tmp_path, store, password=SECRET, agent_token=TOKEN)
    # what a server target records beside the run (an older version kept more of its config)
    store.set_environment_entry(run_id, "server", {"host": "127.0.0.1", "Password": SECRET,
                                                   "nested": [{"api_key": KEY, "auth": {"user": "u", "pw": SECRET}}]})
    store.set_environment_entry(run_id, "dsn", f"postgresql://bench:{SECRET}@127.0.0.1:5432/ticks")
    store.set_environment_entry(run_id, "connect", f"host=127.0.0.1 password={SECRET} token={TOKEN}")
    assert SECRET.encode() in (store.runs_dir / run_id / "run.json").read_bytes()   # there to be scrubbed
    bundle = write_bundle(store, run_id, tmp_path / "secret.tbrun")
    raw = bundle.read_bytes()
    with zipfile.ZipFile(bundle) as z:
        members = b"".join(z.read(name) for name in z.namelist())
    for secret in (SECRET, TOKEN, KEY):
        assert secret.encode() not in raw and secret.encode() not in members, secret
    environment = json.loads(json.loads(zipfile.ZipFile(bundle).read("run.json"))["environment"])
    assert environment["server"]["Password"] == "***" and environment["server"]["host"] == "127.0.0.1"
    assert environment["dsn"] == "postgresql://bench:***@127.0.0.1:5432/ticks"
    assert open_bundle(receiver, bundle).added                        # a scrubbed bundle still opens
    store.close()


@pytest.mark.parametrize("typed", ["pass: {s}", "--password {s}", "pwd:{s}", "DB_PASSWORD = {s}", "-token {s}",
                                   "api-key={s}"])
def test_a_secret_typed_into_free_text_is_scrubbed_in_any_common_spelling(typed):
    """A run named "load test, pass: hunter2" was bundled as typed."""
    from workloads.results.bundle import scrub
    text = f"load test, {typed.format(s=SECRET)}; passed 5 checks, bypass lane"
    clean, found = scrub(text)
    assert found and SECRET not in clean and "***" in clean
    assert clean.endswith("; passed 5 checks, bypass lane")                 # words that merely start alike stay


# --- the command line ----------------------------------------------------------------------------------

def tickbench(*args, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TICKBENCH_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-m", "app", *args], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_the_command_line_exports_a_bundle_and_opens_it_once(sender, tmp_path):
    store, run_id, _ = sender
    out = tmp_path / "cli.tbrun"
    exported = tickbench("--results", str(store.path), "export", run_id[:12], "--bundle", str(out), home=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.strip() == str(out) and zipfile.is_zipfile(out)
    both = tickbench("--results", str(store.path), "export", run_id, "--bundle", str(out), "--format", "csv",
                     home=tmp_path)
    assert both.returncode == 2 and "--bundle" in both.stderr and "--format" in both.stderr
    again = tickbench("--results", str(store.path), "export", run_id, "--bundle", str(out), home=tmp_path)
    assert again.returncode == 2 and "--force" in again.stderr
    home = tmp_path / "receiver"
    opened = tickbench("open", str(out), home=home)
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.strip() == f"opened run {run_id} from host {store.run(run_id)['environment']['host']}"
    twice = tickbench("open", str(out), home=home)
    assert twice.returncode == 0 and twice.stdout.strip() == f"run {run_id} is already in the catalog"
    listed = tickbench("runs", home=home)
    assert run_id in listed.stdout


def test_the_command_line_refuses_a_hostile_bundle_in_one_line_with_exit_2(sender, tmp_path):
    files, manifest = read_bundle(sender[2].read_bytes())
    bad = tmp_path / "bad.tbrun"
    bad.write_bytes(make(files, manifest, extra=[("../x", b"evil")]))
    refused = tickbench("open", str(bad), home=tmp_path)
    assert refused.returncode == 2
    assert refused.stdout == "" and len(refused.stderr.strip().splitlines()) == 1
    assert "bad.tbrun: refused: member '../x'" in refused.stderr
    assert not list((tmp_path / "results" / "runs").iterdir())


# --- the window ----------------------------------------------------------------------------------------

@pytest.fixture
def window(qtbot, tmp_path, light_theme):
    from PySide6.QtCore import QSettings

    from app.window.main_window import MainWindow
    from tests.test_main_window import DictPasswords
    store = ResultsStore(tmp_path / "results")
    main = MainWindow(store, tmp_path / "data", QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat),
                      DictPasswords())
    qtbot.addWidget(main)
    main.show()
    qtbot.waitExposed(main)
    yield main
    main.close()
    store.close()


def _urls(path: Path):
    from PySide6.QtCore import QMimeData, QUrl
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    return mime


def drag_enter(window, path: Path) -> bool:
    """``path`` dragged over the window: whether the window says it would take it (the cursor's sign)."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtGui import QDragEnterEvent
    from PySide6.QtWidgets import QApplication
    mime = _urls(path)          # kept while the event lives: the event holds only a pointer to it
    enter = QDragEnterEvent(QPoint(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    return enter.isAccepted()


def drop(window, path: Path) -> bool:
    """``path`` dragged onto the window and dropped, as Qt delivers it (enter, then drop); whether
    the window took it."""
    from PySide6.QtCore import QPointF, Qt
    from PySide6.QtGui import QDropEvent
    from PySide6.QtWidgets import QApplication
    mime = _urls(path)
    if not drag_enter(window, path):
        return False
    dropped = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                         Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, dropped)
    return dropped.isAccepted()


def test_the_window_opens_a_bundle_from_its_menu_and_by_drag_and_drop(qtbot, window, sender, tmp_path, monkeypatch):
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QFileDialog

    _store, run_id, bundle = sender
    # a catalog watcher that sees nothing (a network file system): opening the bundle reads History itself
    window.stored._catalog_watcher.blockSignals(True)
    qtbot.waitUntil(lambda: not window.stored._catalog_reread.isActive())   # the start-up's reading is done
    action = window.findChild(QAction, "open_run_bundle")
    assert action is not None and action in window.menuBar().actions()[0].menu().actions()
    asked = []

    def choose(parent, caption, folder, filters):
        asked.append(filters)
        return str(bundle), filters
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(choose))
    action.trigger()
    assert asked == ["Run bundles (*.tbrun)"]
    qtbot.waitUntil(lambda: run_id in window.history.visible_run_ids(), timeout=20_000)
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == f"opened run {run_id} from host "
                    f"{window.store.run(run_id)['environment']['origin']['host']}", timeout=5_000)
    # dropped on the window: already there, said so; a file of another kind is not taken
    assert not drag_enter(window, tmp_path / "scenario.toml")      # the cursor says no before the drop
    assert not drop(window, tmp_path / "scenario.toml")
    assert drop(window, bundle)
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == f"run {run_id} is already in the catalog",
                    timeout=20_000)
    assert window.history.visible_run_ids() == [run_id]


def test_the_window_shows_a_refused_bundle_in_one_line_and_adds_nothing(qtbot, window, sender, tmp_path):
    files, manifest = read_bundle(sender[2].read_bytes())
    bad = tmp_path / "bad.tbrun"
    bad.write_bytes(make(files, manifest, extra=[("/etc/x", b"evil")]))
    before = catalog_state(window.store)
    assert drop(window, bad)
    qtbot.waitUntil(lambda: "bad.tbrun: refused:" in window.statusBar().currentMessage(), timeout=20_000)
    assert "absolute path" in window.statusBar().currentMessage()
    assert "\n" not in window.statusBar().currentMessage()
    window.background.wait()
    assert window.history.visible_run_ids() == [] and catalog_state(window.store) == before


def test_a_run_on_a_password_protected_server_leaves_no_password_in_its_bundle(tmp_path, ddb_server_factory):
    """The sender's password to a DolphinDB (the wire-protocol stand-in, its login checked) is in no
    byte of the run's folder or of its bundle, compressed or not, though the run logged in with it
    (what the scrub does to a secret a run did record: test_no_secret_of_the_senders_is_in_a_bundle)."""
    password = "Sesame-7f3q-only-here"
    server = ddb_server_factory(users={"admin": password})
    store = ResultsStore(tmp_path / "results")
    try:
        scenario = Scenario(dataset="taq", scale=Scale(days=1, rows_per_day=2_000, symbols=5), target="dolphindb",
                            target_config={"profile": server.profile(), "password": password, "timeout": 5},
                            workload="read-day", users=(1,), operations=2, probe_ops=0)
        result = Runner(scenario, store).run()
        assert result.status == "completed", result.message
        stored = b"".join(p.read_bytes() for p in (store.runs_dir / result.run_id).rglob("*") if p.is_file())
        bundle = write_bundle(store, result.run_id, tmp_path / "ddb.tbrun")
        with zipfile.ZipFile(bundle) as z:
            members = b"".join(z.read(name) for name in z.namelist())
        assert password.encode() not in bundle.read_bytes() and password.encode() not in members
        assert password.encode() not in stored           # the run never kept it: a bundle has none to carry
    finally:
        store.close()


def test_a_folder_left_by_an_open_killed_mid_way_is_removed_when_the_catalog_opens_next(tmp_path):
    """An opener SIGKILLed mid-way left ``runs/.incoming-*`` behind for an hour: its process named in
    the folder is gone, so the next start removes it; a live opener's folder stays."""
    import subprocess
    import sys
    from workloads.results.bundle_open import INCOMING
    from workloads.results.store import ResultsStore
    store = ResultsStore(tmp_path / "results")
    store.close()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = store.runs_dir / f"{INCOMING}{int(gone.stdout)}-0123abcd"
    live = store.runs_dir / f"{INCOMING}{os.getppid()}-4567ef01"      # pytest's parent: alive
    for folder in (dead, live):
        (folder / "20261203-000000-dead").mkdir(parents=True)
        (folder / "20261203-000000-dead" / "run.json").write_text("{}")
    ResultsStore(tmp_path / "results").close()
    assert not dead.exists() and live.exists()
