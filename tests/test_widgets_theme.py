"""Themes: palette, fonts, pyqtgraph colours, fixed phase colours, charts following a change."""
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor, QPalette

from widgets.charts.live import TimeSeriesChart
from widgets.common.theme import (OKABE_ITO, PHASE_COLOURS, PHASE_ORDER, WORKER_STATE_COLOURS, apply_theme,
                           current_theme, phase_colour, readable_text_colour, series_colour)
from workloads.run.snapshot import WORKER_STATES


def test_dark_theme_sets_palette_and_pyqtgraph(qapp, light_theme):
    theme = apply_theme(qapp, "dark")
    assert qapp.palette().color(QPalette.ColorRole.Window) == QColor(theme.window)
    assert qapp.palette().color(QPalette.ColorRole.WindowText) == QColor("#FFFFFF")
    assert pg.getConfigOption("background") == theme.window
    assert pg.getConfigOption("foreground") == theme.text
    assert current_theme().name == "dark"
    apply_theme(qapp, "light")
    assert qapp.palette().color(QPalette.ColorRole.Window) == QColor("#FFFFFF")


def test_font_scale_scales_from_the_base_size_not_cumulatively(qapp, light_theme):
    base = qapp.font().pointSizeF()
    apply_theme(qapp, "dark", 1.5)
    apply_theme(qapp, "dark", 1.5)
    assert qapp.font().pointSizeF() == pytest.approx(base * 1.5)
    apply_theme(qapp, "light", 1.0)
    assert qapp.font().pointSizeF() == pytest.approx(base)


def test_bad_theme_arguments_say_what_is_wrong(qapp, light_theme):
    with pytest.raises(ValueError, match="unknown theme 'blue'"):
        apply_theme(qapp, "blue")
    with pytest.raises(ValueError, match="font scale 9"):
        apply_theme(qapp, "light", 9)


def test_phase_and_state_colours_are_fixed_distinct_and_okabe_ito(qapp):
    colours = [phase_colour(p) for p in PHASE_ORDER]
    assert len(set(colours)) == len(PHASE_ORDER)
    assert set(PHASE_COLOURS.values()) <= set(OKABE_ITO.values())
    assert phase_colour("io + decode") == phase_colour("io + decode")   # stable for unknown phases
    assert set(WORKER_STATE_COLOURS) == set(WORKER_STATES)
    assert len(set(WORKER_STATE_COLOURS.values())) == len(WORKER_STATES)


def test_series_colours_avoid_weak_contrast_first(qapp, light_theme):
    first_light = [series_colour(i) for i in range(4)]
    assert OKABE_ITO["yellow"] not in first_light            # yellow on white is unreadable
    apply_theme(qapp, "dark")
    first_dark = [series_colour(i) for i in range(4)]
    assert OKABE_ITO["black"] not in first_dark and OKABE_ITO["blue"] not in first_dark


def test_readable_text_colour_picks_contrast():
    assert readable_text_colour("#FFFFFF") == "#000000"
    assert readable_text_colour("#000000") == "#FFFFFF"
    assert readable_text_colour(OKABE_ITO["yellow"]) == "#000000"


def test_existing_chart_follows_a_theme_change(qapp, make_widget):
    chart = make_widget(TimeSeriesChart, "t", y_unit="s")
    chart.append("a", 0, 1)
    apply_theme(qapp, "dark")
    assert chart.graphics.backgroundBrush().color() == QColor(current_theme().window)
    axis = chart.plot_item.getAxis("left")
    assert axis.textPen().color() == QColor("#FFFFFF")


def test_legend_labels_follow_a_theme_change(qapp, make_widget):
    from widgets.charts.live import TimeSeriesChart
    from widgets.common.theme import THEMES, apply_theme

    chart = make_widget(TimeSeriesChart, "Latency", y_unit="s")
    chart.add_series("p50")
    apply_theme(qapp, "dark")
    try:
        label = chart.legend.items[0][1]
        dark_text = THEMES["dark"].text.lower()
        assert dark_text in label.item.toHtml().lower() or \
            label.item.defaultTextColor().name().lower() == dark_text
    finally:
        apply_theme(qapp, "light")
