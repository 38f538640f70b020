"""Reusable Qt widgets of Tickbench: charts, worker grid, forms, run history, exporters, themes."""
from widgets.qt_runtime import guard_none_refcount

guard_none_refcount()   # before any widget code runs: see qt_runtime for the PySide6 6.12.0 bug
