"""Request parsing and reply building of DolphinDB's API protocol (see shared DDB_PROTOCOL.md).

Request: ``<API|API2> <sid> <bodyLen> / <flag>_1_<priority>_<parallelism>[__<fetchSize>]\\n`` then
``bodyLen`` bytes of text; ``function`` and ``variable`` requests are followed by their argument
objects, which the header does not count: they are decoded to find the request's end.
Reply: ``<sid> <nObjects> 1\\nOK\\n`` + objects, or ``<sid> 0 1\\n<error>\\n``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.ddbserver.codec import Decoder, Encoder, Source

FLAG_PICKLE = 8
FLAG_CLEAR_MEMORY = 16
FLAG_COMPRESS = 64
FLAG_ARROW = 1 << 15


class ProtocolError(ValueError):
    """A request this server cannot frame."""


@dataclass
class Request:
    kind: str                     # API or API2
    session: str
    flag: int
    command: str                  # connect, script, function, variable
    lines: list[str]              # body lines after the command line
    args: list[Any] = field(default_factory=list)
    wire_bytes: int = 0
    priority: int | None = None       # the job's, from the header (None: the header gave none)
    parallelism: int | None = None

    @property
    def script(self) -> str:
        return "\n".join(self.lines)


def read_request(src: Source) -> Request:
    start = src.consumed
    header = src.read_line()
    parts = header.split(" ")
    if len(parts) < 3 or parts[0] not in ("API", "API2"):
        raise ProtocolError(f"bad request header {header[:60]!r}")
    try:
        length = int(parts[2])
    except ValueError:
        raise ProtocolError(f"bad body length in header {header[:60]!r}") from None
    flag, priority, parallelism = 0, None, None
    if len(parts) >= 5 and parts[3] == "/":
        fields = parts[4].split("_")
        try:
            flag = int(fields[0])
            if len(fields) >= 4:              # <flag>_<cancellable>_<priority>_<parallelism>
                priority, parallelism = int(fields[2]), int(fields[3])
        except ValueError:
            raise ProtocolError(f"bad flags in header {header[:60]!r}") from None
    body = src.read(length).decode("utf-8")
    command, _, rest = body.partition("\n")
    req = Request(parts[0], parts[1], flag, command, rest.split("\n") if rest else [],
                  priority=priority, parallelism=parallelism)
    if command in ("function", "variable"):
        # <name(s)>\n<count>\n<endianness>, then <count> objects not counted in bodyLen
        if len(req.lines) < 3:
            raise ProtocolError(f"{command} request without name and argument count")
        count = int(req.lines[1])
        decoder = Decoder(src)
        req.args = [decoder.object() for _ in range(count)]
    req.wire_bytes = src.consumed - start
    return req


def ok_reply(session: str, objects: list[Any], encoder: Encoder | None = None) -> bytes:
    encoder = encoder or Encoder()
    body = b"".join(encoder.object(o) for o in objects)
    return f"{session} {len(objects)} 1\nOK\n".encode() + body


def error_reply(session: str, message: str) -> bytes:
    flat = " ".join(str(message).split())  # the client reads the message as one line
    return f"{session} 0 1\n{flat}\n".encode()


def arrow_table_reply(session: str, ipc_stream: bytes) -> bytes:
    """A table under PROTOCOL_ARROW: object flag with form|32, then an Arrow IPC stream."""
    flag = bytes([0, 6 | 32])
    return f"{session} 1 1\nOK\n".encode() + flag + ipc_stream


def pickle_table_reply(session: str, stream: bytes) -> bytes:
    """A table under PROTOCOL_PICKLE: object flag with form TABLE|32, type 0, then a pickle stream."""
    flag = bytes([0, 6 | 32])
    return f"{session} 1 1\nOK\n".encode() + flag + stream
