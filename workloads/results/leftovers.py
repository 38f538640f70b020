"""Hidden folders a process killed mid-way leaves in a catalog's runs folder: a bundle's files
before they are checked (``.incoming-<pid>-<random>``, ``workloads.results.bundle_open``) and a run
being deleted (``.deleted-<pid>-<random>``, ``StoreWrites.delete_run``). No reader lists them;
they are removed when the catalog opens next and before each open."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from workloads.processes import pid_alive
from workloads.results.run_files import DELETED

INCOMING = ".incoming-"
STALE_INCOMING_S = 3600               # a hidden folder of an older Tickbench (no pid in its name), removed later


def remove_leftover_incoming(runs_dir: Path) -> list[Path]:
    """Hidden folders an opener (or a deleter) killed mid-way left behind: its process gone (named
    in the folder), or an hour old (an older Tickbench's, named without it). Run when a catalog
    opens and before each open; returns what it removed."""
    try:
        entries = [(p, prefix) for p in runs_dir.iterdir() for prefix in (INCOMING, DELETED) if p.name.startswith(prefix)]
    except OSError:
        return []
    removed = []
    for entry, prefix in entries:
        opener = entry.name[len(prefix):].split("-", 1)[0]
        try:
            gone = opener.isdigit() and not pid_alive(int(opener)) and int(opener) != os.getpid()
            if gone or time.time() - entry.stat().st_mtime > STALE_INCOMING_S:
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
        except OSError:
            continue
    return removed
