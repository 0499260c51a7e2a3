"""Source values: every form's plan, and the bad ones named by their setting."""

from __future__ import annotations

import pytest

from actors.audio.core.sources import SourceError, SourcePlan, check_source, parse_source

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
