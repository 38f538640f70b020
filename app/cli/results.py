"""``tickbench runs | show | export | open | delete``: the stored runs, the figures one measured (also printed
after ``tickbench run``), its records written to CSV or Parquet or the whole run as a bundle
(``workloads.results.bundle``), a bundle opened into the catalog, and runs deleted."""
from __future__ import annotations

from rich.table import Table

from app.cli.common import CliError, _store, console, err_console, plain, safe
from app.cli.open_loop import print_open_loop
from app.cli.reports import print_report_figures


def _ms(value) -> str:
    return "" if value is None or value != value else f"{value * 1000:,.1f}"


def _print_figures(store, run_id: str) -> None:
    from workloads.results.figures import STEP_FIGURES_DOC, phase_summary, step_figures
    from workloads.results.run_summary import run_answer
    from workloads.targets.base import PHASES

    figures = step_figures(store, run_id)
    run = store.run(run_id)
    title = plain(f"{run['workload']} · {run['target']} · {run['dataset']} · cache {run['cache']}")
    wire = bool(figures["wire_mb_per_s"].notna().any())
    phases = [p for p in PHASES if figures[f"{p}_s"].notna().any()]
    columns = ["ops", "errors", "window s", "rows/s", "MB/s", *(("wire MB/s",) if wire else ()), "ops/s",
               "p50 ms", "p95 ms", "p99 ms", "first op ms", *(f"{p} ms" for p in phases),
               *(("phases from",) if phases else ())]
    rows = []
    for row in figures.itertuples():
        cells = [row.label + (" ⚠" if row.short else ""), f"{row.ops:,}", f"{row.errors:,}",
                 _num(row.window_s, 2), _num(row.rows_per_s), _num(row.mb_per_s, 1),
                 *((_num(row.wire_mb_per_s, 1),) if wire else ()), _num(row.ops_per_s, 1),
                 _ms(row.p50_s), _ms(row.p95_s), _ms(row.p99_s), _ms(row.first_op_s)]
        cells += [_ms(getattr(row, f"{p}_s")) for p in phases]
        if phases:
            _, _, count, source = phase_summary(row)
            cells.append(f"{count} {source} op{'s' if count != 1 else ''}" if count else "")
        rows.append(cells)
    if console.width >= 12 * (len(columns) + 1):     # a row a step, every figure whole
        table = Table(title=title, caption=STEP_FIGURES_DOC, caption_justify="left")
        table.add_column("step")
        for column in columns:
            table.add_column(column, justify="right", no_wrap=True)
        for cells in rows:
            table.add_row(plain(cells[0]), *cells[1:])
        console.print(table)
    else:                                             # a narrow terminal: a figure a line, a step a table
        console.print(title)
        for cells in rows:
            table = Table(title=plain(cells[0]), show_header=False)
            table.add_column("figure", no_wrap=True)
            table.add_column("value", justify="right", no_wrap=True)
            for column, value in zip(columns, cells[1:]):
                table.add_row(column, value)
            console.print(table)
        console.print(STEP_FIGURES_DOC, highlight=False, soft_wrap=True, markup=False)
    console.print("MB/s: logical bytes (rows x the row width in DolphinDB's column widths). "
                  + ("wire MB/s: bytes actually read or written (for import and export, the CSV "
                     "files). " if wire else "") +
                  "first op: the first operation of a fresh worker process (a warm-up, not in the "
                  "figures), median over the step's workers.", highlight=False, soft_wrap=True)
    print_open_loop(console, figures)
    # the conditions every figure above was measured under (workloads.run.processes)
    from workloads.run.processes import describe_conditions
    ready = {step: facts["users_ready_s"] for step, facts in store.step_facts(run["run_id"]).items()
             if facts.get("users_ready_s") is not None}
    console.print(f"Users: {describe_conditions((run.get('environment') or {}).get('process'))}"
                  + (f"; ready in {', '.join(f'{s:.2f}' for s in ready.values())} s (each step: started, set up "
                     "and warmed up)" if ready else ""), highlight=False, soft_wrap=True, markup=False)
    from workloads.run.turns import turns_note
    turns = turns_note(run.get("environment"))
    if turns:                                   # an A/B session's run: its operations took turns
        console.print(f"Operations: {turns}", highlight=False, soft_wrap=True, markup=False)
    notes = (run.get("layout") or {}).get("notes")
    if notes:                                   # what the layout did to the data (a rounding of timestamps)
        console.print(f"Layout: {notes}", highlight=False, soft_wrap=True, markup=False)
    from workloads.run.environment import busy_note
    busy = busy_note(run.get("environment") or {})
    if busy:                                    # as the window's results say it
        console.print(f"⚠ {busy}", style="yellow", highlight=False, soft_wrap=True, markup=False)
    for row in figures.itertuples():
        if row.short:
            console.print(f"[yellow]⚠ {safe(row.label)}: {safe(row.short_reason)}[/yellow]", highlight=False,
                          soft_wrap=True)
    if run["cache"] == "cold":
        for step in run_answer(store, run_id).steps:
            console.print(f"{step.label}: {step.cold_line()}" + (f"; {step.not_cold_line()}" if step.not_cold else ""),
                          highlight=False, soft_wrap=True, markup=False)


