"""RunHistoryView: the table of past runs, filterable, multi-selectable, with Open/Compare/Delete.
A run whose folder is damaged is a row like any other, its status "damaged: <file>: <reason>" in the
error colour (it can be deleted; opening it says what is damaged).

It never touches the results database: the app feeds it a list of plain dicts and acts on its
signals. Numbers are displayed rounded but sorted by their real values.
"""
from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from PySide6.QtCore import (QAbstractTableModel, QEvent, QTimer, QItemSelectionModel, QModelIndex,
                            QSortFilterProxyModel, Qt, Signal)
from PySide6.QtGui import QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QPushButton, QTableView, QVBoxLayout, QWidget)

from widgets.common.plain_text import tooltip
from widgets.common.theme import current_theme
from workloads.text import plural

# (key in the row dicts, header)
COLUMNS: tuple[tuple[str, str], ...] = (     # what ran and how fast first: they fit a laptop's width
    ("name", "Run"),
    ("workload", "Workload"),
    ("target", "Target"),
    ("users", "Users"),
    ("status", "Status"),
    ("rows_per_s", "Rows/s"),
    ("mb_per_s", "MB/s"),
    ("p50_ms", "p50 (ms)"),
    ("p99_ms", "p99 (ms)"),
    ("started_at", "Started"),
    ("headline_label", "Figures of step"),
    ("dataset", "Dataset"),
    ("cache", "Cache"),
    ("process", "Process"),      # forked or spawned users, " · plain" for a plain process
)
_NUMERIC = {"users", "rows_per_s", "mb_per_s", "p50_ms", "p99_ms"}
_STEP_FIGURES = {"rows_per_s", "mb_per_s", "p50_ms", "p99_ms"}   # figures of the headline step
_BAD_STATUS = {"failed", "aborted", "cancelled"}
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
PROCESS_TIP = ("How the run's users started: forked from a preloaded server, or spawned (a fresh interpreter "
               "each).\n\"plain\": glibc's and pandas' own defaults, not a long-lived client's settled ones.")
def _column(key: str) -> int:
    return [k for k, _ in COLUMNS].index(key)


# the share of the table's width a long text column may take at first (the user may widen it)
_CAPPED_SHARE = {"name": 0.24, "headline_label": 0.09, "started_at": 0.12, "workload": 0.10}


def _bad_status(status: Any) -> bool:
    """Failed, aborted, cancelled, or a damaged run folder ("damaged: <file>: <reason>")."""
    return status in _BAD_STATUS or str(status or "").startswith("damaged")


