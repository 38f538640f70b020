"""``tickbench compare A B [C ...] [--baseline X] [--fail-if RULE]... [--json] [--anyway]``: each run
against the first (or the baseline), figure by figure with a verdict (``workloads.results.compare``),
and a gate for CI (``workloads.results.gate``): exit 0 when every rule holds, 1 when one is broken,
2 when the comparison cannot be made."""
from __future__ import annotations

import json
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from app.cli_common import CliError, _store, console, err_console

VERDICT_STYLE = {"faster": "green", "smaller": "green", "slower": "red", "larger": "red"}


def add_compare_parser(sub) -> None:
    compare = sub.add_parser("compare", help="compare runs figure by figure with a verdict; a CI gate with --fail-if")
    compare.add_argument("runs", nargs="*", metavar="RUN",
                         help="run ids: each is compared with the first (or with --baseline)")
    compare.add_argument("--baseline", metavar="RUN_OR_BUNDLE",
                         help="the run to compare against: a run id, or a .tbrun bundle (opened into the catalog)")
    compare.add_argument("--fail-if", action="append", default=[], metavar="RULE",
                         help="exit 1 when the whole 95 %% interval of a figure's ratio is past it, e.g. "
                              "\"p99 > 1.10x\" or \"rows/s < 0.95x\" (repeatable)")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
    compare.add_argument("--anyway", action="store_true",
                         help="compare runs that do not measure the same thing (another dataset, cache, ...)")
    compare.add_argument("--noise", type=float, metavar="PCT",
                         help="the change this machine shows without a cause, for every figure (default: measured "
                              "from the catalog's repeats of the base run's scenario, at least 10 %%)")


def cmd_compare(args) -> int:
    from workloads.results.compare import compare_runs
    from workloads.results.gate import CANNOT, Rule, check, figure_names

    try:
        rules = [Rule.parse(text) for text in args.fail_if]
    except ValueError as exc:
        raise CliError(str(exc)) from None
    store = _store(args)
    runs = list(args.runs)
    if args.baseline:
        runs.insert(0, _baseline_run(store, args.baseline))
    if len(runs) < 2:
        raise CliError("give two runs or more (or --baseline and a run): the first is what the others are compared with")
    try:
        ids = [store.run(run)["run_id"] for run in runs]
    except (KeyError, ValueError) as exc:
        raise CliError(str(exc).strip("'\"")) from None
    comparisons = [compare_runs(store, ids[0], other, noise=None if args.noise is None else args.noise / 100) for other in ids[1:]]
    code, verdicts = 0, []
    for comparison in comparisons:
        if not comparison.comparable and args.anyway:
            comparison.refusals, forced = [], comparison.refusals
        else:
            forced = []
        found, results = check(comparison, rules)
        code = max(code, found)
        verdicts.append((comparison, results, forced))
    if args.json:
        print(json.dumps([{**c.to_dict(), "compared_anyway": forced,
                           "rules": [{"rule": r.rule.text, "holds": r.holds, "checked": bool(r.checked),
                                      "line": r.line()} for r in results]}
                          for c, results, forced in verdicts] + [{"exit": code}], indent=2, default=str))
        return code
    for comparison, results, forced in verdicts:
        _print(comparison, forced)
        for result in results:
            style = "green" if result.holds else ("red" if result.broken else "yellow")
            console.print(f"[{style}]{escape(result.line())}[/{style}]", highlight=False, soft_wrap=True)
        if any(not r.checked for r in results):
            console.print(f"figures these runs have: {', '.join(figure_names(comparison))}", highlight=False,
                          soft_wrap=True)
    if code == CANNOT and any(not c.comparable for c, _r, _f in verdicts):
        err_console.print("not compared: give --anyway to compare them all the same", highlight=False)
    return code


def _baseline_run(store, baseline: str) -> str:
    path = Path(baseline)
    if path.suffix != ".tbrun":
        return baseline
    from workloads.results.bundle import BundleError
    from workloads.results.bundle_open import open_bundle
    try:
        return open_bundle(store, path).run_id
    except (BundleError, OSError) as exc:
        raise CliError(f"--baseline {path}: {exc}") from None


def _print(comparison, forced: list[str]) -> None:
    from workloads.results.compare import figure_text
    console.print(f"\n[bold]{comparison.new_run}[/bold] against [bold]{comparison.base_run}[/bold]", highlight=False)
    for reason in comparison.refusals:
        console.print(f"[red]not comparable: {escape(reason)}[/red]", highlight=False, soft_wrap=True)
    for reason in forced:
        console.print(f"[yellow]compared anyway: {escape(reason)}[/yellow]", highlight=False, soft_wrap=True)
    env = Table(title="What differs around them")
    for column in ("", comparison.base_run, comparison.new_run):
        env.add_column(column)
    for what, base, new in comparison.environment:
        env.add_row(what, escape(base), escape(new))
    console.print(env)
    if comparison.refusals:
        return
    table = Table(title="new / base, 95 % interval from a bootstrap over operations",
                  caption=f"noise band: {comparison.noise}", caption_justify="left")
    for column in ("step", "figure", "base", "new", "new/base", "95 % interval", "verdict"):
        table.add_column(column, justify="right" if column in ("base", "new", "new/base") else "left")
    for c in comparison.changes:
        style = VERDICT_STYLE.get(c.verdict, "dim")
        table.add_row(c.step, c.figure, figure_text(c.figure, c.base), figure_text(c.figure, c.new), f"{c.ratio:.3f}x",
                      c.interval, f"[{style}]{c.verdict}[/{style}]")
    console.print(table)
    if comparison.unmatched:
        console.print(f"steps only one run has: {', '.join(comparison.unmatched)}", highlight=False)
