"""``tickbench export RUN --chart NAME --size WxH --out FILE.(png|svg|pdf)``: one chart of a stored
run, drawn offscreen with the widgets the window uses, at the size asked (for scripted reports)."""
from __future__ import annotations

import os
from pathlib import Path

from app.cli.common import CliError

# the names a user types, in the order they are listed, and the window's name of each chart
CHART_NAMES = {"throughput": "Rows per second", "data": "Data per second", "latency": "Latency",
               "phases": "Phases", "cpu": "Client CPU", "memory": "Client memory", "sweep": "Users sweep",
               "queries": "Time per query", "footprint": "Footprint"}
CHART_SUFFIXES = (".png", ".svg", ".pdf", ".csv")


def has_data(chart) -> bool:
    """Whether a chart drew anything of the run (a run that swept no users has no sweep)."""
    if hasattr(chart, "table_rows"):
        return bool(chart.table_rows())
    if hasattr(chart, "series_names"):
        names = chart.series_names()
        if hasattr(chart, "series_data"):
            return any(len(chart.series_data(n)[0]) for n in names)
        return bool(names)
    return False


def cmd_export_chart(args, store) -> int:
    """Check every argument before drawing: the run, the file's suffix and folder, the size; then
    the chart's name against the charts this run has."""
    from widgets.charts.export_sizes import ExportOptions, parse_size
    from workloads.results.store import StoreError

    try:
        run = store.run(args.run_id)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    out = Path(args.out)
    if out.suffix.lower() not in CHART_SUFFIXES:
        raise CliError(f"--out {out}: a chart is written to a .png, .svg, .pdf or .csv file")
    if not out.parent.is_dir():
        raise CliError(f"--out {out}: folder {out.parent} does not exist")
    if out.exists() and not args.force:
        raise CliError(f"--out {out} exists already; give --force to overwrite it")
    try:
        size = parse_size(args.size)
    except ValueError as exc:
        raise CliError(f"--size: {exc}") from None
    if args.dpi is not None and not 36 <= args.dpi <= 2400:
        raise CliError(f"--dpi {args.dpi}: expected 36 to 2400 dots per inch")
    options = ExportOptions(size=size, dpi=args.dpi or 96)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")      # no window: works without a display
    return _draw(store, run, args.chart, out, options)


def _quiet_offscreen_warnings() -> None:
    """The offscreen platform warns that it cannot propagate size hints (there is no window manager to
    tell): noise on a command line whose errors are one line. Every other Qt message still shows."""
    import sys

    from PySide6.QtCore import qInstallMessageHandler

    def handler(_kind, _context, message: str) -> None:
        if "propagateSizeHints" not in message:
            print(message, file=sys.stderr)
    qInstallMessageHandler(handler)


def _draw(store, run, name: str, out: Path, options) -> int:
    from app.cli.common import console
    from app.report.charts import application, dispose, front_tab_of, offscreen
    from widgets.run.dashboard import LiveDashboard
    from widgets.charts.export_sizes import export_chart_as
    from widgets.charts.exporters import run_caption
    from workloads.results.figures import cache_words, figure_warnings
    from workloads.results.history import snapshot_from_store

    _quiet_offscreen_warnings()
    application()
    dashboard = LiveDashboard()
    offscreen(dashboard, 1400, 1000)
    try:
        dashboard.show_final(snapshot_from_store(store, run["run_id"]))
        charts = dashboard.charts()
        has = [key for key, title in CHART_NAMES.items() if has_data(charts[title])]
        if name.lower() not in has:
            raise CliError(f"run {run['run_id']} has no chart {name!r}; its charts: {', '.join(has) or 'none'}")
        chart = charts[CHART_NAMES[name.lower()]]
        front_tab_of(chart)
        caption = run_caption({**run, "cache": cache_words(store, run), "warnings": figure_warnings(store, run)})
        try:
            written = export_chart_as(chart, out, options, caption=caption)
        except (OSError, ValueError) as exc:
            raise CliError(f"export: {exc}") from None
    finally:
        dispose(dashboard)
    console.print(str(written), highlight=False)
    return 0
