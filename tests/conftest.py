"""Shared fixtures. No test touches the user's files: data, results and settings go to tmp dirs."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from tests import reaper, watchdog
from tests.reaper import pytest_unconfigure  # noqa: F401  (the run's processes die with it)
from tests.watchdog import pytest_runtest_protocol, pytest_sessionfinish  # noqa: F401  (no test hangs the run)


def pytest_configure(config):
    reaper.pytest_configure(config)
    watchdog.pytest_configure(config)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("tickbench_home")
    monkeypatch.setenv("TICKBENCH_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    return home


@pytest.fixture(autouse=True)
def isolated_qt_settings(tmp_path_factory):
    """QSettings (INI format) and QStandardPaths in a per-test temp dir."""
    from PySide6.QtCore import QCoreApplication, QSettings, QStandardPaths

    folder = tmp_path_factory.mktemp("qt-settings")
    QStandardPaths.setTestModeEnabled(True)
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
        QSettings.setPath(QSettings.Format.IniFormat, scope, str(folder))
    QCoreApplication.setOrganizationName("tickbench-tests")
    QCoreApplication.setApplicationName("tickbench-tests")
    yield folder


def _delete_closed_widgets() -> None:
    """Delete now the widgets earlier tests closed (pytest-qt's deleteLater waits for an event loop
    that tests never return to): a theme restyles every live widget, and the closed main windows of
    earlier tests made each test's two theme changes take 2-11 s."""
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def light_theme(qapp):
    from widgets.common.gui_thread_gc import collect_anywhere, collect_on_gui_thread
    from widgets.common.theme import apply_theme

    collect_on_gui_thread(qapp)     # as the app does: windows' background readers never collect
    _delete_closed_widgets()
    theme = apply_theme(qapp, "light", 1.0)
    yield theme
    _delete_closed_widgets()
    apply_theme(qapp, "light", 1.0)
    collect_anywhere(qapp)


@pytest.fixture
def make_widget(qtbot, qapp, light_theme):
    """make_widget(cls_or_factory, *args, show=True, size=(800, 500), **kwargs) -> widget."""
    from PySide6.QtCore import QEvent, Qt

    before = {id(w) for w in qapp.topLevelWidgets()}
    made = []

    def make(factory, *args, show: bool = True, size: tuple[int, int] | None = (800, 500), **kwargs):
        widget = factory(*args, **kwargs)
        qtbot.addWidget(widget)
        made.append(widget)
        if size is not None:
            widget.resize(*size)
        if show:
            widget.show()
            qtbot.waitExposed(widget)
        return widget

    yield make

    for widget in made:
        widget.close()
    qapp.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    leaked = [w for w in qapp.topLevelWidgets() if id(w) not in before and w.isVisible()]
    assert not leaked, f"widgets left open after the test: {[type(w).__name__ for w in leaked]}"
    # a button QTest leaves down makes every later mouse move in this process a drag (no hovers)
    assert qapp.mouseButtons() == Qt.MouseButton.NoButton, \
        f"mouse buttons left held after the test: {qapp.mouseButtons()} (QTest.mouseDClick ends without a release)"


from tests.ddbserver.fixture import ddb_cluster, ddb_server, ddb_server_factory  # noqa: E402,F401
# One server of each engine per session, shared by every module that asks (a module that registered
# one itself would start a second one).
from tests.dask_fixture import dask_cluster  # noqa: E402,F401
from tests.druid_fixture import druid_engine  # noqa: E402,F401
from tests.druid_fixture import druid_msq_engine  # noqa: E402,F401  (per module: Druid 27 with MSQ)
from tests.mongodb_fixture import mongo_server  # noqa: E402,F401
from tests.postgres_fixture import pg_engine  # noqa: E402,F401
from tests.questdb_fixture import questdb_server  # noqa: E402,F401


# --- the engines' tests: references at the test module's own SCALE ----------------------------------
@pytest.fixture(scope="module")
def duck(request, tmp_path_factory):
    """DuckDB's target over the module's ``SCALE`` (taq): the reference for reads and computations."""
    from workloads.datasets.schema import StringMode
    from workloads.targets import make_target

    target = make_target("duckdb", {"path": str(tmp_path_factory.mktemp("duck") / "d.duckdb"), "threads": 1})
    layout = target.prepare("taq", request.module.SCALE, StringMode.ARROW)
    target.open(layout)
    yield target, layout
    target.close()


@pytest.fixture(scope="module")
def day_frames(request):
    """The generator's taq days at the module's ``SCALE``, object strings."""
    from workloads.datasets import get_dataset
    from workloads.datasets.schema import StringMode

    scale = request.module.SCALE
    return [get_dataset("taq").day_frame(i, scale, StringMode.OBJECT) for i in range(scale.days)]



# --- running in parallel (pytest -n 2) -------------------------------------------------------------------
# druid_msq_engine is per module, but grouped with the rest so that two Druid clusters never start at
# once on the two workers (2 cores: each takes ~20-40 s of both)
SERVER_FIXTURES = ("druid_engine", "druid_msq_engine", "mongo_server", "pg_engine", "questdb_server")


def pytest_xdist_make_scheduler(config, log):
    """Each test module runs in one worker process (its module fixtures are built once), and every
    module that asks for one of the session's servers in the same one (each server starts once).
    (pytest-xdist's own ``--dist loadgroup`` cannot regroup tests under pytest 9.)"""
    from pathlib import Path

    from xdist.scheduler import LoadScopeScheduling

    root = Path(config.rootpath)

    class ModulesAndServers(LoadScopeScheduling):
        _scopes: dict[str, str] = {}

        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            if module not in self._scopes:
                text = (root / module).read_text(encoding="utf-8") if (root / module).is_file() else ""
                self._scopes[module] = "servers" if any(name in text for name in SERVER_FIXTURES) else module
            return self._scopes[module]

        def remove_node(self, node):
            """A worker that crashed (the watchdog ends a stuck test's): its other tests go to a new
            worker, but not the one it crashed in (xdist's own would run it again, and hang again)."""
            crashed = super().remove_node(node)
            for unit in self.workqueue.values():
                if crashed in unit:
                    unit[crashed] = True
            return crashed

    return ModulesAndServers(config, log)
