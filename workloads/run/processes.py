"""How a step's users are started, and the process conditions every figure is measured under.

**Start.** By default a step's users are forked from multiprocessing's forkserver, a process that
has imported numpy, pandas, pyarrow, Tickbench's worker and the run's target client once (the
preload): every user shares those pages copy-on-write and starts in milliseconds, where a spawned
user imports them all again (~60 MiB and seconds each). Each step still gets fresh processes, so
"the first operation of a fresh process" keeps its meaning: a fresh process is one forked from the
preloaded server, that has run nothing of the benchmark yet; ``start="spawn"`` gives a fully cold
interpreter instead. Where there is no forkserver (Windows) users are spawned and the run says so.

What may not cross a fork is kept out of the server: it imports only, with every library's thread
pool held at one thread (``SINGLE_THREAD_ENV``: it is single-threaded when it forks, and a test
checks it), opens no connection or data file, and draws no random number; a user gives the
libraries their usual threads back, seeds and connects after it (``enter_user``). A client library
that starts threads when imported (chDB) is not preloaded (``Engine.preload``).

**Process.** ``settled`` (the default): the allocator as a long-lived client's
(``workloads.run.allocator``) and pandas 3's string semantics (``workloads/__init__``): what a
Jupyter kernel that has read a few days does. ``plain``: glibc's and the installed pandas' own
defaults, as a fresh script would run; a user timing the call in a notebook sees figures between the
two. Both are recorded with every run (``conditions``) and shown beside its figures.

multiprocessing has no public call for three things done here, so they reach into its
``forkserver._forkserver`` (the same in CPython 3.11-3.14): the server's pid (to see it die), a stop
of a server that lacks a run's preload, and a forked user's end of the server's "alive" pipe.
"""
from __future__ import annotations

import importlib.util
import multiprocessing as mp
import os
import signal
import sys
import threading
from typing import Any

START_METHODS = ("forkserver", "spawn")
PROCESSES = ("settled", "plain")
# imported once by the forkserver for every run: what each user would otherwise import itself
BASE_PRELOAD = ("numpy", "pandas", "pyarrow", "pyarrow.parquet", "pyarrow.feather", "pyarrow.ipc", "psutil",
                "workloads.run.worker", "workloads.operations", "workloads.datasets", "workloads.targets")
# the libraries' thread pools, held at one thread in the forkserver (they start threads when imported)
SINGLE_THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     "NUMEXPR_NUM_THREADS": "1", "JE_ARROW_MALLOC_CONF": "background_thread:false"}
HELD_VARIABLE = "TICKBENCH_FORKSERVER_HELD"     # which of those the forkserver's environment had added
ZYGOTE = "workloads.run.zygote"                 # imported last: marks the preload done (and freezes the gc)
FORK_FAILED_BASE = 100          # the forkserver's exit code when a fork failed: this plus the errno
FORK_FAILED_WORDS = "a fork failed"
_lock = threading.Lock()
_running_preload: tuple[str, ...] | None = None


def available_start(requested: str) -> str:
    """The start method a run uses: ``requested`` where this platform has it, else spawn."""
    if requested not in START_METHODS:
        raise ValueError(f"start must be one of {', '.join(START_METHODS)}, not {requested!r}")
    return requested if requested in mp.get_all_start_methods() else "spawn"


def preload_for(target_kind: str) -> tuple[str, ...]:
    """The modules the forkserver imports for a run on ``target_kind``: the base ones, the target's
    own and its fork-safe client modules, those that are installed; the zygote marker last."""
    from workloads.targets.engines import engine
    try:
        own = engine(target_kind).preload
    except KeyError:
        own = ()
    wanted = [*BASE_PRELOAD, *own]
    return tuple(dict.fromkeys(m for m in wanted if _installed(m))) + (ZYGOTE,)