def _display(key: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if key == "started_at" and isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if key == "rows_per_s":
        v = float(value)
        for scale, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
            if abs(v) >= scale:
                return f"{v / scale:.3g}{suffix}"
        return f"{v:.3g}"
    if key in ("mb_per_s", "p50_ms", "p99_ms"):
        v = float(value)
        return f"{v:.1f}" if abs(v) >= 10 else f"{v:.3g}"
    if key == "users" and isinstance(value, (list, tuple)):
        return ", ".join(str(u) for u in value)   # a sweep
    return str(value)


def _sort_key(key: str, value: Any):
    if value is None:
        return float("-inf") if key in _NUMERIC else ""
    if key in _NUMERIC:
        if isinstance(value, (list, tuple)):
            return float(max(value)) if value else float("-inf")
        try:
            return float(value)
        except (TypeError, ValueError):
            return float("-inf")
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


class RunHistoryModel(QAbstractTableModel):
    """Rows are plain dicts; 'scenario' is accepted for 'workload'."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[dict] = []

    def set_rows(self, rows: list[dict]) -> None:
        clean = []
        for i, row in enumerate(rows):
            if "run_id" not in row:
                raise ValueError(f"history row {i} has no run_id: {sorted(row)}")
            row = dict(row)
            if "workload" not in row and "scenario" in row:
                row["workload"] = row["scenario"]
            clean.append(row)
        self.beginResetModel()
        self._rows = clean
        self.endResetModel()

    def row_dict(self, row: int) -> dict:
        return dict(self._rows[row])

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][1]
        return None

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        key = COLUMNS[index.column()][0]
        row = self._rows[index.row()]
        value = row.get(key)
        if role == Qt.ItemDataRole.DisplayRole:
            text = _display(key, value)
            return text + " ⚠" if key == "headline_label" and text and row.get("headline_short") else text
        if role == SORT_ROLE:
            return _sort_key(key, value)
        if role == Qt.ItemDataRole.UserRole:
            return row["run_id"]
        if role == Qt.ItemDataRole.TextAlignmentRole and key in _NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and key == "status" and _bad_status(value):
            return QColor(current_theme().error)
        if role == Qt.ItemDataRole.ToolTipRole and key == "name":
            return tooltip(f"{row.get('name') or ''}\nrun {row['run_id']}")
        if role == Qt.ItemDataRole.ToolTipRole and key == "dataset" and row.get("size"):
            return tooltip(f"{row.get('dataset') or ''}: {row['size']} (as laid out for this run)")
        if role == Qt.ItemDataRole.ToolTipRole and key == "process" and value:
            return PROCESS_TIP
        if role == Qt.ItemDataRole.ToolTipRole and key == "status" and row.get("message"):
            return tooltip(str(row["message"]))
        if role == Qt.ItemDataRole.ToolTipRole and (key in _STEP_FIGURES or key == "headline_label") \
                and row.get("headline_label"):
            tip = f"Figures of step {row['headline_label']}, the run's fastest step long enough to measure"
            if row.get("headline_short"):
                tip = (f"Figures of step {row['headline_label']}: every step of this run was too short "
                       "to measure; give steps more operations or a duration")
            return tooltip(tip)
        return None


class _FilterProxy(QSortFilterProxyModel):
    """Every word of the filter must appear somewhere in the row (any column, any case)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._words: list[str] = []
        self.setSortRole(SORT_ROLE)

    def set_filter_text(self, text: str) -> None:
        if hasattr(self, "beginFilterChange"):          # Qt >= 6.10
            self.beginFilterChange()
            self._words = text.lower().split()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self._words = text.lower().split()
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex) -> bool:
        if not self._words:
            return True
        model = self.sourceModel()
        cells = [str(model.data(model.index(source_row, c, source_parent)) or "") for c in range(model.columnCount())]
        cells.append(str(model.data(model.index(source_row, 0, source_parent), Qt.ItemDataRole.UserRole) or ""))
        text = " ".join(cells).lower()          # the run id too, though it shows only in a tooltip
        return all(word in text for word in self._words)


