"""PyInstaller entry script: the frozen app starts exactly like the ``tickbench`` command.

``main`` calls ``multiprocessing.freeze_support()`` first, so a spawned worker that re-runs this
executable becomes a worker and never opens a window.
"""
import sys

from app.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