def preload_for_all(target_kinds) -> tuple[str, ...]:
    """One forkserver's preload for users of several targets (runs taking turns): each one's, once."""
    modules = (m for kind in target_kinds for m in preload_for(kind) if m != ZYGOTE)
    return tuple(dict.fromkeys(modules)) + (ZYGOTE,)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def user_context(start: str, preload: tuple[str, ...] = ()):
    """The multiprocessing context a step's users start from: ``spawn``, or the forkserver running
    with ``preload`` (started, or restarted when the one running lacks some of it)."""
    if start != "forkserver":
        return mp.get_context("spawn")
    context = mp.get_context("forkserver")
    from multiprocessing import forkserver
    global _running_preload
    with _lock:
        server = forkserver._forkserver
        alive = server._forkserver_pid is not None and _alive(server._forkserver_pid)
        # a server that imported all of ``preload`` serves (a test process's runs on several targets)
        if not alive or _running_preload is None or not set(preload) <= set(_running_preload):
            _stop_server(server)               # a dead one's leftovers, or another run's preload
            server.set_forkserver_preload(list(preload))
            held = {k: v for k, v in SINGLE_THREAD_ENV.items() if k not in os.environ}
            os.environ.update({**held, HELD_VARIABLE: ",".join(held)})
            try:
                server.ensure_running()
            finally:
                for key in (*held, HELD_VARIABLE):
                    os.environ.pop(key, None)
            _running_preload = preload
    return context


def forkserver_pid() -> int | None:
    """The pid of this process's forkserver, None when none runs."""
    from multiprocessing import forkserver
    pid = forkserver._forkserver._forkserver_pid
    return pid if pid is not None and _alive(pid) else None


def _alive(pid: int) -> bool:
    """Whether the child ``pid`` still runs, without reaping it (a dead one stays for ``_stop``)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
    except ChildProcessError:
        return False


def _stop_server(server) -> None:
    """multiprocessing's own stop, and its leftovers cleared where the server had died already."""
    if server._forkserver_pid is None:
        return
    try:
        server._stop_unlocked()
    except ChildProcessError:           # reaped by someone else: forget it as ``_stop`` would have
        address = server._forkserver_address
        server._forkserver_pid = server._forkserver_address = None
        if address and os.path.exists(address):
            os.unlink(address)


def server_end(pid: int) -> str:
    """"" while the forkserver ``pid`` runs; else how it ended, in words (without reaping it)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return f"the forkserver that starts the users (pid {pid}) is gone"
    if info is None:
        return ""
    if info.si_code == os.CLD_EXITED:
        code = info.si_status
        if FORK_FAILED_BASE < code < FORK_FAILED_BASE + 100:
            errno = code - FORK_FAILED_BASE
            return (f"{FORK_FAILED_WORDS}: [Errno {errno}] {os.strerror(errno)} (this machine is out of memory "
                    "or of processes for this user: see free -m and ulimit -u)")
        return f"the forkserver that starts the users (pid {pid}) exited with code {code}"
    try:
        how = f"killed by {signal.Signals(info.si_status).name}"
    except ValueError:
        how = f"killed by signal {info.si_status}"
    return f"the forkserver that starts the users (pid {pid}) was {how}"


def stop_forkserver() -> None:
    """Stop this process's forkserver, if one runs (its users are not touched)."""
    from multiprocessing import forkserver
    global _running_preload
    with _lock:
        _stop_server(forkserver._forkserver)
        _running_preload = None


# --- in the user -------------------------------------------------------------------------------
def enter_user(process: str, seed: list[int], preload: tuple[str, ...] = (),
               environ: dict[str, str] | None = None) -> dict[str, Any]:
    """A user's first step, before it builds anything: a forked user's environment made the run's
    (``environ``: the server's is as it was when it started) and the libraries' threads given back,
    its random state seeded, its process conditions set; what it is run under."""
    from workloads.run import allocator
    forked = _forked()
    threads_left: list[str] = []
    if forked:
        _leave_server()
        threads_left = _give_threads_back(environ)
    _seed(seed)
    if process == "plain":
        _plain_pandas()
        malloc = "glibc defaults (left as a fresh process has them)" if allocator._glibc() else \
            allocator.describe_allocator()
    else:
        malloc = allocator.settle_allocator()["allocator"]
    return {"start": "forkserver" if forked else "spawn", "process": process, "allocator": malloc,
            "strings": string_semantics(), "preloaded": preloaded_modules(preload) if forked else [],
            **({"note": "; ".join(threads_left)} if threads_left else {})}


def _forked() -> bool:
    zygote = sys.modules.get(ZYGOTE)
    return zygote is not None and zygote.SERVER_PID != os.getpid()


def preloaded_modules(preload: tuple[str, ...]) -> list[str]:
    """Which of ``preload`` the server had imported before this (forked) process began."""
    zygote = sys.modules.get(ZYGOTE)
    return [] if zygote is None else [m for m in preload if m in zygote.IMPORTED and m != ZYGOTE]


