"""A bare-socket client for tests that must see the reply bytes the real client hides (which
format a table came in: compressed columns, pickle, Arrow)."""
from __future__ import annotations

import socket

from tests.ddbserver import codec as c


class RecordingDecoder(c.Decoder):
    """Decodes like the server's decoder and keeps every object header it read, in order."""

    def __init__(self, src: c.Source):
        super().__init__(src)
        self.headers: list[tuple[int, int]] = []

    def header(self) -> tuple[int, int]:
        head = super().header()
        self.headers.append(head)
        return head


class RawClient:
    def __init__(self, host: str, port: int, timeout: float = 10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.src = c.Source(sock=self.sock)
        self.sock.sendall(b"API 0 8 / 32_1_4_2\nconnect\n")
        self.session = self.src.read_line().split(" ")[0]
        self.src.read_line()

    def send_script(self, script: str, flag: int = 32) -> str:
        """Send ``script``; returns the status line ("OK" or the error message)."""
        body = f"script\n{script}"
        self.sock.sendall(f"API2 {self.session} {len(body.encode())} / {flag}_1_4_64__0\n{body}".encode())
        self.src.read_line()
        return self.src.read_line()

    def run(self, script: str, flag: int = 32) -> tuple[object, list[tuple[int, int]]]:
        """One DDB-encoded reply object and the (type, form) headers it was made of."""
        status = self.send_script(script, flag)
        if status != "OK":
            raise RuntimeError(status)
        decoder = RecordingDecoder(self.src)
        return decoder.object(), decoder.headers

    def read(self, n: int) -> bytes:
        return self.src.read(n)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "RawClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
