"""The Load generators panel: its values and signals, placement shown per host, pins, errors that
keep the hosts, live figures; and in the real window against a real Dask cluster on loopback
(Connect lists its two workers, a refused port says so without freezing the window, a run started
with the box ticked carries the scheduler in its stored scenario)."""
from __future__ import annotations

import socket
import time

import pytest
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow

from tests.test_main_window import window_factory  # noqa: F401  the real window, made as there
from widgets.hosts.host_table import HOST, NAME, ROWS, USERS, VERSIONS
from widgets.hosts.load_generators import LoadGeneratorsPanel
from workloads.distributed.cluster import ClusterView, HostView
from workloads.distributed.hosts import version_differences
from workloads.local_engines.base import free_port
from workloads.scenario import Scenario

pytestmark = pytest.mark.timeout(180)
ALPHA, BETA = "tcp://127.0.0.1:40001", "tcp://127.0.0.1:40002"


def environment(pandas: str = "2.3.3") -> dict:
    return {"python": "3.11.9", "libraries": {"pandas": pandas, "distributed": "2026.8.0"}}


def two_hosts(beta_pandas: str = "2.3.3") -> ClusterView:
    """Two client machines as a scheduler describes them: alpha with 4 cores, beta with 2."""
    environments = {ALPHA: environment(), BETA: environment(beta_pandas)}
    hosts = [HostView(ALPHA, "alpha", 4, 16_000_000_000, environments[ALPHA], 0.0002, 0.0004),
             HostView(BETA, "beta", 2, 8_000_000_000, environments[BETA], -0.0011, 0.0007)]
    return ClusterView("tcp://127.0.0.1:8786", hosts, version_differences(environments))


@pytest.fixture
def panel(make_widget):
    return make_widget(LoadGeneratorsPanel, size=(460, 420))


def users(panel) -> dict[str, str]:
    return {address: panel.table.text(address, USERS) for address in panel.table.addresses()}


def connected(panel, view=None, users_count: int = 3) -> LoadGeneratorsPanel:
    panel.enabled_check.setChecked(True)
    panel.address_edit.setText("tcp://127.0.0.1:8786")
    panel.set_users(users_count)
    panel.show_cluster(view or two_hosts())
    return panel


# ---- values and signals -------------------------------------------------------------------------
def test_off_the_users_run_here_and_the_empty_state_says_what_to_do(qtbot, panel):
    assert panel.scheduler() == "" and panel.placement() == "spread" and panel.pins() == {}
    assert panel.empty_label.isVisible() and "run on this machine" in panel.empty_label.text()
    assert not panel.table.isVisible() and not panel.connect_button.isEnabled()
    panel.address_edit.setText("tcp://127.0.0.1:8786")
    assert panel.scheduler() == ""                       # typed, but the box is off
    with qtbot.waitSignal(panel.changed):
        panel.enabled_check.setChecked(True)
    assert panel.scheduler() == "tcp://127.0.0.1:8786" and panel.connect_button.isEnabled()
    assert panel.empty_label.text().startswith("Not connected")


def test_connect_asks_for_the_typed_address_and_never_connects_itself(qtbot, panel):
    panel.enabled_check.setChecked(True)
    with qtbot.assertNotEmitted(panel.connect_requested):
        qtbot.mouseClick(panel.connect_button, Qt.MouseButton.LeftButton)
    assert "address" in panel.status_label.text() and panel.status_label.property("role") == "error"
    qtbot.keyClicks(panel.address_edit, "127.0.0.1:8786")         # Dask's tcp:// is implied
    assert panel.scheduler() == "tcp://127.0.0.1:8786"
    with qtbot.waitSignal(panel.connect_requested) as asked:
        qtbot.mouseClick(panel.connect_button, Qt.MouseButton.LeftButton)
    assert asked.args == ["tcp://127.0.0.1:8786"]
    assert not panel.connect_button.isEnabled() and panel.connect_button.text() == "Connecting…"
    assert "Connecting to tcp://127.0.0.1:8786" in panel.status_label.text()
    panel.set_connecting(False)
    assert panel.connect_button.isEnabled() and panel.connect_button.text() == "Connect"


