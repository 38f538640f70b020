"""A scenario: everything that defines a run, as plain data saved with it (and as TOML).

A scenario file (or the JSON the window sends) is checked key by key before anything starts: an
unknown key or a value of the wrong type is one ``ValueError`` line naming the file, the key and
the type expected. ``users`` takes a list of whole numbers (one step each), and also one number
(``users = 4``: one step of 4 users) or the command line's form (``users = "1,2,4"``); a number
where text is expected, or text where a number is, is refused rather than guessed.
Sizes that are never meaningful (a duration that is not a finite number, negative counts) are
refused by the scenario itself; what this machine could not hold is ``workloads.run.limits``'."""
from __future__ import annotations

import math
import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import tomli_w

from workloads.datasets.builtin import IMPORT_PREFIX, TABLE_PREFIX
from workloads.datasets.schema import Scale, StringMode
from workloads.distributed.placement import check_placement
from workloads.run.processes import PROCESSES, START_METHODS
from workloads.run.schedule import check_rates

CACHE_STATES = ("warm", "cold")


GENERATOR_SETTINGS = ("rows_per_day", "symbols", "seed")     # what only generated data has
_OWN = Scale(rows_per_day=1, symbols=1, seed=0)


def has_own_size(dataset: str) -> bool:
    """An import's or a table's data: its rows, keys and days are what they are, no generator's."""
    return dataset.startswith((IMPORT_PREFIX, TABLE_PREFIX))


def own_scale(scale: Scale) -> Scale:
    """The scale of a dataset with its own size: the days asked (and their start), nothing else."""
    return Scale(days=scale.days, start=scale.start, rows_per_day=_OWN.rows_per_day, symbols=_OWN.symbols,
                 seed=_OWN.seed)


