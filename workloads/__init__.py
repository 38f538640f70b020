"""Tickbench engine: datasets, targets, workloads, worker processes, metrics, results store.

Qt-free and usable headless; nothing here imports PySide6, pyqtgraph, ``app`` or ``widgets``.
"""

import pandas as _pandas

if int(_pandas.__version__.split(".")[0]) < 3:
    # ArcticDB pins pandas<3, so an install with every engine has pandas 2: give it pandas 3's
    # semantics (Arrow-backed "str" columns, copy-on-write) so every figure means the same thing.
    _pandas.set_option("future.infer_string", True)
    _pandas.set_option("mode.copy_on_write", True)
