"""AnswersDialog: one query's answers from several runs side by side, so a differing answer can be
read, not just flagged. Each answer is the preview recorded with the run (its size and first rows,
normalised as ``workloads.queries.answers`` compares them)."""
from __future__ import annotations

import html
from typing import Any

from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHBoxLayout, QHeaderView, QLabel, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from widgets.common.theme import current_theme


class AnswersDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Answers")
        self.resize(900, 420)
        self.heading = QLabel(wordWrap=True)
        self.columns = QHBoxLayout()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addLayout(self.columns, 1)
        layout.addWidget(buttons)
        self.tables: dict[str, QTableWidget] = {}

    def show_answers(self, query: str, description: str, answers: dict[str, dict[str, Any]],
                     fingerprints: dict[str, str], reference: str | None) -> None:
        """``answers``: label -> preview (rows, columns, head); ``fingerprints``: label -> fingerprint;
        the answers that differ from ``reference``'s get a red heading."""
        while self.columns.count():
            item = self.columns.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.tables.clear()
        theme = current_theme()
        self.heading.setText(f"<b>{html.escape(query)}</b> · {html.escape(description)}")
        expected = fingerprints.get(reference or "", "")
        for label, preview in answers.items():
            differs = bool(expected) and fingerprints.get(label, "") != expected
            box = QWidget()
            column = QVBoxLayout(box)
            column.setContentsMargins(0, 0, 0, 0)
            colour = theme.error if differs else theme.text
            verdict = "differs" if differs else ("reference" if label == reference else "same")
            title = QLabel(f"<span style='color:{colour}'><b>{html.escape(label)}</b> · {verdict} · "
                           f"{preview.get('rows', 0):,} rows · {html.escape(fingerprints.get(label, '')[:8])}</span>")
            title.setWordWrap(True)
            column.addWidget(title)
            column.addWidget(self._table(preview), 1)
            self.columns.addWidget(box, 1)
            self.tables[label] = column.itemAt(1).widget()

    @staticmethod
    def _table(preview: dict[str, Any]) -> QTableWidget:
        head = preview.get("head", [])
        columns = preview.get("columns", [])
        table = QTableWidget(len(head), len(columns))
        table.setHorizontalHeaderLabels([str(c) for c in columns])
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        for r, row in enumerate(head):
            for c, value in enumerate(row):
                table.setItem(r, c, QTableWidgetItem(str(value)))
        return table
