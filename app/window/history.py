"""The History and Compare tabs' side of the main window: the stored runs listed (and read again
when another process adds or removes one), a run read for the Run tab, runs compared or deleted.
Reads go off the GUI thread."""
from __future__ import annotations

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal
from PySide6.QtWidgets import QMessageBox

from app.window.shell import Shell
from workloads.results.catalog_folder import StoreError
from workloads.results.compare import compare_runs as compare_pair
from workloads.results.history import compare_frame, history_rows, newest_run_id, run_labels, snapshot_from_store
from workloads.results.run_summary import run_answer
from workloads.results.suite_history import suite_comparison
from workloads.run.worker import describe_error
from workloads.text import plural


class StoredRunsController(QObject):
    run_read = Signal(object, object, bool)   # a stored run's snapshot and answer, for the Run tab (over a shown run?)
    compare_shown = Signal()                  # the Compare tab to the front
    catalog_read_again = Signal()             # runs came or went: what lists them reads again

    def __init__(self, shell: Shell, history, compare):
        super().__init__(shell)
        self._shell = shell
        self._history = history
        self._compare = compare
        self._compared_run_ids: list[str] = []
        history.open_requested.connect(self.open_run)
        history.compare_requested.connect(self.compare_runs)
        history.delete_requested.connect(self.delete_runs)
        # runs another process adds to the catalog or removes from it (the command line, a second
        # window) reach the History tab and the gallery: its runs folder watched, the reads batched
        self._catalog_reread = QTimer(self, singleShot=True, interval=500)
        self._catalog_reread.timeout.connect(lambda: (self.refresh_history(), self.catalog_read_again.emit()))
        self._catalog_watcher = QFileSystemWatcher([str(shell.store.runs_dir)], self)
        self._catalog_watcher.directoryChanged.connect(lambda _path: self.catalog_changed())

    def catalog_changed(self) -> None:
        """Read the history and the gallery again soon (once for a burst of changes)."""
        self._catalog_reread.start()

    def refresh_history(self) -> None:
        """Re-read the history off the GUI thread (a long run's records take a moment)."""
        store = self._shell.store
        self._shell.background.run("history", lambda: history_rows(store), self._history.set_rows,
                                   lambda exc: self._shell.show_error(f"cannot read run history: {describe_error(exc)}"))

    def open_run(self, run_id: str | None, over_a_shown_run: bool = True) -> None:
        """Read a stored run for the Run tab off the GUI thread; ``None``: the newest.
        ``over_a_shown_run=False``: only if the tab still shows nothing by then (start-up)."""
        store = self._shell.store

        def read():
            wanted = run_id if run_id is not None else newest_run_id(store)
            if wanted is None:
                return None
            snapshot = snapshot_from_store(store, wanted)
            return snapshot, run_answer(store, snapshot.run_id)

        def show(found) -> None:
            if found is not None:
                self.run_read.emit(*found, over_a_shown_run)
        what = run_id or "the newest run"
        self._shell.background.run("open", read, show,
                                   lambda exc: self._shell.show_error(f"cannot open run {what}: {describe_error(exc)}"))

    def compare_runs(self, run_ids: list[str]) -> None:
        store = self._shell.store

        def read():
            frame = compare_frame(store, run_ids)
            labels = run_labels(store, run_ids)
            ids = sorted(run_ids, key=lambda r: str(store.run(r)["created_at"]))   # against the oldest
            verdicts = [compare_pair(store, ids[0], other) for other in ids[1:]]
            return frame, suite_comparison(store, run_ids, labels), verdicts, labels

        def show(found) -> None:
            frame, suites, verdicts, labels = found
            self._compared_run_ids = list(run_ids)
            self._compare.show_runs(frame.to_dict("records"))
            self._compare.show_suites(suites.queries, suites.answers, suites.footprints)
            self._compare.show_verdicts(verdicts, labels)
            self.compare_shown.emit()
        self._shell.background.run("compare", read, show,
                                   lambda exc: self._shell.show_error(f"cannot compare runs: {describe_error(exc)}"))

    def delete_runs(self, run_ids: list[str]) -> None:
        runs, store = self._shell.runs, self._shell.store
        if runs.current_run_id in run_ids and runs.busy:
            self._shell.show_error("the running run cannot be deleted; stop it first")
            return
        answer = QMessageBox.question(self._shell.window, "Delete runs",
                                      f"Delete {plural(len(run_ids), 'run')} and their records?")
        if answer != QMessageBox.StandardButton.Yes:
            return

        def delete() -> list[str]:          # off the GUI thread: a large run's folder takes a while
            refused = []
            for run_id in run_ids:
                try:
                    store.delete_run(run_id)
                except (StoreError, OSError) as exc:
                    refused.append(describe_error(exc))
            return refused

        def done(refused: list[str]) -> None:
            self.refresh_history()
            if refused:
                self._shell.show_error(f"not deleted: {refused[0]}" +
                                       (f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""))
        self._shell.background.run("delete", delete, done,
                                   lambda exc: self._shell.show_error(f"cannot delete: {describe_error(exc)}"))

    def runs_in_view(self, tab) -> list[str]:
        """The compared runs when ``tab`` is Compare, the selection when it is History, else none."""
        if tab is self._compare and self._compared_run_ids:
            return list(self._compared_run_ids)
        if tab is self._history and self._history.selected_run_ids():
            return self._history.selected_run_ids()
        return []

    def charts(self) -> dict:
        return self._compare.charts()

    def chart_in_view(self) -> str:
        """The Compare tab's chart in view."""
        return self._compare.chart_in_view()
