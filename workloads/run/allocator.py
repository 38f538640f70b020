"""The memory allocator of a worker process set to the state a long-lived client's is in.

glibc's malloc hands big blocks back to the kernel and asks for fresh ones, which the kernel must
zero page by page, until the process has freed a block of 32 MiB: from then on its mmap threshold
stays at 32 MiB, and memory is reused. A Jupyter kernel that has read a few days is in that state;
a fresh worker is not, and each of its reads paid for page faults a long-lived client's call does
not make: ``pickle.load`` of a 1 M-row day took 40 ms in a fresh process (about 16 k minor page
faults a read), 15 ms once settled (``mallopt`` below).

The trim threshold is set past glibc's own (64 MiB beside a 32 MiB mmap threshold) to 1 GiB: at
64 MiB, whether a day's freed memory (~70 MB) sits at the top of the heap and is given back after
every read depended on the heap's layout, that is on which modules the process had imported. The
same ``pickle.load`` took 13 ms in one process and 40-46 ms in another that had imported one more
module of the project's, every read; with 1 GiB it took 13 ms in both. So every worker (and the
practitioner benchmark's process) sets both thresholds before its first operation, and no figure
depends on an import. Elsewhere (macOS, Windows, musl) nothing is changed and the record says so.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import platform
from typing import Any

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3        # glibc's mallopt parameters (malloc.h)
MMAP_THRESHOLD = 32 * 2**20     # DEFAULT_MMAP_THRESHOLD_MAX on 64-bit: as far as glibc's own rule goes
TRIM_THRESHOLD = 2**30        # past glibc's own 64 MiB, so no heap layout decides whether a read refaults (doc)


def settle_allocator() -> dict[str, Any]:
    """Set glibc's thresholds (once per process is enough; again is harmless); what was done."""
    if not _glibc():
        return {"allocator": describe_allocator()}
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    applied = libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    return {"allocator": describe_allocator() if applied else "glibc: mallopt refused, left as it is"}


def describe_allocator() -> str:
    """What ``settle_allocator`` does on this machine, without doing it (for the run's record)."""
    if not _glibc():
        return f"{platform.system()} {platform.libc_ver()[0] or 'libc'}: left as it is"
    return (f"glibc, settled in every worker as a long-lived client's: mmap threshold {MMAP_THRESHOLD // 2**20} MiB, "
            f"trim threshold {TRIM_THRESHOLD // 2**20} MiB")


def _glibc() -> bool:
    return platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"
