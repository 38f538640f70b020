"""BreakdownChart: where an operation's time goes, one stacked horizontal bar per target.

Input is plain data, mean seconds per phase per operation:
    {"pickle": {"io": 0.8, "decode": 0.4}, "duckdb": {"query": 0.2, "decode": 0.3},
     "dolphindb": {"server": 0.1, "transfer": 0.3, "decode": 0.9}}
Published figures (from the reports) can be drawn beside the measured bar of the same label,
hatched, so "published (their hardware)" and "measured (your hardware)" are never confused.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF
from PySide6.QtWidgets import QWidget

from widgets.charts.base import DEFAULT_MAX_FPS, BarChartBase
from widgets.common.theme import PHASE_ORDER, Theme, current_theme, phase_colour, readable_text_colour

Breakdown = dict[str, dict[str, float]]

OVERLAP_NOTE = "Note: DolphinDB transfer and decode overlap in the client; their split is approximate."
MEASURED_LABEL = "measured (your hardware)"
PUBLISHED_LABEL = "published (their hardware)"
_BAR = 0.7            # bar thickness when a label has one bar
_PAIR = 0.4           # thickness of each bar of a measured/published pair
_MIN_LABELLED = 0.08  # before layout: a segment narrower than this share of the axis gets no label


def format_seconds(seconds: float) -> str:
    """0.0123 -> '12.3 ms', 1.5 -> '1.50 s', 75 -> '75.0 s' (3 significant figures)."""
    if not math.isfinite(seconds):
        return "n/a"
    if abs(seconds) < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if abs(seconds) < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s" if seconds < 100 else f"{seconds:.0f} s"


def ordered_phases(*breakdowns: Breakdown) -> list[str]:
    """Known phases in data-flow order, then any others in the order first seen."""
    seen: list[str] = []
    for breakdown in breakdowns:
        for phases in breakdown.values():
            for phase in phases:
                if phase not in seen:
                    seen.append(phase)
    known = [p for p in PHASE_ORDER if p in seen]
    return known + [p for p in seen if p not in PHASE_ORDER]


class BreakdownChart(BarChartBase):
    """Stacked bars of mean phase seconds per target, measured and (optionally) published."""

    def __init__(self, title: str = "Where the time goes", *, auto_note: bool = True,
                 max_fps: float = DEFAULT_MAX_FPS, parent: QWidget | None = None) -> None:
        self._measured: Breakdown = {}
        self._published: Breakdown = {}
        self._auto_note = auto_note
        super().__init__(title, x_label="mean time per operation", x_unit="s", x_si_prefix=True,
                         y_si_prefix=False, legend_below=True, max_fps=max_fps, parent=parent)
        # which value labels fit depends on the width in pixels: redo them when it changes
        self.plot_item.getViewBox().sigResized.connect(self.mark_dirty)

    # ---- data -------------------------------------------------------------------------------
    def set_data(self, measured: Breakdown, published: Breakdown | None = None) -> None:
        """Replace the bars. Seconds must be finite and >= 0."""
        self._measured = self._checked(measured, "measured")
        self._published = self._checked(published or {}, "published")
        if self._auto_note:
            overlapping = any({"transfer", "decode"} <= set(p)
                              for p in [*self._measured.values(), *self._published.values()])
            self.set_note(OVERLAP_NOTE if overlapping else "")
        self.mark_dirty()

    def clear(self) -> None:
        self.set_data({})

    def data(self) -> tuple[Breakdown, Breakdown]:
        return ({k: dict(v) for k, v in self._measured.items()},
                {k: dict(v) for k, v in self._published.items()})

    def table_rows(self) -> list[dict]:
        """One row per (label, kind, phase): what the CSV export writes."""
        rows = []
        for kind, data in (("measured", self._measured), ("published", self._published)):
            for label, phases in data.items():
                for phase in ordered_phases({label: phases}):
                    rows.append({"label": label, "kind": kind, "phase": phase,
                                 "seconds": phases[phase]})
        return rows

    @staticmethod
    def _checked(data: Breakdown, what: str) -> Breakdown:
        clean: Breakdown = {}
        for label, phases in data.items():
            clean[str(label)] = {}
            for phase, seconds in phases.items():
                value = float(seconds)
                if not math.isfinite(value) or value < 0:
                    raise ValueError(f"{what} breakdown of {label!r}: phase {phase!r} has "
                                     f"{seconds!r} seconds; expected a finite number >= 0")
                clean[str(label)][str(phase)] = value
        return clean

    # ---- drawing ----------------------------------------------------------------------------
    def _layout(self) -> list[tuple[str, str, float, float]]:
        """(label, kind, y centre, thickness) of every bar; tick labels follow from it."""
        bars = []
        labels = list(self._measured) + [k for k in self._published if k not in self._measured]
        for i, label in enumerate(labels):
            has_m, has_p = label in self._measured, label in self._published
            if has_m and has_p:
                bars.append((label, "measured", i - _PAIR / 2 - 0.02, _PAIR))
                bars.append((label, "published", i + _PAIR / 2 + 0.02, _PAIR))
            else:
                bars.append((label, "measured" if has_m else "published", float(i), _BAR))
        return bars

    def _render(self) -> None:
        self._remove_items()
        theme = current_theme()
        bars = self._layout()
        phases = ordered_phases(self._measured, self._published)
        data = {"measured": self._measured, "published": self._published}
        totals = [sum(data[k][lab].values()) for lab, k, _, _ in bars]
        longest = max(totals, default=0.0) or 1.0
        x_max = longest * 1.3           # room on the right for the total labels
        px_wide = self.plot_item.getViewBox().width()
        widest = max((QFontMetricsF(self._font()).horizontalAdvance(f" {format_seconds(t)}") for t in totals),
                     default=0.0) + 12
        if px_wide >= 50 and widest < px_wide * 0.6:     # laid out: the longest total's label fits whole
            x_max = max(x_max, longest * px_wide / (px_wide - widest))
        fits = self._label_fits(x_max)

        for kind in ("measured", "published"):
            kind_bars = [b for b in bars if b[1] == kind]
            if not kind_bars:
                continue
            left = np.zeros(len(kind_bars))
            for phase in phases:
                widths = np.array([data[kind][lab].get(phase, 0.0) for lab, _, _, _ in kind_bars])
                if not widths.any():
                    continue
                drawn = widths > 0      # a zero-wide bar would still show its outline
                item = pg.BarGraphItem(
                    x0=left[drawn], width=widths[drawn], y=[b[2] for b, d in zip(kind_bars, drawn) if d],
                    height=[b[3] for b, d in zip(kind_bars, drawn) if d], **self._look(phase, kind, theme))
                self._add(item)   # unnamed, so PlotItem does not add it to the legend itself
                for (lab, _, y, _), x0, w in zip(kind_bars, left, widths):
                    text = format_seconds(w)
                    if w > 0 and fits(text, w):
                        colour = (readable_text_colour(phase_colour(phase)) if kind == "measured"
                                  else theme.text)
                        self._label(text, x0 + w / 2, y, colour, anchor=(0.5, 0.5),
                                    fill=None if kind == "measured" else theme.window + "C0")
                left += widths
            for (lab, _, y, _), total in zip(kind_bars, left):
                self._label(f" {format_seconds(total)}", total, y, theme.text, anchor=(0, 0.5))

        # Keys: one solid swatch per phase (measured or published only), then what hatching means.
        keys = [(pg.BarGraphItem(x0=[0], width=[0], y=[0], height=[0],
                                 **self._look(phase, "measured", theme)), phase) for phase in phases]
        if self._published:
            keys += [(pg.BarGraphItem(x0=[0], width=[0], y=[0], height=[0],
                                      **self._look(None, kind, theme)), label)
                     for kind, label in (("measured", MEASURED_LABEL), ("published", PUBLISHED_LABEL))]
        self._legend_keys = keys          # the legend only draws them: keep them alive here
        # as many columns as fit the width (the grid makes every column as wide as the widest key)
        metrics = QFontMetricsF(self._font())
        key_px = max((metrics.horizontalAdvance(label) for _, label in keys), default=0) + 45
        self.legend.setColumnCount(max(1, min(len(keys), int(max(self.width(), 200) // key_px))))
        for sample, label in keys:
            self.legend.addItem(sample, label)

        ticks = []
        for lab, kind, y, _ in bars:
            both = lab in self._measured and lab in self._published
            ticks.append((y, f"{lab} (published)" if both and kind == "published" else lab))
        self.set_categories(ticks)
        self.plot_item.setXRange(0, x_max, padding=0)
        n = len({b[0] for b in bars})
        self.plot_item.setYRange(-0.55, max(n, 1) - 0.45, padding=0)

    def _label_fits(self, x_max: float):
        """A test of whether a value label fits inside its segment, in pixels when laid out."""
        px_wide = self.plot_item.getViewBox().width()
        if px_wide < 50:                   # not laid out yet: a share of the longest bar
            return lambda _text, w: w / x_max >= _MIN_LABELLED
        metrics = QFontMetricsF(self._font())
        px_per_s = px_wide / x_max
        return lambda text, w: w * px_per_s >= metrics.horizontalAdvance(text) + 8

    def _look(self, phase: str | None, kind: str, theme: Theme) -> dict:
        colour = QColor(phase_colour(phase) if phase else theme.muted)
        if kind == "measured":
            return {"brush": pg.mkBrush(colour), "pen": pg.mkPen(theme.window, width=1)}
        return {"brush": QBrush(colour, Qt.BrushStyle.BDiagPattern), "pen": pg.mkPen(colour, width=1.5)}
