"""The command line: ``tickbench run | runs | show | verify | reproduce | hosts | export | import | datasets | workloads |
targets | engines``."""
from __future__ import annotations

import argparse
import getpass
import os
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from app.cli_reports import add_verify_parser, cmd_verify, print_report_figures
from app.cli_hosts import add_hosts_parser, add_scheduler_arguments, cmd_hosts, print_cluster, scheduler_changes
from app.cli_open_loop import add_rate_arguments, print_open_loop, rate_changes
from app.cli_reproduce import add_reproduce_parser, cmd_reproduce
from app.cli_engines import add_engines_parser, cmd_engines
from app.cli_targets import add_targets_parser, cmd_targets
from app.ddb_options import add_dolphindb_arguments
from app.run_process import lower_priority
from workloads.figures import MIN_OPS
from workloads.paths import default_datasets_dir, default_results_path
from workloads.text import plural

if TYPE_CHECKING:
    from workloads.scenario import Scenario

# Piped output (CI logs, files) gets a wide table instead of an 80-column squeeze.
console = Console(width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True)


class CliError(Exception):
    """A user mistake: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line instead of usage + message
        raise CliError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tickbench", description="Benchmark where and how tick data is stored and served.")
    parser.add_argument("--version", action="version", version="tickbench 0.1.0")
    parser.add_argument("--results", type=Path, help="results file (default: in the user data folder)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="run a scenario and print its figures")
    run.add_argument("--scenario", type=Path, help="a scenario TOML file; flags given also override it")
    run.add_argument("--name", help="a name for the run")
    run.add_argument("--target", help="pickle | parquet | feather | duckdb | clickhouse | arcticdb | hdf5 | "
                                      "dolphindb, or a saved server's key (ddb:NAME, ch:NAME: see 'tickbench targets')")
    run.add_argument("--dataset", help="taq | level2 | devices | api45 | imp_NAME (an imported CSV)")
    run.add_argument("--days", type=int)
    run.add_argument("--rows-per-day", type=int)
    run.add_argument("--symbols", type=int, help="symbols / securities / devices")
    run.add_argument("--seed", type=int)
    run.add_argument("--strings", help="object | str | category (how string columns are decoded)")
    run.add_argument("--workload", help="read-day | slice-download | upload-sweep | concurrent-append | minute-bars | "
                                        "spread-by-minute | mapreduce-minute-bars | ols-spread | noop")
    run.add_argument("--users", help="one number or a sweep, e.g. 1,2,4,8")
    run.add_argument("--cache", help="warm | cold")
    run.add_argument("--operations", type=int, help="operations per user per step")
    run.add_argument("--duration", type=float, help="seconds per step instead of an operation count; a "
                     f"step also runs on until its users have made {MIN_OPS} operations together")
    run.add_argument("--warmup", type=int, help="warm-up operations per user per step, recorded apart "
                                                "(default 1)")
    run.add_argument("--probes", type=int, help="probe operations per user per step for phase splits "
                                                "that need them (default 2; 0: none)")
    run.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                     help="a workload parameter, e.g. rows_per_user=500000 (repeatable)")
    run.add_argument("--data-dir", type=Path, help="where local targets lay out data")
    add_scheduler_arguments(run)
    add_rate_arguments(run)
    run.add_argument("--scenario-stdin", action="store_true",
                     help="read the whole scenario as JSON from standard input (how the window starts a "
                          "run: a password in it is never written anywhere)")
    run.add_argument("--run-id", help="the run's id (default: a new one)")
    run.add_argument("--nice", type=int, default=0,
                     help="lower the run's and its workers' CPU priority by this much (the window starts "
                          "its runs at 5 so that it stays responsive on a saturated machine; recorded)")
    run.add_argument("--force", action="store_true",
                     help="run even where the users or the data look more than this machine can hold "
                          "(the estimate is refused otherwise)")
    run.add_argument("--live", action="store_true",
                     help="publish live snapshots to the run's folder and obey a stop request there "
                          "(the window's viewer), instead of a progress bar")
    add_dolphindb_arguments(run)
    add_verify_parser(sub)
    add_reproduce_parser(sub)
    add_hosts_parser(sub)
    sub.add_parser("runs", help="list stored runs")
    show = sub.add_parser("show", help="figures of one run")
    show.add_argument("run_id")
    export = sub.add_parser("export", help="write a run's records to CSV or Parquet")
    export.add_argument("run_id")
    export.add_argument("--format", choices=("csv", "parquet"), default="csv")
    export.add_argument("--out", type=Path, default=Path("."), help="the folder the files go to")
    export.add_argument("--force", action="store_true", help="overwrite the run's files already in --out")
    imp = sub.add_parser("import", help="import a CSV file as a dataset to benchmark (imp_NAME)")
    imp.add_argument("file", type=Path, help="the CSV file, with a header row")
    imp.add_argument("--dataset", required=True, help="the schema it holds: taq | level2 | devices | api45")
    imp.add_argument("--name", required=True, help="a name for it: lower-case letters, digits, _")
    imp.add_argument("--map", action="append", default=[], metavar="CSVCOL=column",
                     help="read the CSV column CSVCOL as the schema's column (repeatable)")
    sub.add_parser("datasets", help="list datasets and their schemas")
    sub.add_parser("workloads", help="list workloads and their parameters")
    add_targets_parser(sub)
    add_engines_parser(sub)
    return parser


def run_cli(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except CliError as exc:
        err_console.print(f"tickbench: error: {exc}", highlight=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        err_console.print("tickbench: interrupted")
        return 130


def _store(args):
    import duckdb

    from workloads.store import ResultsStore, StoreError
    path = args.results or default_results_path()
    try:
        return ResultsStore(path)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    except (duckdb.Error, OSError, ValueError, KeyError, IndexError) as exc:   # a file that is not a catalog
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise CliError(f"--results {path}: not a Tickbench results catalog ({first})") from None


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
                         ("strings", args.strings), ("workload", args.workload), ("cache", args.cache)):
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
    changes["params"] = params
    changes.update(scheduler_changes(args, _fail))
    changes.update(rate_changes(args, _fail))
    target = changes.get("target", base.target)
    if ":" in target:               # a saved server profile: its kind and config come from the registry
        kind, config = _profile_config(args, target)
        changes["target"] = kind
        changes["target_config"] = config
    else:
        changes["target_config"] = _target_config(args, target, dict(base.target_config))
    return base.with_changes(**changes)


def _fail(message: str):
    raise CliError(message)


def _kind_and_config(args, key: str) -> tuple[str, dict]:
    """A target kind with its default config, or a saved server profile's kind and config."""
    if ":" in key:
        return _profile_config(args, key)
    return key, _target_config(args, key, {})


