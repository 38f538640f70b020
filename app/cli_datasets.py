"""``tickbench import | datasets | workloads``: what there is to benchmark, and a CSV file imported
as a dataset."""
from __future__ import annotations

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from app.cli_common import CliError, console, err_console


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
    return 0


def cmd_import(args) -> int:
    import time

    from workloads.datasets.csv_parse import CsvFormatError
    from workloads.datasets.csv_import import ImportFailed, import_csv
    mapping = {}
    for item in args.map:
        csv_name, sep, column = item.partition("=")
        if not sep or not csv_name.strip() or not column.strip():
            raise CliError(f"--map takes CSVCOL=column, not {item!r}")
        mapping[csv_name.strip()] = column.strip()
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
    from workloads.operations import WORKLOADS
    for name, workload in WORKLOADS.items():
        params = ", ".join(f"{p.name}={p.default}" for p in workload.params) or "no parameters"
        console.print(f"[bold]{name}[/bold] — {workload.title} ({params})", highlight=False)
    return 0
