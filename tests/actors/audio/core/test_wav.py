"""WAV and ``audio/L16``: what the relay writes for a speech service, what it reads from a
client, with the one-line refusals, and the WAV files it replays without ffmpeg."""

from __future__ import annotations

import io
import struct
import wave

import pytest

from actors.audio.core.wav import BadAudio, l16_pcm, parse_l16, read_wav, wav_bytes, wav_layout
from actors.core.errors import BadRequest
from tests.audio.signals import speech

PCM = speech(500)


def fmt_chunk(
    *, tag: int = 1, channels: int = 1, rate: int = 16_000, bits: int = 16, extra: bytes = b""
) -> bytes:
    align = channels * bits // 8
    body = struct.pack("<HHIIHH", tag, channels, rate, rate * align, align, bits) + extra
    return b"fmt " + struct.pack("<I", len(body)) + body


def chunk(kind: bytes, body: bytes, size: int | None = None) -> bytes:
    pad = b"\x00" if len(body) % 2 else b""
    return kind + struct.pack("<I", len(body) if size is None else size) + body + pad


def riff(*chunks: bytes) -> bytes:
    body = b"WAVE" + b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def test_wav_bytes_is_a_canonical_header_that_the_standard_library_reads() -> None:
    data = wav_bytes(PCM)
    assert len(data) == 44 + len(PCM)
    assert data[:4] == b"RIFF" and data[8:16] == b"WAVEfmt "
    assert struct.unpack_from("<I", data, 4)[0] == 36 + len(PCM)
    with wave.open(io.BytesIO(data)) as read:
        assert (read.getframerate(), read.getnchannels(), read.getsampwidth()) == (16_000, 1, 2)
        assert read.readframes(read.getnframes()) == PCM


def test_read_wav_reads_what_wav_bytes_and_the_standard_library_write() -> None:
    assert read_wav(wav_bytes(PCM)) == PCM
    out = io.BytesIO()
    with wave.open(out, "wb") as written:
        written.setnchannels(1)
        written.setsampwidth(2)
        written.setframerate(16_000)
        written.writeframes(PCM)
    assert read_wav(out.getvalue()) == PCM


