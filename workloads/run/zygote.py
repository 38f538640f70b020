"""The last module the forkserver imports (``workloads.run.processes``), and only there: it marks
the preload as done. A user forked from the server finds it imported with the server's pid, and
with the preload as it was; the server's objects are moved out of the collector's reach
(``gc.freeze``), so a user's garbage collections never write to, and so copy, the pages it shares
with the server.

A fork the kernel refuses (out of memory, out of processes) ends multiprocessing's forkserver with a
traceback no client can read; here it ends it with ``FORK_FAILED_BASE`` + the errno instead, which
the run reads from the server's exit status to say why its users could not start."""
from __future__ import annotations

import gc
import os
import signal
import sys

from workloads.run.processes import FORK_FAILED_BASE

SERVER_PID = os.getpid()
IMPORTED = frozenset(sys.modules)      # what the server had imported: the preload, and all it imports
PLAIN_FORK = os.fork


def _fork_or_exit_saying_why() -> int:
    try:
        return PLAIN_FORK()
    except OSError as exc:
        os._exit(FORK_FAILED_BASE + min(max(exc.errno or 0, 1), 99))


os.fork = _fork_or_exit_saying_why
gc.freeze()
# A SIGTERM to the run's process group is the run's to handle (a cancel, its users stopped by it):
# the server ends when its run closes the server's "alive" pipe, as multiprocessing stops it
signal.signal(signal.SIGTERM, signal.SIG_IGN)
