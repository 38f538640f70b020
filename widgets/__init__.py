"""Reusable Qt widgets of Tickbench: charts, worker grid, forms, run history, exporters, themes."""
