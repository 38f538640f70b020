"""RunResultsView: a finished run's answer, the first thing on screen when it ends.

A headline ("how fast was it": rows/s, MB/s, ops/s and latency of the step that answers), the
process conditions it was measured under (forked or spawned users, settled or plain), a table
of every step with its phase split, for a sweep the sweep chart with where it stops scaling, and
the seed reports' published figures beside. It shows a ``workloads.results.run_summary.RunAnswer``: plain
data, computed off the GUI thread by the window.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QHeaderView, QLabel, QSizePolicy, QSplitter, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from widgets.charts.breakdown import format_seconds
from widgets.charts.load_latency import LoadLatencyChart
from widgets.charts.sweep import SweepChart
from workloads.results.run_summary import RunAnswer, StepAnswer
from workloads.text import plural, rate

TABLE_ROWS_SHOWN = 6              # steps in view without scrolling; the sweep chart takes the rest
PUBLISHED_LINES = 1               # one finding in view (the rest on hover): the sweep chart keeps its height
COLUMNS = ("step", "operations", "rows/s", "MB/s", "ops/s", "p50", "p95", "p99", "first op", "phases (mean)")
# an open loop's steps: what a client on the schedule waited beside what the operation took
OPEN_COLUMNS = ("step", "operations", "rows/s", "ops/s", "latency p50", "latency p99", "service p50", "service p99",
                "late · missed", "phases (mean)")


def headline_step(answer: RunAnswer) -> StepAnswer | None:
    """The step that answers "how fast": the sweep's fastest, else the only (or last) one."""
    steps = [s for s in answer.steps if s.ops] or answer.steps
    if not steps:
        return None
    moved = any(s.rows_per_s for s in steps)
    if answer.is_open_loop:     # the highest rate still served, else the lowest offered
        served = [s for s in steps if answer.load_knee_rate is None or (s.rate or 0) < answer.load_knee_rate]
        return max(served, key=lambda s: s.rate or 0.0) if served else min(steps, key=lambda s: s.rate or 0.0)
    return max(steps, key=lambda s: (s.rows_per_s if moved else s.ops_per_s) or 0.0) if answer.is_sweep else steps[-1]


def headline_text(answer: RunAnswer) -> str:
    step = headline_step(answer)
    if step is None or not step.ops:
        return "Nothing was measured" + (f": {answer.message}" if answer.message else ".")
    parts = []
    if step.rows_per_s:
        parts += [f"<b>{rate(step.rows_per_s, 'rows/s')}</b>", f"<b>{rate(step.mb_per_s, 'MB/s')}</b>"]
    parts.append(f"<b>{rate(step.ops_per_s, 'ops/s')}</b>")
    if step.rate:
        waited = " / ".join(format_seconds(v) for v in (step.latency_p50_s, step.latency_p99_s) if v is not None)
        service = " / ".join(format_seconds(v) for v in (step.p50_s, step.p99_s) if v is not None)
        parts.append(f"offered {rate(step.rate, 'ops/s')}: latency p50/p99 <b>{waited}</b> from the intended "
                     f"start, service {service}, {plural(step.late_ops, 'late start')}"
                     + (f", {plural(step.missed_ops, 'missed start')}" if step.missed_ops else ""))
    else:
        latency = " / ".join(format_seconds(v) for v in (step.p50_s, step.p95_s, step.p99_s) if v is not None)
        parts.append(f"latency p50/p95/p99 <b>{latency}</b>")
    where = f"at {plural(step.users, 'user')}" if answer.is_sweep else f"step {html.escape(step.label)}"
    return " · ".join(parts) + f"&nbsp;&nbsp;<span style='font-size:small'>({where}, {plural(step.ops, 'operation')})</span>"


