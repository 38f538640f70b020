"""Where data can live, as the command line and the window both see it: the engines this install
can run (with their default folders), the server profiles a user has described, and their
passwords (session, keyring, or asked for), never written anywhere but the keyring.

- ``ENGINES``: every target kind, its label, what it keeps where, and the client modules it needs;
  ``missing_client(kind)`` says "install tickbench[X]" without importing anything heavy.
- ``TargetRegistry``: the local targets (always listed, with their availability) and the server
  profiles (DolphinDB clusters, ClickHouse servers), persisted as plain JSON in
  ``<datasets folder>/targets.json`` without passwords; ``resolve(key, ask)`` gives a ready config.

The targets panel is a view of a registry; ``tickbench targets`` prints one; ``tickbench run
--target KEY`` resolves a key through one.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from workloads.cluster import ClusterProfile

log = logging.getLogger(__name__)
STATE_VERSION = 2
STATE_FILE = "targets.json"
DEFAULT_DB_PREFIX = "dfs://tickbench"
DDB, CLICKHOUSE = "dolphindb", "clickhouse"
PASSWORD_KEYS = ("password",)            # config keys stripped from anything saved or recorded


@dataclass(frozen=True)
class Engine:
    kind: str
    label: str
    holds: str                       # what its folder holds, in a few words
    modules: tuple[str, ...] = ()    # client modules it imports (checked, not imported)
    extra: str = ""                  # pip extra that installs them
    local: bool = True               # runs on this computer without a server


ENGINES: tuple[Engine, ...] = (
    Engine("duckdb", "DuckDB (embedded)", "one database file", ("duckdb",)),
    Engine("pickle", "Pickle files", "one file per day"),
    Engine("parquet", "Parquet files", "one file per day", ("pyarrow",)),
    Engine("feather", "Feather files", "one file per day", ("pyarrow",)),
    Engine("clickhouse", "ClickHouse (chDB, embedded)", "a MergeTree table per dataset, partitioned by day",
           ("chdb",), "clickhouse"),
    Engine("arcticdb", "ArcticDB (LMDB)", "a library per dataset, a symbol per day", ("arcticdb",), "arcticdb"),
    Engine("hdf5", "HDF5 (PyTables)", "a file per day, one table node each", ("tables",), "hdf5"),
    Engine(DDB, "DolphinDB", "a DFS database per dataset", ("dolphindb",), local=False),
)
SERVER_KINDS = {DDB: "DolphinDB clusters", CLICKHOUSE: "ClickHouse servers"}
SERVER_CLIENTS = {DDB: ("dolphindb", ""), CLICKHOUSE: ("clickhouse_connect", "clickhouse")}


def engine(kind: str) -> Engine:
    for item in ENGINES:
        if item.kind == kind:
            return item
    raise KeyError(f"unknown target kind {kind!r}: choose one of {', '.join(e.kind for e in ENGINES)}")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_client(kind: str, server: bool = False) -> str | None:
    """None when ``kind``'s client is installed (or bundled), else what to install."""
    if server and kind in SERVER_CLIENTS:
        module, extra = SERVER_CLIENTS[kind]
        modules = (module,)
    else:
        item = engine(kind)
        modules, extra = item.modules, item.extra
    missing = [m for m in modules if not _installed(m)]
    if not missing:
        return None
    if getattr(sys, "frozen", False):        # the double-click app: nothing to pip install into it
        return f"not in this build: pip install 'tickbench[{extra or 'engines'}]'"
    if extra:
        return f"not installed: install tickbench[{extra}] (needs {', '.join(missing)})"
    return f"not installed: pip install {' '.join(missing)}"


def default_config(kind: str, data_dir: Path) -> dict[str, Any]:
    """A local target's config with its default place under ``data_dir``."""
    data_dir = Path(data_dir)
    if kind == "duckdb":
        return {"path": str(data_dir / "tickbench_data.duckdb")}
    if kind == "clickhouse":
        return {"path": str(data_dir / "clickhouse")}
    if kind == "arcticdb":
        return {"uri": f"lmdb://{data_dir / 'arcticdb'}?map_size=4GB"}
    return {"root": str(data_dir)}


def where(config: dict[str, Any]) -> str:
    """Where a config keeps its data, for a person."""
    return str(config.get("path") or config.get("uri") or config.get("root") or config.get("host") or "")


