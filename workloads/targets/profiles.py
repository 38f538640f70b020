"""Server profiles a user has described: a DolphinDB cluster or a server of another kind, by a
name that is checked as every name a user types, without its password."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from workloads.targets.dolphindb.cluster import ClusterProfile
from workloads.targets.engines import CLICKHOUSE, DDB, SERVER_TYPES


DEFAULT_DB_PREFIX = "dfs://tickbench"
LOCAL_ENGINE_NAME = "local"          # the profile of a local engine Tickbench started
MAX_PROFILE_NAME = 64


def check_profile_name(name: object) -> str:
    """A saved server's name as every other name a user types is checked: ``name`` if it is a plain
    name (it becomes part of a key, a keyring entry and folder names), else ValueError saying why."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"profile name {name!r}: must be a non-empty name")
    if not name.isprintable() or name != name.strip():
        raise ValueError(f"profile name {name[:40]!r}: no control characters (a newline) or surrounding spaces")
    if any(ch in name for ch in "/\\:") or ".." in name or name.startswith("."):
        raise ValueError(f"profile name {name[:40]!r}: a name, not a path: no '/', '\\' or ':', never '..', "
                         "not '.' first")
    if len(name) > MAX_PROFILE_NAME:
        raise ValueError(f"profile name {name[:20]!r}...: at most {MAX_PROFILE_NAME} characters ({len(name)} given)")
    return name


def check_agent(address: object) -> str:
    """A database host's agent as ``HOST:PORT`` (``[::1]:7071`` for IPv6), else ValueError saying why."""
    text = str(address).strip()
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or any(ch.isspace() or ch in "/\\" for ch in host) or not port.isdigit() \
            or not 1 <= int(port) <= 65535:
        raise ValueError(f"agent {text[:60]!r}: give HOST:PORT, the address `tickbench agent --listen` was given")
    return text


@dataclass(frozen=True)
class ServerProfile:
    """A server a user described (ClickHouse, QuestDB, PostgreSQL, Druid, MongoDB): endpoint, user,
    database and the kind's other settings (``options``: QuestDB's HTTP port...); no password."""

    name: str
    host: str
    port: int = 8123
    user: str = "default"
    database: str = "tickbench"
    secure: bool = False
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("a server profile needs a name")
        if not self.host.strip() or any(ch.isspace() for ch in self.host):
            raise ValueError(f"server {self.name!r}: host {self.host!r} is not a host name or address")
        ports = [("port", self.port)] + [(k, v) for k, v in self.options.items() if k.endswith("_port")]
        for label, port in ports:
            if not isinstance(port, int) or not 1 <= port <= 65535:
                raise ValueError(f"server {self.name!r}: {label} {port} is not between 1 and 65535")

    @classmethod
    def from_dict(cls, data: dict[str, Any], kind: str = CLICKHOUSE) -> "ServerProfile":
        kind_type = SERVER_TYPES[kind]
        options = {k: v for k, v in kind_type.options}
        options.update(dict(data.get("options") or {}))
        options = {k: int(v) if k.endswith("_port") else v for k, v in options.items()}
        return cls(str(data.get("name", "")), str(data.get("host", "")), int(data.get("port", kind_type.port)),
                   str(data.get("user", kind_type.user)), str(data.get("database", kind_type.database)),
                   bool(data.get("secure", False)), options)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not data["options"]:
            del data["options"]
        return data


@dataclass(frozen=True)
class Profile:
    """A server target: its kind, the profile, and (DolphinDB) the database prefix."""

    kind: str                                    # dolphindb, or one of SERVER_TYPES
    profile: ClusterProfile | ServerProfile      # never holds a password
    db_prefix: str = DEFAULT_DB_PREFIX
    agents: tuple[str, ...] = ()                 # HOST:PORT of each database host's agent (tickbench agent)

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents", tuple(check_agent(a) for a in self.agents))

    @property
    def name(self) -> str:
        return self.profile.name

    @property
    def user(self) -> str:
        return self.profile.user

    @property
    def key(self) -> str:
        return f"{'ddb' if self.kind == DDB else SERVER_TYPES[self.kind].prefix}:{self.name}"

    @property
    def kind_label(self) -> str:
        return "DolphinDB" if self.kind == DDB else SERVER_TYPES[self.kind].label

    @property
    def label(self) -> str:
        return f"{self.kind_label}: {self.name}"

    @property
    def password_variable(self) -> str:
        """The environment variable the command line reads this kind's password from."""
        return f"TICKBENCH_{'DDB' if self.kind == DDB else self.kind.upper()}_PASSWORD"

    def config(self) -> dict[str, Any]:
        """The target's config without its password (nor its agents' token)."""
        agents = {"agents": list(self.agents)} if self.agents else {}
        if self.kind == DDB:
            p = self.profile
            return {"profile": p.to_dict(), "db_prefix": self.db_prefix, "protocol": p.protocol,
                    "compress": p.compress, "node_policy": p.node_policy, **agents}
        data = self.profile.to_dict()
        options = data.pop("options", {})
        return {**data, **options, "profile_name": self.name, **agents}

    def to_dict(self) -> dict[str, Any]:
        data = {"kind": self.kind, "profile": self.profile.to_dict()}
        if self.kind == DDB:
            data["db_prefix"] = self.db_prefix
        if self.agents:
            data["agents"] = list(self.agents)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Profile":
        kind = str(data.get("kind") or DDB)           # version 1 states held DolphinDB clusters only
        agents = tuple(str(a) for a in data.get("agents") or ())
        if kind == DDB:
            cluster = ClusterProfile.from_dict(dict(data["profile"])).with_password("")
            return cls(DDB, cluster, str(data.get("db_prefix") or DEFAULT_DB_PREFIX), agents)
        if kind in SERVER_TYPES:
            return cls(kind, ServerProfile.from_dict(dict(data["profile"]), kind), agents=agents)
        raise ValueError(f"unknown server kind {kind!r}")
