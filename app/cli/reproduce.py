"""``tickbench reproduce``: run a report's experiments and print published beside measured, and its
findings as ratios with a verdict. ``--list`` lists the reports and their experiments."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from workloads.text import error_words, plural, printable

VERDICT_STYLES = {"holds": "green", "holds more strongly": "bold green", "holds, more weakly": "yellow",
                  "does not hold on this machine": "bold red", "not measured": "dim", "inconclusive": "yellow"}


def styled_verdict(verdict: str, why: str = "") -> str:
    """A finding's verdict as rich markup: its colour when it has one (an unstyled verdict must not
    leave a bare ``[/]``, which rich refuses), then why."""
    style = VERDICT_STYLES.get(verdict)
    text = f"[{style}]{escape(verdict)}[/{style}]" if style else escape(verdict)
    return text + (f", {escape(why)}" if why else "")


def add_reproduce_parser(sub) -> None:
    from app.cli.ddb_options import add_dolphindb_arguments

    rep = sub.add_parser("reproduce", help="run a published report's experiments; published beside measured")
    rep.add_argument("report", nargs="?", help="000 | 001 | 002 | 003 | 004, or tick (the tick pack: no published figures)")
    rep.add_argument("--list", action="store_true", help="list the reports and their experiments")
    rep.add_argument("--scale", default="tiny", choices=("tiny", "medium", "report"),
                     help="tiny (a quick look), medium (a larger share) or the report's own scale (the tick pack: tiny or medium); the estimate says how long")
    rep.add_argument("--target", default="duckdb",
                     help="the database under test (the report's DolphinDB): a target kind or a saved server's "
                          "key (default: the embedded DuckDB)")
    rep.add_argument("--versus", help="what the report compared it with (001: a Druid, 004: a MongoDB): "
                                      "a target kind or a saved server's key; without it those runs are left out")
    rep.add_argument("--experiment", action="append", default=[], help="run only this experiment (repeatable)")
    rep.add_argument("--show", action="store_true", help="print the table and findings from stored runs; run nothing")
    rep.add_argument("--data-dir", type=Path, help="where local targets lay out data")
    add_dolphindb_arguments(rep)


def print_list(console: Console, store) -> None:
    from workloads.reproduce.calibration import calibration
    from workloads.reproduce.catalog import GALLERY
    from workloads.reproduce.estimate import estimate

    calibrated = calibration(store)           # this machine's card runs, as the window's gallery reads them
    for card in GALLERY.values():
        console.print(f"[bold]{card.report}[/bold] {escape(card.title)}", highlight=False)
        console.print(f"  asked: {escape(card.asked)}", highlight=False)
        for exp in card.experiments:
            needs = f" — needs {exp.needs}" if exp.needs else ""
            console.print(f"  · {exp.key}: {escape(exp.title)}{escape(needs)}", highlight=False)
            console.print("      " + "; ".join(f"{size}: {estimate(exp, size, calibration=calibrated).text}"
                                                    for size in ("tiny", "medium") if size in exp.sizes),
                          highlight=False)


def _planned_estimate(store, planned, size: str, subject: str, comparator: str | None, data_dir: Path) -> str:
    """What the planned runs should take, as the window's cards say it: "2 minutes to 9 minutes (...)"."""
    from workloads.reproduce.calibration import calibration
    from workloads.reproduce.estimate import estimate, together
    experiments = list({exp.key: exp for exp, _, _ in planned}.values())
    calibrated = calibration(store)
    return "expect " + together([estimate(exp, size, subject, data_dir, comparator=comparator,
                                          calibration=calibrated) for exp in experiments]).text


def print_reproduction(console: Console, repro) -> None:
    card = repro.card
    console.print(f"\n[bold]{escape(card.heading)}: {escape(card.title)}[/bold]"
                  + (f" — {repro.size} scale" if repro.size else " — no runs yet"), highlight=False)
    if repro.pairs:
        table = Table(title="Published (their hardware) beside measured (this machine)")
        for column in ("experiment", "figure", "published", "measured", "run"):
            table.add_column(column, justify="right" if column in ("published", "measured") else "left")
        for pair in repro.pairs:
            table.add_row(pair.experiment, pair.figure, pair.published, pair.measured, pair.run_id or "—")
        console.print(table)
    if not card.published:
        console.print("No published figures: this pack is not from a report; its findings compare your engines.",
                      highlight=False)
    table = Table(title="Findings as ratios")
    for column in ("finding", "published", "yours", "verdict", "runs"):
        table.add_column(column, justify="right" if column in ("published", "yours") else "left")
    for finding in repro.findings:
        table.add_row(escape(finding.statement), finding.published, finding.measured,
                      styled_verdict(finding.verdict, finding.why),
                      " ".join(finding.run_ids) or "—")
    console.print(table)


def cmd_reproduce(args, store, console: Console, err_console: Console, cli_error, kind_and_config,
                  data_dir: Path) -> int:
    from workloads.reproduce.catalog import GALLERY
    from workloads.reproduce.reproduction import reproduction
    from workloads.reproduce.run_report import REFUSED, planned_runs, run_planned

    if args.list:
        print_list(console, store)
        return 0
    if args.report not in GALLERY:
        raise cli_error(f"give a report: {', '.join(GALLERY)} (or --list)")
    card = GALLERY[args.report]
    if args.show:
        print_reproduction(console, reproduction(store, args.report, args.scale))
        return 0
    subject, subject_config = kind_and_config(args, args.target)
    comparator, comparator_config = kind_and_config(args, args.versus) if args.versus else (None, None)
    try:
        planned = planned_runs(args.report, args.scale, subject, subject_config, data_dir, comparator,
                               comparator_config, args.experiment or None)
    except (KeyError, ValueError) as exc:
        raise cli_error(error_words(exc)) from None
    skipped = [e for e in card.experiments if e.comparator and not comparator
               and (not args.experiment or e.key in args.experiment)]
    for exp in skipped:
        err_console.print(f"{exp.key}: the {exp.comparator} side is left out (give --versus: {exp.needs})",
                          highlight=False)
    err_console.print(f"{card.heading}: {plural(len(planned), 'run')} at {args.scale} scale on {subject}; "
                      f"{_planned_estimate(store, planned, args.scale, subject, comparator, data_dir)}",
                      highlight=False, markup=False)

    def started(index, total, exp, arm, runner) -> None:
        err_console.print(f"[{index + 1}/{total}] {exp.key} · {arm.label} ({runner.run_id})", highlight=False)

    def ended(result) -> None:
        if result.status != "completed":
            err_console.print(f"  {result.status}: {escape(printable(str(result.message)))}", highlight=False)

    results = run_planned(store, planned, started, ended)
    print_reproduction(console, reproduction(store, args.report, args.scale))
    # a question the engine cannot ask is said and is no failure, so long as the others ran and completed
    ran = [r for r in results if r.status != REFUSED]
    return 0 if ran and all(r.status == "completed" for r in ran) else 1
