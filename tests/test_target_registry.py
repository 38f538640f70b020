"""The engine's target registry: local engines with their availability, saved server profiles,
password resolution and stripping, the shared targets.json; and the command line's view of it."""
from __future__ import annotations

import json
import sys

import pytest

import workloads.targets.engines as engines_module
from tests.test_cli import tickbench
from workloads.targets.server_checks import check_server
from workloads.targets.engines import CLICKHOUSE, DDB, missing_client, strip_passwords
from workloads.targets.profiles import Profile, ServerProfile
from workloads.targets.registry import TargetRegistry
from workloads.targets import LAZY_TARGETS, MissingClient, target_class


class DictStore:
    """A password store kept in a dict (the keyring's protocol)."""

    def __init__(self):
        self.saved: dict[tuple[str, str], str] = {}

    def load(self, name, user):
        return self.saved.get((name, user))

    def save(self, name, user, password):
        self.saved[(name, user)] = password
        return True

    def forget(self, name, user):
        self.saved.pop((name, user), None)


def cluster(name="lab", port=8848):
    return Profile.from_dict({"profile": {"name": name, "user": "admin",
                                          "nodes": [{"host": "127.0.0.1", "port": port, "role": "single"}]},
                              "db_prefix": "dfs://lab"})


def server(name="analytics", port=8123):
    return Profile(CLICKHOUSE, ServerProfile(name, "127.0.0.1", port, "reader", "ticks"))


def test_profiles_are_saved_without_passwords_and_shared_through_the_file(tmp_path):
    first = TargetRegistry.load(tmp_path)
    ddb_key = first.add(cluster(), password="ddb-secret")
    ch_key = first.add(server(), password="ch-secret")
    assert (ddb_key, ch_key) == ("ddb:lab", "ch:analytics")
    text = (tmp_path / "targets.json").read_text()
    assert "secret" not in text and json.loads(text)["version"] == 2
    assert first.resolve(ch_key)["password"] == "ch-secret"           # typed this session

    second = TargetRegistry.load(tmp_path)                            # e.g. the command line afterwards
    assert [p.key for p in second.profiles()] == [ddb_key, ch_key]
    assert second.config(ch_key) == {"name": "analytics", "host": "127.0.0.1", "port": 8123, "user": "reader",
                                     "database": "ticks", "secure": False, "profile_name": "analytics"}
    assert second.config(ddb_key)["db_prefix"] == "dfs://lab"
    assert second.resolve(ch_key) is None                             # no password anywhere, no way to ask
    asked = []
    config = second.resolve(ch_key, ask=lambda profile, refused: asked.append((profile.key, refused)) or "typed")
    assert config["password"] == "typed" and asked == [(ch_key, False)]
    assert second.resolve(ch_key, ask=lambda *a: pytest.fail("asked twice"))["password"] == "typed"
    assert strip_passwords(config) == second.config(ch_key)
    assert second.resolve("duckdb") == {"path": str(tmp_path / "tickbench_data.duckdb")}
    with pytest.raises(KeyError, match="no target 'ch:nope'"):
        second.resolve("ch:nope")


def test_a_remembered_password_comes_from_the_store_until_the_server_refuses_it(tmp_path):
    store = DictStore()
    registry = TargetRegistry.load(tmp_path, store)
    key = registry.add(server(), password="old", remember=True)
    assert store.saved == {("analytics", "reader"): "old"}
    again = TargetRegistry.load(tmp_path, store)
    assert again.resolve(key, ask=lambda *a: pytest.fail("the store has it"))["password"] == "old"
    again.distrust(key)                                               # the server said: wrong password
    assert again.resolve(key, ask=lambda profile, refused: "new" if refused else "?")["password"] == "new"
    assert store.saved == {("analytics", "reader"): "new"}            # the refused one is replaced
    renamed = Profile(CLICKHOUSE, ServerProfile("reports", "127.0.0.1", 8123, "reader", "ticks"))
    new_key = again.replace(key, renamed, remember=True)
    assert store.saved == {("reports", "reader"): "new"} and new_key == "ch:reports"
    again.remove(new_key)
    assert store.saved == {} and not TargetRegistry.load(tmp_path, store).profiles()


def test_names_are_unique_per_kind_and_bad_saved_profiles_are_skipped(tmp_path):
    registry = TargetRegistry.load(tmp_path)
    registry.add(server("x"))
    registry.add(cluster("x"))                                        # another kind may share the name
    with pytest.raises(ValueError, match="exists already"):
        registry.add(server("x"))
    with pytest.raises(ValueError, match="port 70000"):
        ServerProfile("y", "127.0.0.1", 70000)
    arrow = cluster("arrow").to_dict()
    arrow["profile"].update(protocol="ARROW", compress=True)
    skipped = registry.restore({"version": 1, "profiles": [{"profile": {"name": "bad", "nodes": []}}, arrow,
                                                           {"kind": "oracle", "profile": {}}]})
    assert len(skipped) == 2 and [p.key for p in registry.profiles()] == ["ddb:arrow"]
    assert registry.profile("ddb:arrow").profile.compress is False
    assert "Compression was turned off" in registry.notes["ddb:arrow"]


