"""``tickbench ab``: scenario A (run's flags) against B (A with changes, or a scenario file) as
interleaved pairs of repetitions (``workloads.run.ab``), with a verdict per step and figure from the
paired repetitions. Exit 0: an answer (a difference or none this machine can see); 2: it cannot tell
(too few pairs kept) or the input is wrong; 130: stopped by Ctrl-C, with what was measured printed
and kept in the catalog."""
from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from app.cli.common import CliError, _store, added_work, console, err_console, finite_above_zero
from workloads.scenario import scenario_differences
from workloads.text import error_words

FIGURE_CHOICES = ("rows/s", "MB/s", "ops/s", "p50", "p95", "p99")


def add_ab_parser(sub, add_scenario_arguments) -> None:
    ab = sub.add_parser("ab", help="A against B as interleaved repetitions, with a verdict a team can act on")
    add_scenario_arguments(ab)          # side A: run's flags (--seed there is the data's seed)
    ab.add_argument("--versus-target", metavar="KEY", help="B runs on this target instead (a kind or a saved key)")
    ab.add_argument("--versus-param", action="append", default=[], metavar="NAME=VALUE",
                    help="B runs with this workload parameter (repeatable)")
    ab.add_argument("--versus-added-work", type=added_work, metavar="MS|PCT%",
                    help="B's every operation also spends MS milliseconds of CPU, or PCT%% of its own time "
                         "(10%%: every operation a tenth slower): a known slowdown")
    ab.add_argument("--versus-scenario", type=Path, metavar="FILE.toml",
                    help="B is this whole scenario (the --versus-* changes apply over it)")
    ab.add_argument("--scenario-stdin", action="store_true",
                    help="read A as a scenario in JSON on standard input, or {\"a\": A, \"b\": B} for both (how the "
                         "window starts a session: a password in it is never written anywhere); the --versus-* "
                         "changes apply over B")
    ab.add_argument("--max-pairs", type=int, default=20, help="pairs of repetitions at most (default 20)")
    ab.add_argument("--smallest", type=finite_above_zero, default=5.0, metavar="PCT",
                    help="the smallest change worth seeing, in %% (default 5): it stops once no change this "
                         "size is left or a difference is clear")
    ab.add_argument("--budget", type=finite_above_zero, metavar="MINUTES", help="start no pair after this long")
    ab.add_argument("--order-seed", type=int, help="the seed of which side runs first in each pair (recorded)")
    ab.add_argument("--figure", choices=FIGURE_CHOICES, default="p50",
                    help="the figure that decides when to stop (default p50)")
    ab.add_argument("--interleave", choices=("auto", "operations", "runs"), default="auto",
                    help="operations: a pair's two runs side by side, their users taking turns operation by "
                         "operation; runs: one run after the other; auto (default): operations where both sides "
                         "can (warm, closed-loop, read-only, on this machine), else runs")
    ab.add_argument("--json", action="store_true", help="print the session as strict JSON on stdout, nothing else")
    ab.add_argument("--force", action="store_true", help="run even where the sizes look more than this machine holds")
    ab.set_defaults(ab_parser=ab)




def sides_from_args(args):
    """(A, B): A as ``tickbench run`` builds it; B from --versus-scenario or A's flags, with the
    --versus-* changes over it. No change at all: B is A (an A/A session)."""
    from app.cli.scenario import scenario_from_args
    if getattr(args, "scenario_stdin", False):
        return _sides_from_stdin(args)
    a = scenario_from_args(args)
    if args.versus_scenario is not None:
        given = ["--scenario", str(args.versus_scenario)]
        if args.data_dir is not None:
            given += ["--data-dir", str(args.data_dir)]
        b_args = args.ab_parser.parse_args(given)
    else:
        b_args = argparse.Namespace(**vars(args))
    if args.versus_target:
        b_args.target = args.versus_target
    extra = list(args.versus_param)
    if args.versus_added_work is not None:
        extra.append(args.versus_added_work)
    b_args.param = list(b_args.param) + extra
    return a, scenario_from_args(b_args)


def _sides_from_stdin(args):
    """(A, B) from standard input: A alone (B is A) or both; --versus-target and --versus-param
    (and --versus-added-work) over B."""
    from app.cli.scenario import _kind_and_config
    from workloads.scenario import Scenario
    try:
        given = json.loads(sys.stdin.read())
        both = isinstance(given, dict) and set(given) == {"a", "b"}
        a = Scenario.from_dict(given["a"] if both else given)
        b = Scenario.from_dict(given["b"]) if both else a
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise CliError(f"--scenario-stdin: not a scenario: {exc}") from None
    if args.versus_target:
        kind, config = _kind_and_config(args, args.versus_target)
        b = b.with_changes(target=kind, target_config=config)
    extra = list(args.versus_param)
    if args.versus_added_work is not None:
        extra.append(args.versus_added_work)
    params = dict(b.params)
    for item in extra:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise CliError(f"--versus-param takes NAME=VALUE, not {item!r}")
        params[name.strip()] = value.strip()
    return a, b.with_changes(params=params)


