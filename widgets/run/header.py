"""The live dashboard's header: one line of the run's facts (name, status, step, users, elapsed
time, operations, errors), the latest step's figures, and the status message, kept at a fixed
height so a line that wraps never relayouts the charts below it.
"""
from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QTimer

from widgets.charts.breakdown import format_seconds
from widgets.common.theme import current_theme
from workloads.run.snapshot import LiveSnapshot, SweepPoint
from workloads.text import plural

_MAX_MESSAGE = 400
CSV_WORKLOADS = ("import", "export")      # their wire bytes are the CSV files


def step_figures_line(snap: LiveSnapshot, warning_colour: str, audience: bool = False) -> str:
    """One line of the latest step's figures, naming the step; the first operation of a fresh
    process beside the steady state; a too-short step flagged. For an ``audience`` (the demo) the
    rate and latencies alone, nothing of how they are measured."""
    point: SweepPoint | None = snap.sweep[-1] if snap.sweep else None
    if point is None:
        return ""
    moved = point.rows_per_s > 0
    rate = f"{_si(point.rows_per_s)} rows/s · {_si(point.bytes_per_s)}B/s" if moved else \
        f"{point.ops_per_s:,.1f} ops/s"
    if point.wire_bytes_per_s is not None:
        wire = "CSV" if snap.workload in CSV_WORKLOADS else "read"
        rate += f" · {wire} {_si(point.wire_bytes_per_s)}B/s"
    parts = [f"<b>Step {html.escape(point.label or str(point.users))}</b>", rate,
             f"p50 {format_seconds(point.p50)}", f"p99 {format_seconds(point.p99)}"]
    if audience:
        return " · ".join(parts[1:])
    step = snap.phase_step or snap.step_label
    if snap.first_op_s is not None and step == point.label:
        first = f"first operation in a fresh process {format_seconds(snap.first_op_s)}"
        if snap.steady_p50_s:
            first += f" ({snap.first_op_s / snap.steady_p50_s:.1f}× the steady p50)"
        parts.append(first)
    parts.append("exact" if point.exact else "live estimate")
    line = " · ".join(parts)
    if point.short:
        line += (f"<br><span style='color:{warning_colour}'>⚠ too short to measure: give the step more "
                 "operations, a duration of a few seconds, or more data (a report card: a larger size)</span>")
    return line


def _si(value: float) -> str:
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}"
    return f"{value:.3g} "


