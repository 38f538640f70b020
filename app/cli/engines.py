"""``tickbench engines``: start a private local server to try an engine (QuestDB, PostgreSQL,
Apache Druid), list what runs, stop it. Data in the user data folder, loopback only; the server
keeps running after the command returns, until ``tickbench engines stop``. The started engine is
saved as the server profile "local" of its kind (``tickbench targets``), so ``tickbench run
--target qdb:local`` uses it; runs against it are marked "local engine"."""
from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def add_engines_parser(sub) -> None:
    engines = sub.add_parser("engines", help="start, list or stop a local QuestDB, PostgreSQL or Druid")
    engines.add_argument("--data-dir", help="the datasets folder (its targets.json gets the engine's profile)")
    action = engines.add_subparsers(dest="action")
    start = action.add_parser("start", help="start a local engine (downloads it once)")
    start.add_argument("kind", help="questdb | postgres | druid")
    stop = action.add_parser("stop", help="stop a local engine, or all of them")
    stop.add_argument("kind", nargs="?", help="questdb | postgres | druid (default: all)")


def cmd_engines(args, registry, console: Console, err_console: Console, cli_error) -> int:
    from workloads.local_engines import EngineStartError, available, running, start_engine, stop_engine
    home = registry.data_dir
    if args.action == "start":
        choices = available()
        if args.kind not in choices:
            raise cli_error(f"no local engine {args.kind!r}: Tickbench can start {', '.join(choices)}")
        label, note = choices[args.kind]
        err_console.print(f"Starting {label}: {note}", highlight=False)
        try:
            engine = start_engine(home, args.kind, lambda text: err_console.print(f"  {text}", highlight=False))
        except EngineStartError as exc:
            raise cli_error(str(exc)) from None
        key = registry.add_local_engine(engine)
        console.print(f"{label} runs on 127.0.0.1 (ports {', '.join(map(str, sorted(set(engine.ports.values()) or [engine.config['port']])))}), "
                      f"data in {engine.folder}. Use it: tickbench run --target {key} ...; stop it: "
                      f"tickbench engines stop {args.kind}", highlight=False)
        return 0
    if args.action == "stop":
        kinds = [args.kind] if args.kind else list(running(home))
        stopped = [kind for kind in kinds if stop_engine(home, kind)]
        if args.kind and not stopped:
            raise cli_error(f"no local {args.kind} runs (tickbench engines lists them)")
        console.print(f"Stopped {', '.join(stopped)}." if stopped else "No local engine runs.", highlight=False)
        return 0
    table = Table(title="Local engines")
    for column in ("engine", "state", "what starting costs"):
        table.add_column(column)
    now = running(home)
    for kind, (label, note) in available().items():
        engine = now.get(kind)
        state = (f"[green]running[/], port {engine.config.get('port')}, pids {', '.join(map(str, engine.pids))}"
                 if engine else "stopped")
        table.add_row(escape(f"{label} ({kind})"), state, escape(note))
    console.print(table)
    return 0
