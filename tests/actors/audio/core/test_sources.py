"""Source values: every form's plan, the bad ones named by their setting, and the WAV files
the relay replays without ffmpeg."""

from __future__ import annotations

import io
import struct
import wave

import pytest

from actors.audio.core.sources import (
    SourceError,
    SourcePlan,
    check_source,
    parse_source,
    wav_layout,
)
from tests.audio.signals import speech

PCM_OUT = ("-vn", "-ac", "1", "-ar", "16000", "-f", "s16le", "pipe:1")
QUIET = ("ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error")


def test_a_command_is_split_as_a_shell_would_but_runs_without_one() -> None:
    plan = parse_source("command:sck-capture --sample-rate 16000 --label 'my mic' $HOME|x")
    assert plan == SourcePlan(
        "command",
        "sck-capture --sample-rate 16000 --label 'my mic' $HOME|x",
        ("sck-capture", "--sample-rate", "16000", "--label", "my mic", "$HOME|x"),
    )


@pytest.mark.parametrize(
    ("value", "device_args"),
    [
        ("avfoundation:1", ("-f", "avfoundation", "-i", ":1")),
        ("avfoundation:BlackHole 2ch", ("-f", "avfoundation", "-i", ":BlackHole 2ch")),
        (
            "pulse:alsa_output.pci-0000_00_1f.3.analog-stereo.monitor",
            ("-f", "pulse", "-i", "alsa_output.pci-0000_00_1f.3.analog-stereo.monitor"),
        ),
        ("alsa:hw:1,0", ("-f", "alsa", "-i", "hw:1,0")),
        ("PULSE: default ", ("-f", "pulse", "-i", "default")),
    ],
)
def test_a_device_is_read_by_ffmpeg_as_16k_mono_pcm_on_stdout(
    value: str, device_args: tuple[str, ...]
) -> None:
    plan = parse_source(value)
    assert plan.argv == (*QUIET, *device_args, *PCM_OUT)
    assert plan.target == device_args[-1].removeprefix(":")
    assert plan.path is None


def test_a_file_is_replayed_at_its_own_speed() -> None:
    plan = parse_source("file:/tmp/a talk.mp3")
    assert plan.kind == "file"
    assert plan.path == "/tmp/a talk.mp3"
    assert plan.argv == (*QUIET, "-re", "-i", "/tmp/a talk.mp3", *PCM_OUT)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("bogus", "must be one of command:..., avfoundation:..., pulse:..., alsa:..., file:..."),
        ("bogus:x", "got 'bogus:x'"),
        ("/usr/bin/ffmpeg -i x", "must be one of"),
        ("command:", "command: needs a program"),
        ("command:   ", "command: needs a program"),
        ("command:'unclosed", "does not split (No closing quotation)"),
        ("pulse:", "pulse: needs a source"),
        ("avfoundation:", "avfoundation: needs a device"),
        ("alsa: ", "alsa: needs a device"),
        ("file:", "file: needs a path"),
    ],
)
def test_a_bad_value_is_an_error_naming_the_setting(value: str, says: str) -> None:
    with pytest.raises(SourceError) as caught:
        parse_source(value, "MIC_SOURCE")
    assert str(caught.value).startswith("MIC_SOURCE")
    assert says in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_start_up_passes_an_empty_source_and_stops_at_a_bad_one() -> None:
    check_source("AUDIO_SOURCE", "")
    check_source("AUDIO_SOURCE", "pulse:default")
    with pytest.raises(SourceError, match=r"^AUDIO_ALT_SOURCE must be one of"):
        check_source("AUDIO_ALT_SOURCE", "bogus")


def wav(rate: int = 16_000, channels: int = 1, width: int = 2, frames: bytes = b"") -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(frames)
    return out.getvalue()


def test_a_16k_mono_16_bit_wav_is_read_as_it_is() -> None:
    pcm = speech(100)
    data = wav(frames=pcm)
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
    data = bytearray(wav(frames=speech(20)))
    data[40:44] = struct.pack("<I", 0xFFFFFFFF)
    layout = wav_layout(bytes(data))
    assert layout is not None
    assert layout.offset == 44
    assert layout.length > len(data)


@pytest.mark.parametrize(
    "data",
    [
        wav(rate=44_100),
        wav(channels=2),
        wav(width=1),
        b"ID3\x04" + bytes(100),  # an mp3
        b"RIFF\x24\x00\x00\x00WAVEdata\x00\x00\x00\x00",  # samples before their format
        wav()[:30],  # cut inside the format
        b"",
    ],
)
def test_anything_else_goes_through_ffmpeg(data: bytes) -> None:
    assert wav_layout(data) is None