def cmd_ab(args) -> int:
    from workloads.run.ab import run_ab
    from workloads.run.limits import check_machine
    from workloads.run.runner import check_scenario
    if args.max_pairs < 1:
        raise CliError(f"--max-pairs takes 1 or more, not {args.max_pairs}")
    if args.smallest >= 100:
        raise CliError(f"--smallest takes a percentage under 100, not {args.smallest:g}")
    try:
        a, b = sides_from_args(args)
        for side in (a, b):
            check_scenario(side)            # a bad parameter or target: one line before anything starts
            check_machine(side, force=args.force)
        store = _store(args)
    except (ValueError, KeyError) as exc:
        raise CliError(error_words(exc)) from None
    stop = threading.Event()
    progress = _Progress(args.max_pairs)
    try:
        with _stop_on_signals(stop), progress:
            result = run_ab(a, b, store, max_pairs=args.max_pairs, smallest=args.smallest / 100,
                            budget_s=args.budget * 60 if args.budget else None, seed=args.order_seed,
                            primary=args.figure, on_progress=progress.update, should_stop=stop.is_set,
                            interleave=args.interleave)
    except (ValueError, KeyError) as exc:
        raise CliError(error_words(exc)) from None
    if args.json:
        sys.stdout.write(json.dumps(result.to_dict(), allow_nan=False) + "\n")
    else:
        print_ab(result, store)
    if result.status == "cancelled":
        return 130
    if result.outcome == "failed" and not result.pairs:
        err_console.print(f"tickbench: error: {escape(result.stop)}", highlight=False, soft_wrap=True)
    return 0 if result.answered() else 2


@contextmanager
def _stop_on_signals(stop: threading.Event):
    """SIGINT (Ctrl-C) and SIGTERM stop the session as they cancel a run: the run under way ends
    "cancelled", every completed run stays in the catalog, and what was measured is printed."""
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Progress:
    """A bar on stderr: pairs done of the most, and the repetition under way. Where stderr is not a
    terminal (a pipe: the window reads it), a plain line per event instead, written at once."""

    def __init__(self, total: int):
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
        self._lines = not err_console.is_terminal
        self._progress = None if self._lines else Progress(
            TextColumn("[bold]A/B[/bold]"), BarColumn(), TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(), console=err_console, transient=False)
        self._task = None
        self._total = total

    def __enter__(self):
        if self._progress is not None:
            self._progress.__enter__()
            self._task = self._progress.add_task("ab", total=self._total, detail="starting")
        return self

    def __exit__(self, *exc):
        return self._progress.__exit__(*exc) if self._progress is not None else None

    def update(self, event) -> None:
        done = min(max(0, event.pair - 1) if event.runner is not None else event.pair, self._total)
        if self._progress is None:
            sys.stderr.write(f"A/B {done}/{self._total}: {event.text}\n")
            sys.stderr.flush()
            return
        self._progress.update(self._task, completed=done, detail=escape(event.text))


def _value(figure: str, value) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    if figure in ("p50", "p95", "p99"):
        return f"{value * 1000:,.3f} ms"
    return f"{value:,.1f}"


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.1f} %"


def print_ab(result, store) -> None:
    from workloads.run.ab import ab_path
    from workloads.run.turns import pairs_words
    out = console
    name_a = result.scenario_a.get("name") or ""
    name_b = result.scenario_b.get("name") or ""
    out.print(f"A/B [bold]{escape(result.ab_id)}[/bold]: A {escape(name_a)}  ·  B {escape(name_b)}", highlight=False)
    changed = scenario_differences(result.scenario_a, result.scenario_b)
    out.print("B is A with " + escape("; ".join(changed)) if changed else "B is A (an A/A session)", highlight=False)
    out.print(f"order (seed {result.seed}): {escape(result.order) or '—'}", highlight=False)
    out.print(escape(pairs_words(result.interleave, result.interleave_why)), highlight=False)
    steps = []
    for verdict in result.verdicts:
        if verdict.step not in steps:
            steps.append(verdict.step)
    for step in steps:
        table = Table(title=f"{escape(step)}", title_justify="left")
        for column in ("Figure", "A", "B", "B/A", "95 % interval", "Verdict"):
            table.add_column(column, justify="left" if column in ("Figure", "Verdict") else "right")
        for v in (v for v in result.verdicts if v.step == step):
            e = v.evidence
            figure = f"[bold]{escape(v.figure)}[/bold]" if v.figure == result.primary else escape(v.figure)
            table.add_row(figure, _value(v.figure, v.a), _value(v.figure, v.b),
                          f"{e.ratio:.3f}x" if e else "—", f"{e.low:.3f}x – {e.high:.3f}x" if e else "—",
                          _style(v.verdict))
        out.print(table)
        for v in (v for v in result.verdicts if v.step == step and v.why):
            out.print(f"{escape(v.figure)}: cannot tell: {escape(v.why)}", highlight=False)
    for v in result.primary_verdicts():
        where = f" at {escape(v.step)}" if len(steps) > 1 else ""
        if v.evidence is not None:
            out.print(f"{escape(v.figure)}{where}: could see changes of ±{_percent(v.evidence.could_see)} or more",
                      highlight=False)
    dropped = result.dropped()
    kept = f"kept {result.kept} of {len(result.pairs)} pair{'s' if len(result.pairs) != 1 else ''}"
    if dropped:
        reasons = "; ".join(f"pair {d['pair']} {d['side']}: {d['reason']}" for d in dropped)
        kept += f" (dropped: {reasons})"
    out.print(escape(kept), highlight=False)
    style = {"clear": "green", "cancelled": "yellow"}.get(result.outcome, "red" if result.outcome in
                                                          ("too few", "failed") else "yellow")
    out.print(f"[{style}]{escape(result.stop)}[/{style}] in {result.elapsed_s:,.0f} s", highlight=False)
    out.print(f"runs kept in the catalog; the session's record: {escape(str(ab_path(store, result.ab_id)))}",
              highlight=False)


def _style(verdict: str) -> str:
    from workloads.results.evidence import CANNOT_TELL, FASTER, SAME, SLOWER
    colour = {FASTER: "green", SLOWER: "red", SAME: "", CANNOT_TELL: "yellow"}.get(verdict, "")
    return f"[{colour}]{escape(verdict)}[/{colour}]" if colour else escape(verdict)