def strip_passwords(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` without secrets, for settings, scenario files and run records."""
    return {k: v for k, v in config.items() if k not in PASSWORD_KEYS}


@dataclass(frozen=True)
class ServerProfile:
    """A ClickHouse server a user described: HTTP(S) endpoint, user and database; no password."""

    name: str
    host: str
    port: int = 8123
    user: str = "default"
    database: str = "tickbench"
    secure: bool = False

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("a server profile needs a name")
        if not self.host.strip() or any(ch.isspace() for ch in self.host):
            raise ValueError(f"server {self.name!r}: host {self.host!r} is not a host name or address")
        if not 1 <= int(self.port) <= 65535:
            raise ValueError(f"server {self.name!r}: port {self.port} is not between 1 and 65535")
        if not self.user.strip():
            raise ValueError(f"server {self.name!r}: the user must not be empty")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ServerProfile":
        known = {k: data[k] for k in ("name", "host", "port", "user", "database", "secure") if k in data}
        return cls(**{**known, "port": int(known.get("port", 8123)), "secure": bool(known.get("secure", False))})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Profile:
    """A server target: its kind, the profile, and (DolphinDB) the database prefix."""

    kind: str                                    # dolphindb | clickhouse
    profile: ClusterProfile | ServerProfile      # never holds a password
    db_prefix: str = DEFAULT_DB_PREFIX

    @property
    def name(self) -> str:
        return self.profile.name

    @property
    def user(self) -> str:
        return self.profile.user

    @property
    def key(self) -> str:
        return f"{'ddb' if self.kind == DDB else 'ch'}:{self.name}"

    @property
    def label(self) -> str:
        return f"{'DolphinDB' if self.kind == DDB else 'ClickHouse'}: {self.name}"

    def config(self) -> dict[str, Any]:
        """The target's config without its password."""
        if self.kind == DDB:
            p = self.profile
            return {"profile": p.to_dict(), "db_prefix": self.db_prefix, "protocol": p.protocol,
                    "compress": p.compress, "node_policy": p.node_policy}
        return self.profile.to_dict() | {"profile_name": self.name}

    def to_dict(self) -> dict[str, Any]:
        data = {"kind": self.kind, "profile": self.profile.to_dict()}
        if self.kind == DDB:
            data["db_prefix"] = self.db_prefix
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Profile":
        kind = str(data.get("kind") or DDB)           # version 1 states held DolphinDB clusters only
        if kind == DDB:
            cluster = ClusterProfile.from_dict(dict(data["profile"])).with_password("")
            return cls(DDB, cluster, str(data.get("db_prefix") or DEFAULT_DB_PREFIX))
        if kind == CLICKHOUSE:
            return cls(CLICKHOUSE, ServerProfile.from_dict(dict(data["profile"])))
        raise ValueError(f"unknown server kind {kind!r}")


@dataclass(frozen=True)
class TargetEntry:
    """One row of the registry as a view shows it."""

    key: str
    label: str
    kind: str
    config: dict[str, Any]           # no password
    missing: str | None = None       # None: ready to use; else what to install
    holds: str = ""
    profile: Profile | None = None   # server targets only


AskPassword = Callable[[Profile, bool], "str | None"]   # (profile, stored one was refused) -> password


class TargetRegistry:
    """Local targets and server profiles; passwords from this session, the store, or ``ask``.

    ``password_store``: an object with ``load(name, user)``, ``save(name, user, password) -> bool``
    and ``forget(name, user)`` (``workloads.passwords.KeyringPasswords``), or None.
    """

    def __init__(self, data_dir: Path, password_store=None, state_path: Path | None = None):
        self.data_dir = Path(data_dir)
        self.password_store = password_store
        self.state_path = state_path
        self._profiles: dict[str, Profile] = {}
        self._session: dict[str, str] = {}        # profile key -> password typed this session
        self._distrusted: set[str] = set()        # keys whose stored password was refused
        self.notes: dict[str, str] = {}           # key -> a remark from loading (compression turned off)
        self.last_save_ok = True                  # whether the store kept the last password it was given

    @classmethod
    def load(cls, data_dir: Path, password_store=None, state_path: Path | None = None) -> "TargetRegistry":
        """A registry with the profiles saved in ``state_path`` (default ``<data_dir>/targets.json``:
        the window and the command line share the datasets folder, so they share the profiles)."""
        state_path = state_path or Path(data_dir) / STATE_FILE
        registry = cls(data_dir, password_store, state_path)
        if state_path.is_file():
            try:
                registry.restore(json.loads(state_path.read_text(encoding="utf-8")), save=False)
            except (OSError, ValueError) as exc:
                log.warning("ignoring unreadable %s: %s", state_path, exc)
        return registry

    # --- what there is -----------------------------------------------------------------------------
    def local_entries(self) -> list[TargetEntry]:
        return [TargetEntry(e.kind, e.label, e.kind, default_config(e.kind, self.data_dir),
                            missing_client(e.kind), e.holds) for e in ENGINES if e.local]

    def profile_entries(self, kind: str | None = None) -> list[TargetEntry]:
        return [TargetEntry(p.key, p.label, p.kind, p.config(), missing_client(p.kind, server=True),
                            profile=p)
                for p in self._profiles.values() if kind is None or p.kind == kind]

    def entries(self) -> list[TargetEntry]:
        return self.local_entries() + self.profile_entries()

    def entry(self, key: str) -> TargetEntry:
        for item in self.entries():
            if item.key == key:
                return item
        known = ", ".join(e.key for e in self.entries())
        raise KeyError(f"no target {key!r}: known targets are {known}")

    def profiles(self) -> list[Profile]:
        return list(self._profiles.values())

    def profile(self, key: str) -> Profile:
        return self._profiles[key]

    # --- profiles ----------------------------------------------------------------------------------
    def add(self, profile: Profile, password: str = "", remember: bool = False) -> str:
        profile = _without_password(profile)
        if profile.key in self._profiles:
            raise ValueError(f"a {profile.label.split(':')[0]} profile named {profile.name!r} exists already")
        self._profiles[profile.key] = profile
        self.keep_password(profile, password, remember)
        self.save()
        return profile.key

    def replace(self, key: str, profile: Profile, password: str = "", remember: bool = False) -> str:
        old = self._profiles[key]
        profile = _without_password(profile)
        if profile.key != key and profile.key in self._profiles:
            raise ValueError(f"a profile named {profile.name!r} exists already")
        renamed = (old.name, old.user) != (profile.name, profile.user)
        if renamed and not password:      # carry a known password over to the new name or user
            password = self._session.get(key) or self.stored_password(old) or ""
            remember = remember and bool(password)
        if renamed:
            self.forget_password(old)
        self._profiles = {(profile.key if k == key else k): (profile if k == key else v)
                          for k, v in self._profiles.items()}        # the edited one keeps its place
        self.keep_password(profile, password, remember, drop_stored=not remember)
        self.notes.pop(key, None)
        self.save()
        return profile.key

    def update_profile(self, profile: Profile) -> None:
        """Swap a profile for a new version of itself (same key: nodes found by discovery);
        its password stays where it is."""
        if profile.key not in self._profiles:
            raise KeyError(f"no profile {profile.key!r}")
        self._profiles[profile.key] = _without_password(profile)
        self.save()

    def remove(self, key: str) -> Profile:
        profile = self._profiles.pop(key)
        self.forget_password(profile)
        self.notes.pop(key, None)
        self.save()
        return profile

    # --- passwords ---------------------------------------------------------------------------------
    def stored_password(self, profile: Profile) -> str | None:
        if self.password_store is None:
            return None
        try:
            return self.password_store.load(profile.name, profile.user)
        except Exception as exc:  # a broken keyring must not break the registry
            log.warning("password store: %s", exc)
            return None

    def keep_password(self, profile: Profile, password: str, remember: bool, drop_stored: bool = False) -> bool:
        """Remember ``password`` for this session (and in the store when ``remember``); False when
        the store was asked to keep it and could not."""
        if password:
            self._session[profile.key] = password
            self._distrusted.discard(profile.key)
        self.last_save_ok = True
        if self.password_store is None:
            self.last_save_ok = not (password and remember)
            return self.last_save_ok
        try:
            if password and remember:
                self.last_save_ok = bool(self.password_store.save(profile.name, profile.user, password))
            elif drop_stored:
                self.password_store.forget(profile.name, profile.user)
        except Exception as exc:
            log.warning("password store: %s", exc)
            self.last_save_ok = False
        return self.last_save_ok

    def forget_password(self, profile: Profile) -> None:
        self._session.pop(profile.key, None)
        self._distrusted.discard(profile.key)
        if self.password_store is not None:
            try:
                self.password_store.forget(profile.name, profile.user)
            except Exception as exc:
                log.warning("password store: %s", exc)

    def distrust(self, key: str) -> None:
        """The server refused this profile's password: ask again instead of using it."""
        self._session.pop(key, None)
        self._distrusted.add(key)

    def password(self, key: str, ask: AskPassword | None = None) -> str | None:
        """The password of a profile: typed this session, stored (unless refused), or ``ask``ed
        (None when there is no way to ask or the user cancels)."""
        profile = self._profiles[key]
        if key in self._session:
            return self._session[key]
        stored = self.stored_password(profile)
        if stored is not None and key not in self._distrusted:
            return stored
        if ask is None:
            return None
        typed = ask(profile, stored is not None)
        if typed is None:
            return None
        self._session[key] = typed
        if stored is not None:      # the user keeps passwords in the store: replace the refused one
            self._distrusted.discard(key)
            self.keep_password(profile, typed, remember=True)
        return typed

    def config(self, key: str) -> dict[str, Any]:
        """A target's config without its password."""
        return dict(self.entry(key).config)

    def resolve(self, key: str, ask: AskPassword | None = None) -> dict[str, Any] | None:
        """A target's config ready to run (servers with their password), or None when no password
        could be had."""
        item = self.entry(key)
        if item.profile is None:
            return dict(item.config)
        password = self.password(key, ask)
        if password is None:
            return None
        return {**item.config, "password": password}

    # --- state ---------------------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """Plain data of the profiles, without passwords."""
        return {"version": STATE_VERSION, "profiles": [p.to_dict() for p in self._profiles.values()]}

    def restore(self, state: dict[str, Any], save: bool = True) -> list[str]:
        """Replace the profiles by those in ``state``; unreadable ones are skipped (returned as
        messages) and the others kept."""
        profiles: dict[str, Profile] = {}
        skipped, notes = [], {}
        for i, item in enumerate(state.get("profiles") or []):
            try:
                item = dict(item)
                data = dict(item.get("profile") or {})
                if item.get("kind", DDB) == DDB and data.get("compress") and \
                        str(data.get("protocol", "DDB")).upper() != "DDB":
                    # saved by a version that allowed it; the client refuses or ignores it
                    data["compress"] = False
                    item["profile"] = data
                    note = (f"Compression was turned off: it works only with the DDB protocol, not "
                            f"{str(data['protocol']).upper()}.")
                else:
                    note = ""
                profile = Profile.from_dict(item)
            except (KeyError, TypeError, ValueError) as exc:
                skipped.append(f"saved target {i + 1}: {exc}")
                log.warning("ignoring saved target %d: %s", i + 1, exc)
                continue
            profiles[profile.key] = profile
            if note:
                notes[profile.key] = note
        self._profiles, self.notes = profiles, notes
        if save:
            self.save()
        return skipped

    def save(self) -> None:
        """Write the profiles (no passwords) to the state file, atomically; no file, no saving."""
        if self.state_path is None:
            return
        from workloads.targets.storage import write_bytes_atomic
        try:
            self.state_path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(self.state_path, json.dumps(self.state(), indent=1).encode("utf-8"))
        except Exception as exc:   # a full or read-only disk must not lose the profiles in memory
            log.warning("could not save %s: %s", self.state_path, exc)


def _without_password(profile: Profile) -> Profile:
    if isinstance(profile.profile, ClusterProfile):
        return replace(profile, profile=profile.profile.with_password(""))
    return profile


def check_server(config: dict[str, Any], timeout: float = 2.0):
    """Log in to a ClickHouse server and ask its version: a ``workloads.cluster.Verdict``."""
    from workloads.cluster import Verdict
    try:
        import clickhouse_connect
    except ImportError:
        return Verdict(False, "error", "clickhouse-connect is not installed: install tickbench[clickhouse]")
    address = f"{config['host']}:{config.get('port', 8123)}"
    try:
        client = clickhouse_connect.get_client(
            host=config["host"], port=int(config.get("port", 8123)), username=config.get("user", "default"),
            password=config.get("password", ""), secure=bool(config.get("secure")),
            connect_timeout=timeout, send_receive_timeout=timeout)
        try:
            version = client.server_version
        finally:
            client.close()
    except Exception as exc:  # the client's errors name the cause: refused, timed out, authentication
        text = str(exc)
        kind = ("wrong_password" if "AUTHENTICATION_FAILED" in text or "516" in text or "password" in text.lower()
                else "refused" if "refused" in text.lower()
                else "timed_out" if "timed out" in text.lower() or "timeout" in text.lower() else "error")
        return Verdict(False, kind, f"{address}: {text.splitlines()[0] if text else type(exc).__name__}")
    return Verdict(True, "ok", f"{address} answered: ClickHouse {version}.")
