"""The command line's side of reports 001 and 004: ``tickbench verify`` (every engine gives the same
answer), and what ``show`` prints for query-suite runs (per query, geometric mean) and footprints."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from workloads.text import plural, printable

# A check runs every query once per target: enough rows that most answers say something
VERIFY_SCALES = {"taq": (2, 100_000, 100), "devices": (2, 100_000, 1_000)}
VERDICT_STYLES = {"same": "green", "differs": "bold red", "error": "red", "not supported": "yellow"}


def installed_local_targets() -> str:
    from workloads.targets.engines import ENGINES, missing_client
    return ",".join(e.kind for e in ENGINES if e.local and missing_client(e.kind) is None)


def add_verify_parser(sub) -> None:
    from app.cli.ddb_options import add_dolphindb_arguments

    verify = sub.add_parser("verify", help="check that every target answers every suite query alike")
    verify.add_argument("--dataset", default="taq", help="taq | devices | imp_NAME (an import; default taq)")
    verify.add_argument("--targets", default=None,
                        help="targets to compare, comma-separated (default: every local engine installed; add "
                             "dolphindb with --node, or a saved server's key such as ch:NAME)")
    verify.add_argument("--suite", action="append", default=[],
                        help="a suite to check, by name or a suite file's path (FILE.toml: docs/user-suites.md); "
                             "repeatable; default: every suite of the dataset")
    verify.add_argument("--days", type=int)
    verify.add_argument("--rows-per-day", type=int)
    verify.add_argument("--symbols", type=int, help="symbols / devices")
    verify.add_argument("--seed", type=int)
    verify.add_argument("--data-dir", type=Path, help="where local targets lay out data")
    verify.add_argument("--rows", type=int, default=3, help="rows of each differing answer to print")
    add_dolphindb_arguments(verify)


def _loadable_suites(dataset: str, err_console: Console, skipped: list[str]) -> list:
    """Every suite of ``dataset``; one that does not load (a user's malformed file) is skipped with
    one line on standard error naming its file, and the others run."""
    from workloads.queries.suites import SuiteError, load_suite, suite_names
    from workloads.queries.user_suites import runs_on
    suites = []
    for name in suite_names():
        try:
            suite = load_suite(name)
        except SuiteError as exc:
            err_console.print(f"tickbench: skipped suite {name}: {exc}", highlight=False, soft_wrap=True)
            skipped.append(name)
            continue
        if suite.dataset and runs_on(suite, dataset):     # a user's suite that names no dataset: given by name
            suites.append(suite)
    if not suites and not skipped:
        raise ValueError(f"no query suite runs on {dataset}: give one with --suite FILE.toml (docs/user-suites.md)")
    return suites


def _verify_scale(args):
    """A check's scale: small generated data, or every day of an import (its rows are what they are)."""
    from workloads.datasets import get_dataset
    from workloads.datasets.builtin import IMPORT_PREFIX, TABLE_PREFIX
    from workloads.datasets.schema import Scale
    seed = {"seed": args.seed} if args.seed is not None else {}
    if args.dataset.startswith(IMPORT_PREFIX):
        days = len(get_dataset(args.dataset).all_days)     # ValueError naming a missing import
        return Scale(days=min(args.days or days, days), rows_per_day=1, symbols=1, **seed)
    if args.dataset.startswith(TABLE_PREFIX):
        get_dataset(args.dataset)                           # ValueError naming a missing table target
        return Scale(days=args.days or 1, rows_per_day=1, symbols=1)     # a table's days are its own
    if args.dataset not in VERIFY_SCALES:
        raise ValueError(f"--dataset: the suites run on {' or '.join(VERIFY_SCALES)}, an import (imp_NAME) or a "
                         f"table where it lives (tbl_NAME), not {args.dataset!r}")
    days, rows, keys = VERIFY_SCALES[args.dataset]
    return Scale(days=args.days or days, rows_per_day=args.rows_per_day or rows, symbols=args.symbols or keys, **seed)


def _default_targets(dataset: str) -> str:
    """What a check runs on without --targets: a table where it lives on itself (with the local
    engines beside it the user names), anything else on every installed local engine."""
    from workloads.datasets.builtin import TABLE_PREFIX
    if dataset.startswith(TABLE_PREFIX):
        return "table:" + dataset[len(TABLE_PREFIX):]
    return installed_local_targets()


def cmd_verify(args, console: Console, err_console: Console, cli_error, target_config) -> int:
    """``target_config(args, key)``: (kind, config) of a target kind or a saved server's key."""
    from workloads.datasets.builtin import IMPORT_PREFIX, TABLE_PREFIX
    from workloads.queries import load_suite
    from workloads.queries.user_suites import is_suite_file, runs_on
    from workloads.queries.verify import DIFFERS, NOT_SUPPORTED, verify

    skipped: list[str] = []
    try:
        scale = _verify_scale(args)
        suites = [load_suite(name) for name in args.suite] or _loadable_suites(args.dataset, err_console, skipped)
        wrong = [s.name for s in suites if not runs_on(s, args.dataset)]
        if wrong:
            raise ValueError(f"suite {wrong[0]} runs on another dataset than {args.dataset}")
        kinds = [k.strip() for k in (args.targets or _default_targets(args.dataset)).split(",") if k.strip()]
        if not kinds:
            raise ValueError("--targets needs at least one target")
        targets = [(key, *target_config(args, key)) for key in kinds]
        if args.dataset.startswith(TABLE_PREFIX):   # the table's own SQL beside pandas over its rows
            targets += [(f"pandas over {key}", kind, {**config, "answer": "pandas"}) for key, kind, config in targets
                        if kind == "table" and not config.get("answer")]
    except ValueError as exc:
        raise cli_error(str(exc)) from None
    with err_console.status("verifying") as status:
        verdicts = verify(args.dataset, scale, targets, suites,
                          progress=lambda text: status.update(f"verifying: {text}"))
    table = Table(title=f"Answers on {args.dataset}" + (
        "" if args.dataset.startswith(TABLE_PREFIX) else f": {plural(scale.days, 'day')}") + (
        "" if args.dataset.startswith((IMPORT_PREFIX, TABLE_PREFIX)) else
        f" × {plural(scale.rows_per_day, 'row')}, {scale.symbols:,} keys"))
    for column in ("suite", "query", "rows"):
        table.add_column(column, justify="right" if column == "rows" else "left")
    for label in verdicts.targets:
        table.add_column(label)
    for key in verdicts.queries:
        answers = verdicts.answers[key]
        rows_seen = next((a.rows for a in answers.values() if a.status == "answered"), None)
        cells = [Path(key[0]).name if is_suite_file(key[0]) else key[0], key[1],
                 "" if rows_seen is None else f"{rows_seen:,}"]
        for label in verdicts.targets:
            verdict = verdicts.verdicts[key][label]
            cells.append(f"[{VERDICT_STYLES[verdict]}]{verdict}[/]")
        table.add_row(*cells)
    console.print(table)
    for label in verdicts.targets:      # engines without SQL of their own say how they answered
        note = next((row[label].note for row in verdicts.answers.values() if row[label].note), "")
        if note:
            console.print(escape(printable(f"{label}: {note}.")), highlight=False, soft_wrap=True)
    for key in verdicts.queries:
        answers, row = verdicts.answers[key], verdicts.verdicts[key]
        for label in verdicts.targets:
            if row[label] == "error":
                console.print(f"[red]{key[1]} on {label}[/red]: {escape(answers[label].error)}", highlight=False,
                              soft_wrap=True)
            elif row[label] == NOT_SUPPORTED and answers[label].error:
                console.print(f"{key[1]} on {label}: {escape(answers[label].error)}", highlight=False, soft_wrap=True)
        if DIFFERS in row.values():
            reference = next(l for l in verdicts.targets if row[l] == "same")
            console.print(f"[bold red]{key[1]}[/bold red] answers differ:", highlight=False)
            for label in [reference] + [l for l in verdicts.targets if row[l] == DIFFERS]:
                head = answers[label].preview.get("head", [])[:args.rows]
                console.print(f"  {label} ({answers[label].rows:,} rows): {escape(str(head))}", highlight=False, soft_wrap=True)
    if skipped:
        console.print(f"[red]Suite{'s' if len(skipped) > 1 else ''} skipped[/red] (not loadable): "
                      f"{', '.join(skipped)}.", highlight=False)
    if verdicts.agree:
        if skipped:
            return 1
        console.print(f"[green]Every target answered every query alike[/green] ({plural(len(verdicts.queries), 'query', 'queries')}).",
                      highlight=False)
        return 0
    console.print("[red]Some answers differ or failed[/red]: see above.", highlight=False)
    return 1


# --- show --------------------------------------------------------------------------------------------
def print_report_figures(console: Console, store, run: dict) -> None:
    """Per-query figures of a query-suite run and the footprints a run recorded."""
    from workloads.results.suite_figures import REPORT_WORKLOADS

    if run["workload"] == "query-suite":
        _print_queries(console, store, run["run_id"])
    _print_footprints(console, store, run, per_column=run["workload"] in REPORT_WORKLOADS)


def _ms(value) -> str:
    return "" if value is None or value != value else f"{value * 1000:,.2f}"


def _print_queries(console: Console, store, run_id: str) -> None:
    from workloads.run.records import OK
    from workloads.results.suite_figures import category_summary, query_figures, suite_summary

    queries = query_figures(store, run_id)
    if queries.empty:
        return
    steps = store.frame("SELECT step, label FROM steps WHERE run_id = ? ORDER BY step", [run_id])
    labels = dict(zip(steps["step"], steps["label"]))
    summary = suite_summary(queries).set_index("step")
    categories = category_summary(queries)
    for step, group in queries.groupby("step"):
        table = Table(title=f"Queries · {labels.get(step, step)}")
        for column, justify in (("query", "left"), ("category", "left"), ("runs", "right"), ("mean ms", "right"),
                                ("p50 ms", "right"), ("min ms", "right"), ("status", "left"),
                                ("answer", "left")):
            table.add_column(column, justify=justify)
        for row in group.itertuples():
            status = row.status if row.status == OK else f"[{'yellow' if row.status == 'not supported' else 'red'}]" \
                                                         f"{row.status}[/]"
            table.add_row(row.query, row.category, f"{row.runs:,}", _ms(row.mean_s), _ms(row.p50_s),
                          _ms(row.min_s), status, (row.fingerprint or "")[:8])
        console.print(table)
        s = summary.loc[step]
        geomean = "" if s["geomean_s"] is None or s["geomean_s"] != s["geomean_s"] else \
            f"; geometric mean of the answered queries' means {s['geomean_s'] * 1000:,.2f} ms"
        console.print(f"{int(s['answered'])} answered, {int(s['not_supported'])} not supported, "
                      f"{int(s['failed'])} failed"
                      + geomean + ". answer: the first 8 characters of the answer's fingerprint (the same "
                      "on every engine that answers alike).", highlight=False, soft_wrap=True)
        per_category = categories[categories["step"] == step]
        if len(per_category) > 1 and per_category["queries"].max() > 1:   # categories of several queries
            console.print("per category (mean of the queries' means): " + "; ".join(
                f"{c.category} {c.queries} quer{'y' if c.queries == 1 else 'ies'} {_ms(c.mean_s)} ms"
                for c in per_category.itertuples()), highlight=False, soft_wrap=True)


def _mb(value) -> str:
    return f"{value / 1e6:,.1f} MB"


def _print_footprints(console: Console, store, run: dict, per_column: bool) -> None:
    from workloads.results.suite_figures import run_footprints

    footprints = run_footprints(store, run["run_id"])
    layout = footprints["layout"]
    if layout:
        console.print("Laid-out data: " + _footprint_line(layout), highlight=False, soft_wrap=True)
        if per_column and layout.get("columns"):
            _print_columns(console, layout)
    for step, footprint in footprints["steps"].items():
        console.print(f"Imported table after step {step + 1}: " + _footprint_line(footprint), highlight=False,
                      soft_wrap=True)


def _footprint_line(f: dict) -> str:
    parts = [f"{_mb(f['bytes'])} on disk" + (f" ({f['replicas']} copies)" if (f.get("replicas") or 1) > 1 else "")]
    if f.get("csv_ratio"):
        parts.append(f"CSV {_mb(f['csv_bytes'])} = {f['csv_ratio']:.2f}× the disk bytes")
    if f.get("logical_ratio"):
        parts.append(f"in memory {_mb(f['logical_bytes'])} = {f['logical_ratio']:.2f}×")
    return "; ".join(parts) + (escape(f" [{f['method']}]") if f.get("method") else "")


def _print_columns(console: Console, footprint: dict) -> None:
    table = Table(title="Bytes on disk per column")
    table.add_column("column")
    table.add_column("MB", justify="right")
    table.add_column("share", justify="right")
    total = sum(footprint["columns"].values()) or 1
    for name, size in sorted(footprint["columns"].items(), key=lambda kv: -kv[1]):
        table.add_row(name, f"{size / 1e6:,.2f}", f"{size / total:.0%}")
    console.print(table)
