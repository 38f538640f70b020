"""The results reader: answers come back on the GUI thread, newest first, and the reader thread
never calls into Qt (a Qt signal emitted from it once froze the window during a restyle)."""
from __future__ import annotations

import sys
import threading

from PySide6.QtCore import QThread

from app.window.background import Background


def test_an_answer_arrives_on_the_gui_thread_and_an_overtaken_one_is_dropped(qtbot, qapp):
    background = Background()
    slow_may_finish = threading.Event()
    answers, threads = [], []

    def record(answer):
        answers.append(answer)
        threads.append(QThread.currentThread() is qapp.thread())

    background.run("history", lambda: slow_may_finish.wait(5) and "old", record, answers.append)
    background.run("history", lambda: "new", record, answers.append)
    slow_may_finish.set()
    qtbot.waitUntil(lambda: not background.busy, timeout=5000)
    assert answers == ["new"] and threads == [True]


def test_an_error_reaches_the_error_handler_and_wait_delivers_before_it_returns(qapp):
    background = Background()
    errors, results = [], []
    background.run("a", lambda: 1 / 0, results.append, errors.append)
    background.run("b", lambda: 42, results.append, errors.append)
    assert background.wait(5000)
    assert results == [42] and [type(e) for e in errors] == [ZeroDivisionError]
    assert not background.busy


def test_the_reader_thread_makes_no_qt_call(qtbot, qapp):
    """Every function the reader thread enters is traced: none may belong to Qt (PySide6/shiboken)."""
    background = Background()
    qt_calls = []

    def tracer(frame, event, arg):
        if event == "c_call":
            # e.g. "<built-in method emit of PySide6.QtCore.SignalInstance object ...>", or a static
            # method's "... of Shiboken.ObjectType object ..." (whose __self__ reads None)
            if any(owner in repr(arg) for owner in ("PySide6.", "Shiboken.", "shiboken6.")):
                qt_calls.append(repr(arg))

    def work():
        sys.setprofile(tracer)
        return "read"

    done = []
    background.run("history", work, done.append, done.append)
    qtbot.waitUntil(lambda: done == ["read"], timeout=5000)
    background.wait()
    assert qt_calls == []
