"""Run → Compare by running… and the Targets dock's "Compare by running with…": one ``AbDialog``,
made when first asked for and kept (a session going in it goes on while it is hidden), opened on the
form's scenario and the targets of the moment."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, Signal

from app.window.ab_dialog import AbDialog
from app.window.shell import Shell
from workloads.scenario import Scenario


class ComparingController(QObject):
    session_finished = Signal()          # its runs are in the catalog: History reads again

    def __init__(self, shell: Shell, form_scenario: Callable[[], Scenario]):
        """``form_scenario``: the scenario form's scenario (ValueError: the form's reason it has none)."""
        super().__init__(shell)
        self._shell = shell
        self._form_scenario = form_scenario
        self.dialog: AbDialog | None = None
        self.action = shell.action("Compare by running…", lambda: self.open(), name="compare_by_running")

    def open(self, first: str | None = None) -> AbDialog:
        """The dialog shown with the form's scenario; ``first``: the target key side A starts on."""
        shell = self._shell
        if self.dialog is None:
            self.dialog = AbDialog(Path(shell.store.path), shell.window, resolve=shell.with_password,
                                   busy=lambda: shell.runs.busy)
            self.dialog.session_finished.connect(lambda _outcome: self.session_finished.emit())
        try:
            scenario, error = self._form_scenario(), ""
        except ValueError as exc:
            scenario, error = None, str(exc)
        self.dialog.set_sides(scenario, shell.targets(), first=first, error=error)
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()
        return self.dialog

    def shutdown(self) -> None:
        """The window closes: a session going is stopped (what it measured is kept)."""
        if self.dialog is not None:
            self.dialog.shutdown()
