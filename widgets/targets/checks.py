"""The targets panel's Test and Refresh nodes (``widgets.targets.panel``).

Connection tests and node discovery run in a thread pool, never on the GUI thread; each result
comes back through a Qt signal emitted from the worker thread, which Qt queues to the panel's
(GUI) thread. A test gives a verdict within a few seconds (``workloads.targets.dolphindb.cluster.test_connection``).
"""
from __future__ import annotations

from typing import Any, Callable

from widgets.targets.lights import VERDICT_WORDS, Light, _Profile
from workloads.targets.dolphindb.cluster import (Discovery, Verdict, discover_nodes, profile_from_discovery,
                                                 test_connection)
from workloads.targets.engines import DDB, SERVER_CLIENTS, missing_client
from workloads.targets.profiles import Profile
from workloads.targets.server_checks import check_server

TEST_TIMEOUT_S = 2.0         # per step of a test: a verdict within ~2 x this
DISCOVER_TIMEOUT_S = 3.0


class TargetsChecks:
    """TargetsPanel's tests and node discovery, off the GUI thread (a mixin: the pool, the signal
    that brings results back and the lights are the panel's)."""

    def _submit(self, tag: tuple, job: Callable[[], Any]) -> None:
        def run() -> None:
            try:
                result = job()
            except Exception as exc:  # the verdict of an unexpected failure, not a lost thread
                result = Verdict(False, "error", f"{type(exc).__name__}: {exc}")
            try:
                self._job_done.emit((tag, result))
            except RuntimeError:      # the panel was deleted meanwhile
                pass
        self._pool.submit(run)

    def _start_check(self, key: str | None):
        """(key, entry, profile with its password) for a Test or Refresh; profile None: nothing to do."""
        key = key or self.selected_profile_key()
        if key is None:
            return None, None, None
        entry = self._profiles[key]
        if self.registry.config(key).get("local_engine"):      # its password is in its record
            try:
                config = self.registry.resolve(key)
            except ValueError as exc:                           # stopped: say so and how to start it
                entry.lights[entry.addresses[0]] = Light("failed", "stopped", str(exc))
                self._say(str(exc), failed=True)
                self._rebuild(select=self.selected_key())
                return key, entry, None
            entry.generation += 1
            return key, entry, config
        password = self.registry.password(key, ask=self._ask_password)
        if password is None:
            return key, entry, None
        entry.generation += 1   # answers of an older check are ignored
        if entry.kind != DDB:
            return key, entry, {**self.registry.config(key), "password": password}
        return key, entry, entry.profile.with_password(password)

    def _checked_first(self, key: str | None, action: str, reachable: bool) -> bool | None:
        """What can be checked without a password, before one is asked for: the kind's client
        (missing: said on the light, no prompt) and, when the password would have to be asked
        for, whether the profile's ports answer (off the GUI thread; the check goes on, and asks,
        only when one does). None: go on now; else what Test or Refresh returns."""
        key = key or self.selected_profile_key()
        if key is None or key not in self._profiles or reachable:
            return None
        entry = self._profiles[key]
        if self.registry.config(key).get("local_engine"):
            return None
        missing = missing_client(entry.kind, server=True)
        if missing:
            message = f"{SERVER_CLIENTS.get(entry.kind, (entry.kind,))[0] or entry.kind} client {missing}"
            for address in entry.addresses:
                entry.lights[address] = Light("failed", "no client", message)
            self._say(message, failed=True)
            self._rebuild(select=self.selected_key())
            return False
        if self.registry.password(key) is not None:       # known: no prompt to save anyone from
            return None
        entry.generation += 1
        entry.pending = 1
        for address in entry.addresses:
            entry.lights[address] = Light("testing", "testing…", f"Is {address} listening?")
        addresses = list(entry.addresses)
        self._submit(("probe", key, entry.generation, action), lambda: probe_ports(addresses, TEST_TIMEOUT_S))
        self._rebuild(select=self.selected_key())
        return True

    def _after_probe(self, key: str, entry: _Profile, action: str, closed: dict[str, str]) -> None:
        """A port probe's answer: every address closed, said on its light (no prompt); else the
        Test or Refresh goes on, asking for the password."""
        if len(closed) == len(entry.addresses):
            for address, why in closed.items():
                entry.lights[address] = Light("failed", "refused" if "refused" in why else "unreachable",
                                              f"{address}: {why} (no password was asked for)")
            self._rebuild(select=self.selected_key())
            self.check_finished.emit(key)
            return
        for address in entry.addresses:
            entry.lights[address] = Light()
        if not (self.refresh_nodes if action == "refresh" else self.test_profile)(key, reachable=True):
            self._rebuild(select=self.selected_key())       # no password given: the check ends here
            self.check_finished.emit(key)

    def test_profile(self, key: str | None = None, reachable: bool = False) -> bool:
        """Test every node of the profile; False if there is none, its client is missing or the
        password was not given. The client and the ports are checked before a password is asked."""
        first = self._checked_first(key, "test", reachable)
        if first is not None:
            return first
        key, entry, profile = self._start_check(key)
        if profile is None:
            return False
        if entry.kind != DDB:              # a server: one check of its HTTP interface
            address = entry.addresses[0]
            entry.pending = 1
            entry.lights[address] = Light("testing", "testing…", f"Testing {address}…")
            self._submit(("test", key, entry.generation, address),
                         lambda: check_server(entry.kind, profile, timeout=TEST_TIMEOUT_S))
            self._rebuild(select=self.selected_key())
            return True
        entry.pending = len(profile.nodes)
        for node in profile.nodes:
            entry.lights[node.address] = Light("testing", "testing…", f"Testing {node.address}…")
            self._submit(("test", key, entry.generation, node.address),
                         lambda node=node: test_connection(profile, node, timeout=TEST_TIMEOUT_S))
        self._rebuild(select=self.selected_key())
        return True

    def refresh_nodes(self, key: str | None = None, reachable: bool = False) -> bool:
        """Ask the cluster for its nodes (getClusterPerf) and list them instead of the typed ones."""
        if (key or self.selected_profile_key()) in self._profiles and \
                self._profiles[key or self.selected_profile_key()].kind != DDB:
            return self.test_profile(key, reachable)  # a server has no nodes to discover
        first = self._checked_first(key, "refresh", reachable)
        if first is not None:
            return first
        key, entry, profile = self._start_check(key)
        if profile is None:
            return False
        entry.pending = 1
        entry.lights[profile.entry.address] = Light("testing", "asking…", f"Asking {profile.entry.address} "
                                                    "for the cluster's nodes…")

        def discover():
            verdict = test_connection(profile, profile.entry, timeout=TEST_TIMEOUT_S)
            if not verdict.ok:
                return verdict
            return discover_nodes(profile, timeout=DISCOVER_TIMEOUT_S)
        self._submit(("discover", key, entry.generation, profile.entry.address), discover)
        self._rebuild(select=self.selected_key())
        return True

    def busy(self) -> bool:
        return any(e.pending for e in self._profiles.values())

    def _on_job_done(self, payload) -> None:
        (kind, key, generation, address), result = payload
        entry = self._profiles.get(key)
        if entry is None or generation != entry.generation:
            return                                   # removed or edited since: a stale answer
        entry.pending = max(0, entry.pending - 1)
        if kind == "probe":
            self._after_probe(key, entry, address, result)
            return
        if isinstance(result, Verdict):
            entry.lights[address] = self._verdict_light(result)
            if not result.ok and result.kind == "wrong_password":          # ask again next time
                self.registry.distrust(key)
        elif kind == "discover":
            self._apply_discovery(entry, address, result)
        self._rebuild(select=self.selected_key())
        if not entry.pending:
            self.check_finished.emit(key)

    @staticmethod
    def _verdict_light(verdict: Verdict) -> Light:
        if verdict.ok:
            return Light("ok", "ok", verdict.message)
        return Light("failed", VERDICT_WORDS.get(verdict.kind, verdict.kind), verdict.message)

    def _apply_discovery(self, entry: _Profile, asked: str, discovery: Discovery) -> None:
        old = entry.profile
        entry.profile = profile_from_discovery(old, discovery).with_password("")
        infos = discovery.nodes
        if not discovery.from_cluster:    # the typed nodes stay: a single node's answer says nothing of the rest
            info = infos[0] if infos else None
            entry.lights[asked] = Light("ok", "running", f"{asked} ({info.name if info else 'node'}) is running "
                                        f"but reported no cluster: {discovery.note}.")
            entry.note = f"{asked} is not part of a cluster; the profile's nodes are kept as typed."
            return
        reported = {f"{n.host}:{n.port}": n for n in infos}
        entry.lights = {}
        for node in entry.profile.nodes:
            info = reported.get(node.address)
            load = f"; CPU {info.cpu_percent:.0f}%, {info.connections} connections" if info else ""
            entry.lights[node.address] = Light("ok", "running", f"{node.address} ({info.name if info else node.role}) "
                                               f"is running, as {asked} reports{load}.")
        down = [f"{n.host}:{n.port}" for n in infos if not n.state]
        entry.note = (f"{len(entry.profile.nodes)} node{'s' if len(entry.profile.nodes) != 1 else ''} found via {asked}"
                      + (f"; left out, not running: {', '.join(down)}" if down else "") + ".")
        if entry.profile.to_dict() != old.with_password("").to_dict():
            self.registry.update_profile(Profile(DDB, entry.profile, entry.db_prefix))
            self.targets_changed.emit()


def probe_ports(addresses: list[str], timeout: float) -> dict[str, str]:
    """The addresses (``host:port``) whose port does not take a TCP connection, with why."""
    import socket
    closed = {}
    for address in addresses:
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
                pass
        except ConnectionRefusedError:
            closed[address] = "the port is closed (connection refused)"
        except (OSError, ValueError) as exc:
            closed[address] = f"not reachable ({type(exc).__name__}: {exc})"
    return closed
