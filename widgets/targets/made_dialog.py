"""What Tickbench made on a server, and its drop, in the window: the databases listed with their
tables and sizes, checked for dropping, dropped only after a confirmation. The listing and the drop
are callables the caller gives (the engine's ``made`` and ``drop_made``), run off the GUI thread."""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QLabel, QMessageBox,
                               QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout)

from workloads.run.limits import human_bytes


class MadeDialog(QDialog):
    """``list_made()`` -> items with ``path``, ``tables`` and ``bytes``; ``drop(paths)`` drops them."""
    _done = Signal(object)                 # (what, result or exception), from the worker thread

    def __init__(self, where: str, list_made: Callable[[], list[Any]], drop: Callable[[list[str]], list[str]],
                 parent=None):
        super().__init__(parent)
        self.setObjectName("made_dialog")
        self.setWindowTitle(f"What Tickbench made on {where}")
        self._list_made, self._drop, self._where = list_made, drop, where
        self._made: list[Any] = []
        self.busy = False                  # a listing or a drop under way
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tickbench-made")
        self._done.connect(self._finished)
        self.status = QLabel(objectName="made_status")
        self.status.setTextFormat(Qt.TextFormat.PlainText)       # server text is never markup
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, 3, objectName="made_table")
        self.table.setHorizontalHeaderLabels(["Database", "Tables", "On disk"])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setVisible(False)
        self.table.itemChanged.connect(lambda _item: self._enable())
        self.drop_button = QPushButton("Drop checked…", objectName="drop_button")
        self.drop_button.clicked.connect(self.drop_checked)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.drop_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(900, 420)
        self.finished.connect(lambda _code: self._pool.shutdown(wait=False, cancel_futures=True))
        self.refresh()

    # --- background work ---------------------------------------------------------------------------------
    def _run(self, what: str, job: Callable[[], Any]) -> None:
        def work() -> None:
            try:
                result = job()
            except Exception as exc:              # shown in the dialog, never a lost thread
                result = exc
            try:
                self._done.emit((what, result))
            except RuntimeError:                  # the dialog was deleted meanwhile
                pass
        self.busy = True
        self._enable()
        self._pool.submit(work)

    def refresh(self) -> None:
        self.status.setText(f"Asking {self._where} what Tickbench made…")
        self._run("list", self._list_made)

    def drop_checked(self) -> bool:
        chosen = self.checked()
        if not chosen:
            return False
        size = human_bytes(sum(m.bytes for m in self._made if m.path in chosen))
        answer = QMessageBox.question(self, "Drop databases",
                                      f"Drop {len(chosen)} database(s), {size}, from {self._where} for good?\n"
                                      "Their data cannot be recovered; a run needing them lays them out again.")
        if answer != QMessageBox.StandardButton.Yes:
            return False
        self.status.setText(f"Dropping {len(chosen)} database(s)…")
        self._run("drop", lambda: self._drop(chosen))
        return True

    def _finished(self, payload) -> None:
        what, result = payload
        self.busy = False
        if isinstance(result, Exception):
            self.status.setText(f"{'Listing' if what == 'list' else 'Dropping'} failed: {result}")
            self._enable()
            return
        if what == "drop":
            self.refresh()
            return
        self._show(result)

    def _show(self, made: list[Any]) -> None:
        self._made = list(made)
        self.table.blockSignals(True)
        self.table.setRowCount(len(self._made))
        for row, m in enumerate(self._made):
            path = QTableWidgetItem(m.path)
            path.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
            path.setCheckState(Qt.CheckState.Checked)
            path.setToolTip(m.path)
            tables = QTableWidgetItem(", ".join(m.tables))
            tables.setToolTip(", ".join(m.tables))
            size = QTableWidgetItem(human_bytes(m.bytes))
            size.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            for column, item in enumerate((path, tables, size)):
                self.table.setItem(row, column, item)
        self.table.blockSignals(False)
        self.table.resizeColumnToContents(0)
        self.table.resizeRowsToContents()
        total = human_bytes(sum(m.bytes for m in self._made))
        self.status.setText(f"{len(self._made)} database(s) Tickbench made on {self._where}, {total} on disk. "
                            "Nothing outside Tickbench's prefix is listed." if self._made else
                            f"Nothing Tickbench made is on {self._where}.")
        self._enable()

    def checked(self) -> list[str]:
        return [self._made[row].path for row in range(self.table.rowCount())
                if self.table.item(row, 0).checkState() == Qt.CheckState.Checked]

    def _enable(self) -> None:
        self.drop_button.setEnabled(not self.busy and bool(self._made) and bool(self.checked()))