class RunHistoryView(QWidget):
    """Table of runs with a filter box and Open / Compare / Delete buttons."""

    open_requested = Signal(str)         # run_id
    compare_requested = Signal(list)     # run_ids, two or more
    delete_requested = Signal(list)      # run_ids, one or more
    selection_changed = Signal(list)     # run_ids now selected

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = RunHistoryModel(self)
        self._columns_sized = False
        self.proxy = _FilterProxy(self)
        self.proxy.setSourceModel(self.model)

        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter runs: words from any column, e.g. duckdb completed")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self.proxy.set_filter_text)
        self.filter_edit.textChanged.connect(lambda _t: self._update_count())

        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(_column("started_at"), Qt.SortOrder.DescendingOrder)   # newest first
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.doubleClicked.connect(self._on_double_click)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)

        self.open_button = QPushButton("Open")
        self.compare_button = QPushButton("Compare")
        self.delete_button = QPushButton("Delete")
        self.open_button.setToolTip("Show the selected run (or double-click a row)")
        self.compare_button.setToolTip("Compare two or more selected runs")
        self.delete_button.setToolTip("Delete the selected runs from the results file")
        self.open_button.clicked.connect(self._open)
        self.compare_button.clicked.connect(self._compare)
        self.delete_button.clicked.connect(self._delete)
        QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.table, self._delete)
        self.count_label = QLabel()
        self.count_label.setProperty("role", "muted")

        top = QHBoxLayout()
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.count_label)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for b in (self.open_button, self.compare_button, self.delete_button):
            buttons.addWidget(b)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        self._on_selection()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.ApplicationFontChange) and self.model.rowCount():
            # larger text (demo mode): the columns follow, once the table has its new font too
            QTimer.singleShot(0, self, self._fit_columns)       # with its receiver: dropped if it is gone

    def _fit_columns(self) -> None:
        """Columns as wide as their contents, but the long texts (a report card's run name, a
        step's label) capped so that the figures stay in view on a laptop's screen; the capped
        cells are elided and their tooltip gives them whole."""
        self.table.resizeColumnsToContents()
        header = self.table.horizontalHeader()
        keys = [k for k, _ in COLUMNS]
        width = max(self.table.viewport().width(), 600)
        for key, share in _CAPPED_SHARE.items():
            cap = int(width * share)
            if header.sectionSize(keys.index(key)) > cap:
                header.resizeSection(keys.index(key), cap)

    # ---- data -------------------------------------------------------------------------------
    def set_rows(self, rows: list[dict]) -> None:
        """Show these runs; the selection is kept for runs still present."""
        selected = set(self.selected_run_ids())
        self.model.set_rows(rows)
        if not self._columns_sized and rows:
            # once only: later fills must not undo widths the user set or restore_state restored
            self._fit_columns()
            self._columns_sized = True
        self.select_run_ids([r["run_id"] for r in rows if r["run_id"] in selected])
        self._update_count()

    def visible_run_ids(self) -> list[str]:
        """Run ids the filter lets through, in displayed order."""
        return [self.proxy.index(r, 0).data(Qt.ItemDataRole.UserRole) for r in range(self.proxy.rowCount())]

    def selected_run_ids(self) -> list[str]:
        rows = sorted(i.row() for i in self.table.selectionModel().selectedRows())
        return [self.proxy.index(r, 0).data(Qt.ItemDataRole.UserRole) for r in rows]

    def select_run_ids(self, run_ids: list[str]) -> None:
        wanted = set(run_ids)
        sel = self.table.selectionModel()
        sel.clearSelection()
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for r in range(self.proxy.rowCount()):
            index = self.proxy.index(r, 0)
            if index.data(Qt.ItemDataRole.UserRole) in wanted:
                sel.select(index, flags)

    def set_filter_text(self, text: str) -> None:
        self.filter_edit.setText(text)

    # ---- actions ----------------------------------------------------------------------------
    def _on_selection(self, *_args) -> None:
        ids = self.selected_run_ids()
        self.open_button.setEnabled(len(ids) == 1)
        self.compare_button.setEnabled(len(ids) >= 2)
        self.delete_button.setEnabled(len(ids) >= 1)
        self.selection_changed.emit(ids)

    def _on_double_click(self, index: QModelIndex) -> None:
        self.open_requested.emit(index.siblingAtColumn(0).data(Qt.ItemDataRole.UserRole))

    def _open(self) -> None:
        ids = self.selected_run_ids()
        if len(ids) == 1:
            self.open_requested.emit(ids[0])

    def _compare(self) -> None:
        ids = self.selected_run_ids()
        if len(ids) >= 2:
            self.compare_requested.emit(ids)

    def _delete(self) -> None:
        ids = self.selected_run_ids()
        if ids:
            self.delete_requested.emit(ids)

    def _update_count(self) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        self.count_label.setText(f"{shown} of {plural(total, 'run')}" if shown != total else plural(total, "run"))

    # ---- state ------------------------------------------------------------------------------
    def save_state(self) -> dict:
        header = self.table.horizontalHeader()
        return {
            "version": 1,
            "column_widths": {key: header.sectionSize(i) for i, (key, _) in enumerate(COLUMNS)},
            "sort_column": COLUMNS[header.sortIndicatorSection()][0]
            if 0 <= header.sortIndicatorSection() < len(COLUMNS) else "started_at",
            "sort_order": "ascending" if header.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
            else "descending",
            "filter": self.filter_edit.text(),
        }

    def restore_state(self, state: dict) -> None:
        if not isinstance(state, dict):
            return
        keys = [k for k, _ in COLUMNS]
        header = self.table.horizontalHeader()
        widths = state.get("column_widths", {})
        if "scenario" in widths and "workload" not in widths:   # renamed column
            widths["workload"] = widths.pop("scenario")
        for key, width in widths.items():
            if key in keys and isinstance(width, int) and width > 0:
                header.resizeSection(keys.index(key), width)
                self._columns_sized = True
        column = state.get("sort_column")
        if column in keys:
            order = (Qt.SortOrder.AscendingOrder if state.get("sort_order") == "ascending"
                     else Qt.SortOrder.DescendingOrder)
            self.table.sortByColumn(keys.index(column), order)
        if isinstance(state.get("filter"), str):
            self.filter_edit.setText(state["filter"])