def test_set_values_shows_a_loaded_scenario_and_an_empty_scheduler_keeps_the_typed_address(qtbot, panel):
    with qtbot.waitSignal(panel.changed):
        panel.set_values("tcp://127.0.0.1:8786", "pinned", {"alpha": 3})
    assert panel.enabled_check.isChecked() and panel.scheduler() == "tcp://127.0.0.1:8786"
    assert panel.placement() == "pinned" and panel.pins() == {"alpha": 3}
    panel.set_values("", "spread", {})
    assert panel.scheduler() == "" and panel.address_edit.text() == "tcp://127.0.0.1:8786"
    assert panel.placement() == "spread" and panel.pins() == {}


def test_state_round_trips_and_an_address_less_state_stays_off(make_widget, panel):
    connected(panel)
    panel.placement_combo.setCurrentIndex(panel.placement_combo.findData("packed"))
    again = make_widget(LoadGeneratorsPanel, show=False)
    again.restore_state(panel.save_state())
    assert (again.scheduler(), again.placement()) == ("tcp://127.0.0.1:8786", "packed")
    again.restore_state({"version": 1, "enabled": True, "address": "", "pins": {"a": "x"}})
    assert again.scheduler() == "" and again.pins() == {}


# ---- the hosts ----------------------------------------------------------------------------------
def test_the_placement_recomputes_the_users_each_host_gets(qtbot, panel):
    connected(panel, users_count=3)
    assert panel.table.isVisible() and not panel.empty_label.isVisible()
    assert [panel.table.item(r, NAME).text() for r in range(2)] == ["alpha", "beta"]
    assert panel.table.item(0, HOST).text() == "127.0.0.1:40001"          # the full address in its tooltip
    assert users(panel) == {ALPHA: "2", BETA: "1"}                       # spread evenly
    with qtbot.waitSignal(panel.changed):
        panel.placement_combo.setCurrentIndex(panel.placement_combo.findData("packed"))
    assert users(panel) == {ALPHA: "3", BETA: "0"}                       # alpha's 4 cores first
    panel.set_users(8)
    assert users(panel) == {ALPHA: "5", BETA: "3"}                       # 4 + 2 cores, then in turn
    assert "8 users" in panel.note_label.text()


def test_pinned_spin_boxes_give_the_pins_starting_from_an_even_spread(qtbot, panel):
    connected(panel, users_count=3)
    panel.placement_combo.setCurrentIndex(panel.placement_combo.findData("pinned"))
    assert panel.pins() == {"alpha": 2, "beta": 1}        # keyed by worker name: it outlives a port
    with qtbot.waitSignal(panel.changed):
        panel.table.pin_spin(BETA).setValue(0)
    assert panel.pins() == {"alpha": 2} and "2 users in all" in panel.note_label.text()
    panel.table.pin_spin(ALPHA).setValue(7)
    assert panel.pins() == {"alpha": 7}
    # a scenario pinned by address keeps its keys; a host the cluster lacks is dropped, and said so
    panel.set_values("tcp://127.0.0.1:8786", "pinned", {BETA: 5, "gamma": 1})
    panel.show_cluster(two_hosts())
    assert panel.table.pin_spin(BETA).value() == 5 and panel.pins() == {BETA: 5}
    assert "dropped: gamma" in panel.status_label.text()
    panel.table.pin_spin(ALPHA).setValue(1)
    assert panel.pins() == {BETA: 5, "alpha": 1}
    panel.placement_combo.setCurrentIndex(panel.placement_combo.findData("spread"))
    assert panel.table.pin_spin(ALPHA) is None and users(panel) == {ALPHA: "2", BETA: "1"}