def readable_message(text: str) -> str:
    """A message fit for the status line: the last line of a traceback, trimmed, never the stack."""
    text = (text or "").strip()
    if "Traceback (most recent call last)" in text or "\n  File \"" in text:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        # the exception line is the last one not indented as a stack frame or a caret marker
        candidates = [ln for ln in lines if not ln.startswith(("File \"", "Traceback", "^", "~"))]
        text = candidates[-1] if candidates else lines[-1]
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def format_elapsed(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class DashboardHeader:
    """LiveDashboard's header, figures and message lines (a mixin: the labels are the dashboard's)."""

    audience_title = ""     # spotlit (before an audience): the run's name as the audience knows it

    def header_text(self) -> str:
        """The header as plain text (what a screen reader would say)."""
        return self.header_label.text().replace("&nbsp;", " ").replace("<b>", "").replace("</b>", "")

    def _text_labels(self) -> tuple:
        return self.header_label, self.figures_label, self.message_label, self.published_label

    # a finished run shown (nothing updates it): an empty line gives its slot back to the charts
    _settled = False

    def _fix_text_heights(self) -> None:
        """Header and figures lines keep their height whatever their text: a line that wraps one
        second and not the next would resize (and repaint) every chart below it."""
        spacing = self.fontMetrics().lineSpacing()
        # the message and published lines keep their slot even when empty while a run is live: one
        # appearing would push every chart down (a relayout and repaint of all of them, ~0.1 s)
        for label in self._text_labels():
            label.setFixedHeight(2 * spacing + 4 if label.text() else self._empty_height(label, 2 * spacing + 4))
        self._fit_text_heights()

    def _empty_height(self, label, slot: int) -> int:
        """An empty line's height: its slot while a run is live, none once it is settled. Before an
        audience only the figures may come (a message only if the run fails): the other empty
        lines were a blank band of ~110 px over the charts at 1366x768."""
        rare = self.spotlit and label in (self.message_label, self.published_label)
        return 0 if self._settled or rare else slot

    def _settle_text_heights(self, settled: bool) -> None:
        """``settled``: a finished run is shown, its empty lines collapse; else (a live run) every
        line keeps its two-line slot."""
        self._settled = settled
        self._fix_text_heights()
        self._fit_text_heights(shrink=True)

    def _fit_text_heights(self, *, shrink: bool = False) -> None:
        """A line whose text needs more than its two-line slot (a narrow window, large fonts, a
        warning under the figures) grows to show it all, never cut in half. During a run it does not
        shrink back (that would relayout the charts every second); a new run or a resize may."""
        floor = 2 * self.fontMetrics().lineSpacing() + 4
        for label in self._text_labels():
            needed = max(label.heightForWidth(label.width()), floor) if label.text() else self._empty_height(label, floor)
            if needed > label.height() or (shrink and needed < label.height()):
                label.setFixedHeight(needed)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self._fit_text_heights(shrink=True)     # the labels' new widths are set (the layout ran first)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.ApplicationFontChange):
            QTimer.singleShot(0, self, self._fix_text_heights)   # with its receiver: dropped if it is gone

    def _on_theme_changed(self, _theme) -> None:
        self._apply_text()      # the header's colours come from the theme

    def _apply_text(self) -> None:
        snap, theme = self._snapshot, current_theme()
        if snap is None:
            self.header_label.setText(
                f"<b>{html.escape(self._starting)}</b>&nbsp;&nbsp;starting: the figures follow its first operations"
                if self._starting else f"<b>{html.escape(self.audience_title)}</b>" if self.audience_title
                else "<b>No run</b>&nbsp;&nbsp;start a scenario to see live figures here")
            self.figures_label.setText("")
            self.progress.setValue(0)
            self._set_message("", error=False)
            self._fit_text_heights(shrink=True)        # no run: back to the two-line slots
            return
        status_colour = {"failed": theme.error, "cancelled": theme.warning}.get(snap.status, theme.text)
        errors = f"{snap.ops_failed:,} error{'' if snap.ops_failed == 1 else 's'}"
        if snap.ops_failed:
            errors = f"<span style='color:{theme.error}'><b>{errors}</b></span>"
        facts = [html.escape(snap.workload), f"<b>{html.escape(snap.target)}</b>",
                 *([f"{html.escape(snap.cache)} cache"] if snap.cache else [])]
        named_by_facts = all(f in (snap.name or "") for f in (snap.workload, snap.target, snap.cache))
        parts = [
            f"<b>{html.escape(snap.name or snap.run_id)}</b>",
            f"<span style='color:{status_colour}'>{html.escape(snap.status)}</span>",
            *([] if named_by_facts else facts),       # a descriptive name says them already
            f"step {snap.step_index + 1}/{max(snap.steps_total, 1)}",
            f"{snap.users} user{'s' if snap.users != 1 else ''}",
            f"elapsed {format_elapsed(snap.elapsed_s)}",
            plural(snap.ops_done, "op"),
            errors,
        ]
        if snap.name:       # a descriptive name hides the id a stored run is found by: beside it
            parts.append(f"<span style='font-size:small'>{html.escape(snap.run_id)}</span>")
        if self.spotlit:        # an audience: what runs, with how many users, how long; no internals, no run id
            parts = [f"<b>{html.escape(self.audience_title or snap.name or snap.workload)}</b>",
                     *([] if snap.status in ("running", "completed") else
                       [f"<span style='color:{status_colour}'>{html.escape(snap.status)}</span>"]),
                     plural(snap.users, "user"), format_elapsed(snap.elapsed_s),
                     *([errors] if snap.ops_failed else [])]
        if snap.replayed_from:      # first and in words: an audience must never take a replay for a live run
            parts.insert(0, f"<span style='color:{theme.warning}'><b>REPLAY · "
                            f"{html.escape(snap.replayed_from)}</b></span>")
        self.header_label.setText("&nbsp;&nbsp;·&nbsp;&nbsp;".join(parts))
        self.figures_label.setText(step_figures_line(snap, theme.warning, audience=bool(self.spotlit)))
        value = round(min(max(snap.progress, 0.0), 1.0) * 1000)
        if abs(value - self.progress.value()) >= 2 or value in (0, 1000):     # a styled bar repaints dearly
            self.progress.setValue(value)
        message = readable_message(snap.message)
        failed = snap.status == "failed" or bool(snap.worker_errors)
        if not message and snap.status == "failed":
            message = "The run failed." + (" Hover a red worker for its error." if snap.worker_errors else "")
        elif not message and snap.worker_errors:
            message = f"{plural(len(snap.worker_errors), 'worker')} failed: hover a red cell for the error."
        self._set_message(message if failed or not self.spotlit else "", error=failed)   # an audience: errors only
        self._fit_text_heights()

    def _set_message(self, text: str, *, error: bool) -> None:
        self.message_label.setText(text)
        colour = current_theme().error if error else current_theme().text
        self.message_label.setStyleSheet(f"color: {colour};" + (" font-weight: bold;" if error else ""))
