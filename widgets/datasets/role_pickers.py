"""RolePickers: which of a dataset's columns is the time, the key, the price(s), the size and the quote sizes.

Shared by File → Import data… and the "Existing table…" dialog. Each combo lists only the columns
whose type can play that role (``workloads.datasets.roles``), so a type changed in the import's
preview refills them; a choice is kept while its column still fits. ``roles()`` is a plain
``Roles``; ``Roles.check`` stays the one judge of what is valid.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QLabel, QWidget

from workloads.datasets.roles import NUMERIC_TYPES, ROLE_HELP, TIME_OF_DAY_TYPES, TIMESTAMP_TYPES, Roles
from workloads.datasets.schema import STRING_TYPES

NONE = "—"
KEY_TYPES = frozenset(STRING_TYPES | {"SHORT", "INT", "LONG"})
TIME_TYPES = frozenset(TIMESTAMP_TYPES | {"DATE"})


class RolePickers(QWidget):
    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("role_pickers")
        self._types: dict[str, str] = {}
        self.time_combo = self._combo("time_combo", ROLE_HELP["time"])
        self.time_of_day_combo = self._combo("time_of_day_combo", "with a DATE time column: its time-of-day column")
        self.key_combo = self._combo("key_combo", ROLE_HELP["key"])
        self.price_combo = self._combo("price_combo", ROLE_HELP["price"] + "; for quotes the bid")
        self.ask_combo = self._combo("ask_combo", "for quotes: the ask beside the bid (— for one price)")
        self.size_combo = self._combo("size_combo", ROLE_HELP["size"])
        self.bid_size_combo = self._combo("bid_size_combo", "for quotes: the size quoted at the bid ("
                                          + ROLE_HELP["quote-size"] + ")")
        self.ask_size_combo = self._combo("ask_size_combo", "for quotes: the size quoted at the ask, beside "
                                                            "the bid's")
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        for row, (label, left, right_label, right) in enumerate((
                ("Time:", self.time_combo, "time of day:", self.time_of_day_combo),
                ("Key:", self.key_combo, "size:", self.size_combo),
                ("Price:", self.price_combo, "ask:", self.ask_combo),
                ("Bid size:", self.bid_size_combo, "ask size:", self.ask_size_combo))):
            grid.addWidget(QLabel(label), row, 0)
            grid.addWidget(left, row, 1)
            grid.addWidget(QLabel(right_label), row, 2)
            grid.addWidget(right, row, 3)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)

    def _combo(self, name: str, tip: str) -> QComboBox:
        combo = QComboBox(objectName=name)
        combo.setToolTip(tip)
        combo.setMinimumContentsLength(10)
        combo.currentIndexChanged.connect(self._on_change)
        return combo

    # ---- columns and roles ----------------------------------------------------------------------
    def set_columns(self, columns: list[tuple[str, str]], roles: Roles | None = None) -> None:
        """The columns (name, type) to choose from; ``roles`` chosen where they fit (else kept)."""
        keep = roles or self.roles()
        self._types = dict(columns)
        self._fill(keep)

    def set_roles(self, roles: Roles) -> None:
        self._fill(roles)

    def roles(self) -> Roles:
        bid, ask = self.price_combo.currentData() or "", self.ask_combo.currentData() or ""
        price = (bid, ask) if bid and ask else (bid,) if bid else ()
        time = self.time_combo.currentData() or ""
        tod = (self.time_of_day_combo.currentData() or "") if self._types.get(time) == "DATE" else ""
        sizes = (self.bid_size_combo.currentData() or "", self.ask_size_combo.currentData() or "")
        return Roles(time=time, time_of_day=tod, key=self.key_combo.currentData() or "",
                     price=price, size=self.size_combo.currentData() or "",
                     quote_size=sizes if len(price) == 2 and any(sizes) else ())

    def _fill(self, roles: Roles) -> None:
        bid = roles.price[0] if roles.price else ""
        ask = roles.price[1] if len(roles.price) > 1 else ""
        bid_size, ask_size = (*roles.quote_size, "", "")[:2]
        self.blockSignals(True)
        for combo, allowed, chosen, optional in (
                (self.time_combo, TIME_TYPES, roles.time, False),
                (self.time_of_day_combo, TIME_OF_DAY_TYPES, roles.time_of_day, False),
                (self.key_combo, KEY_TYPES, roles.key, True),
                (self.price_combo, NUMERIC_TYPES, bid, True),
                (self.ask_combo, NUMERIC_TYPES, ask, True),
                (self.size_combo, NUMERIC_TYPES, roles.size, True),
                (self.bid_size_combo, NUMERIC_TYPES, bid_size, True),
                (self.ask_size_combo, NUMERIC_TYPES, ask_size, True)):
            combo.blockSignals(True)
            combo.clear()
            if optional:
                combo.addItem(NONE, "")
            for name, typ in self._types.items():
                if typ in allowed:
                    combo.addItem(f"{name}  ({typ})", name)
            if not combo.count():
                combo.addItem("no fitting column", "")
            combo.setCurrentIndex(max(combo.findData(chosen), 0))
            combo.blockSignals(False)
        self.blockSignals(False)
        self._on_change()

    def _on_change(self) -> None:
        dated = self._types.get(self.time_combo.currentData() or "") == "DATE"
        self.time_of_day_combo.setEnabled(dated)
        self.ask_combo.setEnabled(bool(self.price_combo.currentData()))
        quotes = bool(self.price_combo.currentData() and self.ask_combo.currentData())
        self.bid_size_combo.setEnabled(quotes)
        self.ask_size_combo.setEnabled(quotes)
        self.changed.emit()
