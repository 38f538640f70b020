"""The charts: a shared base and its items, one module per chart, and their exporters."""
