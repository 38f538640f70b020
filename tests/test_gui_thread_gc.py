"""Cycles are freed on the GUI thread, never in a background reader (widgets/common/gui_thread_gc.py)."""
from __future__ import annotations

import gc
import threading

from widgets.common.gui_thread_gc import collect_anywhere, collect_on_gui_thread


class _Cycle:
    freed_in: list[int] = []

    def __init__(self):
        self.me = self

    def __del__(self):
        _Cycle.freed_in.append(threading.get_ident())


def test_a_cycle_left_by_a_background_thread_is_freed_on_the_gui_thread(qtbot, qapp):
    _Cycle.freed_in.clear()
    collect_on_gui_thread(qapp, interval_s=0.05)
    try:
        kept = []

        def background():
            _Cycle()                                         # garbage at once, only a collection frees it
            kept.append([[i] for i in range(50 * gc.get_threshold()[0])])   # enough to start a collection
        reader = threading.Thread(target=background)
        reader.start()
        reader.join()
        assert _Cycle.freed_in == []                         # not freed in the reader
        qtbot.waitUntil(lambda: bool(_Cycle.freed_in), timeout=3000)
        assert _Cycle.freed_in == [threading.get_ident()]    # but on the GUI thread's timer
    finally:
        collect_anywhere(qapp)
    assert gc.isenabled()


def test_collection_is_given_back_after_a_window_test(qapp):
    collect_on_gui_thread(qapp)
    assert not gc.isenabled()
    collect_anywhere(qapp)
    assert gc.isenabled()
