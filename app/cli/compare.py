"""``tickbench compare A B [C ...] [--baseline X]... [--fail-if RULE]... [--json] [--anyway]``: each
side against the first (or the baseline), figure by figure with a verdict from the noise model
across runs (``workloads.results.compare``; a side of several runs is written RUN,RUN,RUN), and a
gate for CI (``workloads.results.gate``): exit 0 when every rule holds, 1 when one is broken, 2 when
it cannot tell (runs not comparable, a figure NaN or missing, an unknown run, an unreadable
baseline: one line, no traceback)."""
from __future__ import annotations

import json
from pathlib import Path

from rich.markup import escape
from rich import box
from rich.table import Table

from app.cli.common import CliError, _store, console, err_console, finite_above_zero, plain, safe
from workloads.text import error_words

VERDICT_STYLE = {"faster": "green", "smaller": "green", "slower": "red", "larger": "red"}
SAME = "no difference this machine can see"
SHORT_VERDICT = {SAME: "same", "too few to tell": "too few"}
NARROW = 120                # columns under which the table drops the run's own interval


def add_compare_parser(sub) -> None:
    compare = sub.add_parser("compare", help="compare runs figure by figure with a verdict; a CI gate with --fail-if")
    compare.add_argument("runs", nargs="*", metavar="RUN[,RUN...]",
                         help="run ids: each is compared with the first (or with --baseline); runs joined by commas "
                              "are one side of several runs (repeats of one scenario)")
    compare.add_argument("--baseline", action="append", default=[], metavar="RUN_OR_BUNDLE",
                         help="the run to compare against: a run id, or a .tbrun bundle (opened into the catalog); "
                              "repeat it for a base side of several runs")
    compare.add_argument("--fail-if", action="append", default=[], metavar="RULE",
                         help="exit 1 when the whole 95 %% interval across runs of a figure's ratio is past it, e.g. "
                              "\"p99 > 1.10x\" or \"rows/s < 0.95x\" (repeatable); exit 2 when it cannot be checked")
    compare.add_argument("--json", action="store_true", help="print the comparison as strict JSON, nothing else")
    compare.add_argument("--anyway", action="store_true",
                         help="compare runs that do not measure the same thing (another dataset, cache, ...)")
    compare.add_argument("--noise", type=_noise_percent, metavar="PCT",
                         help="one band for every figure instead of the noise model across runs (default: "
                              "measured from the sides' runs and the catalog's repeats of the base scenario)")


def _noise_percent(text: str) -> float:
    import argparse
    try:
        return finite_above_zero(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"takes a finite percentage above 0 (e.g. 5 for ±5 %), not {text!r}") from None


def cmd_compare(args) -> int:
    """Exit 0 when every rule holds, 1 when one is broken, 2 when it cannot tell (any error)."""
    from workloads.results.gate import CANNOT, Rule, check

    try:
        rules = [Rule.parse(text) for text in args.fail_if]
    except ValueError as exc:
        raise CliError(str(exc)) from None
    store = _store(args)
    sides = [[_baseline_run(store, b) for b in args.baseline]] if args.baseline else []
    sides += [[run for run in arg.split(",") if run.strip()] for arg in args.runs]
    sides = [side for side in sides if side]
    if len(sides) < 2:
        raise CliError("give two runs or more (or --baseline and a run): the first is what the others are compared with")
    try:
        sides = [[store.run(run.strip())["run_id"] for run in side] for side in sides]
    except Exception as exc:        # an unknown or damaged run: one line, exit 2
        raise CliError(f"cannot compare: {_one_line(exc)}") from None
    verdicts = []
    code = 0
    for other in sides[1:]:
        try:
            comparison = _compared(store, sides[0], other, args.noise)
        except Exception as exc:
            raise CliError(f"cannot compare {','.join(other)} against {','.join(sides[0])}: {_one_line(exc)}") from None
        forced = []
        if not comparison.comparable and args.anyway:
            comparison.refusals, forced = [], comparison.refusals
        found, results = check(comparison, rules)
        code = max(code, found) if found != CANNOT else CANNOT
        verdicts.append((comparison, results, forced))
    if args.json:
        print(json.dumps([{**c.to_dict(), "compared_anyway": forced,
                           "rules": [{"rule": r.rule.text, "holds": r.holds, "checked": bool(r.checked) and not r.untold,
                                      "line": r.line()} for r in results]}
                          for c, results, forced in verdicts] + [{"exit": code}], indent=2, allow_nan=False))
        return code
    for comparison, results, forced in verdicts:
        _print(comparison, forced)
        for result in results:
            style = "green" if result.holds else ("red" if result.broken else "yellow")
            console.print(f"[{style}]{escape(result.line())}[/{style}]", highlight=False, soft_wrap=True)
        if any(not r.checked or r.untold for r in results):
            console.print(escape(f"figures these runs have: {', '.join(_names(comparison))}"), highlight=False,
                          soft_wrap=True)
    if code == CANNOT and any(not c.comparable for c, _r, _f in verdicts):
        err_console.print("not compared: give --anyway to compare them all the same", highlight=False)
    return code


