"""Small process facts shared by the engine's crash-safe file handling."""
from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (its temp files may still be in use)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists but is not ours (PermissionError), or no signals (Windows)
        return True
    return True
