"""A read-only table of figures, one line a row: columns sized to their contents, one column (a
long name) taking the rest and shortened in the middle when narrow (in full on hover, where the
caller sets it). The Compare tab's tables share it."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QTableWidget


def figure_table(columns: tuple[str, ...] | list[str], stretch: int, name: str = "") -> QTableWidget:
    table = QTableWidget(0, len(columns), objectName=name)
    table.setHorizontalHeaderLabels(list(columns))
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    table.setWordWrap(False)
    table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    table.verticalHeader().hide()
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    return table
