"""Test before password (issue 41, item 6): the targets panel's Test and Refresh check the kind's client
and the profile's ports before a password is asked for: a refused loopback port or a missing client
says so and the prompt is never called; a port that answers asks, then tests. Add server starts on
a kind this install can use."""
from __future__ import annotations

import socket

import pytest
from PySide6.QtWidgets import QInputDialog

from tests.test_targets_panel import closed_port, entry
from widgets.targets.panel import TargetsPanel

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def asked(monkeypatch):
    """Every password prompt, recorded (and cancelled)."""
    prompts = []
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: (prompts.append(a[2]), ("", False))[1])
    return prompts


@pytest.fixture
def panel(make_widget, tmp_path):
    return make_widget(TargetsPanel, tmp_path / "data", None, size=(700, 520))


def _server(panel, kind: str, port: int) -> str:
    dialog = panel.add_server_dialog()
    dialog.kind_combo.setCurrentIndex(dialog.kind_combo.findData(kind))
    dialog.name_edit.setText("lab")
    dialog.host_edit.setText("127.0.0.1")
    dialog.port_spin.setValue(port)
    dialog.accept()                      # no password typed: Test would have to ask for one
    return [key for key, *_ in panel.targets() if key.endswith(":lab")][0]


def test_a_refused_port_is_said_before_any_password_is_asked(qtbot, panel, asked):
    port = closed_port()
    key = _server(panel, "clickhouse", port)
    with qtbot.waitSignal(panel.check_finished, timeout=10_000):
        assert panel.test_profile(key)
    assert asked == []
    light = panel.light(key, f"127.0.0.1:{port}")
    assert light.state == "failed" and light.word == "refused" and "no password was asked for" in light.detail


def test_a_dolphindb_refresh_on_a_refused_port_asks_nothing(qtbot, panel, asked):
    port = closed_port()
    key = panel.add_profile(entry("nowhere", (port, "controller")))          # no password kept
    with qtbot.waitSignal(panel.check_finished, timeout=10_000):
        assert panel.refresh_nodes(key)
    assert asked == [] and panel.light(key, f"127.0.0.1:{port}").word == "refused"


def test_a_port_that_answers_asks_for_the_password_then_tests(qtbot, panel, asked):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        key = _server(panel, "clickhouse", port)
        with qtbot.waitSignal(panel.check_finished, timeout=10_000):
            assert panel.test_profile(key)
        qtbot.waitUntil(lambda: len(asked) == 1, timeout=5_000)     # listening: now the password is asked for
    assert "lab" in asked[0]


def test_a_missing_client_is_said_without_a_prompt_or_a_connection(panel, asked, monkeypatch):
    import workloads.targets.engines as engines
    key = _server(panel, "clickhouse", closed_port())
    installed = engines._installed
    monkeypatch.setattr(engines, "_installed", lambda module: module != "clickhouse_connect" and installed(module))
    assert panel.test_profile(key) is False
    assert asked == []
    light = panel.light(key, panel._profiles[key].addresses[0])
    assert light.word == "no client" and "install tickbench[clickhouse]" in light.detail


def test_add_server_starts_on_a_kind_this_install_can_use(panel, monkeypatch):
    import workloads.targets.engines as engines
    installed = engines._installed
    dialog = panel.add_server_dialog()
    assert dialog.kind == "clickhouse"                   # its client is here: the usual first choice
    dialog.reject()
    monkeypatch.setattr(engines, "_installed", lambda module: module != "clickhouse_connect" and installed(module))
    dialog = panel.add_server_dialog()
    assert dialog.kind != "clickhouse" and engines.missing_client(dialog.kind, server=True) is None
    dialog.reject()