def test_versions_that_differ_are_flagged_with_the_lines_naming_the_host(panel):
    connected(panel, two_hosts(beta_pandas="2.2.0"))
    flagged = panel.table.item(1, VERSIONS)
    assert flagged.text() == "⚠ differs" and "pandas: 2.2.0 on tcp://127.0.0.1:40002" in flagged.toolTip()
    assert panel.status_label.property("role") == "warning" and "Versions differ" in panel.status_label.text()
    panel.show_cluster(two_hosts())
    assert [panel.table.item(r, VERSIONS).text() for r in range(2)] == ["same", "same"]


def test_an_error_is_shown_and_the_hosts_stay(panel):
    connected(panel)
    panel.set_connecting(True)
    panel.show_error("cannot reach the Dask scheduler at tcp://127.0.0.1:8786: timed out")
    assert panel.status_label.text().startswith("cannot reach") and panel.status_label.property("role") == "error"
    assert panel.table.rowCount() == 2 and panel.table.isVisible() and panel.connect_button.isEnabled()


def test_live_figures_update_the_cells_in_place(panel):
    connected(panel, users_count=3)
    before = [panel.table.item(r, ROWS) for r in range(2)]
    assert [item.text() for item in before] == ["–", "–"]
    panel.show_live({ALPHA: 1, BETA: 1}, {ALPHA: 2_345_678.0, BETA: 950.4})
    assert [panel.table.item(r, ROWS) for r in range(2)] == before            # the same cells
    assert [item.text() for item in before] == ["2.35 M", "950"]
    assert before[0].toolTip() == "2,345,678 rows/s"
    assert users(panel) == {ALPHA: "1", BETA: "1"} and "running step" in panel.note_label.text()
    panel.show_live({}, {})                           # a run on this machine: back to what is placed
    assert users(panel) == {ALPHA: "2", BETA: "1"} and before[0].text() == "–"
    panel.placement_combo.setCurrentIndex(panel.placement_combo.findData("pinned"))
    panel.show_live({ALPHA: 2, BETA: 1}, {BETA: 12_500.0})
    assert panel.pins() == {"alpha": 2, "beta": 1} and before[1].text() == "12.5 k"


# ---- the real window and a real Dask cluster on loopback ----------------------------------------


def ticking(parent) -> list[float]:
    """The GUI thread's heartbeat: a tick every 20 ms while it is free."""
    ticks: list[float] = []
    timer = QTimer(parent, interval=20)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start()
    return ticks


