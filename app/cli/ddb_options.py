"""The DolphinDB flags of ``tickbench run`` and ``verify`` turned into the target's config.

``--node HOST:PORT[:ROLE]`` (repeatable) builds a cluster profile: one node is a ``single`` node;
several are ``data`` nodes unless a role says otherwise (``controller``, ``data``, ``compute``).
The first data node prepares the data; workers are spread over the data nodes by
``--node-policy`` (compute nodes only with ``--use-compute-nodes``); ``--priority``/``--parallelism``
set every query's job scheduling. Without ``--node`` the scenario file's ``profile`` or
``host``/``port`` is used.
Flags override the scenario file; the password comes from ``--password`` or ``password_fn(user)``
(environment variable or a prompt) and never goes back into a scenario file.

Mistakes raise ValueError with a message naming the flag and value; the command line prints it
as one line and exits with code 2.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workloads.targets.dolphindb.cluster import NODE_POLICIES, PROTOCOLS, ROLES, ClusterProfile
from workloads.targets.dolphindb import quote as ddb_quote
from workloads.targets.dolphindb.connection import MAX_PRIORITY

DEFAULT_PORT_HINT = "8848"


def parse_node(text: str, default_role: str) -> dict[str, Any]:
    """``host:port``, ``host:port:role`` or ``[v6 address]:port[:role]`` as a node dict."""
    value = text.strip()
    if value.startswith("["):                       # [::1]:8848 - IPv6 literals keep their colons
        host, sep, rest = value[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise ValueError(f"--node {text!r}: write an IPv6 address as [address]:PORT")
        parts = [host, *rest[1:].split(":")]
    else:
        parts = value.split(":")
    if len(parts) not in (2, 3) or not parts[0]:
        raise ValueError(f"--node {text!r} is not HOST:PORT (for example 127.0.0.1:{DEFAULT_PORT_HINT})")
    host, port_text = parts[0], parts[1]
    role = parts[2].strip().lower() if len(parts) == 3 else default_role
    if any(ch.isspace() for ch in host):
        raise ValueError(f"--node {text!r}: the host must not contain spaces")
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"--node {text!r}: port {port_text!r} is not a number") from None
    if not 1 <= port <= 65535:
        raise ValueError(f"--node {text!r}: port {port} is not between 1 and 65535")
    if role not in ROLES:
        raise ValueError(f"--node {text!r}: role {role!r} is not one of {', '.join(ROLES)}")
    return {"host": host, "port": port, "role": role}


def _choice(flag: str, value: str, choices: tuple[str, ...], upper: bool = False) -> str:
    value = value.strip().upper() if upper else value.strip().lower()
    if value not in choices:
        raise ValueError(f"{flag} {value!r} is not one of {', '.join(choices)}")
    return value


def add_dolphindb_arguments(parser) -> None:
    """The DolphinDB flags, shared by ``run`` and ``verify``."""
    ddb = parser.add_argument_group("DolphinDB")
    ddb.add_argument("--node", action="append", default=[], metavar="HOST:PORT[:ROLE]",
                     help="a cluster node (repeatable); ROLE: data (default), controller or compute; "
                          "the first data node prepares the data")
    ddb.add_argument("--user", default=None)
    ddb.add_argument("--password", default=None,
                     help="or set TICKBENCH_DDB_PASSWORD; asked for when neither is given")
    ddb.add_argument("--protocol", help="DDB | PICKLE | ARROW")
    ddb.add_argument("--compress", action="store_true", default=None)
    ddb.add_argument("--node-policy", help="one | round_robin | random (over the data nodes)")
    ddb.add_argument("--use-compute-nodes", action="store_true", default=None,
                     help="route users to the compute nodes instead of the data nodes")
    ddb.add_argument("--priority", type=int, help="job priority of every query, 0-8 (the client's default: 4)")
    ddb.add_argument("--parallelism", type=int,
                     help="job parallelism of every query, 1-64 (the client's default: 64; the reports' API: 2)")
    ddb.add_argument("--db-prefix", help="database path prefix, e.g. dfs://tickbench")


def dolphindb_config(args, config: dict[str, Any], password_fn: Callable[[str], str]) -> dict[str, Any]:
    """The DolphinDB target config from the run flags over ``config`` (the scenario file's)."""
    config = dict(config)
    profile = _base_profile(args, config)
    if args.user is not None:
        if not args.user.strip():
            raise ValueError("--user must not be empty")
        profile["user"] = args.user.strip()
    flags = {
        "protocol": None if args.protocol is None else _choice("--protocol", args.protocol, PROTOCOLS, upper=True),
        "compress": None if args.compress is None else bool(args.compress),
        "node_policy": None if args.node_policy is None else _choice(
            "--node-policy", args.node_policy.replace("-", "_"), NODE_POLICIES),
        "use_compute_nodes": getattr(args, "use_compute_nodes", None),
    }
    for key, value in flags.items():
        if value is not None:
            profile[key] = value
            config.pop(key, None)      # the file's top-level override must not beat the flag
    for key, low, high in (("priority", 0, MAX_PRIORITY), ("parallelism", 1, 64)):
        value = getattr(args, key, None)
        if value is not None:
            if not low <= value <= high:
                raise ValueError(f"--{key} {value} is not between {low} and {high}")
            config[key] = value
    if args.db_prefix is not None:
        config["db_prefix"] = args.db_prefix.strip()
    if "db_prefix" in config:
        try:
            ddb_quote.db_path(config["db_prefix"])
        except ValueError as exc:
            where = "--db-prefix" if args.db_prefix is not None else "scenario target_config db_prefix"
            raise ValueError(f"{where}: {exc}") from None
    checked = ClusterProfile.from_dict(profile)            # every node, protocol and policy checked
    config["profile"] = checked.to_dict()
    for key in ("host", "port", "user"):                   # the profile is the one truth now
        config.pop(key, None)
    if args.password is not None:
        config["password"] = args.password
    elif not config.get("password"):
        config["password"] = password_fn(checked.user)
    return config


def _base_profile(args, config: dict[str, Any]) -> dict[str, Any]:
    if args.node:
        role = "single" if len(args.node) == 1 else "data"
        nodes = [parse_node(text, role) for text in args.node]
        base = dict(config.get("profile") or {})
        base.setdefault("name", "command line" if len(nodes) > 1 else f"{nodes[0]['host']}:{nodes[0]['port']}")
        base.setdefault("user", config.get("user", "admin"))
        return {**base, "nodes": nodes}
    if config.get("profile"):
        return dict(config["profile"])
    if config.get("host"):
        try:
            port = int(config.get("port", DEFAULT_PORT_HINT))
        except (TypeError, ValueError):
            raise ValueError(f"scenario target_config: port {config.get('port')!r} is not a number") from None
        return {"name": f"{config['host']}:{port}", "user": config.get("user", "admin"),
                "nodes": [{"host": str(config["host"]), "port": port, "role": "single"}]}
    raise ValueError("the DolphinDB target needs a node: give --node HOST:PORT (repeat it for each "
                     "node of a cluster) or a profile in the scenario file")
