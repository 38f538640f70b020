"""TargetsPanel and ClusterDialog against the real DolphinDB test server: add, test, refresh,
remove, passwords, state round trip, and a GUI thread that keeps running while a test waits."""
from __future__ import annotations

import json
import socket
import time

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QDialogButtonBox, QInputDialog, QMessageBox

from tests.chserver.fixture import ch_server  # noqa: F401
from tests.ddbserver.fixture import ddb_cluster, ddb_server  # noqa: F401
from widgets.targets.cluster_dialog import ClusterDialog
from widgets.targets.panel import TargetsPanel
from workloads.targets.dolphindb.cluster import ClusterProfile

pytestmark = pytest.mark.timeout(60)
PASSWORD = "123456"


class FakeStore(dict):
    """The password_store protocol, kept in a dict (the app passes a keyring adapter)."""

    def __init__(self, usable: bool = True):
        super().__init__()
        self.usable = usable

    def load(self, profile, user):
        return self.get((profile, user))

    def save(self, profile, user, password):
        self[(profile, user)] = password
        return True

    def forget(self, profile, user):
        self.pop((profile, user), None)

    def available(self):
        return self.usable


@pytest.fixture
def store():
    return FakeStore()


@pytest.fixture
def panel(make_widget, tmp_path, store):
    return make_widget(TargetsPanel, tmp_path / "data", store, size=(700, 520))


@pytest.fixture
def faults(ddb_server):  # noqa: F811
    yield ddb_server.control
    ddb_server.control(reset=True)


def entry(name: str, *nodes: tuple[int, str], host: str = "127.0.0.1", **profile) -> dict:
    return {"profile": {"name": name, "user": "admin", **profile,
                        "nodes": [{"host": host, "port": port, "role": role} for port, role in nodes]},
            "db_prefix": "dfs://tickbench"}


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_check(qtbot, panel, key: str, action: str = "test") -> None:
    with qtbot.waitSignal(panel.check_finished, timeout=15_000) as blocker:
        assert getattr(panel, {"test": "test_profile", "refresh": "refresh_nodes"}[action])(key)
    assert blocker.args == [key]


def state_text(panel, key: str, address: str = "") -> str:
    return panel.item_for(key, address).text(1)


def fill_dialog(dialog: ClusterDialog, name: str, host: str, port: str, password: str = "",
                remember: bool = False) -> None:
    dialog.name_edit.setText(name)
    dialog.nodes_table.item(0, 0).setText(host)
    dialog.nodes_table.item(0, 1).setText(port)
    dialog.password_edit.setText(password)
    dialog.remember_check.setChecked(remember)


def press_ok(qtbot, dialog: ClusterDialog) -> None:
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)


# --- embedded targets ---------------------------------------------------------------------------
def test_embedded_targets_are_always_ready_with_their_folder(panel, tmp_path):
    data = tmp_path / "data"
    targets = {key: (label, kind, config) for key, label, kind, config in panel.targets()}
    assert list(targets) == ["duckdb", "pickle", "parquet", "feather", "clickhouse", "arcticdb", "hdf5"]
    assert targets["duckdb"][2] == {"path": str(data / "tickbench_data.duckdb")}
    assert targets["clickhouse"][2] == {"path": str(data / "clickhouse")}
    assert targets["arcticdb"][2] == {"uri": f"lmdb://{data / 'arcticdb'}?map_size=4GB"}
    assert all(targets[k][2] == {"root": str(data)} and targets[k][1] == k
               for k in ("pickle", "parquet", "feather", "hdf5"))
    for key in targets:
        item = panel.item_for(key)
        assert item.text(1) == "ready" and str(data) in item.text(2)
    assert panel.resolve_config("parquet") == {"root": str(data)}
    panel.select("duckdb")
    assert str(data / "tickbench_data.duckdb") in panel.detail_label.text()
    assert not panel.test_button.isEnabled() and not panel.remove_button.isEnabled()
    with pytest.raises(KeyError, match="no target 'ddb:nope'"):
        panel.resolve_config("ddb:nope")


