"""How a report drove DolphinDB (its method: node policy, protocol, compression, replicas, job
priority and parallelism, each with the report section or source that says so), and how a user's
DolphinDB target differs from it.

Qt-free: the catalog attaches methods to experiments and arms, ``apply`` puts the settable ones
into a DolphinDB target config (the target reads ``node_policy``, ``protocol`` and ``compress``
at the top level of its config over its profile's, and ``priority``/``parallelism`` there: the
job scheduling every ``session.run`` asks for), and the gallery card shows
``summary(...)``. Replicas are the cluster's own ``dfsReplicationFactor``: Tickbench reads them
(each run's footprint) but cannot set them, so they are shown, never applied. A setting this
machine cannot honour (PICKLE on Python >= 3.13) is not applied and says why.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

METHOD_KIND = "dolphindb"                     # the target kind a report's method applies to
SETTABLE = ("node_policy", "protocol", "compress", "parallelism", "priority")
# a profile's own defaults; a job's priority and parallelism default to the client's (4 and 64)
DEFAULTS = {"node_policy": "one", "protocol": "DDB", "compress": False, "parallelism": 64, "priority": 4}
def _esc(text: str) -> str:
    """Text for a rich-text label: markup escaped, quotes and apostrophes left as they read."""
    return html.escape(text, quote=False)


NAMES = {"node_policy": "node policy", "protocol": "protocol", "compress": "compression", "replicas": "replicas",
         "parallelism": "job parallelism", "priority": "job priority"}


@dataclass(frozen=True)
class Setting:
    key: str            # a SETTABLE config key, or "replicas"
    value: Any
    cite: str           # the report's section and what it says

    @property
    def settable(self) -> bool:
        return self.key in SETTABLE

    def blocked(self) -> str:
        """Why this machine cannot apply it ("" when it can)."""
        if self.key == "protocol" and str(self.value).upper() == "PICKLE":
            from workloads.targets.dolphindb.cluster import pickle_refusal
            return pickle_refusal()
        return ""

    @property
    def text(self) -> str:
        return value_text(self.key, self.value)


def value_text(key: str, value: Any) -> str:
    if key == "node_policy":
        return {"one": "every user on one data node", "round_robin": "users on the data nodes in turn",
                "random": "each user on a data node chosen at random"}.get(str(value), str(value))
    if key == "compress":
        return "compressed transfer" if _bool(value) else "no compression"
    if key == "protocol":
        return f"PROTOCOL_{str(value).upper()}"
    if key == "replicas":
        return f"{value} replicas"
    if key in ("parallelism", "priority"):
        return f"job {key} {value}"
    return f"{key} {value}"


def _bool(value: Any) -> bool:
    return value if isinstance(value, bool) else str(value).strip().lower() in ("1", "true", "yes", "on")


def _normal(key: str, value: Any) -> Any:
    if key == "compress":
        return _bool(value)
    if key in ("parallelism", "priority"):
        return int(value)
    return str(value).upper() if key == "protocol" else str(value)


def user_setting(config: dict | None, key: str) -> Any:
    """What a DolphinDB target config says for ``key`` as the target reads it: its own key over
    its profile's, else the profile's default."""
    config = config or {}
    if key in config:
        return config[key]
    return (config.get("profile") or {}).get(key, DEFAULTS.get(key))


def apply(settings: tuple[Setting, ...], config: dict | None) -> dict:
    """``config`` with the method's settable settings over it (those this machine can honour)."""
    return {**(config or {}), **{s.key: s.value for s in settings if s.settable and not s.blocked()}}


@dataclass(frozen=True)
class Difference:
    setting: Setting
    yours: Any                 # what the user's target has (None: not Tickbench's to read or set)

    @property
    def text(self) -> str:
        name = NAMES.get(self.setting.key, self.setting.key)
        if self.yours is None:
            return f"{name}: the report's {self.setting.text}; not set by Tickbench"
        return f"{name}: yours {value_text(self.setting.key, self.yours)}, the report's {self.setting.text}"


def differences(settings: tuple[Setting, ...], config: dict | None) -> list[Difference]:
    """The settable settings where the user's target differs from the report's method."""
    return [Difference(s, user_setting(config, s.key)) for s in settings
            if s.settable and _normal(s.key, user_setting(config, s.key)) != _normal(s.key, s.value)]


@dataclass(frozen=True)
class Summary:
    html: str              # the card's text
    differs: bool          # the runs will not use the report's method in every setting


def summary(groups: list[tuple[str, tuple[Setting, ...]]], subject_kind: str, config: dict | None,
            use_method: bool) -> Summary:
    """The card's account of a method: ``groups`` are (arm label or "", its settings)."""
    if subject_kind != METHOD_KIND:
        return _elsewhere(groups, subject_kind)
    lines, differs = [], False
    for label, settings in groups:
        if not settings:
            continue
        head = f" for {_esc(label)}" if label else ""
        said = "; ".join(f"{_esc(s.text)} ({_esc(s.cite)})" for s in settings)
        lines.append(f"<b>The report's method{head}:</b> {said}.")
        if subject_kind != METHOD_KIND:
            continue
        diffs = differences(settings, config)
        blocked = [s for s in settings if s.settable and s.blocked()]
        if use_method:
            applied = [d for d in diffs if not d.setting.blocked()]
            if applied:
                lines.append("These runs use it; your target's own settings differ: "
                             + "; ".join(_esc(d.text) for d in applied) + ".")
            elif not blocked:
                lines.append("Your target's settings already match it.")
        elif diffs:
            differs = True
            lines.append("<b>These runs use your target's settings, which differ:</b> "
                         + "; ".join(_esc(d.text) for d in diffs) + ".")
        for s in blocked:
            differs = True
            lines.append(f"<b>Not applied here:</b> {_esc(s.blocked())}.")
        for s in settings:
            if not s.settable:
                lines.append(f"{_esc(NAMES.get(s.key, s.key).capitalize())}: the report's cluster kept "
                             f"{_esc(s.text)}; Tickbench does not set them (your cluster's own "
                             "setting; each run's footprint records its replicas).")
    return Summary("<br>".join(lines), differs)


def _elsewhere(groups: list[tuple[str, tuple[Setting, ...]]], subject_kind: str) -> Summary:
    """On another database the method's settings mean nothing to set: named once, in one line."""
    said = list(dict.fromkeys(f"{_esc(s.text)} ({_esc(s.cite)})" for _label, settings in groups for s in settings))
    if not said:
        return Summary("", False)
    return Summary(f"The report's method, DolphinDB's: {'; '.join(said)}. The chosen database, "
                   f"{_esc(subject_kind)}, is not DolphinDB and has no such settings.", False)