def _registry(args):
    from workloads.passwords import KeyringPasswords
    from workloads.target_registry import TargetRegistry
    return TargetRegistry.load(getattr(args, "data_dir", None) or default_datasets_dir(), KeyringPasswords())


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
    from workloads.target_registry import default_config, engine, missing_client
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
        from app.ddb_options import dolphindb_config
        config = dolphindb_config(args, config, _password)
    return config


def _password(user: str) -> str:
    env = os.environ.get("TICKBENCH_DDB_PASSWORD")
    if env is not None:
        return env
    if not sys.stdin.isatty():
        raise CliError("DolphinDB password needed: give --password or set TICKBENCH_DDB_PASSWORD")
    return getpass.getpass(f"DolphinDB password for {user}: ")


def cmd_run(args) -> int:
    from workloads.limits import check_machine
    from workloads.runner import Runner
    if not 0 <= args.nice <= 19:
        raise CliError(f"--nice takes 0 to 19 (how much lower the run's CPU priority is), not {args.nice}")
    try:
        scenario = _scenario_from_stdin() if args.scenario_stdin else scenario_from_args(args)
        check_machine(scenario, force=args.force)
        store = _store(args)
        if args.run_id:
            store.check_new_run_id(args.run_id)     # before anything (a live view's folder) is written
        runner = Runner(scenario, store, run_id=args.run_id)
    except (ValueError, KeyError) as exc:
        raise CliError(str(exc).strip("'\"")) from None
    lower_priority(args.nice)               # before any worker starts: they inherit it
    if args.live:
        return _run_live(runner, store)
    result_box: list = []
    thread = threading.Thread(target=_run_into, args=(runner, result_box), daemon=True)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                  TextColumn("{task.fields[detail]}"), TimeElapsedColumn(), console=err_console,
                  transient=False) as progress, _cancel_on_signals(runner):
        task = progress.add_task(f"{scenario.workload} on {scenario.target}", total=1.0, detail="")
        thread.start()
        shown_hosts = False
        while thread.is_alive():
            thread.join(0.25)
            snap = runner.snapshot()
            if runner.load_generators is not None and not shown_hosts:     # before the first release
                shown_hosts = True
                print_cluster(runner.load_generators, progress.console, snap.host_users or None)
            detail = f"{snap.status} · step {snap.step_index + 1}/{snap.steps_total} · " \
                     f"{plural(snap.users, 'user')} · {plural(snap.ops_done, 'op')}"
            if snap.ops_failed:
                detail += f" · {snap.ops_failed} failed"
            progress.update(task, completed=snap.progress, detail=detail)
    result = result_box[0]
    if isinstance(result, BaseException):
        from workloads.worker import describe_error
        raise CliError(f"run {runner.run_id}: {describe_error(result)}")
    _print_figures(store, result.run_id)
    _print_op_errors(store, result.run_id)
    style = {"completed": "green", "cancelled": "yellow"}.get(result.status, "red")
    console.print(f"run [bold]{result.run_id}[/bold]: [{style}]{result.status}[/{style}]"
                  + (f" — {result.message}" if result.message else ""), highlight=False)
    return 0 if result.status == "completed" else 1


