"""Where data can live, as the command line and the window both see it: the engines this install
can run (``workloads.targets.engines``, with their default folders), the server profiles a user
has described (``workloads.targets.profiles``), and their passwords (session, keyring, or asked
for), never written anywhere but the keyring.

- ``TargetRegistry``: the local targets (always listed, with their availability) and the server
  profiles (DolphinDB clusters, ClickHouse servers), persisted as plain JSON in
  ``<datasets folder>/targets.json`` without passwords; ``resolve(key, ask)`` gives a ready config.

The targets panel is a view of a registry; ``tickbench targets`` prints one; ``tickbench run
--target KEY`` resolves a key through one.
"""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from workloads.targets.dolphindb.cluster import ClusterProfile
from workloads.targets.engines import DDB, ENGINES, default_config, missing_client
from workloads.targets.profiles import LOCAL_ENGINE_NAME, Profile, ServerProfile

log = logging.getLogger(__name__)
STATE_VERSION = 2
STATE_FILE = "targets.json"


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

    def table_entries(self) -> list[TargetEntry]:
        """Existing tables read in place (``workloads.targets.table``), saved under the data folder."""
        from workloads.datasets.tables import list_tables
        return [TargetEntry(f"table:{t.name}", f"Table: {t.name} ({t.where})", "table",
                            {"name": t.name, "source": t.kind, **t.connection},
                            missing_client(t.kind, server=t.kind not in ("parquet", "duckdb")), t.roles.describe())
                for t in list_tables()]

    def entries(self) -> list[TargetEntry]:
        return self.local_entries() + self.profile_entries() + self.table_entries()

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
        from workloads.targets.profiles import check_profile_name
        check_profile_name(profile.name)          # the window's panel and the command line alike
        profile = _without_password(profile)
        if profile.key in self._profiles:
            raise ValueError(f"a {profile.kind_label} profile named {profile.name!r} exists already")
        self._profiles[profile.key] = profile
        self.keep_password(profile, password, remember)
        self.save()
        return profile.key

    def replace(self, key: str, profile: Profile, password: str = "", remember: bool = False) -> str:
        from workloads.targets.profiles import check_profile_name
        check_profile_name(profile.name)
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

    def add_local_engine(self, engine) -> str:
        """The profile of a local engine Tickbench started (``workloads.local_engines``), named
        "local"; its password stays in the engine's record, never in this registry's file."""
        config = dict(engine.config)
        known = {"host", "port", "user", "database", "secure", "password"}
        options = {k: v for k, v in config.items() if k not in known}
        profile = Profile(engine.kind, ServerProfile.from_dict(
            {"name": LOCAL_ENGINE_NAME, **{k: config[k] for k in known - {"password"} if k in config},
             "options": {**options, "local_engine": True}}, engine.kind))
        if profile.key in self._profiles:
            self._profiles[profile.key] = profile
            self.save()
        else:
            self.add(profile)
        if config.get("password"):
            self._session[profile.key] = config["password"]
        return profile.key

    def remove(self, key: str) -> Profile:
        profile = self._profiles.pop(key)
        self.forget_password(profile)
        self.notes.pop(key, None)
        self.save()
        return profile

    # --- passwords ---------------------------------------------------------------------------------
    def stored_password(self, profile: Profile, login: str = "") -> str | None:
        """The secret the store keeps under (profile name, ``login`` or the profile's user)."""
        if self.password_store is None:
            return None
        try:
            return self.password_store.load(profile.name, login or profile.user)
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
        if isinstance(profile.profile, ServerProfile) and profile.profile.options.get("local_engine"):
            from workloads.local_engines import running
            engine = running(self.data_dir).get(profile.kind)
            if engine is not None:
                return str(engine.config.get("password") or "")
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
        if item.kind == "table":
            return self._table_config(item, ask)
        if item.profile is None:
            return dict(item.config)
        if item.config.get("local_engine"):
            return self._local_engine_config(item)
        password = self.password(key, ask)
        if password is None:
            return None
        return {**item.config, "password": password, **self._agent_token(item)}

    # --- the database hosts' agents (workloads.targets.common.host_agents) --------------------------
    AGENT_LOGIN = "tickbench-agent"      # the keyring entry of a profile's agents' token: (name, this)

    def _agent_token(self, item: TargetEntry) -> dict[str, str]:
        """``agent_token`` for a profile with agents: the environment's, else the one kept for it."""
        from workloads.targets.common.host_agents import TOKEN_VARIABLE
        if not item.config.get("agents"):
            return {}
        token = os.environ.get(TOKEN_VARIABLE) or self.stored_agent_token(item.profile) or ""
        return {"agent_token": token} if token else {}

    def stored_agent_token(self, profile: Profile | None) -> str | None:
        return None if profile is None else self.stored_password(profile, self.AGENT_LOGIN)

    def set_agents(self, key: str, agents: list[str], token: str = "") -> bool:
        """Give a saved server its hosts' agents (none: forget them), and keep their token in the
        store when one is given; False when the store could not keep it."""
        profile = replace(self._profiles[key], agents=tuple(agents))
        self._profiles[key] = profile
        self.save()
        if not token:
            return True
        if self.password_store is None:
            return False
        try:
            return bool(self.password_store.save(profile.name, self.AGENT_LOGIN, token))
        except Exception as exc:
            log.warning("password store: %s", exc)
            return False

    def _table_config(self, item: TargetEntry, ask: AskPassword | None) -> dict[str, Any] | None:
        """A table target's config: through the saved server it names (``server_key``), else its own
        address with a password typed this session, stored under the table's key, or asked for."""
        config = dict(item.config)
        if config.get("server_key"):
            server = self.resolve(str(config["server_key"]), ask)
            return None if server is None else {**server, **config}
        if not config.get("host"):
            return config                       # a file: nothing to log in to
        profile = table_login(item.key, config)
        password = self.password_of(profile, ask)
        return None if password is None else {**config, "password": password}

    def password_of(self, profile: Profile, ask: AskPassword | None) -> str | None:
        """A password kept under ``profile.name`` (a table target's key) this session or in the store,
        else asked for."""
        key = profile.name
        if key in self._session:
            return self._session[key]
        stored = self.stored_password(profile)
        if stored is not None and key not in self._distrusted:
            return stored
        typed = ask(profile, stored is not None) if ask is not None else None
        if typed is not None:
            self._session[key] = typed
        return typed

    def keep_table_password(self, key: str, config: dict[str, Any], password: str, remember: bool) -> bool:
        """Keep a table target's password (never in its saved file): this session, and the store."""
        profile = table_login(key, config)
        if password:
            self._session[key] = password
        return self.keep_password(profile, password, remember) if remember else True

    def _local_engine_config(self, item: TargetEntry) -> dict[str, Any]:
        """A local engine's config from its record (its port and password: never asked for);
        ValueError saying how to start it when it is not running."""
        from workloads.local_engines import available, running
        engine = running(self.data_dir).get(item.kind)
        if engine is None:
            label = available().get(item.kind, (item.kind,))[0]
            raise ValueError(f"the local {label} is stopped: start it with Start local engine → {label} "
                             f"(or `tickbench engines start {item.kind}`)")
        return {**item.config, **engine.config}

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
        from workloads.targets.common.storage import write_bytes_atomic
        try:
            self.state_path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(self.state_path, json.dumps(self.state(), indent=1).encode("utf-8"))
        except Exception as exc:   # a full or read-only disk must not lose the profiles in memory
            log.warning("could not save %s: %s", self.state_path, exc)


def table_login(key: str, config: dict[str, Any]) -> Profile:
    """The login of a table target's own address, as a profile named by its key (``table:NAME``): what
    password prompts and the store see (its ``password_variable`` is the server kind's)."""
    kind = str(config.get("source") or "postgres")
    server = ServerProfile(key, str(config.get("host") or "?"), int(config.get("port") or 1),
                           str(config.get("user") or ""), str(config.get("database") or ""))
    return Profile(kind, server)


def _without_password(profile: Profile) -> Profile:
    if isinstance(profile.profile, ClusterProfile):
        return replace(profile, profile=profile.profile.with_password(""))
    return profile
