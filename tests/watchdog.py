"""A hard limit on each test, beside pytest-timeout's. pytest-timeout's SIGALRM fails a test stuck in
Python, but not one stuck inside C (a Qt wait, a client's socket read, a lock): the run then hangs to
CI's limit and says nothing. faulthandler's own thread needs no GIL: past the limit it writes every
thread's stack to the terminal's stderr (kept at configure, before capture hides it) and ends the
process; xdist reports the test its worker crashed in, replaces the worker and goes on.

A pytest plugin: tests/conftest.py takes its hooks.
"""
from __future__ import annotations

import faulthandler
import os

import pytest

HARD_LIMIT_S = float(os.environ.get("TICKBENCH_TEST_HARD_LIMIT_S", "480"))
_terminal_stderr: int | None = None


def pytest_configure(config) -> None:
    global _terminal_stderr
    _terminal_stderr = os.dup(2)        # the terminal's (CI's log): a test's fd 2 is pytest's capture file


def _arm() -> None:
    faulthandler.dump_traceback_later(HARD_LIMIT_S, exit=True,
                                      file=_terminal_stderr if _terminal_stderr is not None else 2)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _arm()
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session, exitstatus):
    _arm()                                  # the session's fixtures (servers) stop here
    yield
    faulthandler.cancel_dump_traceback_later()
