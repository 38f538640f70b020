"""``tickbench import | datasets | workloads``: what there is to benchmark, and a CSV file imported
as a dataset."""
from __future__ import annotations

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from app.cli.common import CliError, console, err_console
from workloads.text import error_words


def cmd_datasets(args) -> int:
    from workloads.datasets import DATASETS
    from workloads.datasets.imported import list_imports
    for name, dataset in DATASETS.items():
        info = dataset.info
        console.print(f"[bold]{name}[/bold] — {info.title}: {len(info.schema.columns)} columns, "
                      f"{info.schema.row_bytes()} bytes/row", highlight=False)
    for dataset in list_imports():
        days = dataset.all_days
        console.print(f"[bold]{dataset.info.name}[/bold] — {dataset.info.title}: {dataset.rows:,} rows, "
                      f"{len(days)} day{'s' if len(days) != 1 else ''} ({days[0]} .. {days[-1]}), "
                      f"{len(dataset.all_keys):,} keys, from {dataset.source['path']}", highlight=False)
        if not dataset.base:
            from workloads.datasets.roles import Roles
            columns = ", ".join(f"{c.name} {c.ddb_type}" for c in dataset.info.schema.columns)
            roles = Roles.from_dict(dataset.info.extra["roles"]).describe()
            console.print(f"    columns: {columns}\n    roles: {roles}", highlight=False, markup=False)
    return 0


def cmd_import(args) -> int:
    if not args.preview:
        _refuse_an_existing_name(args.name, args.replace)
    if args.dataset:
        if args.time or args.key or args.price or args.size or args.quote_size or args.type or args.trades_of:
            raise CliError("--dataset reads a CSV against a built-in schema, whose roles are fixed: "
                           "leave out --time/--key/--price/--size/--quote-size/--type/--trades-of, or leave out "
                           "--dataset")
        return _import_builtin_schema(args)
    if args.map:
        raise CliError("--map renames CSV columns for --dataset imports; an import in its own schema keeps its names")
    return _import_own_schema(args)


def _refuse_an_existing_name(name: str, replace: bool) -> None:
    """A name already imported is replaced only when the user says so (the window asks the same)."""
    from workloads.datasets.imported import NAME_RULE, imports_dir, load_import
    if replace or not NAME_RULE.fullmatch(name) or not (imports_dir() / name).is_dir():
        return                          # a bad name is the import's to refuse
    try:
        existing = load_import(name)
        days = existing.all_days
        what = (f"{existing.rows:,} rows over {len(days)} day{'s' if len(days) != 1 else ''}"
                + (f", {days[0]} .. {days[-1]}" if days else ""))
    except (ValueError, KeyError, OSError):
        what = "its manifest cannot be read"
    raise CliError(f"imp_{name} exists ({what}): pass --replace to replace it, or choose another --name")