def _run_into(runner, box: list) -> None:
    """The run in its thread; what ends it, a result or an exception, goes into ``box``."""
    try:
        box.append(runner.run())
    except BaseException as exc:  # shown as one line by the main thread, never lost
        box.append(exc)


@contextmanager
def _cancel_on_signals(runner):
    """SIGINT (Ctrl-C) and SIGTERM cancel the run as they do a ``--live`` one: the workers stop at
    an operation boundary, what was measured is kept, and the run ends "cancelled"."""
    import signal
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda *_: runner.cancel()) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _scenario_from_stdin() -> "Scenario":
    import json
    from workloads.scenario import Scenario
    try:
        return Scenario.from_dict(json.loads(sys.stdin.read()))
    except (ValueError, TypeError) as exc:
        raise CliError(f"--scenario-stdin: not a scenario: {exc}") from None


def _run_live(runner, store) -> int:
    """The run as the window starts it: its own process and session, a viewer reading its folder.
    SIGTERM or SIGINT (or a stop file) cancel it cleanly; what was measured is kept."""
    import signal
    from workloads.live import LivePublisher

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: runner.cancel())
    publisher = LivePublisher(store.runs_dir / runner.run_id, runner.snapshot, runner.cancel).start()
    try:
        result = runner.run()
    finally:
        publisher.close()
    print(f"run {result.run_id}: {result.status}" + (f" — {result.message}" if result.message else ""), flush=True)
    return 0 if result.status == "completed" else 1


def _ms(value) -> str:
    return "" if value is None or value != value else f"{value * 1000:,.1f}"


