"""Run bundles in the main window: File → Open run… and a ``.tbrun`` file dropped on the window add
the run in it to the catalog (``workloads.results.bundle_open``), off the GUI thread; History is
then read again and the status bar says what happened. A refused bundle shows its one-line reason."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtWidgets import QFileDialog

from app.window.shell import Shell
from workloads.results.bundle import SUFFIX, BundleError
from workloads.results.bundle_open import OpenedBundle, open_bundle
from workloads.run.worker import describe_error

FILE_FILTER = f"Run bundles (*{SUFFIX})"
DRAGS = (QEvent.Type.DragEnter, QEvent.Type.DragMove)


class BundlesController(QObject):
    opened = Signal()                     # a run was added: History reads again

    def __init__(self, shell: Shell):
        super().__init__(shell)
        self._shell = shell
        self.open_action = shell.action("Open run…", self._open_bundle_dialog, name="open_run_bundle")
        shell.window.setAcceptDrops(True)
        shell.window.installEventFilter(self)

    def _open_bundle_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self._shell.window, "Open run", "", FILE_FILTER)
        if path:
            self.open_bundle(Path(path))

    def open_bundle(self, path: Path) -> None:
        """Add the run in ``path`` to the catalog off the GUI thread; then History is read again."""
        path = Path(path)
        store = self._shell.store

        def opened(result: OpenedBundle) -> None:
            self.opened.emit()
            self._shell.say(result.message, 10000)

        def refused(exc: Exception) -> None:
            self._shell.show_error(str(exc) if isinstance(exc, BundleError) else
                                   f"cannot open {path.name}: {describe_error(exc)}")

        self._shell.say(f"opening {path.name}…", 10000)
        self._shell.background.run(f"bundle {path}", lambda: open_bundle(store, path), opened, refused)

    def eventFilter(self, watched, event) -> bool:
        """Bundles dragged onto the window are taken; anything else goes on as before."""
        if event.type() in DRAGS and _dropped_bundles(event.mimeData()):
            event.acceptProposedAction()
            return True
        if event.type() == QEvent.Type.Drop and (paths := _dropped_bundles(event.mimeData())):
            event.acceptProposedAction()
            for path in paths:
                self.open_bundle(path)
            return True
        return super().eventFilter(watched, event)


def _dropped_bundles(mime) -> list[Path]:
    """The local ``.tbrun`` files among what is dragged."""
    if mime is None or not mime.hasUrls():
        return []
    return [Path(url.toLocalFile()) for url in mime.urls()
            if url.isLocalFile() and url.toLocalFile().lower().endswith(SUFFIX)]