def _compared(store, base: list[str], new: list[str], noise_pct: float | None):
    import warnings

    from workloads.results.compare import compare_runs
    with warnings.catch_warnings():           # a hostile run's NaN must not print numpy's warnings
        warnings.simplefilter("ignore")
        return compare_runs(store, base, new, noise=None if noise_pct is None else noise_pct / 100)


def _names(comparison) -> list[str]:
    from workloads.results.gate import figure_names
    return figure_names(comparison)


def _one_line(exc: BaseException) -> str:
    text = error_words(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _baseline_run(store, baseline: str) -> str:
    path = Path(baseline)
    if path.suffix != ".tbrun" and not path.is_file():
        return baseline
    from workloads.results.bundle import BundleError
    from workloads.results.bundle_open import open_bundle
    try:
        return open_bundle(store, path).run_id
    except (BundleError, OSError, ValueError) as exc:
        raise CliError(f"--baseline {path}: not a run bundle Tickbench can open: {_one_line(exc)}") from None


def _print(comparison, forced: list[str]) -> None:
    from workloads.results.compare import figure_text
    console.print(f"\n[bold]{safe(comparison.new_run)}[/bold] against [bold]{safe(comparison.base_run)}[/bold]",
                  highlight=False)
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
    # a terminal of 80 columns: the run's own interval left out and the verdicts in a word, so
    # every interval and verdict stays whole on one line
    narrow = console.width < NARROW
    table = Table(title="new / base, 95 % interval across runs" + ("" if narrow else
                  " (a run's own interval says how sure that run is)"),
                  caption=f"noise model: {escape(comparison.noise)}", caption_justify="left",
                  box=box.SIMPLE_HEAD if narrow else box.HEAVY_HEAD, padding=(0, 1))
    across = "95 % runs" if narrow else "95 % across runs"
    columns = ("step", "figure", "base", "new", "new/base", across) + (() if narrow else ("run's own 95 %",)) \
        + ("verdict",)
    for column in columns:
        table.add_column(column, justify="right" if column in ("base", "new", "new/base") else "left",
                         no_wrap=column in (across, "verdict", "new/base", "base", "new"))
    for c in comparison.changes:
        style = VERDICT_STYLE.get(c.verdict, "dim")
        said = SHORT_VERDICT.get(c.verdict, c.verdict) if narrow else c.verdict
        cells = [escape(c.step), escape(c.figure), figure_text(c.figure, c.base), figure_text(c.figure, c.new),
                 _ratio_text(c.ratio), c.interval] + ([] if narrow else [c.run_interval])
        table.add_row(*cells, f"[{style}]{escape(said)}[/{style}]")
    if narrow and any(c.verdict == SAME for c in comparison.changes):
        table.caption += f"; same: {SAME}"
    console.print(table)
    if comparison.unmatched:
        console.print(plain(f"steps only one run has: {', '.join(comparison.unmatched)}"), highlight=False)


def _ratio_text(ratio: float) -> str:
    import math
    return f"{ratio:.3f}x" if math.isfinite(ratio) else "—"
