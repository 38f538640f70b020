"""What Tickbench's workers call: ask the agent on a database host to drop its page cache, or for
the host's hardware threads (the figures that scale per thread of the machine that served).

    reply = drop_host_cache("dbhost:7071", token=..., timeout_s=120.0)
    facts = host_facts("dbhost:7071", token=...)

Every failure is an AgentError of one line naming the agent's address.
"""
from __future__ import annotations

import http.client
import json
import secrets
from dataclasses import dataclass

from workloads.agent.protocol import INFO_PATH, NONCE_HEADER, PATH, VERBS, signed_headers


class AgentError(RuntimeError):
    """The agent did not drop: one line naming its address and why."""


class AgentBusy(AgentError):
    """The agent was running another drop (HTTP 429): asking again once it is over may succeed."""


@dataclass(frozen=True)
class AgentReply:
    agent: str          # "host:port" as given
    method: str         # what it did, e.g. "sync + drop_caches (page cache)"
    seconds: float      # how long the drop took on the host
    request_id: str     # the request's nonce, also in the agent's log
    host: str = ""      # the agent host's name


@dataclass(frozen=True)
class HostFacts:
    agent: str          # "host:port" as given
    host: str           # the host's name, as it says
    threads: int        # its hardware threads (os.cpu_count() there)


def new_token() -> str:
    return secrets.token_urlsafe(32)


def split_address(address: str) -> tuple[str, int]:
    """("host", port) of "host:port" or "[v6]:port"; ValueError naming the address otherwise."""
    host, sep, port = address.strip().rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{address!r} is not HOST:PORT")
    return host, int(port)


def drop_host_cache(address: str, token: str, timeout_s: float = 120.0) -> AgentReply:
    data, nonce = _signed_post(address, PATH, token, timeout_s)
    method, seconds, request_id = data.get("method"), data.get("seconds"), data.get("request_id")
    if not (isinstance(method, str) and method and isinstance(seconds, int | float) and request_id == nonce):
        raise AgentError(f"agent {address}: malformed reply (no method, seconds or this request's id)")
    return AgentReply(agent=address, method=method, seconds=float(seconds), request_id=request_id,
                      host=str(data.get("host") or ""))


def host_facts(address: str, token: str, timeout_s: float = 10.0) -> HostFacts:
    data, nonce = _signed_post(address, INFO_PATH, token, timeout_s)
    threads = data.get("threads")
    if not (isinstance(threads, int) and not isinstance(threads, bool) and threads > 0
            and data.get("request_id") == nonce):
        raise AgentError(f"agent {address}: malformed reply (no hardware threads or this request's id)")
    return HostFacts(agent=address, host=str(data.get("host") or ""), threads=threads)


def _signed_post(address: str, path: str, token: str, timeout_s: float) -> tuple[dict, str]:
    """The JSON reply of a 200 to a signed POST, and the request's nonce; AgentError otherwise."""
    try:
        host, port = split_address(address)
    except ValueError as exc:
        raise AgentError(f"agent {exc}") from None
    headers = signed_headers(token, verb=VERBS[path])
    headers["Content-Length"] = "0"
    connection = http.client.HTTPConnection(host, port, timeout=timeout_s)
    try:
        connection.request("POST", path, headers=headers)
        response = connection.getresponse()
        status, body = response.status, response.read(64 * 1024)
    except ConnectionRefusedError:
        raise AgentError(f"agent {address} refused the connection (is `tickbench agent` running there?)") from None
    except TimeoutError:
        raise AgentError(f"agent {address}: no reply within {timeout_s:g} s") from None
    except (OSError, http.client.HTTPException) as exc:
        raise AgentError(f"agent {address}: {_one_line(exc)}") from None
    finally:
        connection.close()
    return _reply(address, status, body), headers[NONCE_HEADER]


def _reply(address: str, status: int, body: bytes) -> dict:
    if status == 401:
        raise AgentError(f"agent {address}: wrong token (or its clock is more than 30 s from this machine's)")
    if status == 429:
        raise AgentBusy(f"agent {address}: busy (another drop is running there)")
    try:
        data = json.loads(body)
    except ValueError:
        raise AgentError(f"agent {address}: malformed reply (HTTP {status}, not JSON)") from None
    if not isinstance(data, dict):
        raise AgentError(f"agent {address}: malformed reply (HTTP {status})")
    if status != 200:
        said = _one_line(data.get("error") or "no reason given")
        raise AgentError(f"agent {address}: HTTP {status}: {said}")
    return data


def _one_line(what) -> str:
    text = str(what).strip() or type(what).__name__
    return text.splitlines()[0][:200]
