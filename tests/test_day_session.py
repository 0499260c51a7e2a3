"""The day session and the labelled moments of both shipped sessions."""

from __future__ import annotations

import difflib
import itertools
import json
from pathlib import Path

import pytest

from actors.core.bodies import sense_input
from actors.core.screen_image import ScreenImage, read_image
from tests.support.day_session import (
    DAY_SESSION,
    FILLERS,
    MEMO,
    MIN_MOMENT_GAP_S,
    PASS_GAP_S,
    LabelError,
    Moment,
    labels_json,
    labels_path,
    load_moments,
    parse_moments,
    repeated,
    screens,
    with_hud_times,
    with_screens,
)
from tests.support.posts import assert_session_accepted
from transport.demo.replay import DEMO_SESSION, SessionEvent, load_session, parse_session

SESSIONS = pytest.mark.parametrize("session", [DEMO_SESSION, DAY_SESSION], ids=["demo", "day"])


def test_every_line_of_the_day_session_is_a_request_the_relay_accepts() -> None:
    assert_session_accepted(DAY_SESSION)


def test_the_day_session_is_one_request_a_line_and_its_labels_in_the_form_labels_json_writes() -> (
    None
):
    text = DAY_SESSION.read_text(encoding="utf-8")
    events = load_session(DAY_SESSION)
    assert len(events) == len(text.splitlines())
    for line in text.splitlines():
        assert json.dumps(json.loads(line), ensure_ascii=False) == line
    moments = load_moments(DAY_SESSION, events)
    assert moments is not None
    assert labels_json(DAY_SESSION.name, moments) == labels_path(DAY_SESSION).read_text(
        encoding="utf-8"
    )


def test_the_day_session_holds_a_day() -> None:
    events = load_session(DAY_SESSION)
    assert events[-1].at >= 30 * 60
    assert DAY_SESSION.stat().st_size < 3_000_000
    screens = [e for e in events if e.path == "/sense"]
    feeds = [e.body["text"] for e in events if e.path == "/feed"]

    # idle: minutes with nothing, and minutes of only identical frames
    gaps = [b.at - a.at for a, b in itertools.pairwise(events)]
    assert max(gaps) >= 180
    same = [a.body["ocr"] == b.body["ocr"] for a, b in itertools.pairwise(screens)]
    runs = [len(list(g)) for same_frame, g in itertools.groupby(same) if same_frame]
    assert max(runs) >= 5

    # flicker: consecutive frames of one window that differ a little
    flicker = sum(
        a.body["meta"]["windowTitle"] == b.body["meta"]["windowTitle"]
        and a.body["ocr"] != b.body["ocr"]
        and difflib.SequenceMatcher(None, a.body["ocr"], b.body["ocr"]).ratio() > 0.9
        for a, b in itertools.pairwise(screens)
    )
    assert flicker >= 60

    # bursts: three apps or more within 5 s
    bursts = sum(
        len({e.body["meta"]["app"] for e in screens[n : n + 4]}) >= 3
        and screens[n + 3].at - screens[n].at <= 5
        for n in range(len(screens) - 3)
    )
    assert bursts >= 2

    # a conversation, in both plain transcript forms, with fillers
    heard = [e.body for e in events if e.path == "/feed"]
    assert sum(b.get("source") == "audio" for b in heard) >= 30
    assert any(b["text"].startswith(MEMO) for b in heard)
    assert sum(t.removeprefix(MEMO) in FILLERS for t in feeds) >= 10
    assert sum(t.endswith("?") for t in feeds) >= 4

    # errors that appear and are fixed later
    ocr = [e.body["ocr"] for e in screens]
    first = {
        mark: next(n for n, text in enumerate(ocr) if mark in text)
        for mark in ("FAILED", "error:", "Traceback", "21 passed", "8 passed")
    }
    assert first["FAILED"] < first["error:"] < first["21 passed"]
    assert first["Traceback"] < first["8 passed"]


@SESSIONS
def test_the_labels_name_requests_in_order_by_the_rule(session: Path) -> None:
    events = load_session(session)
    moments = load_moments(session, events)
    assert moments is not None and len(moments) >= 15
    at = {event.at: event for event in reversed(events)}  # the first request at each second
    assert all(b.at - a.at >= MIN_MOMENT_GAP_S for a, b in itertools.pairwise(moments))
    previous: dict[float, SessionEvent] = {}
    last_screen: SessionEvent | None = None
    for event in events:
        if event.path == "/sense":
            if last_screen is not None:
                previous[event.at] = last_screen
            last_screen = event
    for moment in moments:
        event = at[moment.at]
        if event.path == "/feed":
            assert event.body["text"].removeprefix(MEMO) not in FILLERS, moment
        elif moment.at in previous:
            before = previous[moment.at].body
            shown = (event.body["meta"]["app"], event.body["meta"]["windowTitle"])
            assert (before["meta"]["app"], before["meta"]["windowTitle"], before["ocr"]) != (
                *shown,
                event.body["ocr"],
            ), f"{moment}: an identical frame"


