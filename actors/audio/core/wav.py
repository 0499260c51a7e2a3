"""The audio the relay hands on and takes in: 16 kHz mono 16-bit PCM, in a WAV file or as
``audio/L16``.

A speech service is sent an utterance as a canonical WAV (:func:`wav_bytes`). A client may post
a WAV (:func:`read_wav`) or raw samples as ``audio/L16`` (:func:`parse_l16`, then
:func:`l16_pcm`); anything else is refused with a :class:`BadAudio` that says in one line what
was found and what is read. A ``file:`` source that is such a WAV is replayed from where its
samples lie (:func:`wav_layout`), any other file through ffmpeg. Both read the WAV's chunks
with the one walk of :func:`_layout`. Nothing is resampled: the relay reads one format.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

from actors.audio.core.utterance import SAMPLE_BYTES, SAMPLE_RATE
from actors.core.errors import BadRequest

CHANNELS: Final = 1
BITS: Final = SAMPLE_BYTES * 8
HEADER_BYTES: Final = 44
L16: Final = "audio/L16"
_PCM: Final = 1
_EXTENSIBLE: Final = 0xFFFE
_PCM_GUID_TAIL: Final = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
"""The KSDATAFORMAT_SUBTYPE_PCM GUID after its first two bytes (which hold the format, 1)."""
_TO_THE_END: Final = (0, 0xFFFFFFFF)
"""A ``data`` size a streaming writer leaves when it cannot go back to fill it in."""
_ENDLESS: Final = 1 << 62
"""The length of a streamed file's samples: more than any file holds (its reader stops at the
end)."""
WAV_HEADER_READ: Final = 64 * 1024
"""How much of a file's start :func:`wav_layout` is given to find its ``data`` chunk."""
_FORMATS: Final = {3: "IEEE float", 6: "A-law", 7: "µ-law", 0x55: "MP3", 0x11: "IMA ADPCM"}
_WANTED: Final = "16 kHz mono 16-bit PCM"


class BadAudio(BadRequest, ValueError):
    """Audio the relay does not read (HTTP 400): the message names what was found."""


def wav_bytes(pcm: bytes) -> bytes:
    """``pcm`` (16 kHz mono 16-bit little-endian samples) behind a canonical 44-byte header."""
    if len(pcm) % SAMPLE_BYTES:
        msg = f"PCM of {len(pcm)} bytes is not a whole number of 16-bit samples"
        raise BadAudio(msg)
    byte_rate = SAMPLE_RATE * CHANNELS * SAMPLE_BYTES
    header = struct.pack(
        "<4sI4s4sIHHIIHH4sI",
        b"RIFF",
        HEADER_BYTES - 8 + len(pcm),
        b"WAVE",
        b"fmt ",
        16,
        _PCM,
        CHANNELS,
        SAMPLE_RATE,
        byte_rate,
        CHANNELS * SAMPLE_BYTES,
        BITS,
        b"data",
        len(pcm),
    )
    return header + pcm


@dataclass(frozen=True, slots=True)
class WavLayout:
    """Where a 16 kHz mono 16-bit PCM WAV keeps its samples."""

    offset: int
    size: int | None
    """The ``data`` chunk's size as written; ``None`` when a file written as a stream left it
    unknown (0 or 0xFFFFFFFF): the samples run to the end."""

    @property
    def length(self) -> int:
        """Bytes of whole samples from :attr:`offset` (for a stream, more than any file holds:
        its reader stops at the end)."""
        size = _ENDLESS if self.size is None else self.size
        return size - size % SAMPLE_BYTES


def read_wav(data: bytes) -> bytes:
    """The samples of a 16 kHz mono 16-bit PCM WAV file (all of it: a client's post).

    Chunks other than ``fmt `` and ``data`` (``LIST``, ``fact``, ...) are skipped; a ``data``
    size of 0 or 0xFFFFFFFF (a file written as a stream) means the samples run to the end.
    """
    layout = _layout(data)
    start, available = layout.offset, len(data) - layout.offset
    if layout.size is None:
        return data[start : start + available - available % SAMPLE_BYTES]
    if layout.size > available:
        msg = f"WAV is truncated: its data chunk says {layout.size} bytes, {available} follow"
        raise BadAudio(msg)
    if layout.size % SAMPLE_BYTES:
        msg = f"WAV data of {layout.size} bytes is not a whole number of 16-bit samples"
        raise BadAudio(msg)
    return data[start : start + layout.size]


def wav_layout(head: bytes) -> WavLayout | None:
    """Where the samples lie in a file whose first bytes are ``head`` (up to
    :data:`WAV_HEADER_READ`), if it is a WAV the relay reads as it is; ``None`` for anything
    else, which ffmpeg converts. Only the chunk headers are read: a ``data`` size past the
    end of the file is cut by whoever reads the samples."""
    try:
        return _layout(head)
    except BadAudio:
        return None


