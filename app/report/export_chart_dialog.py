"""The Export chart dialog: which chart, at what size (a slide's 1920x1080 or 3840x2160, or as
shown), the DPI for print and the format (PNG, SVG, PDF, CSV); then Save... or Copy to clipboard.
The choices are remembered for the next export."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QWidget

from widgets.charts.export_sizes import DPI_CHOICES, FORMATS, SIZE_PRESETS, ExportOptions

FORMAT_NAMES = {"png": "PNG image", "svg": "SVG drawing", "pdf": "PDF (vector)", "csv": "CSV data"}
FILE_FILTERS = {"png": "PNG image (*.png)", "svg": "SVG drawing (*.svg)", "pdf": "PDF document (*.pdf)",
                "csv": "CSV data (*.csv)"}
SAVE, COPY = "save", "copy"


@dataclass(frozen=True)
class ChartExportChoice:
    chart: str
    options: ExportOptions
    format: str          # one of FORMATS
    action: str          # SAVE or COPY


class ExportChartDialog(QDialog):
    def __init__(self, parent: QWidget | None, charts: list[str], current: str, settings: QSettings) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export chart")
        self._settings = settings
        self.chart = QComboBox()
        self.chart.addItems(charts)
        self.chart.setCurrentIndex(charts.index(current) if current in charts else 0)
        self.size = QComboBox()
        self.size.addItems(list(SIZE_PRESETS))
        self.dpi = QComboBox()
        self.dpi.addItems([f"{d} DPI" for d in DPI_CHOICES])
        self.format = QComboBox()
        for key in FORMATS:
            self.format.addItem(FORMAT_NAMES[key], key)
        self._restore()
        note = QLabel("A slide size lays the chart out again, its legend inside the plot; the DPI sets "
                      "the printed size of a PNG or PDF, not its pixels.")
        note.setWordWrap(True)
        form = QFormLayout(self)
        form.addRow("Chart:", self.chart)
        form.addRow("Size:", self.size)
        form.addRow("Print:", self.dpi)
        form.addRow("Format:", self.format)
        form.addRow(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.save_button = buttons.addButton("Save...", QDialogButtonBox.ButtonRole.AcceptRole)
        self.copy_button = buttons.addButton("Copy to clipboard", QDialogButtonBox.ButtonRole.ActionRole)
        self.save_button.setDefault(True)
        self.action = ""
        self.save_button.clicked.connect(lambda: self._finish(SAVE))
        self.copy_button.clicked.connect(lambda: self._finish(COPY))
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.format.currentIndexChanged.connect(self._enable)
        self._enable()

    def _enable(self) -> None:
        fmt = self.format.currentData()
        self.size.setEnabled(fmt != "csv")      # a CSV has no picture
        self.dpi.setEnabled(fmt in ("png", "pdf"))

    def _restore(self) -> None:
        for combo, key in ((self.size, "export/size"), (self.dpi, "export/dpi")):
            index = combo.findText(str(self._settings.value(key, "")))
            if index >= 0:
                combo.setCurrentIndex(index)
        index = self.format.findData(str(self._settings.value("export/format", "png")))
        self.format.setCurrentIndex(max(0, index))

    def _finish(self, action: str) -> None:
        self.action = action
        self._settings.setValue("export/size", self.size.currentText())
        self._settings.setValue("export/dpi", self.dpi.currentText())
        self._settings.setValue("export/format", self.format.currentData())
        self.accept()

    def choice(self) -> ChartExportChoice:
        options = ExportOptions(size=SIZE_PRESETS[self.size.currentText()],
                                dpi=DPI_CHOICES[self.dpi.currentIndex()])
        return ChartExportChoice(self.chart.currentText(), options, self.format.currentData(), self.action or SAVE)

    @classmethod
    def ask(cls, parent, charts: list[str], current: str, settings: QSettings) -> ChartExportChoice | None:
        """Show the dialog; the user's choice, or None when cancelled."""
        dialog = cls(parent, charts, current, settings)
        try:
            return dialog.choice() if dialog.exec() == QDialog.DialogCode.Accepted else None
        finally:
            dialog.deleteLater()
