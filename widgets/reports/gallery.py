"""ReportGallery: the start page that reproduces the five reports, one card per report, and the tick
pack (Tickbench's own card: no published figures, its findings between engines).

A card (``widgets.reports.card``) says what the report asked and found, and lists its experiments.
Each experiment row (``widgets.reports.experiment_row``) picks a size, the database under test and, when
the report compared with another system, which of the configured targets plays it; Run starts it.
Once runs exist the card shows the published figures beside the measured ones and the findings as
ratios with a verdict, each linked to its runs.

A view only: it never reads the results or starts anything. The window gives it the targets
(``set_targets``) and each report's reproduction (``set_reproduction``, read off the GUI thread)
and listens to ``run_requested(list[Scenario])`` and ``run_clicked(run_id)``.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QScrollArea, QVBoxLayout, QWidget

from widgets.reports.experiment_row import ExperimentRow, Target, _label
from widgets.common.heading import HeadingLabel
from widgets.reports.card import ReportCardView
from widgets.common.theme import Theme, current_theme, theme_notifier
from widgets.common.wheel_guard import guard_wheel
from workloads.reproduce.catalog import GALLERY, gallery_scenarios
from workloads.reproduce.reproduction import Reproduction
from workloads.scenario import Scenario


class ReportGallery(QWidget):
    """The five reports as cards; the window's start page."""

    run_requested = Signal(list)        # Scenarios to run one after another
    run_clicked = Signal(str)           # a run id

    def __init__(self, data_dir: Path | str | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("report_gallery")
        self._data_dir = Path(data_dir) if data_dir is not None else None
        self.title_label = HeadingLabel("Reproduce the five reports", 1.6, name="gallery_title")
        self.intro_label = _label(
            "Each report's experiments, run on this machine at the size you choose; tiny runs on the embedded "
            "DuckDB need no server, and each row's estimate, calibrated on this machine's runs, says how long "
            "it takes. Your figures stand beside the published ones, "
            "and the findings compare ratios, which travel across hardware where absolute times do not. "
            "The tick pack, last, asks the questions a desk asks of quotes and trades daily.",
            name="gallery_intro")
        self.demo_button = QPushButton("Run the five reports (demo playlist)", objectName="run_demo")
        self.demo_button.setToolTip("Every experiment of the five reports at tiny size on the embedded DuckDB, "
                                    "one after another; the comparator sides (Druid, MongoDB) are left out")
        self.cards: dict[str, ReportCardView] = {}

        page = QWidget(objectName="gallery_page")
        column = QVBoxLayout(page)
        column.setContentsMargins(16, 12, 16, 16)
        column.setSpacing(12)
        head = QHBoxLayout()
        head.addWidget(self.title_label, 1)
        head.addWidget(self.demo_button, 0, Qt.AlignmentFlag.AlignVCenter)
        column.addLayout(head)
        column.addWidget(self.intro_label)
        for report, card in GALLERY.items():
            view = ReportCardView(card, self._data_dir)
            view.run_requested.connect(self.run_requested)
            view.run_clicked.connect(self.run_clicked)
            self.cards[report] = view
            column.addWidget(view)
        column.addStretch(1)
        self.scroll = QScrollArea(widgetResizable=True, objectName="gallery_scroll")
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(page)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.scroll)

        self.demo_button.clicked.connect(self._request_demo)
        guard_wheel(self)                    # the wheel scrolls the gallery, never an unfocused combo
        theme_notifier().changed.connect(self._on_theme_changed)
        self._on_theme_changed(current_theme())

    # ---- data in ------------------------------------------------------------------------------
    def set_targets(self, targets: list[Target]) -> None:
        """(key, label, kind, config) of every usable target, as the targets panel lists them."""
        for card in self.cards.values():
            card.set_targets(list(targets))

    def set_reproduction(self, report: str, reproduction: Reproduction) -> None:
        self.cards[report].set_reproduction(reproduction)

    def set_calibration(self, calibration) -> None:
        """This machine's gallery runs beside the model (``workloads.reproduce.calibration``)."""
        for card in self.cards.values():
            card.set_calibration(calibration)

    def card(self, report: str) -> ReportCardView:
        return self.cards[report]

    def row(self, report: str, experiment: str) -> ExperimentRow:
        return self.cards[report].rows[experiment]

    # ---- requests out -------------------------------------------------------------------------
    def demo_scenarios(self) -> list[Scenario]:
        """The demo playlist: every experiment at tiny size on the embedded default, no comparator."""
        return gallery_scenarios(size="tiny", data_dir=self._data_dir)

    def _request_demo(self) -> None:
        self.run_requested.emit(self.demo_scenarios())

    def _on_theme_changed(self, theme: Theme) -> None:
        self.setStyleSheet(f"QFrame#report_card {{ border: 1px solid {theme.muted}; border-radius: 6px; }}")
        for card in self.cards.values():
            card.restyle(theme)