def _print_figures(store, run_id: str) -> None:
    from workloads.figures import STEP_FIGURES_DOC, phase_summary, step_figures
    from workloads.run_summary import run_answer
    from workloads.targets.base import PHASES

    figures = step_figures(store, run_id)
    run = store.run(run_id)
    table = Table(title=f"{run['workload']} · {run['target']} · {run['dataset']} · cache {run['cache']}",
                  caption=STEP_FIGURES_DOC, caption_justify="left")
    table.add_column("step")
    wire = bool(figures["wire_mb_per_s"].notna().any())
    for column in ("ops", "errors", "window s", "rows/s", "MB/s", *(("wire MB/s",) if wire else ()), "ops/s",
                   "p50 ms", "p95 ms", "p99 ms", "first op ms"):
        table.add_column(column, justify="right")
    phases = [p for p in PHASES if figures[f"{p}_s"].notna().any()]
    for p in phases:
        table.add_column(f"{p} ms", justify="right")
    if phases:
        table.add_column("phases from", justify="right")
    for row in figures.itertuples():
        cells = [row.label + (" ⚠" if row.short else ""), f"{row.ops:,}", f"{row.errors:,}",
                 _num(row.window_s, 2), _num(row.rows_per_s), _num(row.mb_per_s, 1),
                 *((_num(row.wire_mb_per_s, 1),) if wire else ()), _num(row.ops_per_s, 1),
                 _ms(row.p50_s), _ms(row.p95_s), _ms(row.p99_s), _ms(row.first_op_s)]
        cells += [_ms(getattr(row, f"{p}_s")) for p in phases]
        if phases:
            _, _, count, source = phase_summary(row)
            cells.append(f"{count} {source} op{'s' if count != 1 else ''}" if count else "")
        table.add_row(*cells)
    console.print(table)
    console.print("MB/s: logical bytes (rows x the row width in DolphinDB's column widths). "
                  + ("wire MB/s: bytes actually read or written (for import and export, the CSV "
                     "files). " if wire else "") +
                  "first op: the first operation of a fresh worker process (a warm-up, not in the "
                  "figures), median over the step's workers.", highlight=False, soft_wrap=True)
    print_open_loop(console, figures)
    for row in figures.itertuples():
        if row.short:
            console.print(f"[yellow]⚠ {row.label}: {row.short_reason}[/yellow]", highlight=False, soft_wrap=True)
    if run["cache"] == "cold":
        for step in run_answer(store, run_id).steps:
            console.print(f"{step.label}: {step.cold_line()}", highlight=False, soft_wrap=True)


def _print_op_errors(store, run_id: str, shown: int = 3) -> None:
    """Why operations failed (a server error, a lost connection...): the commonest messages, the
    measured operations' apart from warm-up and probe operations'."""
    ops = store.ops(run_id)
    failed = ops[~ops["ok"]] if len(ops) else ops
    for kind, noun in (("measured", "operation"), ("warmup", "warm-up operation"), ("probe", "probe operation")):
        these = failed[failed["kind"] == kind]
        if not len(these):
            continue
        console.print(f"[red]{len(these):,} {noun}{'s' if len(these) > 1 else ''} failed[/red]:", highlight=False)
        for message, count in these["error"].value_counts().head(shown).items():
            console.print(f"  {count:,} × {message}", highlight=False, soft_wrap=True)


def _num(value, digits: int = 0) -> str:
    return "" if value is None or value != value else f"{value:,.{digits}f}"


def cmd_runs(args) -> int:
    runs = _store(args).runs()
    table = Table(title="Runs")
    for column in ("run id", "started", "status", "workload", "target", "dataset", "users", "cache"):
        table.add_column(column)
    for row in runs.itertuples():
        table.add_row(row.run_id, f"{row.created_at:%Y-%m-%d %H:%M}", row.status, row.workload,
                      row.target, row.dataset, row.users, row.cache)
    console.print(table)
    return 0


def cmd_show(args) -> int:
    from workloads.store import StoreError
    store = _store(args)
    try:
        run = store.run(args.run_id)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    _print_figures(store, run["run_id"])
    print_report_figures(console, store, run)
    target = (run.get("environment") or {}).get("target") or {}
    if "stand-in" in str(target.get("server") or ""):
        console.print(f"target: {target['server']}: its timings are not the real engine's", highlight=False)
    if target.get("local_engine"):
        console.print(f"target: a local engine Tickbench started on this computer "
                      f"({target.get('server_version') or target.get('kind', run['target'])}), not a production server",
                      highlight=False)
    console.print(f"run {run['run_id']}: {run['status']}" + (f" — {run['message']}" if run["message"] else ""),
                  highlight=False)
    return 0


