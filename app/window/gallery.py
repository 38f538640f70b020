"""The Reproduce tab's side of the main window: the report gallery's runs started, each report's
published-vs-measured reproduction and the calibrated estimates read off the GUI thread, and
refreshed after a run."""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from app.window.shell import Shell
from workloads.reproduce.calibration import calibration
from workloads.reproduce.catalog import GALLERY
from workloads.reproduce.reproduction import reproduction
from workloads.run.worker import describe_error
from workloads.scenario import Scenario, parse_slot
from workloads.text import plural


class GalleryController(QObject):
    shown = Signal()                      # the Reproduce tab to the front

    def __init__(self, shell: Shell, gallery):
        super().__init__(shell)
        self._shell = shell
        self._gallery = gallery
        self.reproduce_action = shell.action("Reproduce a report…", lambda: self.shown.emit(), name="reproduce_report")
        gallery.run_requested.connect(self.start_runs)

    def set_targets(self, targets: list) -> None:
        self._gallery.set_targets(targets)

    def start_runs(self, scenarios: list[Scenario]) -> None:
        """The gallery's runs, one after another; a server's password is asked for once, up front."""
        try:
            ready = [self._shell.with_password(s) for s in scenarios]
        except ValueError as exc:
            self._shell.show_error(f"runs not started: {exc}")
            return
        if any(s is None for s in ready):
            self._shell.show_error("runs not started: no password given")
            return
        self._shell.say(f"Reproducing: {plural(len(ready), 'run')}", 5000)
        self._shell.runs.start_playlist(ready)

    def refresh(self, reports=None) -> None:
        """Each report's published-vs-measured figures and findings, and the estimates calibrated
        on this machine's runs, read off the GUI thread."""
        self._recalibrate()
        store = self._shell.store
        for report in reports or list(GALLERY):
            self._shell.background.run(f"gallery/{report}", lambda r=report: reproduction(store, r),
                                       lambda found, r=report: self._gallery.set_reproduction(r, found),
                                       self._cannot_read)

    def _cannot_read(self, exc: Exception) -> None:
        self._shell.say(f"cannot read the reports' runs: {describe_error(exc)}", 15000)

    def _recalibrate(self) -> None:
        store = self._shell.store
        self._shell.background.run("calibration", lambda: calibration(store), self._gallery.set_calibration,
                                   lambda exc: self._shell.say(f"cannot calibrate the estimates: {describe_error(exc)}",
                                                               15000))

    def refresh_after(self, run_id: str) -> None:
        """After a run: its report's card, if it was one of the gallery's runs (and the estimates,
        calibrated on one run more)."""
        self._recalibrate()
        store = self._shell.store

        def read():
            slot = parse_slot(store.run(run_id)["scenario"].get("experiment", ""))
            return (slot[0], reproduction(store, slot[0])) if slot and slot[0] in GALLERY else None

        def show(found) -> None:
            if found is not None:
                self._gallery.set_reproduction(*found)
        self._shell.background.run(f"gallery-after/{run_id}", read, show, self._cannot_read)
