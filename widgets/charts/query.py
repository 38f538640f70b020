"""QueryChart: time per query of a query suite, one horizontal bar per query and series (a run or
a target), series side by side.

Input is plain data: ``{series label: [QueryPoint, ...]}`` (``workloads.run.snapshot.QueryPoint``).
A query a series cannot express reads "not supported" where its bar would be (a state of its own,
never a zero bar); a failed one reads "failed"; one still to run, "pending". The first series that
answered a query is its reference: a series whose answer has another fingerprint gets a red,
hatched bar and "≠ answer". Hovering a query shows what it asks and each series' figures;
clicking it emits ``query_clicked(query id)``.
"""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QCursor
from PySide6.QtWidgets import QToolTip, QWidget

from widgets.charts.breakdown import format_seconds
from widgets.charts.base import DEFAULT_MAX_FPS, BarChartBase
from widgets.common.theme import Theme, current_theme, series_colour
from workloads.run.snapshot import QueryPoint
from workloads.run.records import FAILED, NOT_SUPPORTED, OK
from workloads.text import plural

DIFFERS_TEXT = "≠ answer"
_GROUP = 0.8          # share of a query's row its bars fill


class QueryChart(BarChartBase):
    query_clicked = Signal(str)

    def __init__(self, title: str = "Time per query (mean)", *, max_fps: float = DEFAULT_MAX_FPS,
                 parent: QWidget | None = None) -> None:
        self._series: dict[str, list[QueryPoint]] = {}
        self._order: list[str] = []
        self._published: list[str] = []
        super().__init__(title, x_label="mean time per query", x_unit="s", x_si_prefix=True,
                         y_si_prefix=False, legend_below=True, max_fps=max_fps, parent=parent)
        self.graphics.scene().sigMouseClicked.connect(self._on_click)
        self.graphics.scene().sigMouseMoved.connect(self._on_hover)

    # ---- data -------------------------------------------------------------------------------
    def set_data(self, series: dict[str, list[QueryPoint]]) -> None:
        """Replace the bars; queries in the order the series list them (first seen first)."""
        self._series = {str(k): list(v) for k, v in series.items()}
        self._order = []
        for points in self._series.values():
            for point in points:
                if point.query not in self._order:
                    self._order.append(point.query)
        self._update_note()
        self.mark_dirty()

    def clear(self) -> None:
        self.set_data({})

    def set_published(self, findings: list[str]) -> None:
        """Published figures of the seed reports (their hardware), one line each, in the note."""
        self._published = list(findings)
        self._update_note()

    def queries(self) -> list[str]:
        return list(self._order)

    def point(self, series: str, query: str) -> QueryPoint | None:
        return next((p for p in self._series.get(series, []) if p.query == query), None)

    def reference(self, query: str) -> str | None:
        """The series whose answer the others are compared with: the first that answered."""
        for label in self._series:
            point = self.point(label, query)
            if point is not None and point.status == OK and point.fingerprint:
                return label
        return None

    def differs(self, series: str, query: str) -> bool:
        reference = self.reference(query)
        point = self.point(series, query)
        return (reference is not None and point is not None and point.status == OK and bool(point.fingerprint)
                and point.fingerprint != self.point(reference, query).fingerprint)

    def differing(self) -> list[str]:
        """Queries where some series' answer differs from the reference's."""
        return [q for q in self._order if any(self.differs(label, q) for label in self._series)]

    def table_rows(self) -> list[dict]:
        """What the CSV export writes: one row per series and query."""
        rows = []
        for label, points in self._series.items():
            for p in points:
                rows.append({"series": label, "query": p.query, "category": p.category, "status": p.status,
                             "runs": p.runs, "mean_s": p.mean_s, "p50_s": p.p50_s, "min_s": p.min_s,
                             "fingerprint": p.fingerprint, "differs": self.differs(label, p.query)})
        return rows

    def _update_note(self) -> None:
        parts = []
        if any(p.status == NOT_SUPPORTED for ps in self._series.values() for p in ps):
            parts.append("Not supported: the target has no way to express the query (not a zero).")
        if len(self._series) > 1:
            differing = self.differing()
            parts.append(f"Red, hatched: the answer differs from the first series that answered "
                         f"({plural(len(differing), 'query', 'queries')}). Click a query to see the answers."
                         if differing else "Every series that answered gave the same answer.")
        if self._published:
            parts.append("Published (their hardware): " + "; ".join(self._published) + ".")
        self.set_note(" ".join(parts))

    # ---- drawing ----------------------------------------------------------------------------
    def _render(self) -> None:
        self._remove_items()
        theme = current_theme()
        labels = list(self._series)
        n = max(len(labels), 1)
        thickness = _GROUP / n
        means = [p.mean_s for ps in self._series.values() for p in ps if p.mean_s is not None]
        longest = max(means, default=0.0) or 1.0
        x_max = longest * 1.25          # room on the right for the value labels
        for s, label in enumerate(labels):
            colour = series_colour(s, theme)
            for q, query in enumerate(self._order):
                y = q - _GROUP / 2 + thickness * (s + 0.5)
                point = self.point(label, query)
                if point is None:
                    continue
                if point.status == OK and point.mean_s is not None and math.isfinite(point.mean_s):
                    differs = self.differs(label, query)
                    self._add(pg.BarGraphItem(x0=[0], width=[point.mean_s], y=[y], height=[thickness * 0.9],
                                              **self._look(colour, differs, theme)))
                    text = f" {format_seconds(point.mean_s)}" + (f"  {DIFFERS_TEXT}" if differs else "")
                    self._label(text, point.mean_s, y, theme.error if differs else theme.text)
                else:
                    colour_of = {FAILED: theme.error, NOT_SUPPORTED: theme.warning}.get(point.status, theme.muted)
                    self._label(f" {point.status}", 0.0, y, colour_of)
        self._legend_keys = [(pg.BarGraphItem(x0=[0], width=[0], y=[0], height=[0],
                                              **self._look(series_colour(s, theme), False, theme)), label)
                             for s, label in enumerate(labels)] if len(labels) > 1 else []
        for sample, label in self._legend_keys:
            self.legend.addItem(sample, label)
        self.set_categories([(float(q), query) for q, query in enumerate(self._order)])
        self.plot_item.setXRange(0, x_max, padding=0)
        self.plot_item.setYRange(-0.55, max(len(self._order), 1) - 0.45, padding=0)

    @staticmethod
    def _look(colour: str, differs: bool, theme: Theme) -> dict:
        if differs:
            return {"brush": QBrush(QColor(theme.error), Qt.BrushStyle.BDiagPattern),
                    "pen": pg.mkPen(theme.error, width=2)}
        return {"brush": pg.mkBrush(colour), "pen": pg.mkPen(theme.window, width=1)}


    # ---- clicks -----------------------------------------------------------------------------
    def query_at(self, scene_pos) -> str | None:
        """The query whose row holds a point of the scene (None outside the plot)."""
        view = self.plot_item.getViewBox()
        if not view.sceneBoundingRect().contains(scene_pos):
            return None
        index = round(view.mapSceneToView(scene_pos).y())
        return self._order[index] if 0 <= index < len(self._order) else None

    def describe(self, query: str) -> str:
        """What a query asks and each series' figures (the hover text)."""
        points = {label: self.point(label, query) for label in self._series}
        first = next((p for p in points.values() if p is not None), None)
        lines = [f"{query} · {first.category}" if first and first.category else query]
        if first and first.description:
            lines.append(first.description)
        for label, p in points.items():
            if p is None:
                continue
            figures = p.status if p.status != OK else (
                f"mean {format_seconds(p.mean_s)}" + (f", p50 {format_seconds(p.p50_s)}" if p.p50_s is not None else "")
                + (f", min {format_seconds(p.min_s)}" if p.min_s is not None else "") + f", {plural(p.runs, 'run')}")
            answer = f" · answer {p.fingerprint[:8]}" + (" (differs)" if self.differs(label, query) else "") \
                if p.fingerprint else ""
            lines.append(f"{label}: {figures}{answer}")
        return "\n".join(lines)

    def _on_hover(self, scene_pos) -> None:
        query = self.query_at(scene_pos)
        if query is None:
            QToolTip.hideText()
        else:
            QToolTip.showText(QCursor.pos(), self.describe(query), self.graphics)

    def _on_click(self, event) -> None:
        query = self.query_at(event.scenePos())
        if query is not None:
            self.query_clicked.emit(query)