def test_an_engine_whose_client_is_missing_says_what_to_install(make_widget, tmp_path, monkeypatch):
    import workloads.targets.engines as engines
    installed = engines._installed
    monkeypatch.setattr(engines, "_installed", lambda module: module != "arcticdb" and installed(module))
    panel = make_widget(TargetsPanel, tmp_path / "data", None, size=(700, 520))
    assert "arcticdb" not in [key for key, *_ in panel.targets()]      # the builder cannot pick it
    assert panel.item_for("arcticdb").text(1) == "not installed"
    panel.select("arcticdb")
    assert "install tickbench[arcticdb]" in panel.detail_label.text()


def test_a_clickhouse_server_profile_is_listed_and_refused_port_turns_red(qtbot, make_widget, tmp_path):
    panel = make_widget(TargetsPanel, tmp_path / "data", None, size=(700, 520))
    dialog = panel.add_server_dialog()
    dialog.name_edit.setText("analytics")
    dialog.host_edit.setText("127.0.0.1")
    dialog.port_spin.setValue(closed_port())
    dialog.password_edit.setText("secret")
    dialog.accept()
    assert "ch:analytics" in [key for key, *_ in panel.targets()]
    assert panel.save_state()["profiles"][0]["kind"] == "clickhouse"
    assert "secret" not in json.dumps(panel.save_state())
    assert panel.resolve_config("ch:analytics")["password"] == "secret"
    with qtbot.waitSignal(panel.check_finished, timeout=10_000):
        assert panel.test_profile("ch:analytics")
    assert panel.light("ch:analytics").state == "failed"
    assert panel.item_for("ch:analytics").text(1) in ("refused", "error")


def test_a_clickhouse_server_tests_green_then_red_on_a_wrong_password(qtbot, make_widget, tmp_path, ch_server):  # noqa: F811
    panel = make_widget(TargetsPanel, tmp_path / "data", None, size=(700, 520))
    key = panel.add_profile({"kind": "clickhouse", "profile": {"name": "standin", "host": "127.0.0.1",
                                                               "port": ch_server.port, "user": "tick"}},
                            password=ch_server.users["tick"])
    with qtbot.waitSignal(panel.check_finished, timeout=15_000):
        panel.test_profile(key)
    assert panel.light(key).state == "ok" and "ClickHouse" in panel.light(key).detail
    edited = panel.replace_profile(key, panel.registry.profile(key).to_dict(), password="wrong")
    with qtbot.waitSignal(panel.check_finished, timeout=15_000):
        panel.test_profile(edited)
    assert panel.light(edited).state == "failed" and panel.item_for(edited).text(1) == "wrong password"


# --- the dialog ---------------------------------------------------------------------------------
def test_add_through_the_dialog_then_test_it_green(qtbot, panel, store, ddb_server):  # noqa: F811
    with qtbot.waitSignal(panel.targets_changed, timeout=2_000):
        qtbot.mouseClick(panel.add_button, Qt.MouseButton.LeftButton)
        dialog = panel.active_dialog
        assert dialog is not None and dialog.isVisible() and dialog.remember_check.isEnabled()
        fill_dialog(dialog, "lab", "127.0.0.1", "not-a-port", PASSWORD, remember=True)
        press_ok(qtbot, dialog)
        assert dialog.isVisible() and dialog.error_label.text() == "Node 1: port 'not-a-port' is not a number"
        dialog.nodes_table.item(0, 1).setText(str(ddb_server.port))
        dialog.prefix_edit.setText("tickbench")
        press_ok(qtbot, dialog)
        assert dialog.isVisible() and dialog.error_label.text().startswith("Database prefix: database path")
        dialog.prefix_edit.setText("dfs://lab")
        press_ok(qtbot, dialog)
    assert panel.profile_keys() == ["ddb:lab"]
    key, label, kind, config = panel.targets()[-1]
    assert (key, label, kind) == ("ddb:lab", "DolphinDB: lab", "dolphindb")
    assert config["db_prefix"] == "dfs://lab" and config["node_policy"] == "one" and "password" not in config
    assert config["profile"]["nodes"] == [{"host": "127.0.0.1", "port": ddb_server.port, "role": "single"}]
    assert store == {("lab", "admin"): PASSWORD}               # remembered in the (fake) keyring
    assert state_text(panel, key) == "not tested"
    run_check(qtbot, panel, key)
    address = f"127.0.0.1:{ddb_server.port}"
    light = panel.light(key, address)
    assert light.state == "ok" and "tickbench-test-server" in light.detail
    assert state_text(panel, key, address) == "ok" and state_text(panel, key) == "ok"
    assert panel.item_for(key, address).toolTip(1) == light.detail


