"""Where and how the DolphinDB target connects: nodes at their publicName, Arrow checked on every
node a run may use, the bare probe socket only when probes run, a node's connection limit in its
own words, and PICKLE refused where the client would silently send DDB. (Timings are the test
server's, never DolphinDB's.)"""
from __future__ import annotations

import sys
from collections import namedtuple

import pytest

from tests.ddbserver.fixture import ddb_server_factory  # noqa: F401
from workloads.targets.dolphindb.cluster import (ClusterProfile, Node, discover_nodes, pickle_refusal, profile_from_discovery,
                               test_connection as check_connection)
from workloads.datasets.schema import Scale, StringMode
from workloads.targets.base import TargetError
from workloads.targets.dolphindb import DolphinDBTarget

pytestmark = pytest.mark.timeout(120)
SMALL = Scale(days=2, rows_per_day=2_000, symbols=20)
PASSWORD = "123456"
VersionInfo = namedtuple("VersionInfo", "major minor micro releaselevel serial")


def on(server, **extra) -> DolphinDBTarget:
    return DolphinDBTarget({"profile": server.profile(**extra), "password": PASSWORD, "timeout": 5,
                            "query_timeout": 30})


# --- publicName -------------------------------------------------------------------------------------
def test_refresh_nodes_routes_to_public_names(ddb_server_factory):  # noqa: F811
    # the nodes call themselves ::1 (where nothing listens: a connection there is refused), and
    # publish 127.0.0.1: only the public name reaches them
    server = ddb_server_factory("--data-nodes", "2", "--perf-host", "::1", "--public-name", "127.0.0.1")
    entry = ClusterProfile("lab", (Node("127.0.0.1", server.port, "controller"),), "admin", PASSWORD,
                           node_policy="round_robin")
    discovery = discover_nodes(entry)
    assert [(n.host, n.lan_host) for n in discovery.nodes] == [("127.0.0.1", "::1")] * 3
    profile = profile_from_discovery(entry, discovery)
    assert [n.address for n in profile.data_nodes] == [f"127.0.0.1:{p}" for p in server.data_ports]
    target = DolphinDBTarget({"profile": profile.to_dict(), "password": PASSWORD, "timeout": 3})
    layout = target.prepare("taq", SMALL, StringMode.ARROW)
    for worker in range(2):
        target.open(layout, worker)
        assert target.read_slice(layout, layout.days[0], layout.keys_sample[0]).node == profile.data_nodes[worker].address
        target.close()


def test_without_a_public_name_the_host_column_routes(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "2")            # publicName empty, host 127.0.0.1
    entry = ClusterProfile("lab", (Node("127.0.0.1", server.port, "controller"),), "admin", PASSWORD)
    discovery = discover_nodes(entry)
    assert [(n.host, n.lan_host) for n in discovery.nodes] == [("127.0.0.1", "127.0.0.1")] * 3
    assert [n.port for n in profile_from_discovery(entry, discovery).data_nodes] == server.data_ports


# --- Arrow on every node ------------------------------------------------------------------------------
def test_a_run_that_would_mix_arrow_and_ddb_replies_is_refused(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "3", "--no-arrow-on", "dnode2")
    with pytest.raises(TargetError, match=rf"would mix two formats.*127\.0\.0\.1:{server.data_ports[1]} answer "
                                          r"in the DDB format"):
        on(server, protocol="ARROW", node_policy="round_robin").prepare("taq", SMALL, StringMode.ARROW)
    # everyone on the first node (it has the plugin): one format, said so
    one = on(server, protocol="ARROW", node_policy="one")
    layout = one.prepare("taq", SMALL, StringMode.ARROW)
    assert one.reply_note == f"the server answered PROTOCOL_ARROW with Arrow on node 127.0.0.1:{server.data_ports[0]}"


def test_a_cluster_without_the_plugin_is_labelled_ddb_on_every_read(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "2", "--no-arrow-plugin")
    target = on(server, protocol="ARROW", node_policy="round_robin")
    layout = target.prepare("taq", SMALL, StringMode.ARROW)
    assert target.reply_note.startswith("the server answered PROTOCOL_ARROW in the DDB format (no formatArrow "
                                        "plugin) on all 2 nodes")
    target.open(layout, 1)
    try:
        result = target.read_day(layout, layout.days[0])
    finally:
        target.close()
    assert result.extra == {"reply_format": "DDB"} and result.phases == {}


