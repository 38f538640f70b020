"""Stored runs in the main window: the History tab, a run opened on the Run tab with the seed
reports' figures beside it, runs compared or deleted. Reads go off the GUI thread."""
from __future__ import annotations

from PySide6.QtCore import QFileSystemWatcher, QTimer
from PySide6.QtWidgets import QMessageBox

from workloads.results.catalog_folder import StoreError
from workloads.results.compare import compare_runs as compare_pair
from workloads.results.history import compare_frame, history_rows, newest_run_id, run_labels, snapshot_from_store
from workloads.results.run_summary import run_answer
from workloads.results.suite_figures import REPORT_WORKLOADS
from workloads.results.suite_history import suite_comparison
from workloads.results.references import DISK, published_findings, published_sweeps
from workloads.run.worker import describe_error
from workloads.text import plural


class MainWindowHistory:
    """The History and Compare tabs' side of MainWindow, and a stored run shown on the Run tab."""

    def _show_references(self, workload: str, dataset: str) -> None:
        """The seed reports' figures for this workload and dataset beside what is measured."""
        self.dashboard.clear_references()
        for sweep in published_sweeps(workload, dataset):
            self.dashboard.set_sweep_reference(sweep.label, sweep.users, sweep.values, sweep.metric)
        queries = published_findings("query-suite", dataset) if workload == "query-suite" else []
        footprint = published_findings(DISK, dataset) if workload in REPORT_WORKLOADS else []
        own = published_findings(workload, dataset) if workload in ("import", "export") else []
        self.dashboard.set_published_findings(own, queries, footprint)

    def _watch_catalog(self) -> None:
        """Runs another process adds to the catalog or removes from it (the command line, a second
        window) reach the History tab and the gallery: its runs folder watched, the reads batched."""
        self._catalog_reread = QTimer(self, singleShot=True, interval=500)
        self._catalog_reread.timeout.connect(lambda: (self.refresh_history(), self.refresh_gallery()))
        self._catalog_watcher = QFileSystemWatcher([str(self.store.runs_dir)], self)
        self._catalog_watcher.directoryChanged.connect(lambda _path: self.catalog_changed())

    def catalog_changed(self) -> None:
        """Read the history and the gallery again soon (once for a burst of changes)."""
        if hasattr(self, "_catalog_reread"):
            self._catalog_reread.start()

    def refresh_history(self) -> None:
        """Re-read the history off the GUI thread (a long run's records take a moment)."""
        self.background.run("history", lambda: history_rows(self.store), self.history.set_rows,
                            lambda exc: self.show_error(f"cannot read run history: {describe_error(exc)}"))

    def open_run(self, run_id: str | None, over_a_shown_run: bool = True) -> None:
        """Show a stored run on the Run tab (read off the GUI thread); ``None``: the newest.
        ``over_a_shown_run=False``: only if the tab still shows nothing by then (start-up)."""
        def read():
            wanted = run_id if run_id is not None else newest_run_id(self.store)
            if wanted is None:
                return None
            snapshot = snapshot_from_store(self.store, wanted)
            return snapshot, run_answer(self.store, snapshot.run_id)

        def show(found) -> None:
            if found is None:
                return
            snapshot, answer = found
            if self.controller.busy and self.controller.current_run_id != answer.run_id:
                return                    # a run started meanwhile: its live view stays
            if not over_a_shown_run and self.dashboard.snapshot is not None:
                return
            self._show_references(answer.workload, answer.dataset)
            self.dashboard.show_final(snapshot)
            self.dashboard.show_results(answer)
            if over_a_shown_run:
                self.tabs.setCurrentWidget(self.dashboard)
        what = run_id or "the newest run"
        self.background.run("open", read, show,
                            lambda exc: self.show_error(f"cannot open run {what}: {describe_error(exc)}"))

    def compare_runs(self, run_ids: list[str]) -> None:
        def read():
            frame = compare_frame(self.store, run_ids)
            labels = run_labels(self.store, run_ids)
            ids = sorted(run_ids, key=lambda r: str(self.store.run(r)["created_at"]))   # against the oldest
            verdicts = [compare_pair(self.store, ids[0], other) for other in ids[1:]]
            return frame, suite_comparison(self.store, run_ids, labels), verdicts, labels

        def show(found) -> None:
            frame, suites, verdicts, labels = found
            self._compared_run_ids = list(run_ids)
            self.compare.show_runs(frame.to_dict("records"))
            self.compare.show_suites(suites.queries, suites.answers, suites.footprints)
            self.compare.show_verdicts(verdicts, labels)
            self.tabs.setCurrentWidget(self.compare)
        self.background.run("compare", read, show,
                            lambda exc: self.show_error(f"cannot compare runs: {describe_error(exc)}"))

    def delete_runs(self, run_ids: list[str]) -> None:
        if self.controller.current_run_id in run_ids and self.controller.busy:
            self.show_error("the running run cannot be deleted; stop it first")
            return
        answer = QMessageBox.question(self, "Delete runs", f"Delete {plural(len(run_ids), 'run')} and their records?")
        if answer != QMessageBox.StandardButton.Yes:
            return
        def delete() -> list[str]:          # off the GUI thread: a large run's folder takes a while
            refused = []
            for run_id in run_ids:
                try:
                    self.store.delete_run(run_id)
                except (StoreError, OSError) as exc:
                    refused.append(describe_error(exc))
            return refused

        def done(refused: list[str]) -> None:
            self.refresh_history()
            if refused:
                self.show_error(f"not deleted: {refused[0]}" + (f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""))
        self.background.run("delete", delete, done, lambda exc: self.show_error(f"cannot delete: {describe_error(exc)}"))
