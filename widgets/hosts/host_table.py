"""HostTable: a Dask cluster's workers as load-generating hosts, one row each: address, name, the
users placed there (spin boxes when pinned), live rows/s, cores, memory, clock offset, versions.
It shows what it is given; the Load generators panel decides what that is.

Users and rows/s come right after the host: in a dock too narrow for every column they are what a
run needs in sight; the environment's columns scroll into view."""
from __future__ import annotations

import re

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QSpinBox, QTableWidget, QTableWidgetItem

from widgets.common.theme import current_theme
from widgets.common.wheel_guard import guard_widget
from workloads.distributed.cluster import HostView

COLUMNS = ("Host", "Name", "Users", "Rows/s", "Cores", "Memory", "Clock offset", "Versions")
HOST, NAME, USERS, ROWS, CORES, MEMORY, CLOCK, VERSIONS = range(len(COLUMNS))
NUMERIC = (CORES, MEMORY, CLOCK, USERS, ROWS)
MAX_PINNED = 9_999
NO_FIGURE = "–"


def memory_text(nbytes: int) -> str:
    if nbytes <= 0:
        return "no limit"             # a Dask worker started with --memory-limit 0
    for unit in ("B", "KB", "MB", "GB"):
        if nbytes < 1000:
            return f"{nbytes:,.0f} {unit}" if unit == "B" else f"{nbytes:,.1f} {unit}"
        nbytes /= 1000
    return f"{nbytes:,.1f} TB"


def clock_text(offset_s: float, error_s: float) -> str:
    return f"{offset_s * 1000:+.2f} ±{error_s * 1000:.2f} ms"


def rate_text(rate: float) -> str:
    """Short enough for a narrow column; the exact figure is the cell's tooltip."""
    if rate >= 1e6:
        return f"{rate / 1e6:,.2f} M"
    return f"{rate / 1e3:,.1f} k" if rate >= 1e4 else f"{rate:,.0f}"


def differences_naming(address: str, differences: list[str]) -> list[str]:
    """The lines that name this host (an address must not match a longer one it prefixes)."""
    pattern = re.compile(re.escape(address) + r"(?=$|[,;\s])")
    return [line for line in differences if pattern.search(line)]


class HostTable(QTableWidget):
    pins_edited = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setObjectName("host_table")
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.horizontalHeaderItem(CLOCK).setToolTip(
            "This host's clock minus the run's, ± the bound on that estimate (from round trips)")
        self.horizontalHeaderItem(USERS).setToolTip("Users placed on this host at the largest step "
                                                    "(while a run goes: its current step)")
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        header.setMinimumSectionSize(36)
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)   # a long address keeps its port
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setWordWrap(False)
        self._addresses: list[str] = []
        self._spins: dict[str, QSpinBox] = {}
        # rows as tight as a pinned spin box allows: a dock shares its height with two others
        self.verticalHeader().setDefaultSectionSize(max(self.fontMetrics().height() + 8,
                                                        QSpinBox().sizeHint().height()))
        self.setMinimumHeight(self._height_for(2))   # below two hosts a table only says "there is more"

    def _height_for(self, rows: int) -> int:
        return (self.horizontalHeader().sizeHint().height() + rows * self.verticalHeader().defaultSectionSize()
                + self.horizontalScrollBar().sizeHint().height() + 2 * self.frameWidth())

    def sizeHint(self) -> QSize:
        """As tall as its hosts (the panel scrolls as a whole: a table's usual 192 px would make it)."""
        return QSize(super().sizeHint().width(), self._height_for(max(2, self.rowCount())))

    def addresses(self) -> list[str]:
        return list(self._addresses)

    def show_hosts(self, hosts: list[HostView], differences: list[str]) -> None:
        self.setRowCount(0)
        self._spins = {}
        self._addresses = [h.address for h in hosts]
        self.setRowCount(len(hosts))
        for row, host in enumerate(hosts):
            shown = host.address.split("://", 1)[-1]        # every address is tcp://: say only where
            self._set(row, HOST, shown, tooltip=host.address)
            self._set(row, NAME, host.name if host.name != host.address else NO_FIGURE)
            self._set(row, CORES, str(host.cores))
            self._set(row, MEMORY, memory_text(host.memory_bytes))
            self._set(row, CLOCK, clock_text(host.clock_offset_s, host.clock_error_s))
            lines = differences_naming(host.address, differences)
            item = self._set(row, VERSIONS, "⚠ differs" if lines else "same",
                             tooltip="\n".join(["Not the same on every host:", *lines]) if lines
                             else "Python and library versions are the same as on the other hosts")
            if lines:
                item.setForeground(QBrush(QColor(current_theme().error)))
                font = QFont(item.font())
                font.setBold(True)
                item.setFont(font)
            self._set(row, USERS, "0")
            self._set(row, ROWS, NO_FIGURE)

    def set_users(self, counts: dict[str, int]) -> None:
        """Users per host as text (the spin boxes of pinned placement go)."""
        for row, address in enumerate(self._addresses):
            if address in self._spins:
                self.removeCellWidget(row, USERS)
            self._set(row, USERS, str(counts.get(address, 0)))
        self._spins = {}

    def set_pins(self, pins: dict[str, int]) -> None:
        """A spin box per host with its pinned users (address -> users)."""
        for row, address in enumerate(self._addresses):
            spin = self._spins.get(address)
            if spin is None:
                spin = QSpinBox(objectName=f"pin_{row}", minimum=0, maximum=MAX_PINNED)
                spin.setAccessibleName(f"Users pinned to {address}")
                spin.setAlignment(Qt.AlignmentFlag.AlignRight)
                guard_widget(spin)
                spin.valueChanged.connect(self.pins_edited)
                self._spins[address] = spin
                self._set(row, USERS, "")
                self.setCellWidget(row, USERS, spin)
            spin.blockSignals(True)
            spin.setValue(pins.get(address, 0))
            spin.blockSignals(False)

    def pins(self) -> dict[str, int]:
        return {address: spin.value() for address, spin in self._spins.items()}

    def pin_spin(self, address: str) -> QSpinBox | None:
        return self._spins.get(address)

    def set_rows_per_s(self, rates: dict[str, float]) -> None:
        for row, address in enumerate(self._addresses):
            rate = rates.get(address)
            self._set(row, ROWS, NO_FIGURE if rate is None else rate_text(rate),
                      tooltip="no live figure" if rate is None else f"{rate:,.0f} rows/s")

    def text(self, address: str, column: int) -> str:
        """What a cell shows (a pinned spin box's value for Users)."""
        if column == USERS and address in self._spins:
            return str(self._spins[address].value())
        item = self.item(self._addresses.index(address), column)
        return item.text() if item is not None else ""

    def _set(self, row: int, column: int, text: str, tooltip: str = "") -> QTableWidgetItem:
        item = self.item(row, column)
        if item is None:
            item = QTableWidgetItem()
            if column in NUMERIC:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.setItem(row, column, item)
        if item.text() != text:              # live updates touch only what changed
            item.setText(text)
        if tooltip:
            item.setToolTip(tooltip)
        return item
