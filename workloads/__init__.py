"""Tickbench engine: datasets, targets, workloads, worker processes, metrics, results store.

Qt-free and usable headless; nothing here imports PySide6, pyqtgraph, ``app`` or ``widgets``.
"""
