"""The main window's File menu for scenarios and data: a scenario opened or saved, a playlist file
played, a tick file or folder imported."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog


class MainWindowFiles:
    """Scenario, playlist and data files for MainWindow."""

    def load_scenario(self, path: Path) -> None:
        try:
            scenario = self.builder.load_from(path)
        except ValueError as exc:
            self.show_error(str(exc))
            return
        self.load_generators.set_values(scenario.scheduler, scenario.placement, scenario.pins)

    def open_scenario_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open scenario", "", "Scenarios (*.toml)")
        if path:
            self.load_scenario(Path(path))

    def open_playlist_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Play a playlist", "", "Playlists (*.toml)")
        if path:
            self.play_playlist(Path(path))

    def save_scenario_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save scenario", "scenario.toml", "Scenarios (*.toml)")
        if path:
            try:
                self._with_load_generators(self.builder.scenario()).save_toml(Path(path))
            except (ValueError, OSError) as exc:
                self.show_error(f"cannot save scenario: {exc}")

    def import_data_dialog(self):
        """File → Import data…: the dialog previews and imports off the GUI thread; the builder then lists it."""
        from app.imports.dialog import ImportDialog  # loaded on first use: keeps start-up light
        dialog = ImportDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.imported.connect(lambda name: self.builder.refresh_datasets(select=name))
        dialog.open()
        return dialog
