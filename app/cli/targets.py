"""``tickbench targets``: the engine's target registry on the command line (the targets panel's
twin): list every target with its state, add or remove a server profile."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from app.cli.common import QUOTE_SIZE_HELP
from app.cli.targets_clean import add_clean_parser, cmd_clean


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
    table = action.add_parser("add-table", help="benchmark an existing table where it lives, read-only: "
                                                "the target is then table:NAME")
    table.add_argument("name", help="the target's name (table:NAME; its dataset is tbl_NAME)")
    table.add_argument("--kind", required=True, help="parquet | duckdb | postgres | questdb | clickhouse | dolphindb")
    table.add_argument("--location", required=True,
                       help="a Parquet file or folder, a DuckDB file, or a server: HOST:PORT[/DATABASE] "
                            "or a saved server's key (pg:NAME)")
    table.add_argument("--table", default="", help="the table's name in its database (schema.table or, on "
                                                   "ClickHouse, database.table; DolphinDB: dfs://DATABASE/TABLE)")
    table.add_argument("--time", required=True, help="the timestamp column (or the date column, with --time-of-day)")
    table.add_argument("--time-of-day", default="",
                       help="the time-of-day column beside a date column --time "
                            "(Parquet, DuckDB, PostgreSQL, ClickHouse and DolphinDB tables)")
    table.add_argument("--key", default="", help="the key column (symbol, instrument, device)")
    table.add_argument("--price", action="append", default=[], help="a price column (twice: bid and ask)")
    table.add_argument("--size", default="", help="a traded size column")
    table.add_argument("--quote-size", action="append", default=[], metavar="COLUMN", help=QUOTE_SIZE_HELP)
    table.add_argument("--user", help="the server login (default: the kind's usual one)")
    table.add_argument("--password-stdin", action="store_true",
                       help="read the password from standard input (kept in the OS keyring, never in a file); "
                            "else TICKBENCH_<KIND>_PASSWORD, or asked for")
    agents = action.add_parser("agents", help="name the database hosts' agents of a saved server (tickbench agent on "
                                              "each host), so that its cold rounds drop those hosts' page caches")
    agents.add_argument("key", help="e.g. ddb:NAME or qdb:NAME")
    agents.add_argument("agent", nargs="*", metavar="HOST:PORT", help="none: forget them")
    agents.add_argument("--token-stdin", action="store_true",
                        help="read the agents' token from standard input and keep it in the OS keyring "
                             "(else TICKBENCH_AGENT_TOKEN at run time)")
    add_clean_parser(action)
    remove = action.add_parser("remove", help="forget a saved server or table (its data is not touched)")
    remove.add_argument("key", help="e.g. ch:NAME, ddb:NAME or table:NAME")


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
    if args.action == "add-table":
        return _add_table(args, registry, console, cli_error)
    if args.action == "agents":
        return _set_agents(args, registry, console, cli_error)
    if args.action == "clean":
        return cmd_clean(args, registry, console, cli_error, _ask_from(args))
    if args.action == "remove" and args.key.startswith("table:"):
        from workloads.datasets.tables import remove_table
        try:
            remove_table(args.key.partition(":")[2])
        except ValueError as exc:
            raise cli_error(str(exc)) from None
        console.print(f"Removed {args.key} (the table itself is not touched).", highlight=False)
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


def _server_address(text: str) -> dict:
    """``HOST:PORT[/DATABASE]`` (``[::1]:5432`` for IPv6) as connection settings; ValueError otherwise."""
    address, _, database = text.partition("/")
    host, sep, port = address.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"server {text!r}: give HOST:PORT[/DATABASE] or a saved server's key")
    return {"host": host, "port": int(port), **({"database": database} if database else {})}


def _add_table(args, registry, console: Console, cli_error) -> int:
    """Check the table where it lives (reachable, readable, not empty, the roles' columns there) and save it."""
    import os

    from workloads.datasets.roles import Roles
    from workloads.targets.base import TargetError
    from workloads.targets.engines import SERVER_TYPES
    from workloads.targets.table import KINDS, SERVER_KINDS, add_table_target
    if args.kind not in KINDS:
        raise cli_error(f"--kind {args.kind!r}: choose one of {', '.join(KINDS)}")
    connection: dict = {}
    password = ""
    try:
        if args.kind in SERVER_KINDS:
            servers = {e.key: e for e in registry.profile_entries()}
            item = servers.get(args.location)
            if item is not None:               # a saved server: its address, login and password
                connection = {"server_key": item.key}
                resolved = registry.resolve(item.key, ask=_ask_from(args))
                if resolved is None:
                    raise cli_error(f"{item.key}: password needed")
                check = {**resolved, **connection}
            else:
                connection = _server_address(args.location)
                kind_type = SERVER_TYPES.get(args.kind)
                connection["user"] = args.user or (kind_type.user if kind_type else "admin")
                if args.kind != "clickhouse":   # ClickHouse: the login's default database, or --table DB.TABLE
                    connection.setdefault("database", kind_type.database if kind_type else "")
                if args.kind == "questdb":
                    connection["http_port"] = dict(kind_type.options)["http_port"]
                variable = f"TICKBENCH_{'DDB' if args.kind == 'dolphindb' else args.kind.upper()}_PASSWORD"
                password = _password_from_stdin() if args.password_stdin else os.environ.get(variable, "")
                check = {**connection, "password": password}
        else:
            check = {}
        roles = Roles(time=args.time, time_of_day=args.time_of_day, key=args.key, price=tuple(args.price),
                      size=args.size, quote_size=tuple(args.quote_size))
        saved = add_table_target(args.name, args.kind, args.location, args.table, roles, check)
    except (TargetError, ValueError) as exc:
        raise cli_error(str(exc)) from None
    key = f"table:{saved.name}"
    if password:
        registry.keep_table_password(key, {**saved.connection, "source": saved.kind}, password, remember=True)
    console.print(f"Saved {key} ({saved.where}; {saved.roles.describe()}): run it with --target {key}; "
                  f"its dataset is {saved.dataset}.", highlight=False)
    return 0


def _ask_from(args):
    def ask(profile, refused: bool):
        import os
        return os.environ.get(profile.password_variable)
    return ask


def _set_agents(args, registry, console: Console, cli_error) -> int:
    from workloads.targets.common.host_agents import TOKEN_VARIABLE
    from workloads.targets.profiles import check_agent
    try:
        registry.profile(args.key)
    except KeyError:
        raise cli_error(f"no saved server {args.key!r}") from None
    try:
        agents = [check_agent(a) for a in args.agent]
    except ValueError as exc:
        raise cli_error(str(exc)) from None
    token = _password_from_stdin() if args.token_stdin else ""
    kept = registry.set_agents(args.key, agents, token)
    if not agents:
        console.print(f"{args.key}: no agents; its cold rounds clear the engine's caches only.", highlight=False)
        return 0
    where = ("in the OS keyring" if kept else "not kept (no keyring here)") if token else f"from {TOKEN_VARIABLE}"
    console.print(f"{args.key}: agents {', '.join(agents)}; their token {where}.", highlight=False)
    return 0
