"""HTML pieces of the run report: tables that lay out the same in a browser and in Qt's
QTextDocument (the PDF), and the number, size, duration and time formats the report uses."""
from __future__ import annotations

import html
import math
from typing import Any

import numpy as np
import pandas as pd


def fmt_num(value: Any) -> str:
    """3 significant figures, never scientific: 0.0000900, 12.5, 1,235; missing -> '–'."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or pd.isna(value):
        return "–"
    v = float(value)
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if v == 0:
        return "0"
    return np.format_float_positional(v, precision=3, unique=False, fractional=False, trim="-")


def html_table(columns: list[str], rows: list[list[Any]], numeric_from: int | None = None,
               numeric_to: int | None = None, show_header: bool = True, raw_header: bool = False,
               wrap: tuple[int, ...] = ()) -> str:
    """A bordered table; cells from ``numeric_from`` up to ``numeric_to`` are right-aligned.
    Only the ``wrap`` columns break their text over lines, headers included: a narrow column must
    never break a word ("complete-d", "Worklo-ad"). Attributes as well as CSS: QTextDocument (the
    PDF) reads the attributes."""
    out = ["<table border='1' cellspacing='0' cellpadding='3' width='100%'>"]
    if show_header:
        # a header's unit goes on a line of its own ("p50\nms"): narrow columns, no broken words
        nowrap = " class='nw'"
        cells = "".join(f"<th{'' if i in wrap else nowrap}>"
                        f"{(c if raw_header else esc(c)).replace(chr(10), '<br>')}</th>"
                        for i, c in enumerate(columns))
        out.append(f"<thead><tr>{cells}</tr></thead>")
    out.append("<tbody>")
    for row in rows:
        cells = []
        for i, value in enumerate(row):
            numeric = numeric_from is not None and i >= numeric_from and (numeric_to is None or i < numeric_to)
            attrs = " class='num' align='right'" if numeric else "" if i in wrap else " class='nw'"
            text = value if isinstance(value, Markup) else esc(str(value))
            cells.append(f"<td{attrs}>{text}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


class Markup(str):
    """Cell text that is markup already (escaped where it came from data)."""


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def fmt_int(value: Any) -> str:
    if value is None or pd.isna(value):
        return "–"
    return f"{int(value):,}"


def fmt_count(value: Any, noun: str) -> str:
    return f"{fmt_int(value)} {noun}{'' if value == 1 else 's'}"


def fmt_bytes(value: Any) -> str:
    if value is None or pd.isna(value):
        return "?"
    v = float(value)
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if v >= size:
            return f"{v / size:.3g} {unit}"
    return f"{v:.0f} B"


def fmt_duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def fmt_when(value: Any, zone: bool = True) -> str:
    """Stored times are UTC (the results store writes them so)."""
    if value is None or pd.isna(value):
        return "?"
    return f"{pd.Timestamp(value):%Y-%m-%d %H:%M:%S}" + (" UTC" if zone else "")
