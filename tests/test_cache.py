"""Cold cache: honest lists of what was applied, files intact, pages really leave the cache."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from workloads.targets.common import cache
from workloads.targets.common.cache import FADVISE, FSYNC, drop_file_cache, resident_bytes


@pytest.fixture
def data_file(tmp_path) -> Path:
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(4 * 1024 * 1024))
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_fsync_and_fadvise_are_listed_and_the_file_is_intact(data_file):
    before = digest(data_file)
    assert drop_file_cache([data_file], system_wide=False) == [FSYNC, FADVISE]
    assert digest(data_file) == before
    assert data_file.stat().st_size == 4 * 1024 * 1024


def test_pages_leave_the_page_cache(data_file):
    data_file.read_bytes()  # make it resident
    assert resident_bytes(data_file) is not None    # mincore answers on Linux
    if resident_bytes(data_file) == 0:
        pytest.skip("this file system does not keep file pages in the page cache")
    assert drop_file_cache([data_file], system_wide=False) == [FSYNC, FADVISE]
    assert resident_bytes(data_file) == 0


def test_dirty_pages_are_flushed_before_being_dropped(tmp_path):
    path = tmp_path / "fresh.bin"
    with open(path, "wb") as f:  # just written: dirty pages that DONTNEED alone would keep
        f.write(os.urandom(2 * 1024 * 1024))
    before = digest(path)
    drop_file_cache([path], system_wide=False)
    if resident_bytes(path) is not None:
        assert resident_bytes(path) == 0
    assert digest(path) == before


def test_missing_files_are_skipped_and_nothing_is_claimed(tmp_path):
    assert drop_file_cache([tmp_path / "absent.bin"], system_wide=False) == []
    assert drop_file_cache([], system_wide=False) == []
    assert drop_file_cache([tmp_path], system_wide=False) == []  # a folder is not a file


def test_drop_caches_is_listed_only_when_the_write_succeeded(data_file, tmp_path, monkeypatch):
    writable = tmp_path / "drop_caches"
    writable.write_text("")
    monkeypatch.setattr(cache, "DROP_CACHES", writable)
    assert drop_file_cache([data_file]) == [FSYNC, FADVISE, "drop_caches"]
    assert writable.read_text() == "1\n"

    monkeypatch.setattr(cache, "DROP_CACHES", tmp_path)  # a folder: open() for writing fails
    assert drop_file_cache([data_file]) == [FSYNC, FADVISE]
    monkeypatch.setattr(cache, "DROP_CACHES", tmp_path / "no" / "such" / "file")
    assert drop_file_cache([data_file]) == [FSYNC, FADVISE]


def test_the_system_switch_is_respected(data_file, tmp_path, monkeypatch):
    writable = tmp_path / "drop_caches"
    writable.write_text("")
    monkeypatch.setattr(cache, "DROP_CACHES", writable)
    assert drop_file_cache([data_file], system_wide=False) == [FSYNC, FADVISE]
    assert writable.read_text() == ""