def test_a_missing_client_names_the_extra_to_install(tmp_path, monkeypatch):
    installed = engines_module._installed
    monkeypatch.setattr(engines_module, "_installed", lambda module: module != "tables" and installed(module))
    assert missing_client("hdf5") == "not installed: install tickbench[hdf5] (needs tables)"   # h5py is optional
    assert missing_client("duckdb") is None
    hdf5 = next(e for e in TargetRegistry(tmp_path).local_entries() if e.kind == "hdf5")
    assert "install tickbench[hdf5]" in hdf5.missing


def test_loading_a_target_whose_library_is_absent_raises_missing_client(tmp_path, monkeypatch):
    (tmp_path / "needs_absent_lib.py").write_text("import tickbench_absent_library_xyz\nclass T: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(LAZY_TARGETS, "arcticdb", "needs_absent_lib:T")
    sys.modules.pop("needs_absent_lib", None)
    with pytest.raises(MissingClient, match=r"install tickbench\[arcticdb\]") as caught:
        target_class("arcticdb")
    assert caught.value.library == "tickbench_absent_library_xyz"


def test_checking_a_refused_clickhouse_port_gives_a_verdict_not_an_exception():
    import socket
    with socket.socket() as probe:                  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]
    for kind in ("clickhouse", "questdb", "postgres", "druid", "mongodb"):
        verdict = check_server(kind, {"host": "127.0.0.1", "port": free_port, "user": "u", "password": "x"},
                               timeout=2)
        assert not verdict.ok and verdict.kind in ("refused", "timed_out"), (kind, verdict)
        assert str(free_port) in verdict.message


def test_the_command_line_lists_adds_and_uses_saved_servers(tmp_path):
    listed = tickbench("targets", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    for kind in ("duckdb", "clickhouse", "arcticdb", "hdf5"):
        assert f"│ {kind}" in listed.stdout
    added = tickbench("targets", "add-server", "clickhouse", "lab", "--host", "127.0.0.1", "--port", "1",
                      home=tmp_path)
    assert added.returncode == 0 and "Saved ch:lab" in added.stdout
    saved = json.loads((tmp_path / "datasets" / "targets.json").read_text())
    assert saved["profiles"][0] == {"kind": CLICKHOUSE, "profile": {"name": "lab", "host": "127.0.0.1", "port": 1,
                                                                    "user": "default", "database": "tickbench",
                                                                    "secure": False}}
    assert "ch:lab" in tickbench("targets", home=tmp_path).stdout
    unknown = tickbench("run", "--target", "ch:nope", home=tmp_path)
    assert unknown.returncode == 2 and "no target 'ch:nope'" in unknown.stderr
    no_password = tickbench("run", "--target", "ch:lab", home=tmp_path)     # no terminal to ask on
    assert no_password.returncode == 2 and "TICKBENCH_CLICKHOUSE_PASSWORD" in no_password.stderr
    removed = tickbench("targets", "remove", "ch:lab", home=tmp_path)
    assert removed.returncode == 0 and "ch:lab" not in tickbench("targets", home=tmp_path).stdout


def test_every_server_kind_has_its_defaults_and_keys(tmp_path):
    registry = TargetRegistry.load(tmp_path)
    questdb = Profile.from_dict({"kind": "questdb", "profile": {"name": "ticks", "host": "127.0.0.1"}})
    assert questdb.key == "qdb:ticks" and questdb.password_variable == "TICKBENCH_QUESTDB_PASSWORD"
    key = registry.add(questdb)
    assert registry.config(key) == {"name": "ticks", "host": "127.0.0.1", "port": 8812, "user": "admin",
                                    "database": "qdb", "secure": False, "http_port": 9000, "profile_name": "ticks"}
    druid = Profile.from_dict({"kind": "druid", "profile": {"name": "d", "host": "127.0.0.1",
                                                            "options": {"coordinator_port": 18081}}})
    assert druid.key == "druid:d" and registry.config(registry.add(druid))["coordinator_port"] == 18081
    with pytest.raises(ValueError, match="coordinator_port 0 is not between"):
        Profile.from_dict({"kind": "druid", "profile": {"name": "e", "host": "h", "options": {"coordinator_port": 0}}})
    again = TargetRegistry.load(tmp_path)
    assert [p.key for p in again.profiles()] == ["qdb:ticks", "druid:d"]


def test_a_kind_is_known_to_both_registries():
    from workloads.targets.engines import ENGINES
    from workloads.targets import target_kinds
    assert sorted(e.kind for e in ENGINES) == sorted(target_kinds())
    from workloads.targets.engines import SERVER_TYPES
    assert {e.kind for e in ENGINES if not e.local} == {DDB, *SERVER_TYPES} - {CLICKHOUSE}   # chDB runs locally


def test_a_profile_name_is_checked_wherever_a_profile_is_added(tmp_path):
    # the window's targets panel adds through the registry too, not only the command line
    from workloads.targets.profiles import Profile, ServerProfile
    from workloads.targets.registry import TargetRegistry
    registry = TargetRegistry(tmp_path)
    for bad in ("../../x", "a\nb", "x" * 300):
        with pytest.raises(ValueError, match="profile name"):
            registry.add(Profile("clickhouse", ServerProfile(bad, "127.0.0.1")))
    key = registry.add(Profile("clickhouse", ServerProfile("plain", "127.0.0.1")))
    with pytest.raises(ValueError, match="profile name"):
        registry.replace(key, Profile("clickhouse", ServerProfile("../up", "127.0.0.1")))
    assert [p.name for p in registry.profiles()] == ["plain"]