def test_dialog_validation_names_what_is_wrong(make_widget):
    dialog = make_widget(ClusterDialog, None, ["taken"], keyring_available=False, show=False)
    assert not dialog.remember_check.isEnabled() and "No usable keyring" in dialog.remember_check.toolTip()
    cases = [
        (lambda: dialog.name_edit.setText(""), "Name: give the cluster a name"),
        (lambda: dialog.name_edit.setText("taken"), "Name: a cluster named 'taken' exists already"),
        (lambda: (dialog.name_edit.setText("ok"), dialog.nodes_table.item(0, 0).setText("")), "Node 1: the host is empty"),
        (lambda: dialog.nodes_table.item(0, 0).setText("my host"), "Node 1: host 'my host' must not contain spaces"),
        (lambda: (dialog.nodes_table.item(0, 0).setText("h"), dialog.nodes_table.item(0, 1).setText("70000")),
         "Node 1: port 70000 is not between 1 and 65535"),
        (lambda: (dialog.nodes_table.item(0, 1).setText("8848"), dialog.add_node_row("h", "8848", "data")),
         "Node 2: h:8848 is listed twice"),
        (lambda: (dialog.nodes_table.removeRow(1), dialog.user_edit.setText(" ")), "User: give a user name"),
    ]
    for change, message in cases:
        change()
        dialog.accept()
        assert dialog.error_label.text().startswith(message), dialog.error_label.text()
        assert dialog.result() != ClusterDialog.DialogCode.Accepted
    dialog.user_edit.setText("admin")
    dialog.nodes_table.removeRow(0)
    assert dialog.validate() == "Nodes: add at least one node (host and port)"


# --- verdicts -----------------------------------------------------------------------------------
def test_wrong_password_turns_red_and_asks_again(qtbot, panel, store, ddb_server, monkeypatch):  # noqa: F811
    key = panel.add_profile(entry("prod", (ddb_server.port, "single")), password="wrong")
    run_check(qtbot, panel, key)
    address = f"127.0.0.1:{ddb_server.port}"
    light = panel.light(key, address)
    assert light.state == "failed" and state_text(panel, key, address) == "wrong password"
    assert "refused the login of user 'admin'" in light.detail
    panel.select(key, address)
    assert panel.detail_label.text() == light.detail and panel.detail_label.property("role") == "error"
    asked = []
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: (asked.append(a[2]), (PASSWORD, True))[1])
    run_check(qtbot, panel, key)                 # the refused password is not used again
    assert len(asked) == 1 and "admin" in asked[0] and panel.light(key, address).state == "ok"


def test_closed_port_is_refused(qtbot, panel):
    port = closed_port()
    key = panel.add_profile(entry("gone", (port, "single")), password=PASSWORD)
    started = time.monotonic()
    run_check(qtbot, panel, key)
    assert time.monotonic() - started < 6
    light = panel.light(key, f"127.0.0.1:{port}")
    assert light.state == "failed" and light.word == "refused" and "refused the connection" in light.detail
    assert state_text(panel, key) == "refused"


def test_refresh_lists_the_clusters_nodes(qtbot, panel, ddb_cluster):  # noqa: F811
    key = panel.add_profile(entry("fake", (ddb_cluster.port, "controller"), node_policy="round_robin"),
                            password=PASSWORD)
    with qtbot.waitSignal(panel.targets_changed, timeout=15_000):
        run_check(qtbot, panel, key, "refresh")
    config = dict((k, c) for k, _l, _kind, c in panel.targets())[key]
    nodes = {(n["port"], n["role"]) for n in config["profile"]["nodes"]}
    assert nodes == {(ddb_cluster.port, "controller")} | {(p, "data") for p in ddb_cluster.data_ports}
    assert config["node_policy"] == "round_robin"
    for port in ddb_cluster.ports:
        assert panel.item_for(key, f"127.0.0.1:{port}") is not None
        assert panel.light(key, f"127.0.0.1:{port}").word == "running"
    panel.select(key)
    assert "4 nodes found via" in panel.detail_label.text()
    run_check(qtbot, panel, key)                 # then every listed node answers a test
    assert all(panel.light(key, f"127.0.0.1:{p}").state == "ok" for p in ddb_cluster.ports)


