"""``tickbench run --rate 2000 --schedule poisson``: open-loop steps (``workloads.run.schedule``), and
their figures printed after a run: offered and achieved rates, latency from each intended start
beside the service time, late and missed starts."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from workloads.run.schedule import LATE_S, RATE_PER, SCHEDULES


def add_rate_arguments(run) -> None:
    run.add_argument("--rate", help="open loop: operations per second offered, a step each, e.g. 2000 or "
                                    "500,1000,2000 (latency then counts from each operation's intended start)")
    run.add_argument("--rate-per", choices=RATE_PER, help="the rate is the step's in total (default) or each user's")
    run.add_argument("--schedule", choices=SCHEDULES, help="intended starts evenly spaced (constant, default) "
                                                           "or with exponential gaps (poisson)")


def rate_changes(args, error) -> dict:
    """The scenario fields the open-loop flags set."""
    from workloads.scenario import rates

    changes: dict = {}
    if args.rate is not None:
        try:
            changes["rate"] = rates(args.rate)
        except ValueError as exc:
            error(f"--rate: {exc}")
    if args.rate_per:
        changes["rate_per"] = args.rate_per
    if args.schedule:
        changes["schedule"] = args.schedule
    return changes


def _ms(value) -> str:
    return "" if value is None or value != value else f"{value * 1000:,.2f}"


def print_open_loop(console: Console, figures) -> None:
    """The open-loop steps' own table (nothing for a closed-loop run)."""
    if "rate" not in figures or not figures["rate"].notna().any():
        return
    table = Table(title="Open loop: latency from each intended start beside the service time",
                  caption=f"late: began over {LATE_S * 1000:g} ms after its intended start; missed: scheduled, "
                          "but the step ended first (in no percentile)", caption_justify="left")
    for column in ("step", "offered ops/s", "achieved ops/s", "scheduled", "late", "missed",
                   "latency p50 ms", "p99", "p99.9", "p99.99", "service p50 ms", "p99", "p99.99"):
        table.add_column(column, justify="left" if column == "step" else "right")
    for row in figures[figures["rate"].notna()].itertuples():
        table.add_row(row.label, f"{row.rate:,.6g}", f"{row.ops_per_s:,.1f}", f"{row.scheduled_ops or 0:,}",
                      f"{row.late_ops or 0:,}", f"{row.missed_ops or 0:,}",
                      _ms(row.latency_p50_s), _ms(row.latency_p99_s), _ms(row.latency_p999_s),
                      _ms(row.latency_p9999_s), _ms(row.p50_s), _ms(row.p99_s), _ms(row.p9999_s))
    console.print(table)
