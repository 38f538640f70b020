"""``tickbench targets``: the engine's target registry on the command line (the targets panel's
twin): list every target with its state, add or remove a server profile."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table


def add_targets_parser(sub) -> None:
    targets = sub.add_parser("targets", help="list targets (engines and saved servers); add or remove a server")
    targets.add_argument("--data-dir", help="the datasets folder whose targets.json holds the saved servers")
    action = targets.add_subparsers(dest="action")
    add = action.add_parser("add-server", help="save a server profile: clickhouse | questdb | postgres | druid | mongodb")
    add.add_argument("kind")
    add.add_argument("name")
    add.add_argument("--host", required=True)
    add.add_argument("--port", type=int, help="default: the kind's usual port")
    add.add_argument("--user")
    add.add_argument("--database")
    add.add_argument("--secure", action="store_true", help="TLS")
    add.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                     help="the kind's other settings, e.g. http_port=9000 (QuestDB), coordinator_port=8081 (Druid)")
    add.add_argument("--password-stdin", action="store_true",
                     help="read the password from standard input and keep it in the OS keyring "
                          "(never in targets.json); without a keyring it is asked for at run time")
    remove = action.add_parser("remove", help="forget a saved server (its data is not touched)")
    remove.add_argument("key", help="e.g. ch:NAME or ddb:NAME")


def _password_from_stdin() -> str:
    import sys
    return sys.stdin.readline().rstrip("\r\n")


def cmd_targets(args, registry, console: Console, cli_error) -> int:
    from rich.markup import escape

    from workloads.targets.profiles import check_profile_name
    from workloads.scenario import is_secret
    from workloads.targets.engines import SERVER_TYPES, where
    from workloads.targets.profiles import Profile, ServerProfile
    if args.action == "add-server":
        if args.kind not in SERVER_TYPES:
            raise cli_error(f"server kind {args.kind!r}: choose one of {', '.join(SERVER_TYPES)}")
        try:
            check_profile_name(args.name)
        except ValueError as exc:
            raise cli_error(str(exc)) from None
        data = {"name": args.name, "host": args.host, "secure": args.secure,
                **{k: v for k, v in (("port", args.port), ("user", args.user), ("database", args.database))
                   if v is not None}}
        options = {}
        for item in args.option:
            name, sep, value = item.partition("=")
            if not sep or not name.strip():
                raise cli_error(f"--option takes NAME=VALUE, not {item!r}")
            if is_secret(name.strip()):
                raise cli_error(f"--option {name.strip()}: a secret is never saved with a profile: it is asked "
                                "for at run time (or its environment variable), or kept in the keyring "
                                "(--password-stdin, or the window)")
            options[name.strip()] = int(value) if name.strip().endswith("_port") and value.strip().isdigit() \
                else value.strip()
        password = _password_from_stdin() if args.password_stdin else ""
        try:
            profile = Profile(args.kind, ServerProfile.from_dict({**data, "options": options}, args.kind))
            key = registry.add(profile, password, remember=bool(password))
        except (ValueError, TypeError) as exc:
            raise cli_error(str(exc)) from None
        if password and registry.last_save_ok:
            console.print(f"Saved {key}; its password is in the OS keyring.", highlight=False)
        else:
            console.print(f"Saved {key}: the password is asked for at run time (or {profile.password_variable})"
                          + ("; no keyring here to keep it" if password else "") + ".", highlight=False)
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
