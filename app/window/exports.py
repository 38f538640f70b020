"""Exports from the main window: a chart (PNG or PDF at a slide's size, SVG, CSV, or the clipboard)
and a report (HTML or PDF) on the runs in view, saved where the last export went."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from workloads.results.figures import cache_words, figure_warnings
from app.report.export_chart_dialog import COPY, FILE_FILTERS, ExportChartDialog
from widgets.charts.export_sizes import ExportOptions, copy_to_clipboard, export_chart_as
from widgets.charts.exporters import export_folder, remember_export_folder, run_caption, suggest_filename
from workloads.results.history import run_labels
from workloads.results.store import StoreError
from workloads.run.worker import describe_error


class MainWindowExports:
    """Chart and report exports for MainWindow."""

    def charts(self) -> dict:
        return {**self.dashboard.charts(), **self.compare.charts()}

    def chart_in_view(self) -> str:
        """The chart the user is looking at (the export dialog's default)."""
        return self.compare.chart_in_view() if self.tabs.currentWidget() is self.compare \
            else self.dashboard.chart_in_view()

    def _shown_run(self) -> dict | None:
        snapshot = self.dashboard.snapshot
        try:
            run = self.store.run(snapshot.run_id) if snapshot is not None else None
            # what "cold" cleared, and what the figures' reader must know (a step too short, a busy machine)
            return {**run, "cache": cache_words(self.store, run), "warnings": figure_warnings(self.store, run)} \
                if run else None
        except StoreError:
            return None

    def export_chart_dialog(self) -> None:
        """Which chart, size, DPI and format (ExportChartDialog); then where to save it, or the
        clipboard. The chart is drawn on the GUI thread (a chart takes well under a second)."""
        choice = ExportChartDialog.ask(self, list(self.charts()), self.chart_in_view(), self.settings)
        if choice is None:
            return
        name = choice.chart
        run = None if name.startswith("Compare") else self._shown_run()
        caption = run_caption(run) if run else None
        if choice.action == COPY:
            self.copy_chart(name, choice.options, caption)
            return
        start = export_folder(self.settings) / suggest_filename(run, name, f".{choice.format}")
        path, _ = QFileDialog.getSaveFileName(self, "Export chart", str(start), FILE_FILTERS[choice.format])
        if path:
            self.export_chart(name, Path(path), caption=caption, options=choice.options)

    def export_chart(self, name: str, path: Path, caption: str | None = None,
                     options: ExportOptions | None = None) -> Path | None:
        try:
            written = export_chart_as(self.charts()[name], path, options or ExportOptions(), caption=caption)
        except (OSError, ValueError, KeyError) as exc:
            self.show_error(f"cannot export {name}: {describe_error(exc)}")
            return None
        remember_export_folder(written, self.settings)
        self.statusBar().showMessage(f"saved {written}", 5000)
        return written

    def copy_chart(self, name: str, options: ExportOptions | None = None, caption: str | None = None) -> bool:
        """The chart on the clipboard as an image of the size asked (paste it into a slide)."""
        try:
            image = copy_to_clipboard(self.charts()[name], options or ExportOptions(), caption=caption)
        except (ValueError, KeyError) as exc:
            self.show_error(f"cannot copy {name}: {describe_error(exc)}")
            return False
        self.statusBar().showMessage(f"copied {name} ({image.width()}x{image.height()}) to the clipboard", 5000)
        return True

    def runs_in_view(self) -> list[str]:
        """The runs the visible tab shows: the compared runs on Compare, the selection on History,
        else the run on the Run tab (the live one while it runs)."""
        current = self.tabs.currentWidget()
        if current is self.compare and self._compared_run_ids:
            return list(self._compared_run_ids)
        if current is self.history and self.history.selected_run_ids():
            return self.history.selected_run_ids()
        if self.dashboard.snapshot is not None:
            return [self.dashboard.snapshot.run_id]
        return [self.controller.current_run_id] if self.controller.current_run_id else []

    def export_report_dialog(self) -> None:
        run_ids = self.runs_in_view()
        if not run_ids:
            self.show_error("open a run (History: double-click), compare runs or run one to report on")
            return
        labels = run_labels(self.store, run_ids)
        which = (f"run {labels[run_ids[0]]}" if len(run_ids) == 1
                 else f"{len(run_ids)} compared runs: " + ", ".join(labels[r] for r in run_ids))
        run = self.store.run(run_ids[0]) if len(run_ids) == 1 else None
        start = export_folder(self.settings) / suggest_filename(run, "report", ".html")
        path, _ = QFileDialog.getSaveFileName(self, f"Export report on {which}", str(start),
                                              "HTML report (*.html);;PDF report (*.pdf)")
        if path:
            self.export_report(run_ids, Path(path), which)

    def export_report(self, run_ids: list[str], path: Path, which: str = "") -> Path | None:
        from app.report.document import write_report
        try:
            written = write_report(self.store, run_ids, path)
        except Exception as exc:  # the report is a convenience: say what failed, keep the app
            self.show_error(f"cannot write report: {describe_error(exc)}")
            return None
        remember_export_folder(written, self.settings)
        self.statusBar().showMessage(f"saved {written}" + (f" (the report on {which})" if which else ""), 8000)
        return written
