"""A file holding a secret is its owner's alone (issue 55: engines.json, with the local engines'
passwords, was mode 644)."""
from __future__ import annotations

import os
import stat

from workloads.local_engines.base import LocalEngine, _state_path, remember
from workloads.targets.common.storage import write_bytes_atomic


def test_the_local_engines_record_is_readable_by_its_owner_alone_whatever_the_umask(tmp_path):
    before = os.umask(0)                          # the most permissive umask: nothing masks the mode
    try:
        remember(tmp_path, LocalEngine(kind="postgres", pids=[os.getpid()], config={"password": "s3cret"},
                                       folder=str(tmp_path)))
    finally:
        os.umask(before)
    path = _state_path(tmp_path)
    assert "s3cret" in path.read_text() and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_other_files_keep_the_umasks_mode(tmp_path):
    before = os.umask(0o022)
    try:
        write_bytes_atomic(tmp_path / "plain.json", b"{}")
    finally:
        os.umask(before)
    assert stat.S_IMODE((tmp_path / "plain.json").stat().st_mode) == 0o644