# --- the probe socket ---------------------------------------------------------------------------------
def sessions(server, port: int) -> dict:
    return server.stats()["sessions"].get(str(port), {"open": 0, "logged_in": 0, "logins": 0})


def settled(server, port: int, key: str, expected: int, timeout: float = 5.0) -> int:
    """``key`` of the node's sessions once it equals ``expected`` or ``timeout`` has passed (the
    server notices a closed socket a moment after the client closed it)."""
    import time

    deadline = time.monotonic() + timeout
    value = sessions(server, port)[key]
    while value != expected and time.monotonic() < deadline:
        time.sleep(0.05)
        value = sessions(server, port)[key]
    return value


def test_the_bare_probe_socket_opens_at_the_first_probe(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "1")
    port = server.data_ports[0]
    target = on(server)
    layout = target.prepare("taq", SMALL, StringMode.ARROW)
    target.open(layout, 0)
    try:
        target.read_day(layout, layout.days[0])
        assert settled(server, port, "logged_in", 1) == 1      # the user's session alone
        with target.probe_mode():
            target.read_day(layout, layout.days[0])
        assert settled(server, port, "logged_in", 2) == 2      # and the probe's bare socket
    finally:
        target.close()


@pytest.mark.slow
def test_a_run_without_probes_holds_one_session_per_user(ddb_server_factory, tmp_path):  # noqa: F811
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    server = ddb_server_factory("--data-nodes", "1")
    port = server.data_ports[0]
    config = {"profile": server.profile(), "password": PASSWORD, "timeout": 5}
    on(server).prepare("taq", SMALL, StringMode.ARROW)
    store = ResultsStore(tmp_path / "results")
    logins = {}
    for probes in (0, 2):
        before = server.stats()["sessions"][str(port)]["logins"]
        result = Runner(Scenario(dataset="taq", scale=SMALL, target="dolphindb", target_config=config,
                                 workload="read-day", users=(3,), operations=2, probe_ops=probes), store).run()
        assert result.status == "completed", result.message
        logins[probes] = server.stats()["sessions"][str(port)]["logins"] - before
    store.close()
    # the same run but for its probes: three users, three more logins (one bare socket each)
    assert logins[2] - logins[0] == 3


# --- a node's connection limit ----------------------------------------------------------------------------
def test_a_full_node_says_so_in_its_own_words(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "1", "--max-connections", "2")
    target = on(server)
    layout = target.prepare("taq", SMALL, StringMode.ARROW)
    assert settled(server, server.data_ports[0], "open", 0) == 0       # prepare's sessions are gone
    users = [on(server), on(server)]
    for index, user in enumerate(users):
        user.open(layout, index)                               # two sessions: the node is full
    try:
        with pytest.raises(TargetError, match=r"Maximum connections 2 reached\. Close unused connections"):
            on(server).open(layout, 2)
        profile = ClusterProfile.from_dict(server.profile(), password=PASSWORD)
        verdict = check_connection(profile, profile.data_nodes[0])
        assert verdict.kind == "error" and "Maximum connections 2 reached" in verdict.message
    finally:
        for user in users:
            user.close()


# --- PICKLE on Python >= 3.13 ---------------------------------------------------------------------------
@pytest.mark.parametrize("minor", [11, 12, 13, 14])
def test_pickle_is_refused_exactly_where_the_client_would_send_ddb(monkeypatch, minor):
    import dolphindb.settings as keys
    from dolphindb.config import ConnectionSetting

    monkeypatch.setattr(sys, "version_info", VersionInfo(3, minor, 0, "final", 0))
    with pytest.warns(DeprecationWarning):
        client_sends = ConnectionSetting(protocol=keys.PROTOCOL_PICKLE).protocol
    replaced = client_sends != keys.PROTOCOL_PICKLE
    assert replaced == (minor >= 13)                            # the client's own decision
    assert bool(pickle_refusal()) == replaced                   # ours, from the same field
    config = {"host": "127.0.0.1", "port": 1, "password": PASSWORD, "protocol": "PICKLE"}
    if replaced:
        with pytest.raises(TargetError, match=rf"^PICKLE is not available on Python 3\.{minor}: the dolphindb "
                                              "client sends DDB instead"):
            DolphinDBTarget(config)
        assert "\n" not in pickle_refusal()                     # one line
    else:
        assert DolphinDBTarget(config).profile.protocol == "PICKLE"
    assert DolphinDBTarget({**config, "protocol": "DDB"}).profile.protocol == "DDB"
