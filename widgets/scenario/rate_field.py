"""RateField: the scenario form's open-loop row: a rate (or rates, a step each), whether it is the
step's in total or each user's, and the schedule (``workloads.run.schedule``). Empty: closed loop,
each user asking again once answered."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLineEdit, QSizePolicy, QWidget

from workloads.scenario import rates
from workloads.run.schedule import RATE_PER, SCHEDULES

_PER_TEXT = {"total": "in total", "user": "per user"}


class RateField(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rate_edit = QLineEdit(objectName="rate")
        self.rate_edit.setPlaceholderText("closed loop")
        self.rate_edit.setToolTip(
            "Open loop: operations per second offered, e.g. 2000, or 500,1000,2000 for a step each.\n"
            "Latency then counts from each operation's intended start, so a stall is counted for every\n"
            "operation it delayed (no coordinated omission). Empty: each user asks again once answered.")
        self.per_combo = QComboBox(objectName="rate_per")
        for per in RATE_PER:
            self.per_combo.addItem(_PER_TEXT[per], per)
        self.schedule_combo = QComboBox(objectName="schedule")
        for schedule in SCHEDULES:
            self.schedule_combo.addItem(schedule, schedule)
        self.schedule_combo.setToolTip("constant: evenly spaced starts; poisson: exponential gaps, as "
                                       "independent clients arrive")
        for combo in (self.per_combo, self.schedule_combo):      # the rates get the row's width
            combo.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        # the rates get the row's spare width (stretch); at least a sweep of three fits a narrow form
        self.rate_edit.setMinimumWidth(self.rate_edit.fontMetrics().horizontalAdvance("500,1000,2000") + 12)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.rate_edit, 1)
        layout.addWidget(self.per_combo)
        layout.addWidget(self.schedule_combo)
        self.rate_edit.textChanged.connect(self._on_text)
        self.per_combo.currentIndexChanged.connect(self.changed)
        self.schedule_combo.currentIndexChanged.connect(self.changed)
        self._on_text()

    def _on_text(self) -> None:
        open_loop = bool(self.rate_edit.text().strip())
        self.per_combo.setEnabled(open_loop)
        self.schedule_combo.setEnabled(open_loop)
        self.changed.emit()

    def values(self) -> dict[str, Any]:
        """The scenario's open-loop fields; ValueError saying what a rate must be."""
        text = self.rate_edit.text().strip()
        try:
            offered = rates(text) if text else ()
        except ValueError:
            raise ValueError(f"Rate: {text!r} is not a number of operations per second or a list like "
                             "500,1000,2000") from None
        if any(r <= 0 or r != r for r in offered):
            raise ValueError(f"Rate: {text!r}: each rate is a positive number of operations per second")
        return {"rate": offered, "rate_per": self.per_combo.currentData(),
                "schedule": self.schedule_combo.currentData()}

    def set_values(self, rate: tuple[float, ...], rate_per: str, schedule: str) -> None:
        self.rate_edit.setText(",".join(f"{r:g}" for r in rate))
        self.per_combo.setCurrentIndex(max(0, self.per_combo.findData(rate_per)))
        self.schedule_combo.setCurrentIndex(max(0, self.schedule_combo.findData(schedule)))
