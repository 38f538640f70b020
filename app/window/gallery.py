"""The report gallery in the main window: its runs started, each report's published-vs-measured
reproduction and the calibrated estimates read off the GUI thread, refreshed after a run."""
from __future__ import annotations

from workloads.reproduce.calibration import calibration
from workloads.reproduce.catalog import GALLERY
from workloads.reproduce.reproduction import reproduction
from workloads.scenario import Scenario, parse_slot
from workloads.run.worker import describe_error
from workloads.text import plural


class MainWindowGallery:
    """The Reproduce tab's side of MainWindow."""

    def start_gallery_runs(self, scenarios: list[Scenario]) -> None:
        """The gallery's runs, one after another; a server's password is asked for once, up front."""
        try:
            ready = [self._with_password(s) for s in scenarios]
        except ValueError as exc:
            self.show_error(f"runs not started: {exc}")
            return
        if any(s is None for s in ready):
            self.show_error("runs not started: no password given")
            return
        self.statusBar().showMessage(f"Reproducing: {plural(len(ready), 'run')}", 5000)
        self.controller.start_playlist(ready)

    def show_gallery(self) -> None:
        self.tabs.setCurrentWidget(self.gallery)

    def refresh_gallery(self, reports=None) -> None:
        """Each report's published-vs-measured figures and findings, and the estimates calibrated
        on this machine's runs, read off the GUI thread."""
        self._recalibrate()
        for report in reports or list(GALLERY):
            self.background.run(f"gallery/{report}", lambda r=report: reproduction(self.store, r),
                                lambda found, r=report: self.gallery.set_reproduction(r, found),
                                lambda exc: self.statusBar().showMessage(
                                    f"cannot read the reports' runs: {describe_error(exc)}", 15000))

    def _recalibrate(self) -> None:
        self.background.run("calibration", lambda: calibration(self.store), self.gallery.set_calibration,
                            lambda exc: self.statusBar().showMessage(
                                f"cannot calibrate the estimates: {describe_error(exc)}", 15000))

    def refresh_gallery_after(self, run_id: str) -> None:
        """After a run: its report's card, if it was one of the gallery's runs (and the estimates,
        calibrated on one run more)."""
        self._recalibrate()

        def read():
            slot = parse_slot(self.store.run(run_id)["scenario"].get("experiment", ""))
            return (slot[0], reproduction(self.store, slot[0])) if slot and slot[0] in GALLERY else None

        def show(found) -> None:
            if found is not None:
                self.gallery.set_reproduction(*found)
        self.background.run(f"gallery-after/{run_id}", read, show, lambda exc: self.statusBar().showMessage(
            f"cannot read the reports' runs: {describe_error(exc)}", 15000))
