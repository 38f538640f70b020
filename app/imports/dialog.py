"""ImportDialog: make a user's tick file a dataset to benchmark, in its own schema (File → Import data…).

The user picks a file or a folder (CSV, Parquet, Feather, hive ``date=.../`` folders). The preview
(``workloads.datasets.tick_import.preview_source``) runs on a plain thread and comes back as a queued
signal: the first rows, each column's inferred type in a combo box to change, and the role pickers
prefilled from the suggested roles. The import runs on another plain thread with a progress bar and the
engine's own "rows/s, about N s left" line, cancellable; a failure shows the engine's one-line message
(file, line, column) and keeps nothing; skipped bad rows are listed. On success the dialog emits
``imported("imp_<name>")``. A CSV in one of the built-in schemas is ``BuiltinImportDialog``'s, one
button away.
"""
from __future__ import annotations

import threading
from pathlib import Path

import pandas as pd
from PySide6.QtCore import QRegularExpression, Qt, Signal
from PySide6.QtGui import QRegularExpressionValidator
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout,
                               QGroupBox, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QProgressBar,
                               QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout)

from app.imports.job import ImportJob
from widgets.datasets.role_pickers import RolePickers
from widgets.datasets.trades_of_field import TradesOfField
from widgets.datasets.text_format_fields import TextFormatFields
from widgets.common.theme import current_theme
from workloads.datasets.imported import NAME_RULE, PREFIX, imports_dir, list_imports, suggest_name
from workloads.datasets.roles import CHOOSABLE_TYPES, RoleError, Roles
from workloads.datasets.schema import Column, Schema
from workloads.datasets.pair_import import can_be_quotes, pair_before_import, pair_trades
from workloads.datasets.tick_import import (ImportFailed, ImportSourceError, import_source,
                                            preview_source)
from workloads.text import plural

PREVIEW_ROWS = 20
DELIMITERS = ((",", ","), (";", ";"), ("tab", "\t"), ("|", "|"))
FILE_FILTER = "Tick data (*.csv *.txt *.tsv *.parquet *.pq *.feather *.arrow *.ipc);;All files (*)"