def _layout(head: bytes) -> WavLayout:
    """The ``data`` chunk of the WAV that begins with ``head``, once its ``fmt `` chunk said
    16 kHz mono 16-bit PCM; every chunk before it must be whole in ``head``.

    Raises:
        BadAudio: not a RIFF WAVE, another format, a chunk cut short, or no ``data`` chunk
            after a ``fmt `` one; the message says which in one line.
    """
    if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        msg = f"not a WAV file: it does not begin with RIFF....WAVE (found {head[:12]!r})"
        raise BadAudio(msg)
    offset, seen_format = 12, False
    while offset + 8 <= len(head):
        kind, size = struct.unpack_from("<4sI", head, offset)
        body = offset + 8
        if kind == b"data":
            if not seen_format:
                msg = "WAV has its data before its fmt chunk; the format is unknown"
                raise BadAudio(msg)
            return WavLayout(body, None if size in _TO_THE_END else size)
        if body + size > len(head):
            msg = f"WAV is truncated: its {kind.decode('latin-1')!r} chunk says {size} bytes"
            raise BadAudio(msg)
        if kind == b"fmt ":
            _check_format(head[body : body + size])
            seen_format = True
        offset = body + size + size % 2  # chunks are padded to an even size
    what = "fmt or data chunk" if not seen_format else "data chunk"
    msg = f"WAV is truncated: no {what} in its {len(head)} bytes"
    raise BadAudio(msg)


def _check_format(fmt: bytes) -> None:
    """A ``fmt `` chunk of 16 kHz mono 16-bit PCM (plain or extensible), or :class:`BadAudio`."""
    if len(fmt) < 16:
        msg = f"WAV fmt chunk is {len(fmt)} bytes; at least 16 are needed"
        raise BadAudio(msg)
    tag, channels, rate, _byte_rate, _align, bits = struct.unpack_from("<HHIIHH", fmt)
    if tag == _EXTENSIBLE and len(fmt) >= 40 and fmt[26:40] == _PCM_GUID_TAIL:
        tag = struct.unpack_from("<H", fmt, 24)[0]
    if tag != _PCM:
        name = _FORMATS.get(tag, "extensible" if tag == _EXTENSIBLE else "unknown")
        msg = f"WAV is not PCM: format {tag} ({name}); {_WANTED} is read"
        raise BadAudio(msg)
    if rate != SAMPLE_RATE:
        msg = f"WAV sample rate is {rate} Hz; {_WANTED} is read"
        raise BadAudio(msg)
    if channels != CHANNELS:
        msg = f"WAV has {channels} channels; {_WANTED} is read"
        raise BadAudio(msg)
    if bits != BITS:
        msg = f"WAV samples are {bits}-bit; {_WANTED} is read"
        raise BadAudio(msg)


def parse_l16(content_type: str) -> None:
    """Accept ``audio/L16; rate=16000`` (``channels=1`` allowed, and the default), parameters
    in any order and case; else :class:`BadAudio` naming what was found."""
    media, *params = (part.strip() for part in content_type.split(";"))
    if media.lower() != L16.lower():
        msg = f"content type {media!r} is not {L16}"
        raise BadAudio(msg)
    found: dict[str, str] = {}
    for param in params:
        if not param:
            continue
        name, sep, value = param.partition("=")
        if not sep:
            msg = f"{L16} parameter {param!r} is not name=value"
            raise BadAudio(msg)
        found[name.strip().lower()] = value.strip().strip('"')
    rate = found.get("rate")
    if rate is None:
        msg = f"{L16} needs rate={SAMPLE_RATE}"
        raise BadAudio(msg)
    if rate != str(SAMPLE_RATE):
        msg = f"{L16} rate is {rate}; rate={SAMPLE_RATE} is read"
        raise BadAudio(msg)
    channels = found.get("channels", str(CHANNELS))
    if channels != str(CHANNELS):
        msg = f"{L16} has {channels} channels; channels={CHANNELS} (mono) is read"
        raise BadAudio(msg)


def l16_pcm(body: bytes) -> bytes:
    """``audio/L16`` samples, which are big-endian (RFC 2586), as the little-endian PCM the
    relay reads."""
    if len(body) % SAMPLE_BYTES:
        msg = f"{L16} body of {len(body)} bytes is not a whole number of 16-bit samples"
        raise BadAudio(msg)
    swapped = bytearray(body)
    swapped[0::2], swapped[1::2] = body[1::2], body[0::2]
    return bytes(swapped)
