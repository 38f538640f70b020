"""A minimal DolphinDB API connection that reads replies to their end WITHOUT decoding them.

It measures the "transfer" phase: the same result the ``dolphindb`` client would turn into a
DataFrame is requested again over a plain socket, and its bytes are read off the wire by walking
the object framing (type/form headers, row counts, string terminators, symbol bases) without
building any values. Protocol facts: DolphinDB "API交互协议" (Tutorials_CN api_protocol.md) and the
observations in shared/DDB_PROTOCOL.md.

- DDB format: objects are skipped by their lengths (compressed vectors, type 26, carry their byte
  count in the rows field, as DolphinDB's C# and Java APIs read them).
- ARROW protocol: a reply object whose form has bit 32 set is an Arrow IPC stream; its messages are
  read with ``pyarrow.ipc.MessageReader`` (buffers only, no arrays built).
- PICKLE protocol: the server's pickle stream uses vendor opcodes that cannot be framed without the
  vendor's unpickler, so the raw reader asks for the DDB encoding of the same result instead. The
  byte count then is DolphinDB's own encoding, a close stand-in for the pickle stream.
"""
from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass

import numpy as np

FLAG_BASE = 32
FLAG_PICKLE = 8
FLAG_COMPRESS = 64
FLAG_ARROW = 1 << 15
FLAG_URGENT = 1            # run ahead of the worker queue (api_protocol 2.5.4): how cancels are sent

_FIXED_WIDTH = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 4, 7: 4, 8: 4, 9: 4, 10: 4, 11: 4, 12: 8,
                13: 8, 14: 8, 15: 4, 16: 8, 19: 16, 28: 4, 29: 4, 30: 16, 31: 16}
_STRINGS = (17, 18, 32)   # SYMBOL, STRING, BLOB (BLOB: int32 length + bytes, handled apart)
_ANY, _COMPRESS, _SYMBOL_BASE = 25, 26, 17 | 128


class WireError(RuntimeError):
    """The raw connection failed: refused, timed out, login or server error."""


@dataclass
class RawReply:
    nbytes: int      # bytes of the reply read off the socket (header lines included)
    seconds: float   # from sending the request to the last byte read
    objects: int


class _Reader:
    closed = False   # file-like enough for pyarrow.PythonFile

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = bytearray()
        self.pos = 0
        self.total = 0

    def _more(self, need: int) -> None:
        if self.pos > (1 << 20):
            del self.buf[: self.pos]
            self.pos = 0
        while len(self.buf) - self.pos < need:
            try:
                data = self.sock.recv(1 << 20)
            except socket.timeout:
                raise WireError("timed out waiting for the server's reply") from None
            if not data:
                raise WireError("the server closed the connection in the middle of a reply")
            self.buf += data
            self.total += len(data)

    def take(self, n: int) -> bytes:
        self._more(n)
        out = bytes(self.buf[self.pos: self.pos + n])
        self.pos += n
        return out

    def skip(self, n: int) -> None:
        while n > 0:
            avail = len(self.buf) - self.pos
            if avail <= 0:
                self._more(1)
                continue
            step = min(avail, n)
            self.pos += step
            n -= step

    def line(self, sep: bytes = b"\n") -> bytes:
        while True:
            idx = self.buf.find(sep, self.pos)
            if idx >= 0:
                out = bytes(self.buf[self.pos: idx])
                self.pos = idx + 1
                return out
            self._more(len(self.buf) - self.pos + 1)

    def skip_cstrs(self, count: int) -> None:
        """Skip ``count`` NUL-terminated strings, finding terminators with numpy."""
        while count > 0:
            if len(self.buf) - self.pos == 0:
                self._more(1)
            found, end = self._nth_zero(count)
            if found:
                self.pos = end
                return
            count -= end  # here: how many terminators this buffer held
            self.pos = len(self.buf)
            self._more(1)

    def _nth_zero(self, count: int) -> tuple[bool, int]:
        # the numpy view must be gone before the buffer grows (bytearray exports block resizing)
        zeros = np.flatnonzero(np.frombuffer(self.buf, np.uint8, offset=self.pos) == 0)
        if len(zeros) >= count:
            return True, self.pos + int(zeros[count - 1]) + 1
        return False, len(zeros)

    def read(self, n: int) -> bytes:  # file-like, for pyarrow
        if n is None or n < 0:
            raise WireError("unbounded read on a socket stream")
        return self.take(n)

    def readable(self) -> bool:
        return True