class ImportDialog(QDialog):
    imported = Signal(str)              # registry name of the dataset just imported: "imp_<name>"
    previewed = Signal()                # a preview (or its error) has been shown
    _preview_done = Signal(int, object)  # (generation, SourcePreview | error message) from the preview thread

    def __init__(self, parent=None, path: str | Path | None = None):
        super().__init__(parent)
        self.setObjectName("import_dialog")
        self.setWindowTitle("Import data")
        self.setMinimumWidth(760)
        self.resize(980, 700)                 # the preview wants width; fits a 1366x768 screen
        self.preview = None                   # the SourcePreview shown
        self._just_imported = ""              # the name this dialog has just imported under
        self._generation = 0                  # the newest preview asked for; older answers are dropped
        self._preview_thread: threading.Thread | None = None
        self._job = ImportJob(self)
        self._name_typed = False
        self._close_when_done = False
        self._existing: dict[str, object] = {}

        intro = QLabel("Benchmark your own data in its own columns: a CSV, Parquet or Feather file, or a folder "
                       f"of them. It is stored as Parquet, one file per UTC day sorted by time, in {imports_dir()}.",
                       wordWrap=True)
        self.source_edit = QLineEdit(objectName="source_edit")
        self.source_edit.setPlaceholderText("a file, or a folder of files (one per day, or hive date=… folders)")
        self.file_button = QPushButton("File…", objectName="file_button")
        self.folder_button = QPushButton("Folder…", objectName="folder_button")
        source_row = QHBoxLayout()
        source_row.addWidget(self.source_edit, 1)
        source_row.addWidget(self.file_button)
        source_row.addWidget(self.folder_button)
        self.delimiter_combo = QComboBox(objectName="delimiter_combo")
        self.delimiter_combo.addItem("sniffed", None)
        for label, value in DELIMITERS:
            self.delimiter_combo.addItem(label, value)
        self.source_info = QLabel(objectName="source_info", wordWrap=True)
        self.builtin_button = QPushButton("A CSV in a built-in schema…", objectName="builtin_button")
        self.builtin_button.setToolTip("Read a CSV against a built-in schema: TAQ, level 2, devices or api45")
        info_row = QHBoxLayout()
        info_row.addWidget(QLabel("CSV delimiter:"))
        info_row.addWidget(self.delimiter_combo)
        info_row.addWidget(self.source_info, 1)
        info_row.addWidget(self.builtin_button)
        self.format_fields = TextFormatFields()
        form = QFormLayout()
        form.addRow("Source:", source_row)
        form.addRow("", info_row)
        form.addRow("CSV values:", self.format_fields)

        preview_box = QGroupBox("First rows, and each column's type (change one where the guess is wrong)")
        self.preview_table = QTableWidget(0, 0, objectName="preview_table")
        self.preview_table.setMinimumHeight(190)
        self.preview_table.horizontalHeader().setDefaultSectionSize(130)
        QVBoxLayout(preview_box).addWidget(self.preview_table)

        roles_box = QGroupBox("Roles: what the workloads read")
        self.role_pickers = RolePickers()
        QVBoxLayout(roles_box).addWidget(self.role_pickers)

        self.name_edit = QLineEdit(objectName="name_edit")
        self.name_edit.setValidator(QRegularExpressionValidator(QRegularExpression(NAME_RULE.pattern), self))
        self.name_edit.setPlaceholderText("e.g. trades")
        self.name_hint = QLabel(objectName="name_hint", wordWrap=True)
        self.zone_edit = QLineEdit(objectName="zone_edit")
        self.zone_edit.setPlaceholderText("zone of times without one, e.g. America/New_York (empty: as written)")
        self.trades_of = TradesOfField()
        self.skip_check = QCheckBox("Skip bad rows (count and list them) instead of stopping at the first",
                                    objectName="skip_check")
        options = QFormLayout()
        name_row = QHBoxLayout()
        name_row.addWidget(self.name_edit)
        name_row.addWidget(self.name_hint, 1)
        options.addRow("Name:", name_row)
        options.addRow("Time zone:", self.zone_edit)
        options.addRow("Trades of:", self.trades_of)
        options.addRow("", self.skip_check)

        self.progress_bar = QProgressBar(objectName="import_progress")
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setVisible(False)      # shown once an import starts
        self.status_label = QLabel(wordWrap=True, objectName="import_status")
        # file names, columns and values come from the user's files: never markup
        self.name_hint.setTextFormat(Qt.TextFormat.PlainText)
        self.status_label.setTextFormat(Qt.TextFormat.PlainText)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label = QLabel(wordWrap=True, objectName="import_error")
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.skipped_list = QPlainTextEdit(objectName="skipped_list", readOnly=True)
        self.skipped_list.setMaximumHeight(90)
        self.skipped_list.setVisible(False)
        self.buttons = QDialogButtonBox()
        self.import_button = self.buttons.addButton("Import", QDialogButtonBox.ButtonRole.AcceptRole)
        self.import_button.setObjectName("import_button")
        self.cancel_button = self.buttons.addButton("Cancel import", QDialogButtonBox.ButtonRole.ActionRole)
        self.cancel_button.setObjectName("cancel_button")
        self.close_button = self.buttons.addButton("Close", QDialogButtonBox.ButtonRole.RejectRole)
        self.close_button.setObjectName("close_button")

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(preview_box, 1)
        layout.addWidget(roles_box)
        layout.addLayout(options)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.status_label)
        layout.addWidget(self.error_label)
        layout.addWidget(self.skipped_list)
        layout.addWidget(self.buttons)

        self.file_button.clicked.connect(self._browse_file)
        self.folder_button.clicked.connect(self._browse_folder)
        self.source_edit.editingFinished.connect(lambda: self.load_preview(force=False))
        self.delimiter_combo.activated.connect(lambda _: self.load_preview(force=True))
        self.format_fields.changed.connect(lambda: self.load_preview(force=True))
        self.role_pickers.changed.connect(self._update_state)
        self.name_edit.textEdited.connect(self._on_name_typed)
        self.name_edit.textChanged.connect(self._update_state)
        self.zone_edit.textChanged.connect(self._update_state)
        self.trades_of.changed.connect(self._update_state)
        self.import_button.clicked.connect(self.start_import)
        self.cancel_button.clicked.connect(self.cancel_import)
        self.close_button.clicked.connect(self.reject)
        self.builtin_button.clicked.connect(self.open_builtin)
        self._job.progressed.connect(self._on_progress)
        self._job.finished.connect(self._on_finished)
        self._preview_done.connect(self._on_preview)
        self._previewed_of = ""
        self._refresh_existing()
        if path:
            self.set_source(path)
        self._update_state()

    # ---- inputs ---------------------------------------------------------------------------------
    def set_source(self, path: str | Path) -> None:
        self._just_imported = ""
        self.source_edit.setText(str(path))
        self.load_preview(force=True)

    def set_name(self, name: str) -> None:
        self._name_typed = True
        self.name_edit.setText(name)

    def set_type(self, column: str, ddb_type: str) -> None:
        combo = self.type_combo(column)
        combo.setCurrentIndex(combo.findData(ddb_type))

    def type_combo(self, column: str) -> QComboBox:
        names = [self.preview_table.horizontalHeaderItem(i).text() for i in range(self.preview_table.columnCount())]
        return self.preview_table.cellWidget(0, names.index(column))

    def _browse_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import a file", self.source_edit.text() or str(Path.home()),
                                              FILE_FILTER)
        if path:
            self.set_source(path)

    def _browse_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Import a folder", self.source_edit.text() or str(Path.home()))
        if path:
            self.set_source(path)

    def _on_name_typed(self) -> None:
        self._name_typed = True

    def _refresh_existing(self) -> None:
        self._existing = {d.name: d for d in list_imports()}
        self.trades_of.set_quotes([d.info.name for d in self._existing.values() if can_be_quotes(d)])

    # ---- the preview, off the GUI thread ----------------------------------------------------------
    @property
    def previewing(self) -> bool:
        return self._preview_thread is not None and self._preview_thread.is_alive()

    def load_preview(self, force: bool = True) -> None:
        text = self.source_edit.text().strip()
        if text == self._previewed_of and not force:
            return  # editingFinished also fires on focus loss: keep the user's types and roles
        self._previewed_of = text
        self._generation += 1
        self.preview = None
        self._show_error("")
        self._fill_table()
        if not text:
            self._update_state()
            return
        if not self._name_typed:
            self.name_edit.setText(suggest_name(text))
        self.source_info.setText("Reading the first rows…")
        generation, delimiter = self._generation, self.delimiter_combo.currentData()
        try:
            text_format = self.format_fields.text_format()
        except ValueError as exc:
            self.source_info.setText("")
            self._show_error(str(exc))
            self._update_state()
            return
        self._preview_thread = threading.Thread(target=self._preview_work,
                                                args=(generation, text, delimiter, text_format),
                                                name="tickbench-preview", daemon=True)
        self._preview_thread.start()
        self._update_state()

    def _preview_work(self, generation: int, path: str, delimiter: str | None, text_format) -> None:
        try:
            outcome: object = preview_source(path, delimiter, rows=PREVIEW_ROWS, text=text_format)
        except (ImportSourceError, ValueError, OSError) as exc:
            outcome = str(exc)
        except Exception as exc:  # anything else still reaches the user
            outcome = f"{Path(path).name}: {type(exc).__name__}: {exc}"
        try:
            self._preview_done.emit(generation, outcome)
        except RuntimeError:
            pass  # the dialog is gone

    def _on_preview(self, generation: int, outcome: object) -> None:
        if generation != self._generation:
            return  # an older file's answer
        if isinstance(outcome, str):
            self.source_info.setText("")
            self._show_error(outcome)
        else:
            self.preview = outcome
            self.source_info.setText(self._source_words(outcome))
            if outcome.delimiter:
                self.delimiter_combo.setCurrentIndex(max(self.delimiter_combo.findData(outcome.delimiter), 0))
            self._fill_table()
            self.role_pickers.set_columns(self._columns(), outcome.suggested or Roles(time=""))
        self._update_state()
        self.previewed.emit()

    @staticmethod
    def _source_words(preview) -> str:
        files = f"{plural(len(preview.files), 'file')}" + (", hive folders" if preview.hive else "")
        zone = f"times in {preview.zone}, stored as UTC" if preview.zone else "times without a zone"
        return f"{preview.format.upper()}, {files}, {preview.bytes / 1e6:,.1f} MB; {zone}"

    def _fill_table(self) -> None:
        table = self.preview_table
        table.clear()
        if self.preview is None:
            table.setRowCount(0)
            table.setColumnCount(0)
            return
        rows: pd.DataFrame = self.preview.first_rows
        columns = self.preview.schema.columns
        table.setColumnCount(len(columns))
        table.setRowCount(1 + len(rows))
        table.setHorizontalHeaderLabels([c.name for c in columns])
        table.setVerticalHeaderLabels(["type"] + [str(i) for i in range(1, len(rows) + 1)])
        for index, column in enumerate(columns):
            combo = QComboBox()
            for typ in CHOOSABLE_TYPES:
                combo.addItem(typ, typ)
            combo.setCurrentIndex(combo.findData(column.ddb_type))
            combo.setToolTip(f"read as {self.preview.arrow_schema.field(column.name).type}; choose another type "
                             "to store it differently")
            combo.currentIndexChanged.connect(self._on_type_changed)
            table.setCellWidget(0, index, combo)
            for row, value in enumerate(rows[column.name].tolist(), 1):
                item = QTableWidgetItem("" if value is None or (isinstance(value, float) and pd.isna(value))
                                        else str(value))
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                table.setItem(row, index, item)
        table.resizeColumnsToContents()

    def _on_type_changed(self) -> None:
        self.role_pickers.set_columns(self._columns())
        self._update_state()

    def _columns(self) -> list[tuple[str, str]]:
        if self.preview is None:
            return []
        return [(c.name, self.preview_table.cellWidget(0, i).currentData())
                for i, c in enumerate(self.preview.schema.columns)]

    def types(self) -> dict[str, str]:
        """The types the user changed (column -> type), as ``import_source`` takes them."""
        if self.preview is None:
            return {}
        inferred = {c.name: c.ddb_type for c in self.preview.schema.columns}
        return {name: typ for name, typ in self._columns() if inferred[name] != typ}

    def roles(self) -> Roles:
        return self.role_pickers.roles()

    # ---- what stops the import ------------------------------------------------------------------
    def problems(self) -> list[str]:
        found: list[str] = []
        if self.preview is None:
            found.append("reading the first rows…" if self.previewing else "choose a file or a folder to import")
        else:
            try:
                self.roles().check(Schema(tuple(Column(n, t) for n, t in self._columns())), self.preview.label)
            except RoleError as exc:
                found.append(str(exc))
        if not NAME_RULE.fullmatch(self.name_edit.text()):
            found.append("name: 1-40 lower-case letters, digits and _, starting with a letter")
        return found

    def _update_state(self) -> None:
        name = self.name_edit.text()
        if name and name == self._just_imported:          # not "replaces ..." its own import
            self.name_hint.setText(f"Imported as {PREFIX}{name}; importing again replaces it.")
        elif name in self._existing:
            old = self._existing[name]
            self.name_hint.setText(f"Run it as {PREFIX}{name}; replaces the import of {old.rows:,} rows "
                                   f"once this one has succeeded.")
        else:
            self.name_hint.setText(f"Run it as {PREFIX}{name}." if NAME_RULE.fullmatch(name) else
                                   "Lower-case letters, digits and _, starting with a letter.")
        zoned = bool(self.preview is not None and self.preview.zone)
        self.zone_edit.setEnabled(not zoned and not self.running)
        if zoned:
            self.zone_edit.setPlaceholderText("the file's times carry their zone")
        self.delimiter_combo.setEnabled(not self.running and (self.preview is None or self.preview.format == "csv"))
        self.format_fields.setEnabled(not self.running and (self.preview is None or self.preview.format == "csv"))
        problems = self.problems()
        running = self.running
        self.import_button.setEnabled(not problems and not running)
        self.import_button.setToolTip("; ".join(problems))
        if not running and not self.error_label.text() and self.preview is not None:
            self.status_label.setText(problems[0] if problems else "")
        for widget in (self.source_edit, self.file_button, self.folder_button, self.preview_table,
                       self.role_pickers, self.name_edit, self.skip_check, self.builtin_button, self.trades_of):
            widget.setEnabled(not running)
        self.cancel_button.setVisible(running)
        self.close_button.setText("Close")

    # ---- the import, off the GUI thread ---------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._job.running

    def start_import(self) -> bool:
        problems = self.problems()
        if problems or self.running:
            self._show_error("; ".join(problems))
            return False
        path, name, roles, types = str(self.preview.path), self.name_edit.text(), self.roles(), self.types() or None
        delimiter = self.preview.delimiter or None
        zone = self.zone_edit.text().strip() if self.zone_edit.isEnabled() else ""
        skip = self.skip_check.isChecked()
        self._show_error("")
        self.skipped_list.setVisible(False)
        self.status_label.setText(f"Importing {self.preview.label}…")
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setValue(0)
        self.progress_bar.setVisible(True)
        text_format = self.preview.text
        quotes, exchange_zone, label = self.trades_of.quotes(), self.trades_of.zone(), self.preview.label

        def work(progress, cancel):
            clock = pair_before_import(quotes, roles, exchange_zone, label) if quotes else ""
            dataset = import_source(path, name, roles, types=types, delimiter=delimiter, zone=zone,
                                    skip_bad_rows=skip, progress=progress, cancel=cancel, text=text_format)
            return pair_trades(name, quotes, clock) if quotes else dataset

        self._job.start(work, (ImportSourceError, ImportFailed, ValueError, OSError))
        self._update_state()
        return True

    def _on_progress(self, done: int, total: int, message: str) -> None:
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(done)
        self.status_label.setText(message)

    def _on_finished(self, outcome: tuple) -> None:
        self._job.join()
        kind = outcome[0]
        if kind == "ok":
            dataset, seconds = outcome[1], outcome[2]
            paired = getattr(dataset, "trades", None)        # a pair: the trades import is what was read
            imported = paired or dataset
            self._just_imported = self.name_edit.text()
            self._refresh_existing()
            self._update_state()
            days = imported.all_days
            self.progress_bar.setValue(self.progress_bar.maximum())
            skipped = imported.manifest.get("skipped") or {}
            text = (f"Imported {imported.rows:,} rows over {plural(len(days), 'day')} ({days[0]} .. {days[-1]})"
                    + (f" and {len(imported.all_keys):,} keys" if imported.all_keys else "")
                    + f" in {seconds:,.2f} s as {dataset.info.name}: choose it as the scenario's dataset."
                    + (f" {dataset.info.notes}" if paired else ""))
            if skipped.get("count"):
                listed = skipped.get("rows") or []
                text += (f" Skipped {plural(skipped['count'], 'bad row')}"
                         + (f" (the first {len(listed)} listed below)." if len(listed) < skipped["count"] else
                            " (listed below)."))
                self.skipped_list.setPlainText("\n".join(listed))
                self.skipped_list.setVisible(True)
            self.status_label.setText(text)
            self.imported.emit(dataset.info.name)
        else:
            self._update_state()
            self.progress_bar.setValue(0)
            self.status_label.setText("Import cancelled: nothing was kept." if kind == "cancelled"
                                      else "Import failed: nothing was kept.")
            if kind == "error":
                self._show_error(outcome[1])
        if self._close_when_done:
            super().reject()

    def _show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.setVisible(bool(message))
        self.error_label.setStyleSheet(f"color: {current_theme().error};" if message else "")

    def cancel_import(self) -> None:
        if self.running:
            self._job.cancel()      # the import stops at its next chunk and reports back
            self.status_label.setText("Cancelling…")

    def open_builtin(self):
        """The CSV read against a built-in schema (TAQ, level 2, devices, api45)."""
        from app.imports.builtin_dialog import BuiltinImportDialog
        dialog = BuiltinImportDialog(self.parentWidget() or self, path=self.source_edit.text().strip() or None)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.imported.connect(self.imported)
        dialog.open()
        return dialog

    # ---- closing: never while the import thread still writes ------------------------------------
    def reject(self) -> None:
        if self.running:
            self.cancel_import()
            self._close_when_done = True
            return
        super().reject()

    def closeEvent(self, event) -> None:
        if self.running:
            self.reject()
            event.ignore()
            return
        super().closeEvent(event)