class OneLineLabel(QLabel):
    """A label kept to one line, elided at its right end to its width and whole in its tooltip: a
    long line (the process conditions, three lines wrapped) would take the sweep chart's height at
    1366x768."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)   # its width from the layout

    def set_full_text(self, text: str) -> None:
        self._full = text
        self.setToolTip(text)
        self._elide()

    def full_text(self) -> str:
        return self._full

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        self.setText(self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, max(self.width(), 1)))


class RunResultsView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.answer: RunAnswer | None = None
        self.title_label = QLabel(objectName="results_title", wordWrap=True)
        self.title_label.setTextFormat(Qt.TextFormat.RichText)
        self.headline_label = QLabel(objectName="results_headline", wordWrap=True)
        self.headline_label.setTextFormat(Qt.TextFormat.RichText)
        font = self.headline_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.35)
        self.headline_label.setFont(font)
        self.knee_label = QLabel(objectName="results_knee", wordWrap=True)
        self.process_label = OneLineLabel(objectName="results_process")
        self.process_label.setProperty("role", "muted")
        self.published_label = QLabel(objectName="results_published", wordWrap=True)
        self.published_label.setProperty("role", "muted")
        self.published_label.setTextFormat(Qt.TextFormat.RichText)
        self.table = QTableWidget(0, len(COLUMNS), objectName="results_table")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)          # one line a step (the phases in full as a tooltip)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.sweep_chart = SweepChart("Throughput against users")
        self.load_chart = LoadLatencyChart()
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.sweep_chart)
        self.splitter.addWidget(self.load_chart)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)               # a taller window: a taller chart
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        for label in (self.title_label, self.headline_label, self.process_label, self.knee_label):
            layout.addWidget(label)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.published_label)
        self.clear()

    def clear(self) -> None:
        self.answer = None
        self.title_label.setText("<b>No finished run yet</b>: its answer appears here when it ends.")
        self.headline_label.setText("")
        self.knee_label.setText("")
        self.process_label.set_full_text("")
        self.published_label.setText("")
        self.table.setRowCount(0)
        self.sweep_chart.clear()
        self.sweep_chart.setVisible(False)
        self.load_chart.clear()
        self.load_chart.setVisible(False)

    def show_answer(self, answer: RunAnswer) -> None:
        self.answer = answer
        status = "" if answer.status == "completed" else f" — <b>{html.escape(answer.status)}</b>"
        self.title_label.setText(
            f"<b>{html.escape(answer.name)}</b>{status}&nbsp;&nbsp;·&nbsp;&nbsp;{html.escape(answer.target)} · "
            f"{html.escape(answer.workload)} · {html.escape(answer.dataset)} · {html.escape(answer.cache)} cache"
            f"&nbsp;&nbsp;<span style='font-size:small'>({html.escape(answer.run_id)})</span>")
        self.headline_label.setText(headline_text(answer))
        notes = [f"Users sweep: {answer.knee_note}." if answer.knee_note else "",
                 f"Open loop: {answer.load_note}." if answer.load_note else "", answer.busy,
                 *(f"{html.escape(n[0].upper() + n[1:])}." for n in answer.target_notes)]
        self.knee_label.setText(" ".join(n for n in notes if n))
        self.knee_label.setVisible(any(notes))
        # every figure depends on how the users were started and run: said beside them, never only in the report
        self.process_label.set_full_text(f"Process: {answer.conditions}" if answer.conditions else "")
        self.process_label.setVisible(bool(answer.conditions))
        self._fill_table(answer.steps, cold=answer.cache == "cold", open_loop=answer.is_open_loop)
        self._fill_sweep(answer)
        self._fill_load(answer)
        self._fit_table()
        lines = list(dict.fromkeys(answer.published))          # each finding once
        shown = lines[:PUBLISHED_LINES]
        text = "".join(f"<br>• {html.escape(line)}" for line in shown)
        if len(lines) > len(shown):
            text += f"<br>… and {len(lines) - len(shown)} more (hover)"
        self.published_label.setText(f"<b>Published</b> (the reports' own hardware):{text}" if lines else "")
        self.published_label.setToolTip("\n".join(lines))
        self.published_label.setVisible(bool(lines))

    def _fit_table(self) -> None:
        """Every step in view (up to TABLE_ROWS_SHOWN; more scroll), the sweep chart the rest."""
        rows = min(self.table.rowCount(), TABLE_ROWS_SHOWN)
        height = (self.table.horizontalHeader().height() + 2 * self.table.frameWidth()
                  + sum(self.table.rowHeight(r) for r in range(rows))
                  + (self.table.horizontalScrollBar().sizeHint().height() if rows else 0))
        self.table.setMinimumHeight(height)          # the splitter may give it more, never less
        total = max(self.splitter.height(), height + 1)
        self.splitter.setSizes([height, total - height, total - height])    # the hidden chart takes none

    def _fill_table(self, steps: list[StepAnswer], cold: bool = False, open_loop: bool = False) -> None:
        self.table.setHorizontalHeaderLabels(OPEN_COLUMNS if open_loop else COLUMNS)
        for col in (4, 5):
            self.table.horizontalHeaderItem(col).setToolTip(
                "from each operation's intended start on the step's schedule" if open_loop else "")
        self.table.setRowCount(len(steps))
        for row, step in enumerate(steps):
            phases = " · ".join(f"{p} {format_seconds(v)}" for p, v in step.phases.items())
            if phases and step.phase_source:
                phases += f" ({step.phase_source})"
            ops = f"{step.ops:,}" + (f" ({step.cold_ops:,} cold{step.cleared_note()})" if cold else "") + \
                (f" ({step.errors:,} failed)" if step.errors else "")
            if open_loop:
                cells = [step.label + (" ⚠" if step.short else ""), ops, rate(step.rows_per_s), rate(step.ops_per_s),
                         *(format_seconds(v) if v is not None else "" for v in
                           (step.latency_p50_s, step.latency_p99_s, step.p50_s, step.p99_s)),
                         f"{step.late_ops:,} · {step.missed_ops:,}", phases]
            else:
                cells = [step.label + (" ⚠" if step.short else ""), ops,
                         rate(step.rows_per_s), rate(step.mb_per_s), rate(step.ops_per_s),
                         *(format_seconds(v) if v is not None else "" for v in
                           (step.p50_s, step.p95_s, step.p99_s, step.first_op_s)),
                         phases]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col == len(COLUMNS) - 1:
                    item.setToolTip(text)
                if 0 < col < len(COLUMNS) - 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if col == 0:
                    ready = (f"users ready in {format_seconds(step.users_ready_s)} (started, set up and warmed up)"
                             if step.users_ready_s is not None else "")
                    item.setToolTip("\n".join(t for t in (step.short, ready) if t))
                if col == 1 and cold:
                    item.setToolTip(f"{step.cold_line()}: held cold when the clear before its round applied "
                                    "something, the kernel held none of the layout's files after it, and no "
                                    "other operation of its round read the same day"
                                    + (f"\n{step.not_cold_line()}" if step.not_cold else ""))
                self.table.setItem(row, col, item)

    def _fill_sweep(self, answer: RunAnswer) -> None:
        self.sweep_chart.clear()
        self.sweep_chart.reset_view()
        if not answer.is_sweep:
            self.sweep_chart.setVisible(False)
            return
        moved = any(s.rows_per_s for s in answer.steps)
        metric, unit = ("rows_per_s", "rows/s") if moved else ("ops_per_s", "ops/s")
        self.sweep_chart.set_y_axis("", unit)        # the title says throughput: a short axis fits the unit alone
        for sweep in answer.published_sweeps:
            if sweep.metric == metric:
                self.sweep_chart.set_series(sweep.label, sweep.users, sweep.values, reference=True)
        self.sweep_chart.set_series(answer.target, [s.users for s in answer.steps],
                                    [getattr(s, metric) or 0.0 for s in answer.steps])
        if answer.knee_users is not None:
            knee = next(s for s in answer.steps if s.users == answer.knee_users)
            self.sweep_chart.set_series(f"knee: {plural(knee.users, 'user')}", [knee.users],
                                        [getattr(knee, metric) or 0.0])
        self.sweep_chart.setVisible(True)

    def _fill_load(self, answer: RunAnswer) -> None:
        open_steps = [s for s in answer.steps if s.rate]
        self.load_chart.clear()
        self.load_chart.setVisible(bool(open_steps))
        if open_steps:
            self.load_chart.set_steps([s.rate for s in open_steps],
                                      [s.latency_p99_s or float("nan") for s in open_steps],
                                      [s.latency_p50_s or float("nan") for s in open_steps],
                                      [s.p99_s or float("nan") for s in open_steps], answer.load_knee_rate)
