"""The overlay's protocol, pure: the status, what the overlay sends, what it is sent."""

from __future__ import annotations

from typing import get_args

import orjson
import pytest

from actors.core.records import FeedPost, FeedRecord
from transport.overlay import messages


def test_a_quiet_spell_is_measured_from_the_newest_arrival() -> None:
    quiet = 60_000
    assert messages.status_at(None, None, 100_000, quiet) == messages.Status("muted", "off")
    assert messages.status_at(50_000, None, 109_999, quiet) == messages.Status("active", "off")
    assert messages.status_at(50_000, 60_000, 110_000, quiet) == messages.Status("muted", "active")
    assert messages.status_at(50_000, 60_000, 120_000, quiet) == messages.Status("muted", "off")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"type": "pong"}', messages.OverlayPong()),
        (b'{"type": "pong", "ts": "not read"}', messages.OverlayPong("not read")),
        (
            b'{"type": "command", "action": "toggle_screen", "x": 1}',
            messages.OverlayCommand("toggle_screen"),
        ),
        (
            b'{"type": "profiling", "rssMb": 1, "uptimeS": 2, "ts": 3, "cpu": 4}',
            messages.OverlayProfiling(rss_mb=1, uptime_s=2, ts=3),
        ),
    ],
)
def test_what_the_overlay_sends_is_read_for_what_it_asks(
    data: bytes, expected: messages.Inbound
) -> None:
    assert messages.parse_inbound(data) == expected


def test_a_typed_message_becomes_a_feed_input_from_the_overlay() -> None:
    parsed = messages.parse_inbound(b'{"type": "message", "text": "hi", "priority": "urgent"}')
    assert isinstance(parsed, messages.OverlayMessage)
    assert parsed.feed_input() == FeedPost("hi", "normal", "overlay", "stream")


def test_every_switch_the_overlay_may_ask_for_has_its_notice() -> None:
    assert set(messages.COMMAND_NOTICES) == set(get_args(messages.CommandAction))


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"x" * (messages.MAX_MESSAGE_BYTES + 1), "larger than 65536 bytes"),
        (b"\xff", "not JSON"),
        (b"[1]", "not a JSON object"),
        (b'{"type": ["pong"]}', "not a type the relay reads"),
        (b'{"type": "command", "action": {"a": 1}}', "command: action must be one of"),
        (b'{"type": "command", "action": "reboot"}', "command: action must be one of"),
        (b'{"type": "message", "text": ""}', "message: text must be a string that is not blank"),
        (b'{"type": "profiling", "rssMb": -1, "uptimeS": 1, "ts": 1}', "profiling: rssMb"),
    ],
)
def test_what_the_relay_does_not_act_on_says_why(data: bytes, reason: str) -> None:
    with pytest.raises(messages.Ignored, match=reason):
        messages.parse_inbound(data)


def test_a_feed_message_never_has_an_id_and_marks_what_the_user_typed() -> None:
    typed = FeedRecord(id=7, text="hi", priority="high", ts=5, source="overlay")
    hud = FeedRecord(id=8, text="[🧠] x", priority="normal", ts=6, source="agent", channel="stream")
    assert orjson.loads(messages.feed_message(typed)) == {
        "type": "feed",
        "text": "hi",
        "priority": "high",
        "ts": 5,
        "channel": "stream",
        "sender": "user",
    }
    assert "id" not in orjson.loads(messages.feed_message(hud))
    assert "sender" not in orjson.loads(messages.feed_message(hud))
