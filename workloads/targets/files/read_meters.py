"""File wrappers that measure a reader: the seconds spent in its reads (the pickle probe's ``io``)
and the bytes it takes (Feather's wire bytes of some columns)."""
from __future__ import annotations

import io
import time
from typing import BinaryIO


def _now() -> float:
    return time.perf_counter()


class TimedReader:
    """A read-only file wrapper that adds up the seconds spent in its reads."""

    __slots__ = ("_file", "seconds")

    def __init__(self, file: BinaryIO):
        self._file = file
        self.seconds = 0.0

    def read(self, size: int = -1) -> bytes:
        start = _now()
        data = self._file.read(size)
        self.seconds += _now() - start
        return data

    def readinto(self, buffer) -> int:
        start = _now()
        count = self._file.readinto(buffer)
        self.seconds += _now() - start
        return count

    def readline(self, size: int = -1) -> bytes:
        start = _now()
        line = self._file.readline(size)
        self.seconds += _now() - start
        return line


class _CountingReader(io.RawIOBase):
    """A read-only file that counts the bytes read through it."""

    def __init__(self, file: BinaryIO):
        super().__init__()
        self._file = file
        self.count = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def readinto(self, buffer) -> int:
        count = self._file.readinto(buffer)
        self.count += count or 0
        return count

    def read(self, size: int = -1) -> bytes:
        data = self._file.read(size)
        self.count += len(data)
        return data
