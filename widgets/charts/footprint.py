"""FootprintChart: bytes a table takes on disk, beside the CSV files it came from and its size in
memory, with the compression ratios (reports 001 §5.3 and 004 §4), one group of bars per label (a
run, a target, an import).

Input is plain data: ``{label: footprint}`` where a footprint is what
``workloads.results.suite_figures.footprint_figures`` returns (bytes, csv_bytes, logical_bytes, csv_ratio,
logical_ratio, replicas, runtime_bytes). A size nobody measured (no CSV written yet) has no bar.
"""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QWidget

from widgets.charts.base import DEFAULT_MAX_FPS, BarChartBase
from widgets.common.theme import OKABE_ITO, Theme, current_theme
from workloads.text import plural

# (key in the footprint, legend text, colour)
KINDS = (("bytes", "on disk", OKABE_ITO["blue"]),
         ("csv_bytes", "CSV files", OKABE_ITO["orange"]),
         ("logical_bytes", "in memory (rows × row width)", OKABE_ITO["bluish_green"]),
         ("runtime_bytes", "extra while serving", OKABE_ITO["reddish_purple"]))
_GROUP = 0.8


def format_bytes(value: float) -> str:
    for factor, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {unit}"
    return f"{value:.0f} B"


def ratio_text(footprint: dict) -> str:
    """"CSV 4.98× · memory 3.71×": how many times the disk bytes the other sizes are."""
    parts = []
    if footprint.get("csv_ratio"):
        parts.append(f"CSV {footprint['csv_ratio']:.2f}×")
    if footprint.get("logical_ratio"):
        parts.append(f"memory {footprint['logical_ratio']:.2f}×")
    if (footprint.get("replicas") or 1) > 1:
        parts.append(f"{plural(footprint['replicas'], 'copy', 'copies')} on disk")
    return " · ".join(parts)


class FootprintChart(BarChartBase):
    def __init__(self, title: str = "Footprint", *, max_fps: float = DEFAULT_MAX_FPS,
                 parent: QWidget | None = None) -> None:
        self._data: dict[str, dict] = {}
        super().__init__(title, x_label="size", x_unit="B", x_si_prefix=True, y_si_prefix=False,
                         legend_below=True, max_fps=max_fps, parent=parent)
        self.set_published([])

    def set_data(self, footprints: dict[str, dict]) -> None:
        self._data = {str(k): dict(v) for k, v in footprints.items() if v and v.get("bytes")}
        self.mark_dirty()

    def clear(self) -> None:
        self.set_data({})

    def set_published(self, findings: list[str]) -> None:
        """Published figures of the seed reports (their hardware), one line each, in the note."""
        note = ("Ratios: CSV bytes and in-memory bytes over the bytes on disk (higher: tighter "
                "storage). Replicas count as the engine stores them.")
        if findings:
            note += " Published (their hardware): " + "; ".join(findings) + "."
        self.set_note(note)

    def labels(self) -> list[str]:
        return list(self._data)

    def table_rows(self) -> list[dict]:
        return [{"label": label, **{key: f.get(key) for key, _, _ in KINDS},
                 "csv_ratio": f.get("csv_ratio"), "logical_ratio": f.get("logical_ratio"),
                 "replicas": f.get("replicas"), "method": f.get("method", "")}
                for label, f in self._data.items()]

    def _render(self) -> None:
        self._remove_items()
        theme = current_theme()
        kinds = [k for k in KINDS if any(f.get(k[0]) for f in self._data.values())]
        thickness = _GROUP / max(len(kinds), 1)
        longest = max((f.get(k) or 0 for f in self._data.values() for k, _, _ in kinds), default=0) or 1
        for g, (label, footprint) in enumerate(self._data.items()):
            for i, (key, _text, colour) in enumerate(kinds):
                value = footprint.get(key)
                if not value:
                    continue
                y = g - _GROUP / 2 + thickness * (i + 0.5)
                self._add(pg.BarGraphItem(x0=[0], width=[value], y=[y], height=[thickness * 0.9],
                                          **self._look(key, colour, theme)))
                text = f" {format_bytes(value)}"
                if key == "bytes" and ratio_text(footprint):
                    text += f"   {ratio_text(footprint)}"
                self._label(text, value, y, theme.text)
        self._legend_keys = [(pg.BarGraphItem(x0=[0], width=[0], y=[0], height=[0], **self._look(key, colour, theme)),
                              text) for key, text, colour in kinds]
        for sample, text in self._legend_keys:
            self.legend.addItem(sample, text)
        self.set_categories([(float(g), label) for g, label in enumerate(self._data)])
        self.plot_item.setXRange(0, longest * 1.6, padding=0)    # room for the ratio text
        self.plot_item.setYRange(-0.55, max(len(self._data), 1) - 0.45, padding=0)

    @staticmethod
    def _look(key: str, colour: str, theme: Theme) -> dict:
        if key == "bytes":
            return {"brush": pg.mkBrush(colour), "pen": pg.mkPen(theme.window, width=1)}
        return {"brush": QBrush(QColor(colour), Qt.BrushStyle.BDiagPattern), "pen": pg.mkPen(colour, width=1.5)}
