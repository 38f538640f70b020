"""The scenario ``tickbench run`` starts: a scenario TOML file with the flags over it, or the whole
scenario as JSON on standard input; the target's config, or a saved server profile's with its
password (asked for, or from the environment)."""
from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.common import CliError, _fail, _registry
from app.cli.hosts import scheduler_changes
from app.cli.open_loop import rate_changes
from workloads.paths import default_datasets_dir

if TYPE_CHECKING:
    from workloads.scenario import Scenario


def scenario_from_args(args) -> "Scenario":
    from workloads.datasets.schema import Scale
    from workloads.scenario import Scenario
    base = Scenario.load_toml(args.scenario) if args.scenario else Scenario(name="cli")
    scale = base.scale
    scale_changes = {k: v for k, v in (("days", args.days), ("rows_per_day", args.rows_per_day),
                                       ("symbols", args.symbols), ("seed", args.seed)) if v is not None}
    if scale_changes:
        scale = Scale(**{**scale.__dict__, **scale_changes})
    changes = {"scale": scale}
    for field, value in (("name", args.name), ("target", args.target), ("dataset", args.dataset),
                         ("strings", args.strings), ("workload", args.workload), ("cache", args.cache),
                         ("start", args.start), ("process", args.process)):
        if value is not None:
            changes[field] = value
    if args.users is not None:
        changes["users"] = tuple(_users(args.users))
    if args.operations is not None:
        changes["operations"] = args.operations
    if args.duration is not None:
        if not args.duration > 0 or args.duration == float("inf"):
            raise CliError(f"--duration takes a finite number of seconds above 0, not {args.duration}")
        changes["duration_s"] = args.duration
        if args.operations is None:
            changes["operations"] = 0
    if args.warmup is not None:
        changes["warmup_ops"] = args.warmup
    if args.probes is not None:
        changes["probe_ops"] = args.probes
    params = dict(base.params)
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CliError(f"--param takes NAME=VALUE, not {item!r}")
        params[name.strip()] = value.strip()
    workload = changes.get("workload", base.workload)
    if args.operations is not None and args.operations > 0 and not _ends_by_operations(workload):
        params["max_operations"] = args.operations      # a workload that ends by its rows: a cap as well
    changes["params"] = params
    changes.update(scheduler_changes(args, _fail))
    changes.update(rate_changes(args, _fail))
    target = changes.get("target", base.target)
    if ":" in target:               # a saved server profile: its kind and config come from the registry
        kind, config = _profile_config(args, target)
        changes["target"] = kind
        changes["target_config"] = config
        if kind == "table" and args.dataset is None:     # a table read in place is its own dataset
            from workloads.datasets.builtin import TABLE_PREFIX
            changes["dataset"] = TABLE_PREFIX + str(config["name"])
    else:
        changes["target_config"] = _target_config(args, target, dict(base.target_config))
    if getattr(args, "agent", None):
        changes["target_config"] = {**changes["target_config"], "agents": _agents(args.agent)}
    _refuse_generator_settings(args, changes.get("dataset", base.dataset))
    return base.with_changes(**changes)


def _ends_by_operations(workload: str) -> bool:
    from workloads.operations import WORKLOADS
    found = WORKLOADS.get(workload)
    return found is None or found.bounded_by_operations      # an unknown one is the run's to refuse


def _refuse_generator_settings(args, dataset: str) -> None:
    """--rows-per-day, --symbols and --seed say how much data to generate: an import or a table has its own."""
    from workloads.scenario import has_own_size
    given = [flag for flag, value in (("--rows-per-day", args.rows_per_day), ("--symbols", args.symbols),
                                      ("--seed", args.seed)) if value is not None]
    if given and has_own_size(dataset):
        raise CliError(f"{', '.join(given)} set{'s' if len(given) == 1 else ''} how much data is generated; "
                       f"dataset {dataset} has its own rows and keys: leave {'it' if len(given) == 1 else 'them'} "
                       f"out (--days picks how many of its days)")


def _agents(given: list[str]) -> list[str]:
    from workloads.targets.profiles import check_agent
    try:
        return [check_agent(a) for a in given]
    except ValueError as exc:
        raise CliError(f"--agent: {exc}") from None


def _kind_and_config(args, key: str) -> tuple[str, dict]:
    """A target kind with its default config, or a saved server profile's kind and config."""
    if ":" in key:
        return _profile_config(args, key)
    return key, _target_config(args, key, {})


def _profile_config(args, key: str) -> tuple[str, dict]:
    """(kind, config with password) of a saved server profile."""
    registry = _registry(args)
    try:
        item = registry.entry(key)
    except KeyError as exc:
        raise CliError(exc.args[0]) from None
    if item.missing:
        raise CliError(f"{key}: {item.missing}")

    def ask(profile, refused: bool) -> str:
        variable = profile.password_variable
        if getattr(args, "password", None) is not None:
            return args.password
        if os.environ.get(variable) is not None:
            return os.environ[variable]
        if not sys.stdin.isatty():
            raise CliError(f"{key}: password needed: give --password or set {variable}")
        return getpass.getpass(f"Password of {profile.user} on {profile.name}: ")
    try:
        config = registry.resolve(key, ask=ask)
    except ValueError as exc:               # a local engine that is not running: how to start it
        raise CliError(f"{key}: {exc}") from None
    return item.kind, {**config, "target_key": key}


def _users(text: str) -> list[int]:
    try:
        users = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CliError(f"--users takes whole numbers separated by commas, not {text!r}") from None
    if not users or min(users) < 1:
        raise CliError("--users needs numbers of at least 1")
    return users


def _target_config(args, target: str, config: dict) -> dict:
    from workloads.targets.engines import default_config, engine, missing_client
    try:
        local = engine(target).local
    except KeyError as exc:
        raise CliError(exc.args[0]) from None
    missing = missing_client(target) if local or target != "dolphindb" else None
    if missing and not config.get("host"):
        raise CliError(f"target {target}: {missing}")
    data_dir = getattr(args, "data_dir", None)
    if local and not config.get("host"):
        # the scenario file's place wins, unless --data-dir is given
        defaults = default_config(target, Path(data_dir or config.get("root") or default_datasets_dir()))
        config = {**config, **defaults} if data_dir else {**defaults, **config}
    elif target == "dolphindb":
        from app.cli.ddb_options import dolphindb_config
        config = dolphindb_config(args, config, _password)
    return config


def _password(user: str) -> str:
    env = os.environ.get("TICKBENCH_DDB_PASSWORD")
    if env is not None:
        return env
    if not sys.stdin.isatty():
        raise CliError("DolphinDB password needed: give --password or set TICKBENCH_DDB_PASSWORD")
    return getpass.getpass(f"DolphinDB password for {user}: ")


def _scenario_from_stdin() -> "Scenario":
    import json
    from workloads.scenario import Scenario
    try:
        return Scenario.from_dict(json.loads(sys.stdin.read()))
    except (ValueError, TypeError) as exc:
        raise CliError(f"--scenario-stdin: not a scenario: {exc}") from None
