"""Run bundles in the main window: File → Open run… and a ``.tbrun`` file dropped on the window add
the run in it to the catalog (``workloads.results.bundle_open``), off the GUI thread; History is
then read again and the status bar says what happened. A refused bundle shows its one-line reason."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from workloads.results.bundle import SUFFIX, BundleError
from workloads.results.bundle_open import OpenedBundle, open_bundle
from workloads.run.worker import describe_error

FILE_FILTER = f"Run bundles (*{SUFFIX})"


class MainWindowBundles:
    """Opening run bundles for MainWindow (a menu action and drag and drop)."""

    def _accept_bundle_drops(self) -> None:
        self.setAcceptDrops(True)

    def open_run_bundle_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open run", "", FILE_FILTER)
        if path:
            self.open_run_bundle(Path(path))

    def open_run_bundle(self, path: Path) -> None:
        """Add the run in ``path`` to the catalog off the GUI thread; then History is read again."""
        path = Path(path)
        store = self.store

        def opened(result: OpenedBundle) -> None:
            self.refresh_history()
            self.statusBar().showMessage(result.message, 10000)

        def refused(exc: Exception) -> None:
            self.show_error(str(exc) if isinstance(exc, BundleError) else
                            f"cannot open {path.name}: {describe_error(exc)}")

        self.statusBar().showMessage(f"opening {path.name}…", 10000)
        self.background.run(f"bundle {path}", lambda: open_bundle(store, path), opened, refused)

    # ---- drag and drop ------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:
        if _dropped_bundles(event.mimeData()):
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event) -> None:
        if _dropped_bundles(event.mimeData()):
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event) -> None:
        paths = _dropped_bundles(event.mimeData())
        if not paths:
            super().dropEvent(event)
            return
        event.acceptProposedAction()
        for path in paths:
            self.open_run_bundle(path)


def _dropped_bundles(mime) -> list[Path]:
    """The local ``.tbrun`` files among what is dragged."""
    if mime is None or not mime.hasUrls():
        return []
    return [Path(url.toLocalFile()) for url in mime.urls()
            if url.isLocalFile() and url.toLocalFile().lower().endswith(SUFFIX)]
