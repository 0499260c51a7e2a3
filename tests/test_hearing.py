"""The relay hears: a real capture process, the voice detector, the stand-in speech service
over loopback and the feed, end to end in a real relay. A transcript reaches the feed with
its mark, the overlay's socket and the agent's window; the capture's process ends with the
relay."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from actors.audio.capture import Capture
from actors.audio.core.capture_records import CaptureStatus
from actors.audio.subtree import configured
from actors.kernel.clock import FakeClock
from actors.kernel.processes import alive
from actors.tree import Relay
from config.audio.settings import AudioConfig
from tests.audio.pcm_program import command as program
from tests.support.actor_calls import asked
from tests.support.harness import ROOT
from tests.support.observe import wait_until
from tests.support.relay import client_for, relay_settings
from tests.transport.overlay_client import Feed, OverlayClient, Status
from transport.audio.control import NO_ALT, PAUSED, STARTED, STOPPED
from transport.demo.fake_stt import FakeStt

HEARD = "where is the config file"


@pytest.fixture
def fake_stt() -> Iterator[FakeStt]:
    with FakeStt() as stt:
        stt.text = HEARD
        yield stt


@pytest.fixture
def hearing(
    make_relay: Callable[..., Relay], fake_stt: FakeStt, monkeypatch: pytest.MonkeyPatch
) -> Relay:
    monkeypatch.chdir(ROOT)  # ``-m tests.audio.pcm_program`` is found from the top
    audio = AudioConfig(
        source=program("--scene", "speech:1200,silence:1500", "--repeat", "40"),
        stt_api="openai",
        stt_base_url=fake_stt.base_url,
        stt_api_key="placeholder",
    )
    return make_relay(replace(relay_settings(), audio=audio))


def test_what_the_user_hears_reaches_the_feed_the_overlay_and_the_agents_window(
    hearing: Relay,
) -> None:
    host, port = hearing.address()
    with OverlayClient(host, port) as overlay, client_for(hearing) as client:
        assert isinstance(overlay.read(), Status)

        def stored() -> dict[str, object] | None:
            items = client.get("/feed").json()["messages"]
            return next((m for m in items if m["source"] == "audio"), None)

        item = wait_until(stored, 15, "a transcript in the feed")
        assert item["text"] == f"[🔊] {HEARD}"
        assert item["channel"] == "stream"
        shown = overlay.next_of(Feed)
        assert shown.text == f"[🔊] {HEARD}"
        context = client.get("/agent/context").json()["context"]
        assert {"text": HEARD, "source": "system"} in [
            {k: a[k] for k in ("text", "source")} for a in context["audio"]
        ]


def test_the_capture_process_ends_with_the_relay(hearing: Relay) -> None:
    capture = hearing.handles["capture_system"]
    pid = wait_until(lambda: asked(capture, Capture.snapshot).pid, 10, "a pid")
    assert alive(pid)
    assert hearing.stop()
    wait_until(lambda: not alive(pid), 5, "the capture process gone")


def test_a_privacy_pause_ends_the_capture_and_its_end_starts_it_again(
    hearing: Relay, clock: FakeClock
) -> None:
    capture = hearing.handles["capture_system"]
    pid = wait_until(lambda: asked(capture, Capture.snapshot).pid, 10, "a pid")
    with client_for(hearing) as client:
        client.post("/privacy", json={"pauseMinutes": 1}).raise_for_status()
        # the capture is told as the pause is published, before the answer: this ask is next
        assert (_status(hearing, "system").state, _status(hearing, "system").pid) == (
            "paused",
            None,
        )
        assert not alive(pid)  # ended and reaped by the pause
        assert client.get("/health").json()["audio"]["sources"]["system"]["state"] == "paused"
        assert asked(capture, Capture.resume).state == "paused"  # the overlay cannot undo it
        clock.advance(60)  # the pause ends by itself
        again = wait_until(lambda: asked(capture, Capture.snapshot).pid, 10, "a new process")
    assert again != pid


def test_a_capture_the_overlay_paused_stays_paused_after_a_privacy_pause(hearing: Relay) -> None:
    capture = hearing.handles["capture_system"]
    wait_until(lambda: asked(capture, Capture.snapshot).pid, 10, "a pid")
    asked(capture, Capture.pause)  # the overlay's toggle_audio
    with client_for(hearing) as client:
        client.post("/privacy", json={"paused": True}).raise_for_status()
        client.post("/privacy", json={"paused": False}).raise_for_status()
    assert asked(capture, Capture.snapshot).state == "paused"
    assert asked(capture, Capture.resume).state == "starting"


def test_toggle_audio_while_paused_says_so_and_changes_nothing(hearing: Relay) -> None:
    host, port = hearing.address()
    with OverlayClient(host, port) as overlay, client_for(hearing) as client:
        client.post("/privacy", json={"paused": True}).raise_for_status()
        overlay.send({"type": "command", "action": "toggle_audio"})
        _line(overlay, PAUSED)
        assert _status(hearing, "system").state == "paused"
        client.post("/privacy", json={"paused": False}).raise_for_status()
    wait_until(lambda: _status(hearing, "system").pid, 10, "capture again")


def test_only_configured_sources_are_captured() -> None:
    assert configured(AudioConfig()) == {}
    assert configured(AudioConfig(mic_source="pulse:default")) == {"mic": "pulse:default"}


@pytest.fixture
def switchable(
    make_relay: Callable[..., Relay], fake_stt: FakeStt, monkeypatch: pytest.MonkeyPatch
) -> Relay:
    """A relay hearing system audio and the microphone, with an alternative system source."""
    monkeypatch.chdir(ROOT)
    loop = ("--scene", "speech:1200,silence:1500", "--repeat", "40")
    audio = AudioConfig(
        source=program(*loop),
        mic_source=program(*loop),
        alt_source=program("--stderr", "the other device", *loop),
        stt_api="openai",
        stt_base_url=fake_stt.base_url,
        stt_api_key="placeholder",
    )
    return make_relay(replace(relay_settings(), audio=audio))


def _line(overlay: OverlayClient, text: str) -> str:
    """The next feed line that is not a transcript: ``text``, as the test expects."""
    shown = overlay.next_of(Feed)
    while shown.text.startswith(("[🔊] ", "[🎙] ")):
        shown = overlay.next_of(Feed)
    assert shown.text == text
    return text


def _status(relay: Relay, source: str) -> CaptureStatus:
    return asked(relay.handles[f"capture_{source}"], Capture.snapshot)


def test_toggle_audio_stops_every_capture_and_starts_them_again_telling_every_overlay(
    switchable: Relay,
) -> None:
    host, port = switchable.address()
    with OverlayClient(host, port) as asking, OverlayClient(host, port) as watching:
        assert isinstance(asking.read(), Status)
        if watching.next_of(Status).audio != "active":  # a transcript heard first
            assert watching.next_of(Status).audio == "active"
        asking.send({"type": "command", "action": "toggle_audio"})
        _line(asking, STOPPED)
        _line(watching, STOPPED)
        assert watching.next_of(Status).audio == "muted"
        assert {_status(switchable, s).state for s in ("system", "mic")} == {"paused"}
        asking.send({"type": "command", "action": "toggle_audio"})
        _line(watching, STARTED)
        for source in ("system", "mic"):

            def running(source: str = source) -> bool:
                return _status(switchable, source).state == "running"

            wait_until(running, 10, source)


def test_switch_device_swaps_the_system_source_and_back(switchable: Relay) -> None:
    host, port = switchable.address()
    with OverlayClient(host, port) as overlay:
        assert isinstance(overlay.read(), Status)
        overlay.send({"type": "command", "action": "switch_device"})
        _line(overlay, "Audio device → AUDIO_ALT_SOURCE (command)")
        wait_until(lambda: _status(switchable, "system").last_stderr == "the other device", 10)
        assert _status(switchable, "mic").last_stderr == ""
        overlay.send({"type": "command", "action": "switch_device"})
        _line(overlay, "Audio device → AUDIO_SOURCE (command)")
        assert not _status(switchable, "system").alt


def test_switch_device_without_an_alternative_says_what_to_set(hearing: Relay) -> None:
    host, port = hearing.address()
    with OverlayClient(host, port) as overlay:
        assert isinstance(overlay.read(), Status)
        overlay.send({"type": "command", "action": "switch_device"})
        _line(overlay, NO_ALT)
