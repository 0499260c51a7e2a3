"""The overlay's protocol, pure: the status, what the overlay sends, what it is sent."""

from __future__ import annotations

import orjson
import pytest

from actors.core.records import FeedInput, FeedItem
from transport import overlay_messages as messages


def test_a_quiet_spell_is_measured_from_the_newest_arrival() -> None:
    quiet = 60_000
    assert messages.status_at(None, None, 100_000, quiet) == messages.Status("muted", "off")
    assert messages.status_at(50_000, None, 109_999, quiet) == messages.Status("active", "off")
    assert messages.status_at(50_000, 60_000, 110_000, quiet) == messages.Status("muted", "active")
    assert messages.status_at(50_000, 60_000, 120_000, quiet) == messages.Status("muted", "off")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"type": "pong"}', messages.Pong()),
        (
            b'{"type": "command", "action": "toggle_screen", "x": 1}',
            messages.Command("toggle_screen"),
        ),
    ],
)
def test_what_the_overlay_sends_is_read_for_what_it_asks(
    data: bytes, expected: messages.Inbound
) -> None:
    assert messages.parse_inbound(data) == expected


def test_a_typed_message_becomes_a_feed_input_from_the_overlay() -> None:
    parsed = messages.parse_inbound(b'{"type": "message", "text": "hi", "priority": "urgent"}')
    assert isinstance(parsed, messages.UserMessage)
    assert parsed.message == FeedInput("hi", "normal", "overlay", "stream")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"x" * (messages.MAX_MESSAGE_BYTES + 1), "larger than 65536 bytes"),
        (b"\xff", "not JSON"),
        (b"[1]", "not a JSON object"),
        (b'{"type": ["pong"]}', "not a type the relay reads"),
        (b'{"type": "command", "action": {"a": 1}}', "command: not an action"),
        (b'{"type": "message", "text": ""}', "message: text must be a string that is not blank"),
        (b'{"type": "profiling", "rssMb": -1, "uptimeS": 1, "ts": 1}', "profiling: rssMb"),
    ],
)
def test_what_the_relay_does_not_act_on_says_why(data: bytes, reason: str) -> None:
    with pytest.raises(messages.Ignored, match=reason):
        messages.parse_inbound(data)


def test_a_feed_message_never_has_an_id_and_marks_what_the_user_typed() -> None:
    typed = FeedItem(id=7, text="hi", priority="high", ts=5, source="overlay")
    hud = FeedItem(id=8, text="[🧠] x", priority="normal", ts=6, source="agent", channel="stream")
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
