"""Which host runs which user: spread evenly, packed onto as few hosts as their cores allow, or
pinned (a share per named host). Pure functions over the hosts a scheduler reports."""
from __future__ import annotations

from dataclasses import dataclass

PLACEMENTS = ("spread", "packed", "pinned")


@dataclass(frozen=True)
class Host:
    """One Dask worker as a load generator."""
    address: str          # the Dask worker's address, tcp://host:port: the host's name in records
    cores: int            # the worker's threads (or the machine's cores)
    name: str = ""        # the worker's name, a user may pin by it


def check_placement(scheduler: str, placement: str, pins: dict[str, int]) -> None:
    """A scenario's Dask fields, checked without connecting: ValueError says what is wrong."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, not {placement!r}")
    if scheduler and "://" not in scheduler:
        raise ValueError(f"a Dask scheduler address looks like tcp://host:8786, not {scheduler!r}")
    if any(not isinstance(v, int) or v < 0 for v in pins.values()):
        raise ValueError("pinned users per host must be whole numbers of at least 0")
    if placement == "pinned" and not any(pins.values()):
        raise ValueError("pinned placement needs the users per host (pins), at least one above 0")


def place_users(users: int, hosts: list[Host], placement: str = "spread",
                pins: dict[str, int] | None = None) -> list[str]:
    """The host address of each user 0..users-1.

    spread: round robin over the hosts, so each has the same number of users (± 1);
    packed: fill each host up to its cores before the next, then round robin over all;
    pinned: ``pins`` maps a host (address or name) to a weight; users go to the pinned hosts in
    proportion to their weights (equal to user counts when they add up to ``users``)."""
    if users < 1:
        raise ValueError("place at least one user")
    if not hosts:
        raise ValueError("the Dask cluster has no workers to place users on")
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, not {placement!r}")
    ordered = sorted(hosts, key=lambda h: h.address)
    if placement == "spread":
        return [ordered[i % len(ordered)].address for i in range(users)]
    if placement == "packed":
        placed: list[str] = []
        for host in ordered:
            placed += [host.address] * max(1, host.cores)
        overflow = users - len(placed)
        placed += [ordered[i % len(ordered)].address for i in range(max(0, overflow))]
        return sorted(placed[:users], key=[h.address for h in ordered].index)
    return _pinned(users, ordered, pins or {})


def _pinned(users: int, hosts: list[Host], pins: dict[str, int]) -> list[str]:
    by_key = {h.address: h for h in hosts} | {h.name: h for h in hosts if h.name}
    unknown = [k for k in pins if k not in by_key]
    if unknown:
        raise ValueError(f"pinned to host(s) the cluster does not have: {', '.join(unknown)} "
                         f"(it has {', '.join(h.address for h in hosts)})")
    weights = {by_key[k].address: int(v) for k, v in pins.items() if int(v) > 0}
    if not weights:
        raise ValueError("pinned placement needs at least one host with one or more users")
    total = sum(weights.values())
    # largest remainder: the counts add up to ``users`` and follow the weights as closely as whole users can
    exact = {a: users * w / total for a, w in weights.items()}
    counts = {a: int(x) for a, x in exact.items()}
    for address in sorted(exact, key=lambda a: (counts[a] - exact[a], a))[:users - sum(counts.values())]:
        counts[address] += 1
    return [a for a in sorted(counts) for _ in range(counts[a])]


def users_per_host(placed: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for address in placed:
        counts[address] = counts.get(address, 0) + 1
    return counts
