"""The database hosts' agents (``tickbench agent``, ``workloads.agent``): a server target whose
profile names them asks each to drop its host's page cache after the engine's own clear, so a cold
operation reads from the servers' disks as the reports' cold runs did.

Config keys (from the profile, ``workloads.targets.profiles``): ``agents`` (``HOST:PORT`` of each
database host's agent) and ``agent_token`` (a secret: the keyring or ``TICKBENCH_AGENT_TOKEN``,
never saved with the profile). A drop that fails is written into the clear's methods as a note
(``cleared.NOT_DROPPED``), which empties nothing: the round then says "engine caches only".
"""
from __future__ import annotations

import os
import time
from collections.abc import Sequence

from workloads.targets.common.cleared import AGENT_DROP, NOT_DROPPED

TOKEN_VARIABLE = "TICKBENCH_AGENT_TOKEN"
AGENT_TIMEOUT_S = 120.0          # a sync of a busy host's dirty pages can take a while
BUSY_RETRY_S = 0.05              # first wait before asking a busy agent again (doubling, up to 1 s)


def agents_of(config: dict) -> tuple[str, ...]:
    """The agents a target's config names (none: the engine's own clear is all there is)."""
    agents = config.get("agents") or ()
    return tuple(str(a) for a in ([agents] if isinstance(agents, str) else agents) if str(a).strip())


def agent_token(config: dict) -> str:
    return str(config.get("agent_token") or os.environ.get(TOKEN_VARIABLE, ""))


def drop_host_caches(agents: Sequence[str], token: str) -> list[str]:
    """Ask every agent to drop its host's page cache, one after the other (a host's drop must be over
    before the round starts); one method per agent: what it did, or a note of why it did not."""
    if not agents:
        return []
    if not token:
        return [f"{NOT_DROPPED} (no agent token: set {TOKEN_VARIABLE} or keep it with the profile)"]
    from workloads.agent.client import AgentError
    methods = []
    for agent in agents:
        try:
            reply = _drop_when_free(agent, token)
        except AgentError as exc:
            methods.append(f"{NOT_DROPPED} ({str(exc).strip()[:300]})")
            continue
        methods.append(f"{AGENT_DROP} {agent} dropped by its agent: {reply.method} [{reply.request_id}]")
    return methods


def hosts_without_agent(hosts: Sequence[str], agents: Sequence[str]) -> list[str]:
    """The ``hosts`` (those serving the data) that no agent runs on: an agent covers a host when
    its address names that host or an address of it (names resolved on this machine, no traffic)."""
    covered = set()
    for agent in agents:
        covered |= _addresses(agent.rpartition(":")[0].strip("[]"))
    return [h for h in hosts if not (_addresses(h) & covered)]


def _addresses(host: str) -> set[str]:
    import socket
    try:
        return {host} | {info[4][0] for info in socket.getaddrinfo(host, None)}
    except (OSError, UnicodeError):
        return {host}


def _drop_when_free(agent: str, token: str):
    """One drop by the agent, asked again while it is busy with another's (two users' clears can
    meet there, e.g. each worker's warm-up): a drop already running may have started before this
    user's reads, so only a drop of its own counts. AgentBusy once AGENT_TIMEOUT_S has gone by."""
    from workloads.agent.client import AgentBusy, drop_host_cache
    deadline = time.monotonic() + AGENT_TIMEOUT_S
    wait = BUSY_RETRY_S
    while True:
        try:
            return drop_host_cache(agent, token=token, timeout_s=max(deadline - time.monotonic(), 1.0))
        except AgentBusy:
            if time.monotonic() + wait > deadline:
                raise
            time.sleep(wait)
            wait = min(wait * 2, 1.0)


def hardware_threads(agents: Sequence[str], token: str) -> dict[str, object]:
    """What the run's environment records of the servers' hardware: ``server_threads``, the hardware
    threads of every host an agent runs on (each host once), and ``server_threads_from`` saying so;
    or ``server_threads_note`` saying why they are not recorded."""
    if not agents:
        return {}
    if not token:
        return {"server_threads_note": f"not asked: no agent token (set {TOKEN_VARIABLE})"}
    from workloads.agent.client import AgentError, host_facts
    hosts: dict[str, int] = {}
    for agent in agents:
        try:
            facts = host_facts(agent, token=token)
        except AgentError as exc:
            return {"server_threads_note": f"not recorded: {str(exc).strip()[:300]}"}
        hosts[facts.host or agent] = facts.threads
    said = ", ".join(f"{host} {threads}" for host, threads in hosts.items())
    return {"server_threads": sum(hosts.values()), "server_threads_from": f"tickbench agent ({said})"}


def all_dropped(methods: Sequence[str]) -> bool:
    return not any(m.startswith(NOT_DROPPED) for m in methods)