def test_connect_lists_the_clusters_workers_and_a_refused_port_says_so_without_freezing(
        qtbot, window_factory, dask_cluster):  # noqa: F811
    window = window_factory()
    panel = window.load_generators
    qtbot.mouseClick(panel.enabled_check, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(panel.address_edit, dask_cluster.scheduler)
    qtbot.mouseClick(panel.connect_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.table.rowCount() == 2 and panel.connect_button.isEnabled(), timeout=60_000)
    assert {panel.table.item(r, NAME).text() for r in range(2)} == {"host-1", "host-2"}
    assert all(a.startswith("tcp://127.0.0.1:") for a in panel.table.addresses())
    assert [panel.table.item(r, VERSIONS).text() for r in range(2)] == ["same", "same"]
    assert panel.status_label.text().startswith("Connected: 2 hosts, 2 cores")

    refused = f"tcp://127.0.0.1:{free_port()}"
    panel.address_edit.setText(refused)
    qtbot.mouseClick(panel.connect_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.connect_button.isEnabled(), timeout=30_000)
    assert f"cannot reach the Dask scheduler at {refused}" in panel.status_label.text()
    assert "refused" in panel.status_label.text().lower() and "ClusterError" not in panel.status_label.text()
    assert panel.table.rowCount() == 2                            # the hosts shown before stay

    # a port that accepts and never answers: the client waits out its 10 s, off the GUI thread
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        panel.address_edit.setText(address)
        ticks = ticking(window)
        started = time.monotonic()
        qtbot.mouseClick(panel.connect_button, Qt.MouseButton.LeftButton)
        assert not panel.connect_button.isEnabled()              # the click returned before the answer
        qtbot.waitUntil(lambda: panel.connect_button.isEnabled(), timeout=60_000)
    waited = time.monotonic() - started
    assert f"cannot reach the Dask scheduler at {address}" in panel.status_label.text()
    assert waited > 5                                             # it did wait for the answer...
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    # ...and the window kept painting throughout: a GUI thread blocked by the connect would show
    # one gap as long as the wait, a loaded machine only short ones
    assert len(ticks) > 10 and max(gaps) < waited / 4, (len(ticks), max(gaps), waited)


def test_a_run_started_with_the_box_ticked_runs_on_the_cluster(qtbot, window_factory, dask_cluster):  # noqa: F811
    window = window_factory()
    panel = window.load_generators
    panel.set_values(dask_cluster.scheduler, "spread", {})
    with qtbot.waitSignal(panel.connect_requested):
        panel.connect_button.click()
    qtbot.waitUntil(lambda: panel.table.rowCount() == 2, timeout=60_000)
    window.builder.set_scenario(Scenario(name="on dask", workload="noop", users=(2,), operations=200))
    assert users(panel) == {a: "1" for a in panel.table.addresses()}   # the builder's users, spread
    live: list[dict] = []
    window.controller.snapshot_ready.connect(lambda s: live.append(dict(s.host_rows_per_s)))
    with qtbot.waitSignal(window.controller.run_finished, timeout=120_000) as finished:
        window.builder.run_button.click()
    result = finished.args[0]
    assert result.status == "completed", result.message
    scenario = window.store.run(result.run_id)["scenario"]
    assert (scenario["scheduler"], scenario["placement"]) == (dask_cluster.scheduler, "spread")
    assert any(set(rates) == set(panel.table.addresses()) for rates in live)   # both hosts measured live


def test_a_pinned_placement_without_pins_is_refused_before_anything_starts(qtbot, window_factory):  # noqa: F811
    window = window_factory()
    window.load_generators.set_values("tcp://127.0.0.1:1", "pinned", {})
    with qtbot.assertNotEmitted(window.controller.run_started):
        assert not window.scenario.start(Scenario(workload="noop", operations=1))
    assert "pinned placement needs" in window.builder.error_label.text()


def test_a_loaded_scenario_shows_its_cluster_and_the_builders_users_are_placed(window_factory, tmp_path):  # noqa: F811
    window = window_factory()
    path = tmp_path / "dask.toml"
    Scenario(workload="noop", users=(1, 2, 8), operations=1, scheduler="tcp://127.0.0.1:8786",
             placement="packed").save_toml(path)
    window.scenario.load_scenario(path)
    panel = window.load_generators
    assert (panel.scheduler(), panel.placement()) == ("tcp://127.0.0.1:8786", "packed")
    panel.show_cluster(two_hosts())
    assert users(panel) == {ALPHA: "5", BETA: "3"}                      # the sweep's largest step
    window.builder.users_edit.setText("1,2")
    assert users(panel) == {ALPHA: "2", BETA: "0"}


def test_the_dock_and_its_values_come_back_and_a_layout_saved_before_it_still_shows_it(
        qtbot, window_factory, tmp_path):  # noqa: F811
    # a layout saved by a window that had only the Targets and Scenario docks
    old = QMainWindow()
    old.setCentralWidget(QLabel("charts"))
    for name in ("targets_dock", "scenario_dock"):
        dock = QDockWidget(name, old, objectName=name)
        dock.setWidget(QLabel(name))
        old.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
    old.resize(1280, 800)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    settings.setValue("window/state", old.saveState())
    settings.sync()
    old.deleteLater()

    window = window_factory()
    dock = window.findChild(QDockWidget, "load_generators_dock")
    assert dock.isVisible() and dock.widget() is window.load_generators
    qtbot.waitUntil(lambda: dock.height() > window.height() // 5, timeout=2000)   # a share, not a sliver
    window.load_generators.set_values("tcp://127.0.0.1:8786", "packed", {})
    window.close()
    again = window_factory()
    assert (again.load_generators.scheduler(), again.load_generators.placement()) == ("tcp://127.0.0.1:8786", "packed")
    assert again.findChild(QDockWidget, "load_generators_dock").height() > again.height() // 5
