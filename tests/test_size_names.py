"""A report card's size names promise no duration (issue 41: "tiny (under a minute)" stood beside
estimates of up to 2 minutes): the estimate beside them, measured for this machine, says how long."""
from __future__ import annotations

import re

from workloads.reproduce.catalog import SIZE_TEXT

TIME_WORDS = re.compile(r"\b(second|minute|hour|day)s?\b", re.IGNORECASE)


def test_size_names_carry_no_time_that_the_estimate_could_contradict():
    assert set(SIZE_TEXT) >= {"tiny", "medium", "report"}
    assert [text for text in SIZE_TEXT.values() if TIME_WORDS.search(text)] == []


def test_the_gallery_promises_no_duration_either(make_widget):
    """Its introduction said "Tiny runs take under a minute" while report 002's tiny upload took 70 s
    on a busy machine: the rows' calibrated estimates say how long, nothing else does."""
    from widgets.reports.gallery import ReportGallery

    gallery = make_widget(ReportGallery)
    assert gallery.intro_label.text() and not TIME_WORDS.search(gallery.intro_label.text())