def test_read_wav_skips_other_chunks_before_the_data() -> None:
    data = riff(
        chunk(b"LIST", b"INFOISFT\x05\x00\x00\x00sox!\x00"),  # odd size: padded
        fmt_chunk(),
        chunk(b"fact", struct.pack("<I", len(PCM) // 2)),
        chunk(b"data", PCM),
        chunk(b"LIST", b"after"),
    )
    assert read_wav(data) == PCM


@pytest.mark.parametrize("size", [0, 0xFFFFFFFF])
def test_a_streamed_wav_runs_to_the_end(size: int) -> None:
    data = riff(fmt_chunk(), chunk(b"data", PCM, size=size))
    assert read_wav(data) == PCM
    assert read_wav(data + b"\x01") == PCM  # a half sample at the end of a stream is left out


def test_an_extensible_pcm_header_is_read() -> None:
    guid = b"\x01\x00\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
    extra = struct.pack("<HHI", 22, 16, 4) + guid
    assert read_wav(riff(fmt_chunk(tag=0xFFFE, extra=extra), chunk(b"data", PCM))) == PCM


REFUSED = [
    (b"", "not a WAV file"),
    (b"OggS" + bytes(40), "not a WAV file"),
    (b"RIFF\x00\x00\x00\x00AVI " + bytes(40), "not a WAV file"),
    (riff(fmt_chunk(tag=3, bits=32), chunk(b"data", PCM)), "not PCM: format 3 (IEEE float)"),
    (riff(fmt_chunk(tag=0x55), chunk(b"data", PCM)), "not PCM: format 85 (MP3)"),
    (riff(fmt_chunk(rate=44_100), chunk(b"data", PCM)), "sample rate is 44100 Hz"),
    (riff(fmt_chunk(channels=2), chunk(b"data", PCM)), "has 2 channels"),
    (riff(fmt_chunk(bits=24), chunk(b"data", PCM)), "samples are 24-bit"),
    (riff(fmt_chunk(bits=8), chunk(b"data", PCM)), "samples are 8-bit"),
    (riff(fmt_chunk(), chunk(b"data", PCM, size=len(PCM) + 2)), "data chunk says"),
    (riff(fmt_chunk())[:-4], "truncated: its 'fmt ' chunk says 16 bytes"),
    (riff(fmt_chunk()), "truncated: no data chunk"),
    (riff(), "truncated: no fmt or data chunk"),
    (riff(chunk(b"data", PCM), fmt_chunk()), "data before its fmt chunk"),
    (riff(fmt_chunk(), chunk(b"data", PCM + b"\x00")), "not a whole number"),
    (riff(chunk(b"fmt ", b"\x01\x00")), "fmt chunk is 2 bytes"),
]
REFUSED_IDS = [
    "empty",
    "ogg",
    "avi",
    "float",
    "mp3",
    "rate",
    "stereo",
    "24-bit",
    "8-bit",
    "short-data",
    "short-fmt",
    "no-data",
    "no-chunks",
    "data-first",
    "odd-data",
    "tiny-fmt",
]
"""What a client's WAV may be refused for, and the words that say it."""


@pytest.mark.parametrize(("data", "words"), REFUSED, ids=REFUSED_IDS)
def test_read_wav_refuses_in_one_line(data: bytes, words: str) -> None:
    with pytest.raises(BadAudio) as caught:
        read_wav(data)
    message = str(caught.value)
    assert words in message
    assert "\n" not in message
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, BadRequest)  # the transport answers it with a 400


@pytest.mark.parametrize(("data", "words"), REFUSED, ids=REFUSED_IDS)
def test_a_file_the_reader_refuses_is_replayed_through_ffmpeg(data: bytes, words: str) -> None:
    layout = wav_layout(data)
    if "data chunk says" in words or "not a whole number" in words:
        assert layout is not None  # a file's samples are read to its end, whole samples only
    else:
        assert layout is None


def test_wav_bytes_takes_whole_samples_only() -> None:
    with pytest.raises(BadAudio, match="whole number"):
        wav_bytes(b"\x00\x01\x02")


@pytest.mark.parametrize(
    "content_type",
    [
        "audio/L16; rate=16000",
        "audio/L16;rate=16000;channels=1",
        "AUDIO/l16; Channels=1; RATE=16000",
        'audio/L16; channels="1"; rate="16000";',
    ],
)
def test_parse_l16_accepts_16_khz_mono(content_type: str) -> None:
    parse_l16(content_type)  # no error


@pytest.mark.parametrize(
    ("content_type", "words"),
    [
        ("audio/wav", "'audio/wav' is not audio/L16"),
        ("", "'' is not audio/L16"),
        ("audio/L16", "needs rate=16000"),
        ("audio/L16; rate=8000", "rate is 8000"),
        ("audio/L16; rate=16000; channels=2", "has 2 channels"),
        ("audio/L16; rate", "'rate' is not name=value"),
        ("audio/L24; rate=16000", "is not audio/L16"),
    ],
)
def test_parse_l16_refuses_in_one_line(content_type: str, words: str) -> None:
    with pytest.raises(BadAudio, match=words):
        parse_l16(content_type)


def test_l16_samples_are_big_endian() -> None:
    assert l16_pcm(b"\x12\x34\xff\xfe") == b"\x34\x12\xfe\xff"
    assert l16_pcm(l16_pcm(PCM)) == PCM
    with pytest.raises(BadAudio, match="whole number"):
        l16_pcm(b"\x00")


def written(rate: int = 16_000, channels: int = 1, width: int = 2, frames: bytes = b"") -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(frames)
    return out.getvalue()


def test_a_16k_mono_16_bit_wav_is_read_as_it_is() -> None:
    pcm = speech(100)
    data = written(frames=pcm)
    layout = wav_layout(data)
    assert layout is not None
    assert data[layout.offset : layout.offset + layout.length] == pcm


def test_chunks_before_the_samples_are_skipped_odd_sizes_padded() -> None:
    pcm = speech(50)
    fmt = struct.pack("<HHIIHH", 1, 1, 16_000, 32_000, 2, 16)
    listing = b"INFOabc"  # odd: one pad byte follows
    body = (
        b"WAVE"
        + b"fmt "
        + struct.pack("<I", len(fmt))
        + fmt
        + b"LIST"
        + struct.pack("<I", len(listing))
        + listing
        + b"\0"
        + b"data"
        + struct.pack("<I", len(pcm))
        + pcm
    )
    data = b"RIFF" + struct.pack("<I", len(body)) + body
    layout = wav_layout(data)
    assert layout is not None
    assert data[layout.offset : layout.offset + layout.length] == pcm


def test_a_streamed_wav_without_a_size_reads_to_the_end() -> None:
    data = bytearray(written(frames=speech(20)))
    data[40:44] = struct.pack("<I", 0xFFFFFFFF)
    layout = wav_layout(bytes(data))
    assert layout is not None
    assert layout.offset == 44
    assert layout.length > len(data)


@pytest.mark.parametrize(
    "data",
    [
        written(rate=44_100),
        written(channels=2),
        written(width=1),
        b"ID3\x04" + bytes(100),  # an mp3
        b"RIFF\x24\x00\x00\x00WAVEdata\x00\x00\x00\x00",  # samples before their format
        written()[:30],  # cut inside the format
        b"",
    ],
)
def test_anything_else_goes_through_ffmpeg(data: bytes) -> None:
    assert wav_layout(data) is None
