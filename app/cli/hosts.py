"""``tickbench hosts --scheduler tcp://HOST:PORT``: the Dask cluster's load-generating hosts (cores,
memory, versions, clock offset); the run command prints the same table before a run on Dask."""
from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from app.report.as_html import fmt_bytes


def add_hosts_parser(sub) -> None:
    hosts = sub.add_parser("hosts", help="the load-generating hosts of a Dask scheduler")
    hosts.add_argument("--scheduler", required=True, help="the Dask scheduler, tcp://HOST:PORT")


def add_scheduler_arguments(run) -> None:
    run.add_argument("--scheduler", help="run the users on a Dask cluster's workers: its scheduler, tcp://HOST:PORT")
    run.add_argument("--placement", choices=("spread", "packed", "pinned"),
                     help="how users go to the hosts: spread evenly (default), packed up to each host's "
                          "cores, or pinned with --pin")
    run.add_argument("--pin", action="append", default=[], metavar="HOST=USERS",
                     help="users on a host (its address or worker name), repeatable; implies --placement pinned")


def scheduler_changes(args, error) -> dict:
    """The scenario fields the scheduler flags set."""
    changes: dict = {}
    if args.scheduler:
        changes["scheduler"] = args.scheduler
    if args.placement:
        changes["placement"] = args.placement
    if args.pin:
        pins = {}
        for item in args.pin:
            host, sep, users = item.rpartition("=")
            if not sep or not host or not users.strip().isdigit():
                error(f"--pin takes HOST=USERS, not {item!r}")
            pins[host.strip()] = int(users)
        changes["pins"] = pins
        changes.setdefault("placement", "pinned")
    return changes


def print_cluster(view, console: Console, placed: dict[str, int] | None = None) -> None:
    table = Table(title=f"Load generators at {escape(view.scheduler)}", title_justify="left")
    for column in ("host", "name", "cores", "memory", "machine", "clock offset", "± error"):
        table.add_column(column, justify="right" if column in ("cores", "clock offset", "± error") else "left")
    if placed is not None:
        table.add_column("users", justify="right")
    for host in view.hosts:
        env = host.environment
        row = [escape(host.address), escape(host.name), str(host.cores), fmt_bytes(host.memory_bytes),
               escape(f"{env.get('host', '?')} · {env.get('os', '?')} · Python {env.get('python', '?')}"),
               f"{host.clock_offset_s * 1000:+.2f} ms", f"{host.clock_error_s * 1000:.2f} ms"]
        if placed is not None:
            row.append(str(placed.get(host.address, 0)))
        table.add_row(*row)
    console.print(table)
    for line in view.differences:
        console.print(f"[bold yellow]versions differ between hosts:[/bold yellow] {escape(line)}", highlight=False)


def cmd_hosts(args, console: Console, error) -> int:
    from workloads.distributed.cluster import ClusterError, describe_scheduler
    try:
        view = describe_scheduler(args.scheduler)
    except (ClusterError, ImportError) as exc:
        error(str(exc))
    print_cluster(view, console)
    return 0