def _import_own_schema(args) -> int:
    import time

    from workloads.datasets.csv_import import ImportFailed
    from workloads.datasets.roles import Roles
    from workloads.datasets.tick_import import ImportSourceError, epoch_words, import_source, preview_source
    from workloads.datasets.text_format import TextFormat, TextFormatError
    types = _pairs(args.type, "--type", "COLUMN=TYPE")
    try:
        text = TextFormat(quote="" if args.quote.lower() == "none" else args.quote, escape=args.escape,
                          nulls=tuple(args.null), encoding=args.encoding, decimal=args.decimal,
                          time_format=args.time_format, epoch=args.epoch)
        preview = preview_source(args.file, args.delimiter, text=text)
    except (ImportSourceError, TextFormatError, OSError) as exc:
        raise CliError(str(exc)) from None
    if args.preview or not args.time:
        _print_preview(preview)
        if not args.preview:
            raise CliError("name the time column: --time COLUMN"
                           + (f" (suggested: {_suggested_flags(preview.suggested)})" if preview.suggested else ""))
        return 0
    roles = Roles(time=args.time, time_of_day=args.time_of_day, key=args.key, price=tuple(args.price), size=args.size,
                  quote_size=tuple(args.quote_size))
    zone = _pair_before_import(args, roles, preview.label)
    started = time.perf_counter()
    with Progress(TextColumn("[bold]importing {task.fields[file]}"), BarColumn(),
                  TextColumn("{task.percentage:>3.0f}%"), TextColumn("{task.description}"),
                  TimeElapsedColumn(), console=err_console, transient=True) as progress:
        task = progress.add_task("", total=1000, file=preview.label)
        try:
            dataset = import_source(args.file, args.name, roles, types, args.delimiter, args.zone, args.skip_bad_rows,
                                    lambda done, total, message: progress.update(task, completed=done,
                                                                                 description=message), text=text)
        except (ValueError, ImportFailed, OSError) as exc:
            raise CliError(str(exc)) from None
    seconds = time.perf_counter() - started
    pair = None
    if args.trades_of:
        from workloads.datasets.pair_import import pair_trades
        try:
            pair = pair_trades(args.name, args.trades_of, zone)
        except (ValueError, OSError) as exc:
            raise CliError(f"{exc} (the trades were not kept)") from None
    days = dataset.all_days
    skipped = dataset.manifest.get("skipped", {})
    from rich.markup import escape       # names and zones come from the file
    console.print(f"Imported {dataset.rows:,} rows over {len(days)} day{'s' if len(days) != 1 else ''} "
                  f"({days[0]} .. {days[-1]}) from {escape(preview.label)} in {seconds:,.1f} s "
                  f"({dataset.rows / max(seconds, 1e-9):,.0f} rows/s) as [bold]{dataset.info.name}[/bold]: "
                  f"{escape(roles.describe())}; time zone {escape(str(dataset.manifest.get('zone')))}.", highlight=False)
    if dataset.manifest.get("epochs"):
        console.print(f"Integer times: {epoch_words(dataset.manifest['epochs'])}.", highlight=False, markup=False)
    if dataset.manifest.get("text_format"):
        read = ", ".join(f"{k.replace('_', ' ')} {v!r}" for k, v in dataset.manifest["text_format"].items())
        console.print(f"Read with {read}.", highlight=False, markup=False)
    if skipped.get("count"):
        console.print(f"Skipped {skipped['count']:,} bad row(s):", highlight=False)
        for line in skipped["rows"][:20]:
            console.print(f"  {line}", highlight=False, markup=False)
        if skipped["count"] > 20:
            console.print(f"  ... {skipped['count'] - 20:,} more (all of the first 100 in the import's manifest.json)",
                          highlight=False)
    if pair is not None:
        console.print(f"{pair.info.notes} The tick pack runs on it (tickbench workloads --dataset "
                      f"{pair.info.name}).", highlight=False, markup=False)
        days = pair.all_days
    console.print(f"Use it: tickbench run --dataset {dataset.info.name} --days {len(days)} ...", highlight=False)
    return 0