@dataclass(frozen=True)
class Scenario:
    name: str = "untitled"
    dataset: str = "taq"
    scale: Scale = field(default_factory=Scale)
    strings: str = StringMode.ARROW.value
    target: str = "duckdb"
    target_config: dict[str, Any] = field(default_factory=dict)
    workload: str = "read-day"
    params: dict[str, Any] = field(default_factory=dict)
    users: tuple[int, ...] = (1,)
    cache: str = "warm"
    operations: int = 3            # per user per step; 0 means "run for duration_s"
    duration_s: float = 0.0
    warmup_ops: int = 1            # per user per step, before the release; recorded apart
    probe_ops: int = 2             # per user per step, after the window, where phases need probes
    experiment: str = ""           # the report gallery's slot (report/experiment/arm/size), or ""
    scheduler: str = ""            # a Dask scheduler (tcp://host:port) whose workers run the users, or ""
    placement: str = "spread"      # how users go to the Dask workers: spread | packed | pinned
    pins: dict[str, int] = field(default_factory=dict)   # pinned: host (address or name) -> users
    rate: tuple[float, ...] = ()   # open loop (workloads.run.schedule): operations per second, a step each; () = closed loop
    rate_per: str = "total"        # the rate is the step's in total, or each user's
    schedule: str = "constant"     # constant | poisson
    start: str = "forkserver"      # users forked from a preloaded server, or spawned (workloads.run.processes)
    process: str = "settled"       # settled (a long-lived client's allocator, pandas 3 strings) | plain

    def __post_init__(self) -> None:
        StringMode.parse(self.strings)
        if self.cache not in CACHE_STATES:
            raise ValueError(f"cache must be one of {', '.join(CACHE_STATES)}, not {self.cache!r}")
        if not self.users or any(u < 1 for u in self.users):
            raise ValueError("users must be one or more whole numbers of at least 1")
        if not math.isfinite(self.duration_s):
            raise ValueError(f"duration must be a finite number of seconds, not {self.duration_s}")
        if self.operations < 0 or self.duration_s < 0:
            raise ValueError("operations and duration must not be negative")
        if self.warmup_ops < 0 or self.probe_ops < 0:
            raise ValueError("warm-up and probe operations must not be negative")
        check_placement(self.scheduler, self.placement, self.pins)
        if not isinstance(self.rate, tuple):
            object.__setattr__(self, "rate", rates(self.rate))
        check_rates(self.rate, self.schedule, self.rate_per)
        if self.start not in START_METHODS:
            raise ValueError(f"start must be one of {', '.join(START_METHODS)}, not {self.start!r}")
        if self.process not in PROCESSES:
            raise ValueError(f"process must be one of {', '.join(PROCESSES)}, not {self.process!r}")
        if has_own_size(self.dataset) and self.scale != own_scale(self.scale):
            # an import's or a table's rows and keys are its own: one scale (so one layout) per days asked
            object.__setattr__(self, "scale", own_scale(self.scale))

    def __repr__(self) -> str:           # what logs and tracebacks show: never a password
        fields = ", ".join(f"{k}={redacted(v)!r}" for k, v in self.__dict__.items())
        return f"Scenario({fields})"

    @property
    def string_mode(self) -> StringMode:
        return StringMode(self.strings)

    def with_changes(self, **changes: Any) -> "Scenario":
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["users"] = list(self.users)
        data["rate"] = list(self.rate)
        if has_own_size(self.dataset):      # no generator settings: nothing generated them
            data["scale"] = {k: v for k, v in data["scale"].items() if k not in GENERATOR_SETTINGS}
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Scenario":
        """A scenario from plain data (a TOML file's, the window's JSON); ValueError naming the key
        and the type expected for anything else."""
        if not isinstance(data, dict):
            raise ValueError(f"a scenario is a table of keys, not {type(data).__name__}")
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown scenario key(s): {', '.join(sorted(unknown))} "
                             f"(known: {', '.join(sorted(known))})")
        values = {key: _typed(key, value, FIELD_TYPES[key]) for key, value in data.items()}
        if "scale" in values:
            scale = values["scale"]
            unknown = set(scale) - set(SCALE_TYPES)
            if unknown:
                raise ValueError(f"unknown scale key(s): {', '.join(sorted(unknown))} "
                                 f"(known: {', '.join(SCALE_TYPES)})")
            values["scale"] = Scale(**{k: _typed(f"scale.{k}", v, SCALE_TYPES[k]) for k, v in scale.items()})
        if "users" in values:
            values["users"] = _users(values["users"])
        if "rate" in values:
            values["rate"] = rates(values["rate"])
        if "pins" in values:
            values["pins"] = {str(k): _typed(f"pins.{k}", v, "int") for k, v in values["pins"].items()}
        return cls(**values)

    def save_toml(self, path: Path) -> None:
        Path(path).write_text(tomli_w.dumps(_drop_secrets(self.to_dict())), encoding="utf-8")

    @classmethod
    def load_toml(cls, path: Path) -> "Scenario":
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: not a valid scenario file ({exc})") from None
        except FileNotFoundError:
            raise ValueError(f"{path}: no such scenario file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: cannot read the scenario file ({exc.__class__.__name__}: "
                             f"{getattr(exc, 'strerror', None) or exc})") from None
        try:
            return cls.from_dict(data)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: {exc}") from None


# The type each scenario key takes: "str", "int" (never a bool), "number" (int or float), "table",
# or "users" (a list of whole numbers, one number, or "1,2,4").
FIELD_TYPES = {"name": "str", "dataset": "str", "scale": "table", "strings": "str", "target": "str",
               "target_config": "table", "workload": "str", "params": "table", "users": "users",
               "cache": "str", "operations": "int", "duration_s": "number", "warmup_ops": "int",
               "probe_ops": "int", "experiment": "str", "scheduler": "str", "placement": "str", "pins": "table",
               "rate": "rates", "rate_per": "str", "schedule": "str",
               "start": "str", "process": "str"}
SCALE_TYPES = {"days": "int", "rows_per_day": "int", "symbols": "int", "seed": "int", "start": "str"}
_EXPECTED = {"str": "text", "int": "a whole number", "number": "a number", "table": "a table",
             "users": "a list of whole numbers (or one number)",
             "rates": "operations per second: a number, a list of numbers or \"500,1000\""}


def _typed(key: str, value: Any, kind: str) -> Any:
    ok = {"str": isinstance(value, str),
          "int": isinstance(value, int) and not isinstance(value, bool),
          "number": isinstance(value, (int, float)) and not isinstance(value, bool),
          "table": isinstance(value, dict),
          "users": isinstance(value, (int, str, list, tuple)) and not isinstance(value, bool),
          "rates": isinstance(value, (int, float, str, list, tuple)) and not isinstance(value, bool)}[kind]
    if not ok:
        raise ValueError(f"{key}: expected {_EXPECTED[kind]}, not {type(value).__name__} {value!r:.60}")
    return float(value) if kind == "number" else value