def test_refresh_on_a_closed_port_gives_the_verdict(qtbot, panel):
    port = closed_port()
    key = panel.add_profile(entry("nowhere", (port, "controller")), password=PASSWORD)
    run_check(qtbot, panel, key, "refresh")
    assert panel.light(key, f"127.0.0.1:{port}").word == "refused"
    assert panel.targets()[-1][3]["profile"]["nodes"][0]["port"] == port        # nodes kept as typed


# --- passwords, removal, state --------------------------------------------------------------------
def test_resolve_config_asks_once_and_cancel_gives_none(panel, store, monkeypatch, ddb_server):  # noqa: F811
    key = panel.add_profile(entry("ask", (ddb_server.port, "single")))
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("", False))
    assert panel.resolve_config(key) is None
    asked = []
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: (asked.append(1), ("s3cret", True))[1])
    config = panel.resolve_config(key)
    assert config["password"] == "s3cret" and config["profile"]["name"] == "ask"
    assert panel.resolve_config(key)["password"] == "s3cret" and len(asked) == 1
    assert store == {}                                          # typed, not remembered
    store[("stored", "admin")] = "from-keyring"
    other = panel.add_profile(entry("stored", (ddb_server.port, "single")))
    assert panel.resolve_config(other)["password"] == "from-keyring" and len(asked) == 1


def test_remove_forgets_the_password(qtbot, panel, store, monkeypatch, ddb_server):  # noqa: F811
    key = panel.add_profile(entry("old", (ddb_server.port, "single")), password=PASSWORD, remember=True)
    assert store == {("old", "admin"): PASSWORD}
    panel.select(key)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.No)
    qtbot.mouseClick(panel.remove_button, Qt.MouseButton.LeftButton)
    assert panel.profile_keys() == [key]
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(panel.targets_changed, timeout=2_000):
        qtbot.mouseClick(panel.remove_button, Qt.MouseButton.LeftButton)
    assert panel.profile_keys() == [] and store == {} and not [k for k, *_ in panel.targets() if ":" in k]


def test_edit_renames_and_keeps_the_password(qtbot, panel, store, ddb_server):  # noqa: F811
    key = panel.add_profile(entry("a", (ddb_server.port, "single")), password=PASSWORD, remember=True)
    dialog = panel.edit_dialog(key)
    assert dialog.name_edit.text() == "a" and dialog.remember_check.isChecked()
    assert "leave empty to keep it" in dialog.password_edit.placeholderText()
    dialog.name_edit.setText("b")
    dialog.policy_combo.setCurrentIndex(dialog.policy_combo.findData("random"))
    press_ok(qtbot, dialog)
    assert panel.profile_keys() == ["ddb:b"] and store == {("b", "admin"): PASSWORD}
    assert panel.targets()[-1][3]["node_policy"] == "random"


def test_the_dialog_keeps_users_on_compute_nodes_only_when_asked(qtbot, panel, store, ddb_server):  # noqa: F811
    key = panel.add_profile(entry("grp", (ddb_server.port, "controller"), (1235, "data"), (1236, "compute")),
                            password=PASSWORD)
    dialog = panel.edit_dialog(key)
    assert not dialog.compute_check.isChecked()
    dialog.compute_check.setChecked(True)
    press_ok(qtbot, dialog)
    assert panel.targets()[-1][3]["profile"]["use_compute_nodes"] is True
    again = panel.edit_dialog(key)
    assert again.compute_check.isChecked()                       # an edit keeps it
    again.close()


def test_state_round_trip_without_passwords(make_widget, panel, tmp_path, store, ddb_server):  # noqa: F811
    panel.add_profile(entry("one", (ddb_server.port, "single"), protocol="ARROW"),
                      password="typed", remember=True)
    panel.add_profile(entry("two", (1234, "controller"), (1235, "data"), node_policy="random"), password="x")
    state = panel.save_state()
    assert "typed" not in json.dumps(state) and '"x"' not in json.dumps(state)
    again = make_widget(TargetsPanel, tmp_path / "data", FakeStore(), show=False)
    again.restore_state(json.loads(json.dumps(state)))
    assert again.targets() == panel.targets()
    again.restore_state({"version": 1, "profiles": [{"profile": {"name": "bad", "nodes": []}}, state["profiles"][0]]})
    assert again.profile_keys() == ["ddb:one"]                   # the broken one is left out


