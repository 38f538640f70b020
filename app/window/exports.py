"""Exports from the main window: a chart (PNG or PDF at a slide's size, SVG, CSV, or the clipboard)
and a report (HTML or PDF) on the runs in view, saved where the last export went. What is in view
comes from the tabs, through the functions the window gives this controller."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog

from app.report.export_chart_dialog import COPY, FILE_FILTERS, ExportChartDialog
from app.window.shell import Shell
from widgets.charts.export_sizes import ExportOptions, copy_to_clipboard, export_chart_as
from widgets.charts.exporters import export_folder, remember_export_folder, run_caption, suggest_filename
from workloads.results.figures import cache_words, figure_warnings
from workloads.results.history import run_labels
from workloads.results.store import StoreError
from workloads.run.worker import describe_error


class ExportsController(QObject):
    def __init__(self, shell: Shell, charts: Callable[[], dict], chart_in_view: Callable[[], str],
                 runs_in_view: Callable[[], list[str]], shown_run_id: Callable[[], str | None]):
        super().__init__(shell)
        self._shell = shell
        self._charts = charts                   # every chart that can be exported, by name
        self._chart_in_view = chart_in_view     # the one the person is looking at: the dialog's default
        self._runs_in_view = runs_in_view       # the runs a report is on
        self._shown_run_id = shown_run_id       # the run the Run tab shows, if any
        self.chart_action = shell.action("Export chart…", self.export_chart_dialog, "Ctrl+E", "export_chart")
        self.report_action = shell.action("Export run report…", self.export_report_dialog, "Ctrl+R", "export_report")

    def _shown_run(self) -> dict | None:
        store, run_id = self._shell.store, self._shown_run_id()
        try:
            run = store.run(run_id) if run_id is not None else None
            # what "cold" cleared, and what the figures' reader must know (a step too short, a busy machine)
            return {**run, "cache": cache_words(store, run), "warnings": figure_warnings(store, run)} \
                if run else None
        except StoreError:
            return None

    def export_chart_dialog(self) -> None:
        """Which chart, size, DPI and format (ExportChartDialog); then where to save it, or the
        clipboard. The chart is drawn on the GUI thread (a chart takes well under a second)."""
        settings = self._shell.settings
        choice = ExportChartDialog.ask(self._shell.window, list(self._charts()), self._chart_in_view(), settings)
        if choice is None:
            return
        name = choice.chart
        run = None if name.startswith("Compare") else self._shown_run()
        caption = run_caption(run) if run else None
        if choice.action == COPY:
            self._copy_chart(name, choice.options, caption)
            return
        start = export_folder(settings) / suggest_filename(run, name, f".{choice.format}")
        path, _ = QFileDialog.getSaveFileName(self._shell.window, "Export chart", str(start),
                                              FILE_FILTERS[choice.format])
        if path:
            self.export_chart(name, Path(path), caption=caption, options=choice.options)

    def export_chart(self, name: str, path: Path, caption: str | None = None,
                     options: ExportOptions | None = None) -> Path | None:
        try:
            written = export_chart_as(self._charts()[name], path, options or ExportOptions(), caption=caption)
        except (OSError, ValueError, KeyError) as exc:
            self._shell.show_error(f"cannot export {name}: {describe_error(exc)}")
            return None
        remember_export_folder(written, self._shell.settings)
        self._shell.say(f"saved {written}", 5000)
        return written

    def _copy_chart(self, name: str, options: ExportOptions | None = None, caption: str | None = None) -> bool:
        """The chart on the clipboard as an image of the size asked (paste it into a slide)."""
        try:
            image = copy_to_clipboard(self._charts()[name], options or ExportOptions(), caption=caption)
        except (ValueError, KeyError) as exc:
            self._shell.show_error(f"cannot copy {name}: {describe_error(exc)}")
            return False
        self._shell.say(f"copied {name} ({image.width()}x{image.height()}) to the clipboard", 5000)
        return True

    def export_report_dialog(self) -> None:
        run_ids = self._runs_in_view()
        if not run_ids:
            self._shell.show_error("open a run (History: double-click), compare runs or run one to report on")
            return
        store = self._shell.store
        labels = run_labels(store, run_ids)
        which = (f"run {labels[run_ids[0]]}" if len(run_ids) == 1
                 else f"{len(run_ids)} compared runs: " + ", ".join(labels[r] for r in run_ids))
        run = store.run(run_ids[0]) if len(run_ids) == 1 else None
        start = export_folder(self._shell.settings) / suggest_filename(run, "report", ".html")
        path, _ = QFileDialog.getSaveFileName(self._shell.window, f"Export report on {which}", str(start),
                                              "HTML report (*.html);;PDF report (*.pdf)")
        if path:
            self.export_report(run_ids, Path(path), which)

    def export_report(self, run_ids: list[str], path: Path, which: str = "") -> Path | None:
        from app.report.document import write_report
        try:
            written = write_report(self._shell.store, run_ids, path)
        except Exception as exc:  # the report is a convenience: say what failed, keep the app
            self._shell.show_error(f"cannot write report: {describe_error(exc)}")
            return None
        remember_export_folder(written, self._shell.settings)
        self._shell.say(f"saved {written}" + (f" (the report on {which})" if which else ""), 8000)
        return written