def test_a_session_without_a_labels_file_has_no_moments(tmp_path: Path) -> None:
    session = tmp_path / "mine.jsonl"
    session.write_text('{"at": 0, "path": "/feed", "body": {"text": "hi"}}\n')
    events = load_session(session)
    assert load_moments(session, events) is None
    labels_path(session).write_text(labels_json(session.name, [Moment(0, "says hi")]))
    assert load_moments(session, events) == (Moment(0.0, "says hi"),)
    assert labels_path(DEMO_SESSION) == DEMO_SESSION.with_name("session.labels.json")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[]", r'needs \{"moments"'),
        ("{nope", "not JSON"),
        ('{"moments": [{"at": 3, "reason": "x"}]}', "no request at 3"),
        ('{"moments": [{"at": "1", "reason": "x"}]}', "at must be a number"),
        ('{"moments": [{"at": 1, "reason": " "}]}', "reason must be"),
        ('{"moments": [{"at": 2, "reason": "x"}, {"at": 1, "reason": "y"}]}', "moment 1: at 1"),
        ('{"moments": [{"at": 1, "reason": "x"}, {"at": 1, "reason": "y"}]}', "moment 1: at 1"),
    ],
)
def test_a_bad_labels_file_is_named(text: str, error: str) -> None:
    events = parse_session(
        "\n".join(f'{{"at": {at}, "path": "/feed", "body": {{}}}}' for at in (0, 1, 2))
    )
    with pytest.raises(LabelError, match=error):
        parse_moments(text, events, "l")


def jpeg_size(jpeg: bytes) -> tuple[int, int]:
    """Width and height from a baseline or progressive JPEG's frame header."""
    at = 2
    while jpeg[at] == 0xFF and jpeg[at + 1] not in (0xC0, 0xC2):
        at += 2 + int.from_bytes(jpeg[at + 2 : at + 4], "big")
    return int.from_bytes(jpeg[at + 7 : at + 9], "big"), int.from_bytes(
        jpeg[at + 5 : at + 7], "big"
    )


def test_the_screen_thumbnails_are_jpegs_as_the_capture_client_sends_them() -> None:
    pictures = screens()
    apps = {e.body["meta"]["app"] for e in load_session(DAY_SESSION) if e.path == "/sense"}
    assert apps <= set(pictures)
    assert len(set(pictures.values())) == len(apps) == 6
    for app, jpeg in pictures.items():
        width, height = jpeg_size(jpeg)
        assert width <= 384 and height <= 384, app
        assert 5_000 < len(jpeg) <= 60_000, app


@SESSIONS
def test_with_screens_each_image_is_its_apps_thumbnail_the_same_screen_the_same_bytes(
    session: Path,
) -> None:
    events = load_session(session)
    shown = with_screens(events)
    pictures = screens()
    by_screen: dict[str, set[str]] = {}
    for before, after in zip(events, shown, strict=True):
        if "roi" not in before.body:
            assert after == before
            continue
        body = after.body
        sense_input(body)  # the relay accepts it
        image = read_image(1, body["roi"]["data"])
        assert isinstance(image, ScreenImage) and image.type == "image/jpeg"
        thumbnail = pictures[body["meta"]["app"]]
        assert image.size == len(thumbnail) + 36  # and a comment naming the screen
        assert {k: v for k, v in body.items() if k != "roi"} == {
            k: v for k, v in before.body.items() if k != "roi"
        }
        screen = f"{body['type']}|{body['meta']['windowTitle']}|{body['ocr']}"
        by_screen.setdefault(screen, set()).add(image.digest)
    assert by_screen and all(len(digests) == 1 for digests in by_screen.values())
    every = [d for digests in by_screen.values() for d in digests]
    assert len(set(every)) == len(every)  # another screen, other bytes


def test_with_screens_every_gives_each_screen_event_of_a_known_app_an_image() -> None:
    events = load_session(DEMO_SESSION)
    shown = with_screens(events, every=True)
    screens_shown = [e for e in shown if e.path == "/sense"]
    assert sum("roi" in e.body for e in events) < len(screens_shown)
    for event in screens_shown:
        sense_input(event.body)
        assert isinstance(read_image(1, event.body["roi"]["data"]), ScreenImage)
    assert [e for e in shown if e.path == "/feed"] == [e for e in events if e.path == "/feed"]


def test_a_repeated_session_plays_every_pass_after_a_quiet_gap_with_its_moments() -> None:
    events = load_session(DEMO_SESSION)
    moments = load_moments(DEMO_SESSION, events)
    assert moments is not None
    last = events[-1].at
    again, marked, period = repeated(events, moments, until_s=3 * (last + PASS_GAP_S) + 1)
    assert period == last + PASS_GAP_S
    assert len(again) == 3 * len(events)
    assert [e.at for e in again[len(events) : len(events) + 2]] == [
        events[0].at + period,
        events[1].at + period,
    ]
    assert marked is not None
    assert [m.at for m in marked[-len(moments) :]] == [m.at + 2 * period for m in moments]
    assert {e.at for e in again} >= {m.at for m in marked}  # each moment is a request's


def test_a_session_shorter_than_asked_for_plays_once() -> None:
    events = load_session(DEMO_SESSION)
    again, marked, _ = repeated(events, None, until_s=0)
    assert (again, marked) == (events, None)


def test_a_hud_pushed_before_its_entry_is_timed_when_the_feed_took_it() -> None:
    entries = [
        {"ts": 10_000, "latencyMs": 6_000, "hud": "Reading the MDN page", "pushed": True},
        {"ts": 20_000, "latencyMs": 5_000, "hud": "Reading the MDN page", "pushed": False},
        {"ts": 30_000, "latencyMs": 5_000, "hud": "Editing idle.py", "pushed": True},
    ]
    feed = [
        {"ts": 3_000, "text": "[🧠] Editing idle.py", "source": "agent"},  # before its call
        {"ts": 7_000, "text": "[🧠] Reading the MDN page", "source": "agent"},
        {"ts": 27_000, "text": "[🧠] Editing idle.py", "source": None},  # a client's, not ours
    ]
    timed = with_hud_times(entries, feed)
    assert [e.get("hudMs") for e in timed] == [7_000, None, None]
    assert timed[1:] == entries[1:]  # the rest as they were
