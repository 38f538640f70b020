"""TradesOfField: "these rows are the trades of…" one of the quotes already imported, and the zone of the
exchange's clock, for File → Import data… (the window's ``tickbench import --trades-of QUOTES
--exchange-zone ZONE``). The quotes offered are the caller's to find; here only the choice."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLineEdit, QWidget

NOT_PAIRED = "— (not paired: a dataset of its own)"


class TradesOfField(QWidget):
    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.quotes_combo = QComboBox(objectName="trades_of")
        self.quotes_combo.setToolTip("Pair these trades with quotes imported before (their key, bid and ask and "
                                     "quote sizes named): the pair runs the tick pack (as-of join, VWAP, snapshot, "
                                     "year-high bid, rolling mid)")
        self.quotes_combo.setMinimumContentsLength(18)
        self.zone_edit = QLineEdit(objectName="exchange_zone")
        self.zone_edit.setPlaceholderText("exchange's zone (empty: the quotes' own offset)")
        self.zone_edit.setToolTip("The zone of the exchange's days and times of day, e.g. America/New_York; "
                                  "needed when the quotes carry several UTC offsets")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.quotes_combo, 1)
        row.addWidget(self.zone_edit, 1)
        self.quotes_combo.currentIndexChanged.connect(self._on_change)
        self.zone_edit.textChanged.connect(self._on_change)
        self.set_quotes([])

    def set_quotes(self, names: list[str]) -> None:
        """The quotes imports that can take trades (their registry names); the choice kept if still there."""
        before = self.quotes_combo.currentData()
        self.quotes_combo.blockSignals(True)
        self.quotes_combo.clear()
        self.quotes_combo.addItem(NOT_PAIRED, "")
        for name in names:
            self.quotes_combo.addItem(name, name)
        self.quotes_combo.setCurrentIndex(max(self.quotes_combo.findData(before), 0))
        self.quotes_combo.blockSignals(False)
        self._on_change()

    def quotes(self) -> str:
        return self.quotes_combo.currentData() or ""

    def zone(self) -> str:
        return self.zone_edit.text().strip() if self.quotes() else ""

    def _on_change(self) -> None:
        self.zone_edit.setEnabled(bool(self.quotes()))
        self.changed.emit()