def _print_op_errors(store, run_id: str, shown: int = 3) -> None:
    """Why operations failed (a server error, a lost connection...): the commonest messages, the
    measured operations' apart from warm-up and probe operations'."""
    failed = store.failures(run_id, shown)
    for kind, noun in (("measured", "operation"), ("warmup", "warm-up operation"), ("probe", "probe operation")):
        these = failed[failed["kind"] == kind]
        if not len(these):
            continue
        total = int(these["failed"].iloc[0])
        console.print(f"[red]{total:,} {noun}{'s' if total > 1 else ''} failed[/red]:", highlight=False)
        for message, count in zip(these["error"], these["count"]):
            if message is not None:
                console.print(f"  {int(count):,} × {safe(message)}", highlight=False, soft_wrap=True)


def _num(value, digits: int = 0) -> str:
    return "" if value is None or value != value else f"{value:,.{digits}f}"


NARROW_COLUMNS = 110      # below it, a run's facts share one column (six columns broke words apart)


def cmd_runs(args) -> int:
    runs = _store(args).runs()
    table = Table(title="Runs")
    # the id and the time whole on one line (an id is copied from here)
    for column in ("run id", "started"):
        table.add_column(column, no_wrap=True)
    narrow = console.width < NARROW_COLUMNS          # the rest in one column of words, wrapped between them
    for column in ("run",) if narrow else ("status", "workload", "target", "dataset", "users", "cache"):
        table.add_column(column, overflow="fold")
    for row in runs.itertuples():
        facts = (row.status, row.workload, row.target, row.dataset, row.users, row.cache)
        if narrow:
            facts = (f"{row.status} · {row.workload} on {row.target} · {row.dataset} · users {row.users}"
                     + (f" · {row.cache}" if row.cache else ""),)
        # every cell as plain text: a run from elsewhere names its target and dataset itself
        table.add_row(*(plain(value) for value in (
            row.run_id, f"{row.created_at:%Y-%m-%d %H:%M}" if not narrow else f"{row.created_at:%m-%d %H:%M}",
            *facts)))
    console.print(table)
    return 0


def cmd_show(args) -> int:
    from workloads.results.store import StoreError
    from workloads.results.run_summary import target_notes
    from workloads.results.dataset_size import run_size_text
    store = _store(args)
    try:
        run = store.run(args.run_id)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    _print_figures(store, run["run_id"])
    print_report_figures(console, store, run)
    for note in target_notes(run):
        console.print(note, highlight=False, soft_wrap=True, markup=False)
    if run_size_text(run):
        console.print(f"dataset {run['dataset']}: {run_size_text(run)}", highlight=False, soft_wrap=True,
                      markup=False)
    console.print(plain(f"run {run['run_id']}: {run['status']}" + (f" — {run['message']}" if run["message"] else "")),
                  highlight=False)
    return 0


def cmd_export(args) -> int:
    from workloads.results.store import StoreError
    from workloads.results.exports import export_run
    if args.bundle is not None:
        if args.chart or args.format:
            raise CliError(f"--bundle writes the whole run; it goes without --{'chart' if args.chart else 'format'}")
        return _export_bundle(args)
    args.format = args.format or "csv"
    store = _store(args)
    if args.chart:
        from app.cli.chart_export import cmd_export_chart
        return cmd_export_chart(args, store)
    try:
        run_id = store.run(args.run_id)["run_id"]
        out = args.out
        if out.exists() and not out.is_dir():
            raise CliError(f"--out {out}: a file is there; --out names the folder the run's files go to")
        existing = sorted(out.glob(f"{run_id}_*.{args.format}")) if out.is_dir() else []
        if existing and not args.force:
            raise CliError(f"--out {out}: {existing[0].name}" + (f" and {len(existing) - 1} more" if len(existing) > 1 else "")
                           + " exist already; give --force to overwrite them")
        paths = export_run(store, run_id, out, args.format)
    except (StoreError, OSError) as exc:
        raise CliError(f"export: {exc}" if isinstance(exc, OSError) else str(exc)) from None
    for path in paths:
        console.print(str(path), highlight=False)
    return 0


def _export_bundle(args) -> int:
    from workloads.results.bundle import BundleError, write_bundle
    if args.bundle.exists() and not args.force:
        raise CliError(f"--bundle {args.bundle}: a file is there already; give --force to overwrite it")
    try:
        path = write_bundle(_store(args), args.run_id, args.bundle)
    except BundleError as exc:
        raise CliError(str(exc)) from None
    console.print(str(path), highlight=False)
    return 0


def cmd_open(args) -> int:
    """``tickbench open FILE.tbrun``: exit 0 when added or already there, 2 (one line) when refused."""
    from workloads.results.bundle import BundleError
    from workloads.results.bundle_open import open_bundle
    try:
        opened = open_bundle(_store(args), args.bundle)
    except BundleError as exc:
        err_console.print(f"tickbench: {exc}", highlight=False, soft_wrap=True, markup=False)
        return 2
    console.print(opened.message, highlight=False, soft_wrap=True, markup=False)
    return 0


def cmd_delete(args) -> int:
    """``tickbench delete RUN...``: each run (its id, or a prefix naming one run) removed for good,
    a damaged one too. Every id is found before any run is deleted: a typo deletes nothing."""
    store = _store(args)
    held = store.run_ids()
    found = []
    for given in args.run_ids:
        matches = [given] if given in held else [r for r in held if r.startswith(given)]
        if len(matches) != 1:
            raise CliError(f"no run {given!r} in {store.path}" if not matches else
                           f"{given!r} names {len(matches)} runs ({', '.join(matches[:3])}...): give more of the id")
        found.append(matches[0])
    for run_id in dict.fromkeys(found):
        store.delete_run(run_id)
        console.print(plain(f"deleted run {run_id}"))
    return 0
