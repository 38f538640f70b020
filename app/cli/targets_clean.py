"""``tickbench targets clean KEY``: what Tickbench made on a saved DolphinDB server (its databases,
tables and bytes on disk), and, once confirmed, their drop (``workloads.targets.dolphindb.made``)."""
from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from workloads.run.limits import human_bytes


def add_clean_parser(action) -> None:
    clean = action.add_parser("clean", help="list what Tickbench made on a saved DolphinDB server (ddb:NAME), "
                                            "with sizes, and drop it once confirmed")
    clean.add_argument("key", help="a saved DolphinDB server, e.g. ddb:NAME")
    clean.add_argument("--only", action="append", default=[], metavar="dfs://DATABASE",
                       help="drop only this database (again for more); default: every one listed")
    clean.add_argument("--yes", action="store_true", help="drop without asking (else asked at a terminal)")


def cmd_clean(args, registry, console: Console, cli_error, ask_password) -> int:
    from workloads.targets import make_target
    from workloads.targets.base import TargetError
    try:
        item = registry.entry(args.key)
    except KeyError:
        raise cli_error(f"no saved server {args.key!r}") from None
    if item.kind != "dolphindb":
        raise cli_error(f"{args.key} is a {item.kind} server: clean lists what Tickbench made on a DolphinDB "
                        "server (ddb:NAME)")
    config = registry.resolve(args.key, ask=ask_password)
    if config is None:
        raise cli_error(f"{args.key}: password needed: set TICKBENCH_DDB_PASSWORD")
    target = make_target("dolphindb", config)
    try:
        made = target.made()
        chosen = [m for m in made if not args.only or m.path in args.only]
        unknown = sorted(set(args.only) - {m.path for m in made})
        if unknown:
            raise cli_error(f"{unknown[0]} is not a database Tickbench made on {args.key}: nothing dropped")
        if not made:
            console.print(f"Nothing Tickbench made is on {escape(args.key)}.", highlight=False)
            return 0
        table = Table(title=f"Made by Tickbench on {escape(args.key)}")
        table.add_column("database", overflow="fold")        # whole, for --only: folded, never cut
        table.add_column("tables")
        table.add_column("on disk", justify="right", no_wrap=True)
        for m in made:
            table.add_row(escape(m.path), escape(", ".join(m.tables)), human_bytes(m.bytes))
        console.print(table)
        total = human_bytes(sum(m.bytes for m in chosen))
        if not args.yes:
            if not sys.stdin.isatty():
                console.print(f"Nothing dropped: run again with --yes to drop {len(chosen)} database(s), {total}.",
                              highlight=False)
                return 0
            answer = input(f"Drop {len(chosen)} database(s), {total}, for good? Type yes: ")
            if answer.strip().lower() != "yes":
                console.print("Nothing dropped.", highlight=False)
                return 0
        dropped = target.drop_made([m.path for m in chosen])
        console.print(f"Dropped {len(dropped)} database(s), {total}.", highlight=False)
        return 0
    except TargetError as exc:
        raise cli_error(f"{args.key}: {exc}") from None
    finally:
        target.close()