def _pair_before_import(args, roles, label: str) -> str:
    """With --trades-of: the exchange's zone, once the quotes and both sides' roles can pair."""
    if not args.trades_of:
        if args.exchange_zone:
            raise CliError("--exchange-zone goes with --trades-of QUOTES")
        return ""
    from workloads.datasets.pair_import import pair_before_import
    try:
        return pair_before_import(args.trades_of, roles, args.exchange_zone, label)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def _pairs(items: list[str], flag: str, form: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        left, sep, right = item.partition("=")
        if not sep or not left.strip() or not right.strip():
            raise CliError(f"{flag} takes {form}, not {item!r}")
        if left.strip() in out:
            raise CliError(f"{flag} names {left.strip()!r} twice")
        out[left.strip()] = right.strip().upper() if flag == "--type" else right.strip()
    return out


def _suggested_flags(roles) -> str:
    flags = [f"--time {roles.time}"] + ([f"--time-of-day {roles.time_of_day}"] if roles.time_of_day else [])
    flags += [f"--key {roles.key}"] if roles.key else []
    flags += [f"--price {p}" for p in roles.price] + ([f"--size {roles.size}"] if roles.size else [])
    flags += [f"--quote-size {c}" for c in roles.quote_size]
    return " ".join(flags)


def _print_preview(preview) -> None:
    from rich.markup import escape
    from rich.table import Table
    table = Table(title=f"{preview.label}: {preview.format}"
                        + (f", delimiter {preview.delimiter!r}" if preview.delimiter else "")
                        + (f", {len(preview.files)} files" if len(preview.files) > 1 else "")
                        + (", hive folders" if preview.hive else ""))
    table.add_column("column")
    table.add_column("read as")
    table.add_column("stored as")
    table.add_column("first values")
    for field, column in zip(preview.arrow_schema, preview.schema.columns):
        values = ", ".join(str(v) for v in preview.first_rows[field.name].head(3).tolist())
        table.add_row(escape(field.name), escape(str(field.type)), column.ddb_type, escape(values))
    console.print(table)
    if preview.zone:
        console.print(f"Time zone: {preview.zone} (stored as UTC)", highlight=False)
    if preview.suggested:
        console.print(f"Suggested roles: {_suggested_flags(preview.suggested)}", highlight=False)


def _import_builtin_schema(args) -> int:
    import time

    from workloads.datasets.csv_parse import CsvFormatError
    from workloads.datasets.csv_import import ImportFailed, import_csv
    mapping = _pairs(args.map, "--map", "CSVCOL=column")
    started = time.perf_counter()
    with Progress(TextColumn("[bold]importing {task.fields[file]}"), BarColumn(),
                  TextColumn("{task.percentage:>3.0f}%"), TextColumn("{task.description}"),
                  TimeElapsedColumn(), console=err_console, transient=True) as progress:
        task = progress.add_task("", total=1000, file=args.file.name)
        try:
            dataset = import_csv(args.file, args.dataset, args.name, mapping or None,
                                 lambda done, total, message: progress.update(task, completed=done,
                                                                              description=message))
        except (CsvFormatError, ValueError, ImportFailed, OSError) as exc:
            raise CliError(str(exc)) from None
    seconds = time.perf_counter() - started
    days = dataset.all_days
    console.print(f"Imported {dataset.rows:,} rows over {len(days)} day{'s' if len(days) != 1 else ''} "
                  f"({days[0]} .. {days[-1]}) and {len(dataset.all_keys):,} keys from {args.file.name} "
                  f"in {seconds:,.1f} s ({dataset.rows / max(seconds, 1e-9):,.0f} rows/s) "
                  f"as [bold]{dataset.info.name}[/bold].", highlight=False)
    console.print(f"Use it: tickbench run --dataset {dataset.info.name} --days {len(days)} ...", highlight=False)
    return 0


def cmd_workloads(args) -> int:
    from rich.markup import escape

    from workloads.operations import WORKLOADS
    info = None
    if getattr(args, "dataset", None):
        from workloads.datasets import get_dataset
        try:
            info = get_dataset(args.dataset).info
        except (ValueError, KeyError) as exc:
            raise CliError(error_words(exc)) from None
    refused = []
    for name, workload in WORKLOADS.items():
        refusal = workload.refusal(info) if info is not None else ""
        if refusal:
            refused.append(refusal)
            continue
        params = ", ".join(f"{p.name}={p.default}" for p in workload.params) or "no parameters"
        roles = ", ".join(workload.to_dict()["roles"])
        needs = f"needs roles: {roles}" if roles else "runs on any dataset"
        console.print(f"[bold]{name}[/bold] — {workload.title} ({params}); {needs}", highlight=False)
    if refused:
        console.print(f"\nNot on {escape(info.name)}:", highlight=False)
        for line in refused:
            console.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
    return 0
