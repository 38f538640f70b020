"""PresentDialog: how the narrated demo is played (View → Present the reports…).

Its length; live or replayed from the catalog; the database under test and what the reports
compared it with. Live, the engines are the configured targets (as the targets panel gives them);
replayed, they are the demos the catalog holds (``set_recorded``, read off the
GUI thread by the window), so a laptop can replay a DolphinDB or Druid demo recorded elsewhere.
"""
from __future__ import annotations

from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QVBoxLayout,
                               QWidget)

from widgets.reports.experiment_row import EMBEDDED, Target
from workloads.reproduce.catalog import DEFAULT_SUBJECT, REPORTS

# the systems the reports compared the database with (Druid in 001, MongoDB in 004)
COMPARATOR_KINDS = frozenset(e.comparator for card in REPORTS.values() for e in card.experiments if e.comparator)
NONE_LABEL = "nothing (the reports' comparisons are left out)"


class PresentDialog(QDialog):
    def __init__(self, lengths: tuple[int, ...], targets: list[Target], parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Present the reports")
        embedded = [t for t in targets if t[0] == DEFAULT_SUBJECT] or [EMBEDDED]     # the default, first
        self._targets = {t[0]: t for t in embedded + [t for t in targets if t[0] != DEFAULT_SUBJECT]}
        self._recorded: list[tuple[str, str | None]] | None = None     # None: still being read
        self.length_combo = QComboBox(objectName="present_length")
        for minutes in lengths:
            self.length_combo.addItem(f"{minutes} minutes", minutes)
        self.length_combo.setCurrentIndex(self.length_combo.findData(10))
        self.replay_check = QCheckBox("Replay runs recorded earlier, at their pace (no engine needed)",
                                      objectName="present_replay")
        self.subject_combo = QComboBox(objectName="present_subject")
        self.comparator_combo = QComboBox(objectName="present_comparator")
        self.note = QLabel(objectName="present_note", wordWrap=True)
        self.note.setProperty("role", "muted")
        form = QFormLayout()
        form.addRow("Length", self.length_combo)
        form.addRow("", self.replay_check)
        form.addRow("Database", self.subject_combo)
        form.addRow("Compared with", self.comparator_combo)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Present")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(self.buttons)
        self.replay_check.toggled.connect(self._fill)
        self.subject_combo.currentIndexChanged.connect(self._fill_comparators)
        self._fill()
        self.setMinimumWidth(560)

    # ---- what the window tells it -------------------------------------------------------------
    def set_recorded(self, recorded: list[tuple[str, str | None]]) -> None:
        """The (database, comparator) kinds of the recorded demos (story.recorded_engines)."""
        self._recorded = list(recorded)
        self._fill()

    # ---- what it answers ------------------------------------------------------------------------
    @property
    def minutes(self) -> int:
        return int(self.length_combo.currentData())

    @property
    def replay(self) -> bool:
        return self.replay_check.isChecked()

    def subject(self) -> Target | None:
        return self._chosen(self.subject_combo)

    def comparator(self) -> Target | None:
        return self._chosen(self.comparator_combo)

    # ---- filling the choices ----------------------------------------------------------------------
    def _chosen(self, combo: QComboBox) -> Target | None:
        key = combo.currentData()
        if key is None:
            return None
        return self._targets.get(key) or (key, key, key, None)     # a recorded engine: its kind alone

    def _fill(self, *_args) -> None:
        self.subject_combo.blockSignals(True)
        self.subject_combo.clear()
        if self.replay:
            for kind in dict.fromkeys(s for s, _c in self._recorded or []):
                self.subject_combo.addItem(f"{kind} (recorded)", kind)
        else:
            for key, label, kind, _config in self._targets.values():
                if kind not in COMPARATOR_KINDS:
                    self.subject_combo.addItem(label, key)
        self.subject_combo.blockSignals(False)
        self._fill_comparators()

    def _fill_comparators(self, *_args) -> None:
        self.comparator_combo.clear()
        self.comparator_combo.addItem(NONE_LABEL, None)
        if self.replay:
            subject = self.subject_combo.currentData()
            for kind in dict.fromkeys(c for s, c in self._recorded or [] if c and s == subject):
                self.comparator_combo.addItem(f"{kind} (recorded)", kind)
        else:
            for key, label, kind, _config in self._targets.values():
                if kind in COMPARATOR_KINDS:
                    self.comparator_combo.addItem(label, key)
        self._explain()

    def _explain(self) -> None:
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        if self.replay and self._recorded is None:
            text, ready = "Reading the recorded demos…", False
        elif self.replay and not self._recorded:
            text, ready = "No demo has been recorded yet: present it live once, and its runs stay in the catalog.", False
        elif self.replay:
            text, ready = ("Each beat plays the newest recorded run of its experiment on these engines; the "
                           "screens say REPLAY and where the runs were made."), True
        else:
            text, ready = ("Live: each experiment runs now on these engines. Add a Druid or MongoDB under Targets "
                           "to bring in reports 001 and 004."), self.subject_combo.count() > 0
        self.note.setText(text)
        ok.setEnabled(ready)