def _leave_server() -> None:
    """What a forked user must not keep of its server: the fork that exits on failure, and its end
    of the server's "alive" pipe (held, it would keep the server, and so this user, running after
    the run's process died)."""
    from multiprocessing import forkserver
    zygote = sys.modules[ZYGOTE]
    os.fork = zygote.PLAIN_FORK
    fd = forkserver._forkserver._forkserver_alive_fd
    if fd is not None:
        try:
            os.close(fd)
        except OSError:         # closed already: this user holds nothing of the pipe either way
            pass
        forkserver._forkserver._forkserver_alive_fd = None


def _give_threads_back(environ: dict[str, str] | None) -> list[str]:
    """The libraries' thread pools as a spawned user's would be; what could not be given back, in
    words (recorded with the user's conditions: a pool left at one thread changes what it measures)."""
    held = [k for k in os.environ.get(HELD_VARIABLE, "").split(",") if k]
    for key in (*held, HELD_VARIABLE):
        os.environ.pop(key, None)
    if environ is not None:            # the run's own, as a spawned user inherits it
        os.environ.clear()
        os.environ.update(environ)
    left: list[str] = []
    if "NUMEXPR_NUM_THREADS" in held and "numexpr" in sys.modules:
        try:
            from numexpr.utils import _init_num_threads
            _init_num_threads()               # as numexpr sets itself up on import, from the environment
        except Exception as exc:  # numexpr's private helper moved
            left.append(f"numexpr kept one thread ({type(exc).__name__})")
    if "OPENBLAS_NUM_THREADS" in held:
        try:
            from threadpoolctl import threadpool_limits
            threadpool_limits(limits=os.cpu_count() or 1, user_api="blas")   # OpenBLAS's own default
        except Exception as exc:  # no threadpoolctl
            left.append(f"BLAS kept one thread ({type(exc).__name__})")
    return left


def _seed(seed: list[int]) -> None:
    """Each user draws its own numbers: a forked user must not repeat its server's (or a sibling's)."""
    import random

    import numpy as np
    entropy = np.random.SeedSequence(seed)
    random.seed(int(entropy.generate_state(1)[0]))
    np.random.seed(entropy.generate_state(1)[0])


def _plain_pandas() -> None:
    """The installed pandas' own defaults, where ``workloads/__init__`` gave pandas 2 pandas 3's."""
    import pandas as pd
    for option in ("future.infer_string", "mode.copy_on_write"):
        try:
            pd.reset_option(option)
        except (KeyError, ValueError, AttributeError):     # pandas 3 has no such option left
            pass


def string_semantics() -> str:
    """How this process's pandas makes string columns, in words."""
    import pandas as pd
    major = int(pd.__version__.split(".")[0])
    try:
        infer = bool(pd.get_option("future.infer_string"))
    except (KeyError, ValueError, AttributeError):
        infer = major >= 3
    words = "pandas 3's (Arrow-backed str)" if infer or major >= 3 else "pandas 2's (object)"
    return f"{words}, pandas {pd.__version__}"


# --- the run's record ----------------------------------------------------------------------------
def planned_conditions(start: str, process: str, target_kind: str) -> dict[str, Any]:
    """What a run records before its users start: how they will be started and run (each user's own
    report replaces ``preloaded`` and ``strings`` once it is ready)."""
    used = available_start(start)
    preload = preload_for(target_kind) if used == "forkserver" else ()
    note = "" if used == start else f"{start} is not available on this platform: users are spawned"
    return {"start": used, "process": process, "preload": [m for m in preload if m != ZYGOTE],
            "note": note}


def describe_conditions(conditions: dict[str, Any] | None) -> str:
    """One line: how the run's users were started and run, e.g. "forked from a preloaded server
    (duckdb, pandas, pyarrow); settled: glibc mmap 32 MiB ...; strings pandas 3's"."""
    if not conditions:
        return "spawned; settled (recorded before process conditions were)"
    start = conditions.get("start", "spawn")
    preloaded = conditions.get("preloaded", conditions.get("preload", []))
    tops = sorted({m.split(".")[0] for m in preloaded if not m.startswith("workloads")})
    started = f"forked from a preloaded server ({', '.join(tops) or 'nothing'})" if start == "forkserver" \
        else "spawned (a fresh interpreter each)"
    process = conditions.get("process", "settled")
    parts = [started, f"{process} process"]
    if conditions.get("allocator"):
        parts.append(f"allocator: {conditions['allocator']}")
    if conditions.get("strings"):
        parts.append(f"strings: {conditions['strings']}")
    if conditions.get("note"):
        parts.append(conditions["note"])
    return "; ".join(parts)
