"""Fixtures for the Qt widget tests, to be merged into tests/conftest.py.

Until then the widget test modules import them from here (see the top of tests/test_widgets_*.py).
What they give:
- Qt runs offscreen (set before any Qt import: QT_QPA_PLATFORM=offscreen unless already set).
- `isolated_qt_settings` (autouse): QSettings and QStandardPaths point into the test's temp
  dir, so no test reads or writes the user's settings (napari conftest, vorta unit conftest).
- `light_theme`: the light theme at scale 1.0 before the test and again after it (themes are
  global; a test that switches to dark must not colour the next one).
- `make_widget`: builds a widget, registers it with qtbot (closed and deleted at teardown),
  optionally shows it and waits until it is exposed, and fails the test if the widget left
  a visible top-level window behind (napari's make_napari_viewer habit).
pytest-qt's own `qtbot` and `qapp` come from the plugin; `qt_default_raising = true` in
pyproject.toml makes a Qt-side exception fail the test.
"""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

import widgets  # noqa: E402,F401  guards against the PySide6 6.12.0 refcount bug before Qt is used


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


@pytest.fixture
def light_theme(qapp):
    from widgets.theme import apply_theme

    theme = apply_theme(qapp, "light", 1.0)
    yield theme
    apply_theme(qapp, "light", 1.0)


@pytest.fixture
def make_widget(qtbot, qapp, light_theme):
    """make_widget(cls_or_factory, *args, show=True, size=(800, 500), **kwargs) -> widget."""
    from PySide6.QtCore import QEvent

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