def cmd_export(args) -> int:
    from workloads.store import StoreError
    from workloads.exports import export_run
    store = _store(args)
    try:
        run_id = store.run(args.run_id)["run_id"]
        out = args.out
        if out.exists() and not out.is_dir():
            raise CliError(f"--out {out}: a file is there; --out names the folder the run's files go to")
        existing = sorted(out.glob(f"{run_id}_*.{args.format}")) if out.is_dir() else []
        if existing and not args.force:
            raise CliError(f"--out {out}: {existing[0].name}" + (f" and {len(existing) - 1} more" if len(existing) > 1 else "")
                           + " exist already; give --force to overwrite them")
        paths = export_run(store, run_id, out, args.format)
    except (StoreError, OSError) as exc:
        raise CliError(f"export: {exc}" if isinstance(exc, OSError) else str(exc)) from None
    for path in paths:
        console.print(str(path), highlight=False)
    return 0


def cmd_datasets(args) -> int:
    from workloads.datasets import DATASETS
    from workloads.datasets.imported import list_imports
    for name, dataset in DATASETS.items():
        info = dataset.info
        console.print(f"[bold]{name}[/bold] — {info.title}: {len(info.schema.columns)} columns, "
                      f"{info.schema.row_bytes()} bytes/row", highlight=False)
    for dataset in list_imports():
        days = dataset.all_days
        console.print(f"[bold]{dataset.info.name}[/bold] — {dataset.info.title}: {dataset.rows:,} rows, "
                      f"{len(days)} day{'s' if len(days) != 1 else ''} ({days[0]} .. {days[-1]}), "
                      f"{len(dataset.all_keys):,} keys, from {dataset.source['path']}", highlight=False)
    return 0


def cmd_import(args) -> int:
    import time

    from workloads.datasets.csvread import CsvFormatError
    from workloads.datasets.imported import ImportFailed, import_csv
    mapping = {}
    for item in args.map:
        csv_name, sep, column = item.partition("=")
        if not sep or not csv_name.strip() or not column.strip():
            raise CliError(f"--map takes CSVCOL=column, not {item!r}")
        mapping[csv_name.strip()] = column.strip()
    started = time.perf_counter()
    with Progress(TextColumn("[bold]importing {task.fields[file]}"), BarColumn(),
                  TextColumn("{task.percentage:>3.0f}%"), TextColumn("{task.description}"),
                  TimeElapsedColumn(), console=err_console, transient=True) as progress:
        task = progress.add_task("", total=1000, file=args.file.name)
        try:
            dataset = import_csv(args.file, args.dataset, args.name, mapping or None,
                                 lambda done, total, message: progress.update(task, completed=done,
                                                                              description=message))
        except (CsvFormatError, ValueError, ImportFailed, OSError) as exc:
            raise CliError(str(exc)) from None
    seconds = time.perf_counter() - started
    days = dataset.all_days
    console.print(f"Imported {dataset.rows:,} rows over {len(days)} day{'s' if len(days) != 1 else ''} "
                  f"({days[0]} .. {days[-1]}) and {len(dataset.all_keys):,} keys from {args.file.name} "
                  f"in {seconds:,.1f} s ({dataset.rows / max(seconds, 1e-9):,.0f} rows/s) "
                  f"as [bold]{dataset.info.name}[/bold].", highlight=False)
    console.print(f"Use it: tickbench run --dataset {dataset.info.name} --days {len(days)} ...", highlight=False)
    return 0


def cmd_workloads(args) -> int:
    from workloads.kinds import WORKLOADS
    for name, workload in WORKLOADS.items():
        params = ", ".join(f"{p.name}={p.default}" for p in workload.params) or "no parameters"
        console.print(f"[bold]{name}[/bold] — {workload.title} ({params})", highlight=False)
    return 0


COMMANDS = {"run": cmd_run, "runs": cmd_runs, "show": cmd_show,
            "verify": lambda args: cmd_verify(args, console, err_console, CliError, _kind_and_config),
            "hosts": lambda args: cmd_hosts(args, console, _fail),
            "reproduce": lambda args: cmd_reproduce(args, _store(args), console, err_console, CliError,
                                                    _kind_and_config, args.data_dir or default_datasets_dir()),
            "targets": lambda args: cmd_targets(args, _registry(args), console, CliError),
            "engines": lambda args: cmd_engines(args, _registry(args), console, err_console, CliError),
            "export": cmd_export,
            "import": cmd_import, "datasets": cmd_datasets, "workloads": cmd_workloads}