def _skip_object(r: _Reader) -> None:
    type_, form = struct.unpack("<BB", r.take(2))
    _skip_body(r, type_, form)


def _skip_body(r: _Reader, type_: int, form: int) -> None:
    if form == 0:  # scalar
        if type_ == 0:
            r.skip(1)
        elif type_ in (17, 18):
            r.line(b"\0")
        elif type_ == 32:
            (length,) = struct.unpack("<i", r.take(4))
            r.skip(length)
        elif type_ in _FIXED_WIDTH:
            r.skip(_FIXED_WIDTH[type_])
        else:
            raise WireError(f"cannot frame a scalar of type {type_}")
    elif form in (1, 2, 4):  # vector, pair, set
        rows, cols = struct.unpack("<ii", r.take(8))
        _skip_vector(r, type_, rows * cols)
    elif form == 3:  # matrix: label flags, optional labels, then a vector header and data
        labels = r.take(1)[0]
        if labels & 1:
            _skip_object(r)
        if labels & 2:
            _skip_object(r)
        _skip_object(r)
    elif form == 5:  # dictionary: keys then values
        _skip_object(r)
        _skip_object(r)
    elif form == 6:  # table
        _, cols = struct.unpack("<ii", r.take(8))
        r.skip_cstrs(1 + cols)
        for _ in range(cols):
            _skip_object(r)
    else:
        raise WireError(f"cannot frame an object of form {form}")


def _skip_vector(r: _Reader, type_: int, n: int) -> None:
    if type_ == _ANY:
        for _ in range(n):
            _skip_object(r)
    elif type_ in (17, 18):
        r.skip_cstrs(n)
    elif type_ == _SYMBOL_BASE:
        _, base_size = struct.unpack("<ii", r.take(8))
        r.skip_cstrs(base_size)
        r.skip(4 * n)
    elif type_ == _COMPRESS:   # rows = compressed byte count, one byte per "element"
        r.skip(n)
    elif type_ == 0:
        r.skip(n)
    elif type_ == 32:
        for _ in range(n):
            (length,) = struct.unpack("<i", r.take(4))
            r.skip(length)
    elif type_ in _FIXED_WIDTH:
        r.skip(_FIXED_WIDTH[type_] * n)
    else:
        raise WireError(f"cannot frame a vector of type {type_}")


def _skip_arrow_stream(r: _Reader) -> None:
    import pyarrow as pa

    reader = pa.ipc.MessageReader.open_stream(pa.PythonFile(r, mode="r"))
    while True:
        try:
            reader.read_next_message()
        except StopIteration:
            return