def test_a_saved_profile_with_compression_under_arrow_is_kept_with_compression_off(make_widget, tmp_path):
    with pytest.raises(ValueError, match="compression works only with the DDB protocol"):
        ClusterProfile.from_dict({"name": "x", "nodes": [{"host": "127.0.0.1", "port": 1}],
                                  "protocol": "PICKLE", "compress": True})
    panel = make_widget(TargetsPanel, tmp_path / "data", FakeStore())
    saved = entry("old", (1, "single"), protocol="ARROW")
    saved["profile"]["compress"] = True                          # as an older version saved it
    panel.restore_state({"version": 1, "profiles": [saved]})
    assert panel.profile_keys() == ["ddb:old"]
    config = next(c for key, _label, _kind, c in panel.targets() if key == "ddb:old")
    assert config["protocol"] == "ARROW" and config["compress"] is False
    panel.select("ddb:old")
    assert "Compression was turned off" in panel.detail_label.text()


# --- the GUI thread stays free ----------------------------------------------------------------------
def test_a_slow_server_never_blocks_the_gui_thread(qtbot, panel, ddb_server, faults):  # noqa: F811
    key = panel.add_profile(entry("slow", (ddb_server.port, "single")), password=PASSWORD)
    panel.select(key)
    faults(delay=4.0, delay_match="^(?!testServerControl)")     # every request but the reset
    ticks: list[float] = []
    timer = QTimer(panel)
    timer.setInterval(20)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start()
    with qtbot.waitSignal(panel.check_finished, timeout=15_000):
        started = time.monotonic()
        assert panel.test_profile(key)
        # the click returned before the answer (the server answers in 4 s, the check gives up at 2 s)
        assert state_text(panel, key) == "testing…" and not panel.test_button.isEnabled()
    elapsed = time.monotonic() - started
    timer.stop()
    light = panel.light(key, f"127.0.0.1:{ddb_server.port}")
    assert light.state == "failed" and light.word == "timed out" and "did not answer within 2 s" in light.detail
    assert elapsed > 1.5                                        # it did wait for the 2 s limit
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    # the timer kept firing throughout: a GUI thread blocked by the check would show one gap as
    # long as the wait, a loaded machine only short ones
    assert len(ticks) > 10 and max(gaps) < elapsed / 4, (len(ticks), max(gaps), elapsed)


def test_a_clusters_host_agents_are_saved_with_it_and_their_token_in_the_keyring(qtbot, panel, store):
    """Issue 40: a server target takes its hosts' agents in its profile; the token never in its file."""
    with qtbot.waitSignal(panel.targets_changed, timeout=2_000):
        qtbot.mouseClick(panel.add_button, Qt.MouseButton.LeftButton)
        dialog = panel.active_dialog
        fill_dialog(dialog, "lab", "127.0.0.1", "8848", PASSWORD)
        dialog.agents_edit.setText("127.0.0.1:7071, db2")
        press_ok(qtbot, dialog)
        assert dialog.isVisible() and dialog.error_label.text().startswith("Host agents: agent 'db2': give HOST:PORT")
        dialog.agents_edit.setText("127.0.0.1:7071, [::1]:7072")
        dialog.agent_token_edit.setText("a-token-of-some-length")
        press_ok(qtbot, dialog)
    key, _label, _kind, config = panel.targets()[-1]
    assert config["agents"] == ["127.0.0.1:7071", "[::1]:7072"] and "agent_token" not in config
    assert store[("lab", "tickbench-agent")] == "a-token-of-some-length"
    assert panel.registry.resolve(key, ask=lambda *_: PASSWORD)["agent_token"] == "a-token-of-some-length"
    saved = repr([profile.to_dict() for profile in panel.registry.profiles()])      # what is written
    assert "127.0.0.1:7071" in saved and "a-token-of-some-length" not in saved
