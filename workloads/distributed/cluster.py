"""A Dask cluster as a set of load generators: connect, list its hosts, capture each host's
environment and clock offset. Used by a run before it starts, by the window's "Load generators"
panel and by ``tickbench hosts``."""
from __future__ import annotations

import socket
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from workloads.distributed import import_distributed
from workloads.distributed.clock import ClockOffset, measure_offset
from workloads.distributed.hosts import version_differences
from workloads.distributed.placement import Host

CONNECT_TIMEOUT_S = 10.0


class ClusterError(RuntimeError):
    """The scheduler cannot be reached or has no workers; the message says which and why."""


@dataclass
class HostView:
    address: str
    name: str
    cores: int
    memory_bytes: int
    environment: dict[str, Any]
    clock_offset_s: float
    clock_error_s: float

    @property
    def host(self) -> Host:
        return Host(self.address, self.cores, self.name)


@dataclass
class ClusterView:
    scheduler: str
    hosts: list[HostView] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)      # versions not the same on every host

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def max_clock_error_s(self) -> float:
        return max((h.clock_error_s for h in self.hosts), default=0.0)


def connect(scheduler: str, timeout_s: float = CONNECT_TIMEOUT_S):
    """A ``distributed.Client`` of ``scheduler``, or a ClusterError that says why not."""
    distributed = import_distributed()
    _reachable(scheduler, timeout_s)
    made: dict = {}

    def make() -> None:
        try:
            made["client"] = distributed.Client(scheduler, timeout=timeout_s, set_as_default=False)
        except BaseException as exc:    # handed to the caller below
            made["error"] = exc
    # a port that accepts but never answers (not a Dask scheduler) holds the Client's handshake
    # forever, whatever its timeouts say: wait for it in a thread of its own, up to the timeout
    thread = threading.Thread(target=make, name=f"connect {scheduler}", daemon=True)
    thread.start()
    thread.join(timeout_s + 5)
    if thread.is_alive():
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: no answer within "
                           f"{timeout_s + 5:g} s (is it a Dask scheduler's port?)")
    try:
        if "error" in made:
            raise made["error"]
        return made["client"]
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {_reason(exc)} "
                           "(is `dask scheduler` running there, and the port open?)") from exc
    except ValueError as exc:
        raise ClusterError(f"{scheduler} is not a Dask scheduler address: {exc}") from exc


def _reachable(scheduler: str, timeout_s: float) -> None:
    """A plain TCP connect first: a refused or silent port is said at once, and no half-built Client
    is left behind (its finaliser would wait out its own timeout when the program exits)."""
    protocol, _, place = scheduler.partition("://")
    host, _, port = place.rpartition(":")
    if protocol != "tcp" or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {_reason(exc)} "
                           "(is `dask scheduler` running there, and the port open?)") from exc


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[-1] if text else type(exc).__name__


def workers(client) -> dict[str, dict[str, Any]]:
    """The scheduler's workers as it knows them now: address -> its info. Asked of the scheduler
    itself: ``client.scheduler_info()`` reads a cache that the client's own 2-second refresh
    overwrites with no workers at all, so a read just after that refresh saw every host gone."""
    return dict(client.sync(client.scheduler.identity, n_workers=-1)["workers"])


def host_environment() -> dict[str, Any]:
    """Runs on each host: the environment a run records, with this package's version and Dask's."""
    from workloads.run.environment import capture_environment, version_of
    environment = capture_environment()
    environment["libraries"].update({name: version_of(name) for name in ("tickbench", "distributed")})
    return environment


def describe(client, scheduler: str) -> ClusterView:
    """Every worker as a host: cores, memory, environment and clock offset; differing versions."""
    found = workers(client)
    if not found:
        raise ClusterError(f"the Dask scheduler at {scheduler} has no workers: start `dask worker "
                           f"{scheduler}` on each client machine")
    environments = client.run(host_environment)
    hosts = []
    for address, info in sorted(found.items()):
        offset = offset_of(client, address)
        hosts.append(HostView(address, str(info.get("name", "")), int(info.get("nthreads") or 1),
                              int(info.get("memory_limit") or 0), environments.get(address, {}),
                              offset.offset_s, offset.error_s))
    named = {f"{h.address}": h.environment for h in hosts}
    return ClusterView(scheduler, hosts, version_differences(named))


def offset_of(client, address: str) -> ClockOffset:
    return measure_offset(lambda: client.run(time.monotonic, workers=[address])[address])


def describe_scheduler(scheduler: str, timeout_s: float = CONNECT_TIMEOUT_S) -> ClusterView:
    """Connect, describe, disconnect (the panel's and the command line's question)."""
    client = connect(scheduler, timeout_s)
    try:
        return describe(client, scheduler)
    finally:
        client.close()