def _users(value: Any) -> tuple[int, ...]:
    items = value.split(",") if isinstance(value, str) else [value] if isinstance(value, int) else list(value)
    users = []
    for item in items:
        if isinstance(item, str) and item.strip().isdigit():
            item = int(item)
        if isinstance(item, bool) or not isinstance(item, int):
            raise ValueError(f"users: expected {_EXPECTED['users']}, not {value!r:.60}")
        users.append(item)
    return tuple(users)

def rates(value: Any) -> tuple[float, ...]:
    """Open-loop rates from a number, a list or the command line's "500,1000,2000" (ValueError
    naming the key otherwise)."""
    items = value.split(",") if isinstance(value, str) else [value] if isinstance(value, (int, float)) else list(value)
    out = []
    for item in items:
        if isinstance(item, str):
            try:
                item = float(item.strip().replace("_", ""))
            except ValueError:
                raise ValueError(f"rate: expected {_EXPECTED['rates']}, not {value!r:.60}") from None
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise ValueError(f"rate: expected {_EXPECTED['rates']}, not {value!r:.60}")
        out.append(float(item))
    return tuple(out)


UNNAMED = ("", "untitled", "cli")       # names that say nothing: the run gets ``describe``'s instead


def describe(scenario: Scenario) -> str:
    """A name that says what a run is: target, workload, users and cache, e.g.
    "pickle · read-day · 1 user · warm cache" or "duckdb · slice-download · 1-128 users · cold cache"."""
    users = scenario.users
    count = f"{users[0]} user{'s' if users[0] != 1 else ''}" if len(users) == 1 else \
        f"{min(users)}-{max(users)} users"
    target = scenario.target_config.get("target_key") or scenario.target
    loop = ""
    if scenario.rate:
        offered = ", ".join(f"{r:,.6g}" for r in scenario.rate)
        loop = f" · {offered} ops/s{' each' if scenario.rate_per == 'user' else ''} {scenario.schedule}"
    return f"{target} · {scenario.workload} · {count}{loop} · {scenario.cache} cache"


def run_name(scenario: Scenario) -> str:
    """The name a run is stored and shown under."""
    name = scenario.name.strip()
    return describe(scenario) if name in UNNAMED else name


SECRET_WORDS = ("password", "passwd", "secret", "token")
REDACTED = "***"


def is_secret(key: Any) -> bool:
    """A config key whose value is a secret (``password``, ``db_password``, ``api_token``...)."""
    return isinstance(key, str) and any(word in key.lower() for word in SECRET_WORDS)


def redacted(value: Any) -> Any:
    """``value`` with every secret's value (at any depth of dicts and lists) replaced by ``***``:
    for reprs and logs (a Dask host whose relay fails logs its task's arguments)."""
    if isinstance(value, dict):
        return {k: (REDACTED if is_secret(k) and v else redacted(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redacted(v) for v in value)
    return value


def _drop_secrets(data: dict[str, Any]) -> dict[str, Any]:
    """Passwords (and every other secret: ``is_secret``) never go into scenario files."""
    config = {k: v for k, v in data.get("target_config", {}).items() if not is_secret(k)}
    return {**data, "target_config": config}



SIZES = ("tiny", "medium", "report")    # a report card's sizes, smallest first (workloads.reproduce.catalog)


def parse_slot(slot: str) -> tuple[str, str, str, str] | None:
    """``report/experiment/arm/size`` from a run's ``Scenario.experiment``; None if not a gallery run."""
    parts = (slot or "").split("/")
    return tuple(parts) if len(parts) == 4 else None


def scenario_differences(a: dict, b: dict, prefix: str = "") -> list[str]:
    """What scenario B changes of A, key by key ("params.hold_s 0.01 → 0.012"), the names aside."""
    out = []
    for key in sorted(set(a) | set(b)):
        if not prefix and key == "name":
            continue
        x, y = a.get(key), b.get(key)
        if isinstance(x, dict) and isinstance(y, dict):
            out += scenario_differences(x, y, f"{prefix}{key}.")
        elif x != y:
            out.append(f"{prefix}{key} {x if x is not None else '—'} → {y if y is not None else '—'}")
    return out