class RawConnection:
    """One logged-in socket that can run a script and discard its reply, counting bytes."""

    def __init__(self, host: str, port: int, user: str = "", password: str = "",
                 protocol: str = "DDB", compress: bool = False, timeout: float = 30.0):
        self.host, self.port = host, port
        self.protocol = protocol.upper()
        self.compress = compress
        self.timeout = timeout
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout)
        except socket.timeout:
            raise WireError(f"timed out connecting to {host}:{port}") from None
        except OSError as exc:
            raise WireError(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from None
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.session = "0"
        body = f"connect\nlogin\n{user}\n{password}\nfalse" if user else "connect\n"
        self._send(f"API 0 {len(body.encode())} / {self._flag()}_1_4_2\n", body)
        reader = _Reader(self.sock)
        header = reader.line().decode()
        status = reader.line().decode()
        if status != "OK":
            self.close()
            # no user: an anonymous handshake (a check that the node answers), not a login
            raise WireError(f"{'login' if user else 'connection'} to {host}:{port} failed: {status}")
        self.session = header.split(" ")[0]

    def _flag(self) -> int:
        flag = FLAG_BASE
        if self.protocol == "ARROW":
            flag += FLAG_ARROW
        elif self.compress:   # PICKLE asks for the DDB encoding here (see module doc)
            flag += FLAG_COMPRESS
        return flag

    def _send(self, header: str, body: str) -> None:
        try:
            self.sock.sendall(header.encode() + body.encode())
        except socket.timeout:
            raise WireError(f"timed out sending to {self.host}:{self.port}") from None
        except OSError as exc:
            raise WireError(f"connection to {self.host}:{self.port} lost: {exc}") from None

    def _request(self, script: str, priority: int, parallelism: int, urgent: bool) -> tuple[_Reader, int]:
        """Send ``script`` as a job of ``priority`` and ``parallelism`` (the header's fields, as the
        client sends them; ``urgent``: ahead of the worker queue); (the reader, objects in the reply)."""
        body = "script\n" + script
        flag = self._flag() + (FLAG_URGENT if urgent else 0)
        self._send(f"API2 {self.session} {len(body.encode())} / {flag}_1_{int(priority)}_{int(parallelism)}__0\n", body)
        r = _Reader(self.sock)
        header = r.line()
        while header == b"MSG":
            r.line(b"\0")
            header = r.line()
        parts = header.decode("utf-8", "replace").split(" ")
        if len(parts) != 3:
            raise WireError(f"unexpected reply header {header[:60]!r}")
        status = r.line().decode("utf-8", "replace")
        if status != "OK":
            raise WireError(f"server error: {status}")
        return r, int(parts[1])

    def run_texts(self, script: str, urgent: bool = False) -> list[str]:
        """Run ``script`` (a job of priority 4, parallelism 2; ``urgent``: ahead of the worker queue)
        whose answer is text: a STRING or SYMBOL vector or scalar, or nothing; its values."""
        r, count = self._request(script, 4, 2, urgent)
        if count == 0:
            return []
        type_, form = struct.unpack("<BB", r.take(2))
        if type_ == 0 and form == 0:
            r.skip(1)
            return []
        if type_ == 18 and form == 0:
            return [r.line(b"\0").decode("utf-8", "replace")]
        if type_ == 18 and form == 1:
            rows, cols = struct.unpack("<ii", r.take(8))
            return [r.line(b"\0").decode("utf-8", "replace") for _ in range(rows * cols)]
        raise WireError(f"expected text, not an object of type {type_} and form {form}")

    def run_discard(self, script: str, priority: int = 4, parallelism: int = 64, urgent: bool = False) -> RawReply:
        """Send ``script`` as a job of ``priority`` and ``parallelism`` (``urgent``: ahead of the
        worker queue); read its whole reply without decoding; return size and time."""
        start = time.perf_counter()
        r, count = self._request(script, priority, parallelism, urgent)
        for _ in range(count):
            type_, form = struct.unpack("<BB", r.take(2))
            if form & 32:
                if self.protocol != "ARROW":
                    raise WireError("the server sent a non-DDB object this reader cannot frame")
                _skip_arrow_stream(r)
            else:
                _skip_body(r, type_, form)
        seconds = time.perf_counter() - start
        if r.pos != len(r.buf):
            raise WireError(f"{len(r.buf) - r.pos} unexpected bytes after the reply")
        return RawReply(nbytes=r.total, seconds=seconds, objects=count)

    def close(self, wait_s: float = 0.0) -> None:
        """Close the socket; with ``wait_s``, first say so (half-close) and wait up to ``wait_s``
        for the server to close its side, so the server has let the connection go on return
        (a node counting its connections against a limit no longer counts it)."""
        try:
            if wait_s > 0:
                self.sock.shutdown(socket.SHUT_WR)
                self.sock.settimeout(wait_s)
                deadline = time.monotonic() + wait_s
                while time.monotonic() < deadline and self.sock.recv(65536):
                    pass
        except OSError:
            pass                              # timed out or reset: closing is all that is left
        try:
            self.sock.close()
        except OSError:
            pass
