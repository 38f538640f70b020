"""Light and dark high-contrast themes, a font scale for demos, and the fixed colours of Tickbench.

Colours come from the Okabe-Ito palette (readable with the common colour-vision deficiencies).
A phase (io, query, server, transfer, decode) and a worker state keep one colour everywhere,
in both themes, so a reader learns them once.

Charts built before a theme change follow it: they listen to `theme_notifier().changed`.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

# Okabe & Ito (2008), "Color Universal Design".
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}

# Canonical order of phases inside a stacked bar: the order data flows through them.
PHASE_ORDER = ("io", "read", "query", "server", "transfer", "decode", "other")
PHASE_COLOURS = {
    "io": OKABE_ITO["sky_blue"],
    "read": OKABE_ITO["blue"],
    "query": OKABE_ITO["bluish_green"],
    "server": OKABE_ITO["reddish_purple"],
    "transfer": OKABE_ITO["orange"],
    "decode": OKABE_ITO["vermillion"],
}
_OTHER_PHASE_COLOURS = (OKABE_ITO["yellow"], "#5A5A5A", "#B07A2A")

WORKER_STATE_COLOURS = {
    "starting": "#8C8C8C",
    "ready": OKABE_ITO["sky_blue"],
    "running": OKABE_ITO["blue"],
    "measured": OKABE_ITO["reddish_purple"],    # measured operations over, probes follow
    "done": OKABE_ITO["bluish_green"],
    "failed": OKABE_ITO["vermillion"],
    "cancelled": OKABE_ITO["yellow"],
}


@dataclass(frozen=True)
class Theme:
    name: str
    window: str          # widget backgrounds and chart backgrounds (one surface, no boxes in boxes)
    base: str            # text fields, tables
    alt_base: str        # alternate table rows
    text: str
    muted: str           # secondary text, grid lines
    accent: str          # selection, progress
    error: str
    warning: str
    series: tuple[str, ...]  # line colours in order of use, the weakest on this background last
    font_scale: float = 1.0


LIGHT = Theme(
    name="light", window="#FFFFFF", base="#FFFFFF", alt_base="#F0F0F0", text="#000000",
    muted="#555555", accent=OKABE_ITO["blue"], error="#B00000", warning="#8A5A00",
    # yellow and sky blue are weak on white: last
    series=(OKABE_ITO["blue"], OKABE_ITO["vermillion"], OKABE_ITO["bluish_green"],
            OKABE_ITO["reddish_purple"], OKABE_ITO["orange"], OKABE_ITO["black"],
            OKABE_ITO["sky_blue"], OKABE_ITO["yellow"]),
)
DARK = Theme(
    name="dark", window="#000000", base="#101010", alt_base="#1C1C1C", text="#FFFFFF",
    muted="#B0B0B0", accent=OKABE_ITO["sky_blue"], error="#FF6B5B", warning=OKABE_ITO["yellow"],
    # blue and black are weak on black: last / absent
    series=(OKABE_ITO["sky_blue"], OKABE_ITO["orange"], OKABE_ITO["bluish_green"],
            OKABE_ITO["reddish_purple"], OKABE_ITO["yellow"], OKABE_ITO["vermillion"],
            "#FFFFFF", OKABE_ITO["blue"]),
)
THEMES = {"light": LIGHT, "dark": DARK}


class _ThemeNotifier(QObject):
    changed = Signal(object)   # the new Theme


_current: Theme = LIGHT
_notifier: _ThemeNotifier | None = None
_BASE_POINT_SIZE_PROPERTY = "tickbench_base_point_size"


def theme_notifier() -> _ThemeNotifier:
    """The object whose `changed(Theme)` signal fires after apply_theme()."""
    global _notifier
    if _notifier is None:
        _notifier = _ThemeNotifier()
    return _notifier


def current_theme() -> Theme:
    return _current


def series_colour(index: int, theme: Theme | None = None) -> str:
    colours = (theme or _current).series
    return colours[index % len(colours)]


REMAINDER_COLOUR = "#9A9A9A"   # "other": the part of an operation no phase covers; not a phase


def phase_colour(phase: str) -> str:
    """Fixed colour of a phase; unknown phases get a stable colour from their name."""
    if phase == "other":
        return REMAINDER_COLOUR
    if phase in PHASE_COLOURS:
        return PHASE_COLOURS[phase]
    return _OTHER_PHASE_COLOURS[sum(map(ord, phase)) % len(_OTHER_PHASE_COLOURS)]


def worker_state_colour(state: str) -> str:
    return WORKER_STATE_COLOURS.get(state, "#FF00FF")


def readable_text_colour(background: str) -> str:
    """Black or white, whichever reads better on `background` (WCAG relative luminance)."""
    c = QColor(background)

    def channel(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    lum = 0.2126 * channel(c.red()) + 0.7152 * channel(c.green()) + 0.0722 * channel(c.blue())
    return "#000000" if lum > 0.179 else "#FFFFFF"


def chart_point_size(theme: Theme | None = None) -> float:
    """Font size for chart text: the application font (already scaled by apply_theme)."""
    app = QApplication.instance()
    size = app.font().pointSizeF() if app is not None else -1
    return size if size > 0 else 9.0 * (theme or _current).font_scale


def _palette(theme: Theme) -> QPalette:
    p = QPalette()
    role, group = QPalette.ColorRole, QPalette.ColorGroup
    colours = {
        role.Window: theme.window, role.WindowText: theme.text, role.Base: theme.base,
        role.AlternateBase: theme.alt_base, role.Text: theme.text, role.Button: theme.alt_base,
        role.ButtonText: theme.text, role.ToolTipBase: theme.base, role.ToolTipText: theme.text,
        role.Highlight: theme.accent, role.HighlightedText: readable_text_colour(theme.accent),
        role.PlaceholderText: theme.muted, role.Link: theme.accent, role.BrightText: theme.error,
        role.Light: theme.alt_base, role.Mid: theme.muted, role.Dark: theme.muted,
    }
    for r, colour in colours.items():
        p.setColor(r, QColor(colour))
    for r in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(group.Disabled, r, QColor(theme.muted))
    return p


def apply_theme(app: QApplication, name: str = "light", font_scale: float = 1.0) -> Theme:
    """Apply a theme to the whole application and to pyqtgraph; return it.

    name: "light" or "dark". font_scale: 1.0 normally, e.g. 1.5 for a "demo" on a projector.
    """
    global _current
    if name not in THEMES:
        raise ValueError(f"unknown theme {name!r}: choose one of {', '.join(THEMES)}")
    if not 0.5 <= font_scale <= 4.0:
        raise ValueError(f"font scale {font_scale} is outside 0.5 .. 4.0")
    theme = Theme(**{**THEMES[name].__dict__, "font_scale": font_scale})

    if app.style().name().lower() != "fusion":    # restyling every widget again on each switch is slow
        app.setStyle("Fusion")   # the only built-in style that honours a palette on every platform
    app.setPalette(_palette(theme))
    # Remember the platform's font size once, so repeated calls scale from it, not from each other.
    base = app.property(_BASE_POINT_SIZE_PROPERTY)
    if base is None:
        base = app.font().pointSizeF() if app.font().pointSizeF() > 0 else 9.0
        app.setProperty(_BASE_POINT_SIZE_PROPERTY, base)
    font = QFont(app.font())
    font.setPointSizeF(float(base) * font_scale)
    app.setFont(font)
    app.setStyleSheet(
        f"QToolTip {{ color: {theme.text}; background: {theme.base}; border: 1px solid {theme.muted}; }}\n"
        f"QLabel[role=\"error\"] {{ color: {theme.error}; font-weight: bold; }}\n"
        f"QLabel[role=\"warning\"] {{ color: {theme.warning}; }}\n"
        f"QLabel[role=\"muted\"] {{ color: {theme.muted}; }}\n"
    )
    pg.setConfigOptions(background=theme.window, foreground=theme.text, antialias=True)
    _current = theme
    theme_notifier().changed.emit(theme)
    return theme
