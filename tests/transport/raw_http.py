"""HTTP/1.1 over a plain socket: requests no HTTP client library would send, and their answers.

Two ``Content-Length`` headers, a length the body does not have, a broken chunk, bytes beyond
UTF-8 in a header: the tests of the transport's parsing and the fuzz of odd requests
(``tests/transport/odd_requests.py``) write them byte for byte with :func:`raw_request` and
read what comes back with :func:`raw_exchange`.
"""

from __future__ import annotations

import socket
import struct
import zlib
from dataclasses import dataclass

from transport.shell.openapi_schemas import JSON


@dataclass(frozen=True, slots=True)
class RawAnswer:
    """One HTTP answer as it came off the socket (header names in lower case)."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def is_json(self) -> bool:
        return self.headers.get("content-type", "").split(";")[0].strip() == JSON


RAW_ENDINGS = ("read", "half-close", "close", "reset")
"""How :func:`raw_exchange` ends its side: read the answers; shut down its sending side,
then read; close at once; or close with a TCP reset (``SO_LINGER`` 0)."""


def raw_exchange(
    host: str,
    port: int,
    data: bytes,
    *,
    then: str = "read",
    answers: int = 1,
    timeout_s: float = 2.0,
) -> list[RawAnswer]:
    """Send ``data`` exactly as given over a new connection and return the answers read.

    An HTTP client library would refuse to send what this is for (two ``Content-Length``
    headers, a length the body does not have, a broken chunk), so this speaks HTTP/1.1 over a
    plain socket. Reading stops at ``answers`` final (non-1xx) answers, when the server closes
    the connection, or after ``timeout_s`` without data; ``then`` is one of
    :data:`RAW_ENDINGS`.
    """
    with socket.create_connection((host, port), timeout=timeout_s) as conn:
        conn.sendall(data)
        if then in ("close", "reset"):
            if then == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return []
        if then == "half-close":
            conn.shutdown(socket.SHUT_WR)
        received = b""
        parsed: list[RawAnswer] = []
        while sum(1 for a in parsed if a.status >= 200) < answers:
            try:
                chunk = conn.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            received += chunk
            parsed = parse_answers(received)
        return parse_answers(received)


def parse_answers(data: bytes) -> list[RawAnswer]:
    """The complete answers at the start of ``data`` (an incomplete last one is left out).

    A body is read by ``Content-Length`` (the relay's answers always have one); without it,
    to the end of ``data``.
    """
    answers: list[RawAnswer] = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            break
        status_line, *lines = head.decode("latin-1").split("\r\n")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[1].isdigit():
            break
        headers: dict[str, str] = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        status = int(parts[1])
        length = 0 if status < 200 else int(headers.get("content-length", len(rest)))
        if len(rest) < length:
            break
        answers.append(RawAnswer(status, headers, rest[:length]))
        data = rest[length:]
    return answers


def raw_request(
    method: str,
    target: str,
    headers: list[tuple[str, str]] | None = None,
    body: bytes = b"",
    *,
    host: str | None = "localhost",
) -> bytes:
    """The bytes of a request: the request line, ``Host: <host>`` (none if ``host`` is
    ``None``; ``localhost`` without a port is a name the relay serves), the headers as given
    (repeats and odd values included), a blank line and ``body``."""
    lines = [f"{method} {target} HTTP/1.1", *([f"Host: {host}"] if host is not None else [])]
    lines += [f"{name}: {value}" for name, value in headers or []]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chunked(body: bytes, size: int = 7) -> bytes:
    """``body`` in the chunked transfer coding, ``size`` bytes a chunk."""
    out = b"".join(
        f"{len(body[i : i + size]):x}\r\n".encode() + body[i : i + size] + b"\r\n"
        for i in range(0, len(body), size)
    )
    return out + b"0\r\n\r\n"


def gzip_bomb(inflated_mib: int) -> bytes:
    """A valid gzip stream of ``inflated_mib`` MiB of zeros, about a thousandth of that.

    Each MiB is compressed after a full flush, which leaves the compressor with no history
    and the output byte-aligned, so every MiB after the first compresses to the same bytes:
    one is repeated, instead of compressing a gibibyte for each test run.
    """
    zeros = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.flush()[:-8]  # the last block; the trailer is made for the whole below
    crc = 0
    for _ in range(inflated_mib):
        crc = zlib.crc32(zeros, crc)
    trailer = struct.pack("<II", crc, (inflated_mib << 20) & 0xFFFFFFFF)
    return first + again * (inflated_mib - 1) + end + trailer
