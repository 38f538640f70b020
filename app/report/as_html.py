"""The run report's HTML: Jinja2 templates (resources/templates/report, autoescape on) rendered from
plain data, tables as data (`Table`, `Cell`) that lay out the same in a browser and in Qt's
QTextDocument (the PDF), and the number, size, duration and time formats the report uses.

Python prepares data; the templates write every tag. Text from the store (run names, messages,
versions) is escaped by Jinja2 wherever it lands, so a run named ``<script>`` reads as that name.
"""
from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jinja2
import numpy as np
import pandas as pd
from markupsafe import Markup, escape

from workloads.paths import resources_dir

TEMPLATES = "templates"          # under resources/
SHOWN_PX = 640                   # width of a chart in the document (fits A4 with 15 mm margins)


# --- tables as data --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    """A table cell (or header) with more than plain text: a grey second line (a run's id under its
    name), a class for the text ('published', 'measured', 'error', a verdict), a link to an anchor
    of the same report; or several such pieces, one under the other (``lines``) or one after the
    other on a line that may wrap between them (``parts``)."""

    text: str = ""
    sub: str = ""
    css: str = ""
    href: str = ""
    lines: tuple[Cell, ...] = ()
    parts: tuple[Cell, ...] = ()
    mark: str = ""               # a superscript after the text (which hardware a figure was on)


@dataclass
class Table:
    """A bordered table; cells from ``numeric_from`` up to ``numeric_to`` are right-aligned. Only the
    ``wrap`` columns break their text over lines, headers included: a narrow column must never break
    a word ("complete-d", "Worklo-ad"). A header's unit goes on a line of its own ("p50\\nms")."""

    columns: list[str | Cell]
    rows: list[list[Any]]
    numeric_from: int | None = None
    numeric_to: int | None = None
    show_header: bool = True
    wrap: tuple[int, ...] = ()
    css: str = ""                # a class on the table (the reproduction's tables)
    widths: list[str] = field(default_factory=list)    # a width per column ("40%") on the header, or none

    def numeric(self, column: int) -> bool:
        return self.numeric_from is not None and column >= self.numeric_from and (
            self.numeric_to is None or column < self.numeric_to)

    def __bool__(self) -> bool:          # a table without rows is left out ({% if s.errors %})
        return bool(self.rows)


def html_table(columns: list[str | Cell], rows: list[list[Any]], numeric_from: int | None = None,
               numeric_to: int | None = None, show_header: bool = True, wrap: tuple[int, ...] = ()) -> str:
    """One table as HTML (the template's own table macro), for callers outside the templates."""
    table = Table(columns, rows, numeric_from, numeric_to, show_header, wrap)
    return str(environment().get_template("report/macros.html").module.table(table))


# --- templates -----------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The report's templates, from resources/templates (also inside the frozen build)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(resources_dir() / TEMPLATES),
                             autoescape=True,      # every template and string: data is never markup
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters.update(lines=lines, b64=lambda data: base64.b64encode(data).decode("ascii"))
    env.tests.update(cell=lambda value: isinstance(value, Cell))
    env.globals.update(SHOWN_PX=SHOWN_PX)
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def lines(text: Any) -> Markup:
    """Text whose line breaks show as line breaks (a header's unit on a line of its own)."""
    return Markup("<br>").join(escape(part) for part in str(text).split("\n"))


# --- formats -------------------------------------------------------------------------------------------

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


RATE_UNITS = {"rows/s": ((1e9, "G rows/s"), (1e6, "M rows/s"), (1e3, "k rows/s"), (1.0, "rows/s")),
              "B/s": ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "KB/s"), (1.0, "B/s"))}


def fmt_rate(value: float, base: str) -> str:
    """A rate in ``base`` units ("rows/s", "B/s") in the largest unit that keeps it at 1 or more:
    12,800 rows/s -> '12.8 k rows/s', never '0.0128 M rows/s'."""
    for factor, unit in RATE_UNITS[base]:
        if abs(value) >= factor or factor == 1.0:
            return f"{fmt_num(value / factor)} {unit}"
    raise AssertionError("unreachable: the last unit takes any value")


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
