"""ProcessOptions: how a step's users are started and run (``Scenario.start``, ``Scenario.process``;
``workloads.run.processes``), two rows of the scenario form.

It lends the form its two labelled combos (``rows()``) rather than being a widget of its own, so
that their labels line up with the form's others.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QComboBox, QWidget

START_LABELS = {"forkserver": "forked (preloaded)", "spawn": "spawned (cold interpreter)"}
PROCESS_LABELS = {"settled": "settled (long-lived client)", "plain": "plain (defaults)"}
START_TIP = ("Forked users share the engine's imported pages (numpy, pandas, pyarrow, the target's client)\n"
             "and start in milliseconds. Spawned ones are each a fresh interpreter: a fully cold first\n"
             "operation, ~60 MiB each.")
PROCESS_TIP = ("Settled: a long-lived client's allocator and pandas 3 strings, as a notebook that has read\n"
               "a few days runs. Plain: glibc's and pandas' own defaults, as a fresh script runs.")


class ProcessOptions(QObject):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.start_combo = QComboBox(objectName="users_start", toolTip=START_TIP)
        self.process_combo = QComboBox(objectName="process", toolTip=PROCESS_TIP)
        for combo, labels in ((self.start_combo, START_LABELS), (self.process_combo, PROCESS_LABELS)):
            for value, label in labels.items():
                combo.addItem(label, value)
            combo.currentIndexChanged.connect(self.changed)

    def rows(self) -> list[tuple[str, QComboBox]]:
        """(label, field) for the form, in order."""
        return [("Users start:", self.start_combo), ("Process:", self.process_combo)]

    def values(self) -> dict[str, str]:
        """The Scenario's fields."""
        return {"start": self.start_combo.currentData(), "process": self.process_combo.currentData()}

    def set_values(self, start: str, process: str) -> None:
        """ValueError for a value this version does not offer (the form keeps its others)."""
        for combo, value in ((self.start_combo, start), (self.process_combo, process)):
            index = combo.findData(value)
            if index < 0:
                raise ValueError(f"{combo.objectName()}: {value!r} is not available here")
            combo.setCurrentIndex(index)
