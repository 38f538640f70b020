"""BuiltinImportDialog: read a user's CSV against one of the built-in schemas (TAQ, level 2, devices,
api45), opened from File → Import data… ("Read against a built-in schema…"); a file in its own
schema is ``app.imports.dialog.ImportDialog``'s.

The user picks a file, the built-in schema it holds and a name; the column table is pre-filled
from the CSV header (same matching rule as the reader) and lets them say which CSV column feeds a
schema column whose name differs. The import runs on a plain thread (it is I/O and pyarrow work:
the GUI stays live); progress and the outcome come back as queued Qt signals. On success the
dialog emits ``imported(registry_name)`` ("imp_<name>") and stays open showing what was imported.
A malformed CSV's message (file, line, column) is shown as is; nothing was changed then.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QRegularExpression, Qt, Signal
from PySide6.QtGui import QColor, QRegularExpressionValidator
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QGroupBox,
                               QHBoxLayout, QHeaderView, QLabel, QLineEdit, QProgressBar, QPushButton,
                               QTableWidget, QTableWidgetItem, QVBoxLayout)

from app.imports.job import ImportJob
from widgets.common.theme import current_theme
from workloads.datasets import DATASETS
from workloads.datasets.csv_parse import CsvFormatError
from workloads.datasets.csv_import import ImportFailed, csv_header, import_csv, suggest_mapping
from workloads.datasets.imported import NAME_RULE, PREFIX, imports_dir, list_imports, suggest_name

COLUMN, TYPE, SOURCE = range(3)
NOT_IN_FILE = "— not in the file —"


class BuiltinImportDialog(QDialog):
    imported = Signal(str)              # registry name of the dataset just imported: "imp_<name>"

    def __init__(self, parent=None, path: str | Path | None = None):
        super().__init__(parent)
        self.setObjectName("import_builtin_dialog")
        self.setWindowTitle("Import CSV in a built-in schema")
        self.setMinimumWidth(620)
        self.resize(720, 680)             # room for the columns and a two-line outcome under them
        self._header: list[str] = []
        self._header_of = ""                 # the file text the header was read from
        self._job = ImportJob(self)
        self._name_typed = False
        self._close_when_done = False

        intro = QLabel("Benchmark your own data: the CSV is read against a built-in schema and stored as "
                       f"Parquet, one file per day sorted by time, in {imports_dir()}.", wordWrap=True)
        self.file_edit = QLineEdit(objectName="file_edit")
        self.file_edit.setPlaceholderText("a CSV file with a header row")
        self.browse_button = QPushButton("Browse…", objectName="browse_button")
        file_row = QHBoxLayout()
        file_row.addWidget(self.file_edit, 1)
        file_row.addWidget(self.browse_button)
        self.base_combo = QComboBox(objectName="base_combo")
        for key, dataset in DATASETS.items():
            self.base_combo.addItem(f"{dataset.info.title} ({key})", key)
        self.name_edit = QLineEdit(objectName="name_edit")
        self.name_edit.setValidator(QRegularExpressionValidator(QRegularExpression(NAME_RULE.pattern), self))
        self.name_edit.setPlaceholderText("e.g. myquotes")
        self.name_hint = QLabel(wordWrap=True, objectName="name_hint")
        form = QFormLayout()
        form.addRow("File:", file_row)
        form.addRow("Schema:", self.base_combo)
        form.addRow("Name:", self.name_edit)
        form.addRow("", self.name_hint)

        columns_box = QGroupBox("Columns")
        self.columns_table = QTableWidget(0, 3, objectName="columns_table")
        self.columns_table.setHorizontalHeaderLabels(["Column", "Type", "Read from CSV column"])
        header = self.columns_table.horizontalHeader()
        header.setSectionResizeMode(COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(TYPE, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(SOURCE, QHeaderView.ResizeMode.Stretch)
        self.columns_table.verticalHeader().setVisible(False)
        self.columns_table.setMinimumHeight(160)
        self.columns_hint = QLabel(wordWrap=True, objectName="columns_hint")
        columns_layout = QVBoxLayout(columns_box)
        columns_layout.addWidget(self.columns_table)
        columns_layout.addWidget(self.columns_hint)

        self.progress_bar = QProgressBar(objectName="import_progress")
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setVisible(False)      # shown once an import starts
        self.status_label = QLabel(wordWrap=True, objectName="import_status")
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label = QLabel(wordWrap=True, objectName="import_error")
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox()
        self.import_button = self.buttons.addButton("Import", QDialogButtonBox.ButtonRole.AcceptRole)
        self.import_button.setObjectName("import_button")
        self.close_button = self.buttons.addButton("Close", QDialogButtonBox.ButtonRole.RejectRole)
        self.close_button.setObjectName("close_button")

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(columns_box, 1)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.status_label)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)

        self.browse_button.clicked.connect(self._browse)
        self.file_edit.editingFinished.connect(self._load_header)
        self.base_combo.currentIndexChanged.connect(self._fill_columns)
        self.name_edit.textEdited.connect(self._on_name_typed)
        self.name_edit.textChanged.connect(self._update_state)
        self.import_button.clicked.connect(self.start_import)
        self.close_button.clicked.connect(self.reject)
        self._job.progressed.connect(self._on_progress)
        self._job.finished.connect(self._on_finished)
        if path:
            self.set_file(path)
        self._update_state()

    # ---- its height ------------------------------------------------------------------------------
    def event(self, event) -> bool:
        handled = super().event(event)
        if event.type() in (QEvent.Type.LayoutRequest, QEvent.Type.Resize):
            self._hold_height()
        return handled

    def _hold_height(self) -> None:
        """A dialog's minimum ignores how many lines its wrapped labels take at its width: shorter
        than that, the columns line was drawn over the table. It keeps the height its lines need."""
        needed = self.layout().totalHeightForWidth(self.width())
        if needed > 0 and needed != self.minimumHeight():
            self.setMinimumHeight(needed)

    # ---- inputs ---------------------------------------------------------------------------------
    def set_file(self, path: str | Path) -> None:
        self.file_edit.setText(str(path))
        self._load_header(force=True)

    def set_base(self, base: str) -> None:
        self.base_combo.setCurrentIndex(max(self.base_combo.findData(base), 0))

    def set_name(self, name: str) -> None:
        self._name_typed = True
        self.name_edit.setText(name)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import CSV", self.file_edit.text() or str(Path.home()),
                                              "CSV files (*.csv *.txt);;All files (*)")
        if path:
            self.set_file(path)

    def _on_name_typed(self) -> None:
        self._name_typed = True

    def _load_header(self, force: bool = False) -> None:
        text = self.file_edit.text().strip()
        if text == self._header_of and not force:
            return  # editingFinished also fires on focus loss: keep the user's column choices
        self._header_of = text
        self._show_error("")
        self._header = []
        if text:
            try:
                self._header = csv_header(text)
            except (OSError, CsvFormatError, UnicodeDecodeError) as exc:
                self._show_error(f"{Path(text).name}: {exc.strerror}" if isinstance(exc, OSError) and exc.strerror
                                 else str(exc))
            if not self._name_typed:
                self.name_edit.setText(suggest_name(text))
        self._fill_columns()

    def _fill_columns(self) -> None:
        schema = DATASETS[self.base_combo.currentData()].info.schema
        suggested = suggest_mapping(self._header, schema)
        self.columns_table.setRowCount(len(schema.columns))
        for row, column in enumerate(schema.columns):
            for index, text in ((COLUMN, column.name), (TYPE, column.ddb_type)):
                item = QTableWidgetItem(text)
                item.setFlags(Qt.ItemFlag.ItemIsEnabled)
                self.columns_table.setItem(row, index, item)
            combo = QComboBox()
            combo.addItem(NOT_IN_FILE, None)
            for name in self._header:
                combo.addItem(name, name)
            combo.setCurrentIndex(max(combo.findData(suggested[column.name]), 0))
            combo.currentIndexChanged.connect(self._update_state)
            self.columns_table.setCellWidget(row, SOURCE, combo)
        self._update_state()

    def _mark_missing(self) -> None:
        """Schema columns without a CSV column in the error colour, once a file is chosen."""
        error = QColor(current_theme().error)
        for row in range(self.columns_table.rowCount()):
            missing = bool(self._header) and self._source_combo(row).currentData() is None
            self.columns_table.item(row, COLUMN).setData(Qt.ItemDataRole.ForegroundRole, error if missing else None)

    def _source_combo(self, row: int) -> QComboBox:
        return self.columns_table.cellWidget(row, SOURCE)

    def mapping(self) -> dict[str, str]:
        """CSV column -> schema column for the columns whose names differ (as ``import_csv`` takes it)."""
        out = {}
        for row in range(self.columns_table.rowCount()):
            column = self.columns_table.item(row, COLUMN).text()
            source = self._source_combo(row).currentData()
            if source is not None and source != column:
                out[source] = column
        return out

    def problems(self) -> list[str]:
        """What stops the import: no file, a bad name, a column without a source, a source used twice."""
        found: list[str] = []
        if not self._header:
            found.append("choose a CSV file with a header row")
        name = self.name_edit.text()
        if not NAME_RULE.fullmatch(name):
            found.append("name: 1-40 lower-case letters, digits and _, starting with a letter")
        used: dict[str, list[str]] = {}
        missing = []
        for row in range(self.columns_table.rowCount()):
            column = self.columns_table.item(row, COLUMN).text()
            source = self._source_combo(row).currentData()
            if source is None:
                missing.append(column)
            else:
                used.setdefault(source, []).append(column)
        if self._header and missing:
            found.append(f"choose the CSV column for {', '.join(missing)}")
        for source, columns in used.items():
            if len(columns) > 1:
                found.append(f"CSV column {source!r} is chosen for {' and '.join(columns)}")
        return found

    def _update_state(self) -> None:
        name = self.name_edit.text()
        existing = {d.name: d for d in list_imports()} if NAME_RULE.fullmatch(name) else {}
        if name in existing:
            old = existing[name]
            self.name_hint.setText(f"Run it as {PREFIX}{name}. Replaces the existing import ({old.rows:,} rows "
                                   f"from {Path(old.source['path']).name}) once this one has succeeded.")
        else:
            self.name_hint.setText(f"Run it as {PREFIX}{name}." if NAME_RULE.fullmatch(name) else
                                   "Lower-case letters, digits and _, starting with a letter.")
        problems = self.problems()
        rows = self.columns_table.rowCount()
        if self._header:
            matched = sum(self._source_combo(r).currentData() is not None for r in range(rows))
            self.columns_hint.setText(f"{matched} of {rows} columns found in the header. "
                                      + ("; ".join(p[0].upper() + p[1:] for p in problems
                                                   if p.startswith(("choose the", "CSV column"))) or ""))
        else:
            self.columns_hint.setText("The columns of the chosen schema; pick a file to match them.")
        self._mark_missing()
        running = self.running
        self.import_button.setEnabled(not problems and not running)
        self.import_button.setToolTip("; ".join(problems))
        for widget in (self.file_edit, self.browse_button, self.base_combo, self.name_edit, self.columns_table):
            widget.setEnabled(not running)
        self.close_button.setText("Cancel" if running else "Close")

    # ---- the import, off the GUI thread ---------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._job.running

    def start_import(self) -> bool:
        problems = self.problems()
        if problems or self.running:
            self._show_error("; ".join(problems))
            return False
        path, base, name, mapping = (self.file_edit.text().strip(), self.base_combo.currentData(),
                                     self.name_edit.text(), self.mapping())
        self._show_error("")
        self.status_label.setText(f"Importing {Path(path).name}…")
        self.progress_bar.setValue(0)
        self.progress_bar.setVisible(True)
        self._job.start(lambda progress, cancel: import_csv(path, base, name, mapping or None, progress=progress,
                                                            cancel=cancel),
                        (CsvFormatError, ImportFailed, ValueError, OSError))
        self._update_state()
        return True

    def _on_progress(self, done: int, total: int, message: str) -> None:
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(done)
        self.status_label.setText(message)

    def _on_finished(self, outcome: tuple) -> None:
        self._job.join()
        self._update_state()
        kind = outcome[0]
        if kind == "ok":
            dataset, seconds = outcome[1], outcome[2]
            days = dataset.all_days
            self.progress_bar.setValue(self.progress_bar.maximum())
            self.status_label.setText(
                f"Imported {dataset.rows:,} rows over {len(days)} day{'s' if len(days) != 1 else ''} "
                f"({days[0]} .. {days[-1]}) and {len(dataset.all_keys):,} keys in {seconds:,.2f} s "
                f"as {dataset.info.name}: choose it as the scenario's dataset.")
            self.imported.emit(dataset.info.name)
        else:
            self.progress_bar.setValue(0)
            self.status_label.setText("Import cancelled: nothing was changed." if kind == "cancelled"
                                      else "Import failed: nothing was changed.")
            if kind == "error":
                self._show_error(outcome[1])
        if self._close_when_done:
            super().reject()

    def _show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.setStyleSheet(f"color: {current_theme().error};" if message else "")

    # ---- closing: never while the import thread still writes ------------------------------------
    def reject(self) -> None:
        if self.running:
            self._job.cancel()      # the import stops at its next chunk and reports back
            self._close_when_done = True
            self.status_label.setText("Cancelling…")
            return
        super().reject()

    def closeEvent(self, event) -> None:
        if self.running:
            self.reject()
            event.ignore()
            return
        super().closeEvent(event)
