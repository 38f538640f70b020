"""A demo card fits its screen: the summary of six findings at 1366x768 cut its last ones off, under
a blank band of empty lines."""
from __future__ import annotations

import pytest

from app.demo.mode import demo_font_scale
from widgets.reports.demo_card import DemoCard, SMALLEST_FIT
from widgets.common.theme import apply_theme
from workloads.reproduce.findings import Finding

WHY = ("the published knee is 2.7 users on this machine's 2 hardware threads, as 64 users on the report's 48; "
       "no knee this run can show: within the ±35 % two runs differ by, throughput could stop growing at 2 or 4")
SIX = [Finding("002", f"finding {i}: users where throughput stops growing", "64 users", "2–4 users",
               verdict, WHY, ()) for i, verdict in enumerate(("holds", "inconclusive", "holds", "holds more strongly",
                                                              "holds", "does not hold"))]


@pytest.fixture
def card(qtbot, qapp):
    def make(size):
        apply_theme(qapp, "dark", demo_font_scale(size[1]))
        made = DemoCard()
        qtbot.addWidget(made)
        made.resize(*size)
        made.show()
        qtbot.waitExposed(made)
        return made
    yield make
    apply_theme(qapp, "light", 1.0)


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_a_summary_of_six_findings_fits_the_screen_every_one_on_it(card, size):
    shown = card(size)
    shown.show_summary(SIX)
    assert shown.fits()
    assert all(f"finding {i}" in shown.verdicts.text() for i in range(6))
    assert shown.verdicts.geometry().bottom() <= shown.keys.geometry().top()     # nothing under the key hints


def test_a_card_that_fits_keeps_its_full_size_and_one_too_tall_shrinks_no_further_than_it_must(card):
    shown = card((1366, 768))
    shown.show_summary(SIX[:1])
    full = shown.verdicts.font().pointSizeF()
    shown.show_summary(SIX)
    smaller = shown.verdicts.font().pointSizeF()
    assert SMALLEST_FIT * full <= smaller < full
    shown._shrink = round(shown._shrink + 0.05, 2)        # one step larger would not fit
    shown._restyle()
    assert not shown.fits()
    shown.show_summary(SIX[:1])
    assert shown.verdicts.font().pointSizeF() == pytest.approx(full)


def test_empty_lines_leave_no_band_between_a_summarys_heading_and_its_findings(card):
    shown = card((1366, 768))
    shown.show_summary(SIX[:2])
    gap = shown.verdicts.geometry().top() - shown.body.geometry().bottom()
    assert gap <= 2 * 16 + 2 * shown.layout().spacing() + 4        # the two spacings, no empty label between
