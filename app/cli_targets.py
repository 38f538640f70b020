"""``tickbench targets``: the engine's target registry on the command line (the targets panel's
twin): list every target with its state, add or remove a ClickHouse server profile."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table


def add_targets_parser(sub) -> None:
    targets = sub.add_parser("targets", help="list targets (engines and saved servers); add or remove a server")
    targets.add_argument("--data-dir", help="the datasets folder whose targets.json holds the saved servers")
    action = targets.add_subparsers(dest="action")
    add = action.add_parser("add-clickhouse", help="save a ClickHouse server profile (HTTP interface)")
    add.add_argument("name")
    add.add_argument("--host", required=True)
    add.add_argument("--port", type=int, default=8123)
    add.add_argument("--user", default="default")
    add.add_argument("--database", default="tickbench")
    add.add_argument("--secure", action="store_true", help="HTTPS")
    remove = action.add_parser("remove", help="forget a saved server (its data is not touched)")
    remove.add_argument("key", help="e.g. ch:NAME or ddb:NAME")


def cmd_targets(args, registry, console: Console, cli_error) -> int:
    from rich.markup import escape

    from workloads.target_registry import CLICKHOUSE, Profile, ServerProfile, where
    if args.action == "add-clickhouse":
        try:
            profile = ServerProfile(args.name, args.host, args.port, args.user, args.database, args.secure)
            key = registry.add(Profile(CLICKHOUSE, profile))
        except ValueError as exc:
            raise cli_error(str(exc)) from None
        console.print(f"Saved {key}: the password is asked for at run time (or TICKBENCH_CLICKHOUSE_PASSWORD).",
                      highlight=False)
        return 0
    if args.action == "remove":
        try:
            registry.remove(args.key)
        except KeyError:
            raise cli_error(f"no saved server {args.key!r}") from None
        console.print(f"Removed {args.key}.", highlight=False)
        return 0
    table = Table(title="Targets")
    for column in ("key", "target", "state", "where"):
        table.add_column(column)
    for item in registry.entries():
        state = "[green]ready[/]" if item.missing is None else f"[yellow]{escape(item.missing)}[/]"
        if item.profile is not None and item.missing is None:
            state = "saved (test it from the window, or run)"
        table.add_row(escape(item.key), escape(item.label), state, escape(where(item.config)))
    console.print(table)
    return 0
