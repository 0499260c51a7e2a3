"""The context window (v2 spec, section 3): audio extraction, ageing, dedup, app history."""

from __future__ import annotations

import msgspec
import orjson
import pytest

from actors.core.records import FeedRecord, SenseRecord
from actors.core.shapes import AppSwitch
from actors.core.window import (
    MAX_AUDIO,
    MAX_SCREEN,
    AudioEvent,
    ScreenEvent,
    TickWindow,
    build_context_window,
    extract_audio,
    screen_event,
)

NOW = 1_769_901_200_000
MAX_AGE = 120_000
CUTOFF = NOW - MAX_AGE


def feed(text: str, ts: int = NOW - 1_000, item_id: int = 1) -> FeedRecord:
    return FeedRecord(id=item_id, text=text, priority="normal", ts=ts)


def sense(
    *,
    received_at: int = NOW - 1_000,
    ts: float | None = None,
    type_: str = "text",
    ocr: str = "",
    app: str = "code",
    ssim: float | None = None,
    event_id: int = 1,
) -> SenseRecord:
    payload: dict[str, object] = {"type": type_, "ts": received_at if ts is None else ts}
    if ocr:
        payload["ocr"] = ocr
    return SenseRecord(
        id=event_id,
        received_at=received_at,
        type=type_,
        ts=received_at if ts is None else ts,
        ocr=ocr,
        app=app,
        ssim=ssim,
        payload=payload,
    )


def window(feed_items=(), sense_events=(), *, now_ms: int = NOW, max_age_ms: int = MAX_AGE):
    return build_context_window(feed_items, sense_events, now_ms=now_ms, max_age_ms=max_age_ms)


# --- extract_audio ---------------------------------------------------------------------------


def test_extract_audio_ignores_item_without_periodic_or_openrouter_marker():
    assert extract_audio(feed("hello there, just a message")) is None


def test_extract_audio_ignores_agent_hud_lines():
    assert extract_audio(feed("[🧠] Editing main.py in VS Code")) is None


def test_extract_audio_strips_openrouter_speaker_prefix():
    event = extract_audio(feed("[12:00:01 openrouter] we should ship on friday", ts=NOW - 5))
    assert event == AudioEvent(ts=NOW - 5, text="we should ship on friday")


def test_extract_audio_keeps_only_openrouter_lines_of_a_periodic_item():
    text = (
        "[PERIODIC] transcript summary\n"
        "[12:00:01 openrouter] first line\n"
        "some unrelated line\n"
        "[12:00:05 openrouter]   second line  "
    )
    event = extract_audio(feed(text))
    assert event is not None
    assert event.text == "first line second line"


def test_extract_audio_periodic_item_without_openrouter_lines_is_dropped():
    assert extract_audio(feed("[PERIODIC] nothing was transcribed\nsilence")) is None


def test_extract_audio_drops_item_whose_openrouter_lines_are_empty_after_stripping():
    assert extract_audio(feed("[PERIODIC]\n[12:00 openrouter]   \n[12:01 openrouter]")) is None


def test_extract_audio_keeps_openrouter_line_without_bracket_prefix_verbatim():
    event = extract_audio(feed("note: openrouter] said hi"))
    assert event is not None
    assert event.text == "note: openrouter] said hi"


def test_extract_audio_strips_prefix_only_once_per_line():
    event = extract_audio(feed("[a openrouter] quoting [b openrouter] inside"))
    assert event is not None
    assert event.text == "quoting [b openrouter] inside"


def test_extract_audio_keeps_the_item_timestamp():
    event = extract_audio(feed("[x openrouter] hi", ts=42))
    assert event is not None
    assert event.ts == 42


def test_extract_audio_keeps_multibyte_text_intact():
    event = extract_audio(feed("[x openrouter] Привет 👋 日本語"))
    assert event is not None
    assert event.text == "Привет 👋 日本語"


# --- ageing ----------------------------------------------------------------------------------


def test_feed_item_exactly_at_cutoff_is_inside_the_window():
    ctx = window([feed("[x openrouter] at cutoff", ts=CUTOFF)])
    assert [a.text for a in ctx.audio] == ["at cutoff"]
    assert ctx.audio_count == 1


def test_feed_item_one_ms_before_cutoff_is_outside_the_window():
    ctx = window([feed("[x openrouter] too old", ts=CUTOFF - 1)])
    assert ctx.audio == ()
    assert ctx.audio_count == 0


def test_sense_event_exactly_at_cutoff_is_inside_the_window():
    ctx = window(sense_events=[sense(received_at=CUTOFF, ocr="at cutoff")])
    assert [s.ocr for s in ctx.screen] == ["at cutoff"]
    assert ctx.screen_count == 1


def test_sense_event_one_ms_before_cutoff_is_outside_the_window():
    ctx = window(sense_events=[sense(received_at=CUTOFF - 1, ocr="too old")])
    assert ctx.screen == ()
    assert ctx.screen_count == 0


def test_sense_events_are_aged_by_received_at_not_client_ts():
    old_client_clock = sense(received_at=NOW - 10, ts=1_000, ocr="kept")
    future_client_clock = sense(received_at=CUTOFF - 5, ts=NOW + 10_000, ocr="dropped")
    ctx = window(sense_events=[future_client_clock, old_client_clock])
    assert [s.ocr for s in ctx.screen] == ["kept"]
    assert ctx.screen[0].ts == 1_000
    assert ctx.screen_count == 1


def test_window_respects_max_age_argument():
    items = [feed("[x openrouter] a", ts=NOW - 5_000), feed("[x openrouter] b", ts=NOW - 500)]
    ctx = window(items, max_age_ms=1_000)
    assert [a.text for a in ctx.audio] == ["b"]
    assert ctx.window_ms == 1_000


def test_feed_items_without_transcript_are_not_counted_as_audio():
    items = [feed("plain message"), feed("[x openrouter] spoken"), feed("[PERIODIC] empty")]
    ctx = window(items)
    assert [a.text for a in ctx.audio] == ["spoken"]
    assert ctx.audio_count == 1


# --- screen dedup ----------------------------------------------------------------------------


def test_consecutive_identical_ocr_is_kept_once():
    events = [
        sense(received_at=NOW - 3, ocr="same"),
        sense(received_at=NOW - 2, ocr="same"),
        sense(received_at=NOW - 1, ocr="same"),
    ]
    ctx = window(sense_events=events)
    assert [(s.ts, s.ocr) for s in ctx.screen] == [(NOW - 3, "same")]
    assert ctx.screen_count == 3


def test_non_consecutive_repeated_ocr_is_kept_each_time():
    events = [
        sense(received_at=NOW - 3, ocr="A"),
        sense(received_at=NOW - 2, ocr="B"),
        sense(received_at=NOW - 1, ocr="A"),
    ]
    ctx = window(sense_events=events)
    assert [s.ocr for s in ctx.screen] == ["A", "B", "A"]


def test_context_event_with_empty_ocr_is_always_kept():
    events = [
        sense(received_at=NOW - 3, type_="context", app="idea"),
        sense(received_at=NOW - 2, type_="context", app="idea"),
    ]
    ctx = window(sense_events=events)
    assert [(s.type, s.ocr, s.ts) for s in ctx.screen] == [
        ("context", "", NOW - 3),
        ("context", "", NOW - 2),
    ]


@pytest.mark.parametrize("type_", ["text", "visual"])
def test_non_context_event_with_empty_ocr_is_dropped_from_screen_but_counted(type_):
    ctx = window(sense_events=[sense(type_=type_, ocr="")])
    assert ctx.screen == ()
    assert ctx.screen_count == 1
    assert not ctx.is_empty


def test_empty_context_event_does_not_reset_ocr_dedup():
    events = [
        sense(received_at=NOW - 3, ocr="A"),
        sense(received_at=NOW - 2, type_="context", app="safari"),
        sense(received_at=NOW - 1, ocr="A"),
    ]
    ctx = window(sense_events=events)
    assert [(s.type, s.ocr) for s in ctx.screen] == [("text", "A"), ("context", "")]


def test_screen_keeps_the_last_ten_unique_events_newest_last():
    events = [sense(received_at=NOW - 100 + i, ocr=f"ocr {i}", event_id=i) for i in range(15)]
    ctx = window(sense_events=events)
    assert MAX_SCREEN == 10
    assert [s.ocr for s in ctx.screen] == [f"ocr {i}" for i in range(5, 15)]
    assert ctx.screen_count == 15


def test_audio_keeps_the_last_five_chunks_newest_last():
    items = [feed(f"[x openrouter] chunk {i}", ts=NOW - 100 + i, item_id=i) for i in range(8)]
    ctx = window(items)
    assert MAX_AUDIO == 5
    assert [a.text for a in ctx.audio] == [f"chunk {i}" for i in range(3, 8)]
    assert ctx.audio_count == 8


def test_screen_event_missing_app_is_unknown():
    ctx = window(sense_events=[sense(ocr="x", app="")])
    assert ctx.screen[0].app == "unknown"


def test_screen_event_keeps_ssim_and_type():
    ctx = window(sense_events=[sense(type_="visual", ocr="x", ssim=0.87)])
    assert ctx.screen[0] == ScreenEvent(
        ts=NOW - 1_000, type="visual", app="code", ocr="x", ssim=0.87, received_at=NOW - 1_000
    )


def test_screen_ocr_is_not_truncated_in_the_window():
    long_ocr = "x" * 5_000
    ctx = window(sense_events=[sense(ocr=long_ocr)])
    assert ctx.screen[0].ocr == long_ocr


# --- app history and current app -------------------------------------------------------------


def test_app_history_records_switches_only():
    events = [
        sense(received_at=NOW - 5, app="google chrome", ocr="1"),
        sense(received_at=NOW - 4, app="google chrome", ocr="2"),
        sense(received_at=NOW - 3, app="code", ocr="3"),
        sense(received_at=NOW - 2, app="code", ocr="4"),
        sense(received_at=NOW - 1, app="google chrome", ocr="5"),
    ]
    ctx = window(sense_events=events)
    assert ctx.app_history == (
        AppSwitch(app="google chrome", ts=NOW - 5),
        AppSwitch(app="code", ts=NOW - 3),
        AppSwitch(app="google chrome", ts=NOW - 1),
    )


def test_app_history_includes_events_dropped_from_screen():
    events = [
        sense(received_at=NOW - 2, app="code", ocr="same"),
        sense(received_at=NOW - 1, app="idea", ocr="same"),
    ]
    ctx = window(sense_events=events)
    assert [a.app for a in ctx.app_history] == ["code", "idea"]
    assert [s.app for s in ctx.screen] == ["code"]


def test_app_history_uses_unknown_for_events_without_app():
    events = [sense(received_at=NOW - 2, app="", ocr="a"), sense(received_at=NOW - 1, ocr="b")]
    ctx = window(sense_events=events)
    assert [a.app for a in ctx.app_history] == ["unknown", "code"]


def test_current_app_is_the_latest_events_app():
    events = [
        sense(received_at=NOW - 2, app="code", ocr="a"),
        sense(received_at=NOW - 1, app="safari", ocr=""),
    ]
    assert window(sense_events=events).current_app == "safari"


def test_current_app_is_unknown_without_sense_events():
    ctx = window([feed("[x openrouter] hi")])
    assert ctx.current_app == "unknown"
    assert ctx.app_history == ()


def test_current_app_is_unknown_when_latest_event_has_no_app():
    events = [
        sense(received_at=NOW - 2, app="code", ocr="a"),
        sense(received_at=NOW - 1, app="", ocr="b"),
    ]
    assert window(sense_events=events).current_app == "unknown"


def test_current_app_ignores_events_outside_the_window():
    events = [sense(received_at=CUTOFF - 1, app="safari", ocr="old")]
    assert window(sense_events=events).current_app == "unknown"


# --- is_empty and to_json --------------------------------------------------------------------


def test_window_without_events_is_empty():
    ctx = window()
    assert ctx.is_empty
    assert ctx.audio_count == 0
    assert ctx.screen_count == 0


def test_window_with_only_old_events_is_empty():
    ctx = window([feed("[x openrouter] old", ts=CUTOFF - 1)], [sense(received_at=CUTOFF - 1)])
    assert ctx.is_empty


def test_window_with_only_audio_is_not_empty():
    assert not window([feed("[x openrouter] hi")]).is_empty


def test_window_with_only_non_transcript_feed_is_empty():
    assert window([feed("just chatting")]).is_empty


def test_to_json_has_the_spec_shape():
    items = [feed("[x openrouter] hello", ts=NOW - 50)]
    events = [
        sense(received_at=NOW - 40, ts=111, type_="context", app="idea"),
        sense(
            received_at=NOW - 30, ts=222, type_="text", app="google chrome", ocr="Docs", ssim=0.5
        ),
    ]
    ctx = window(items, events)
    assert ctx.to_json() == {
        "currentApp": "google chrome",
        "appHistory": [{"app": "idea", "ts": 111}, {"app": "google chrome", "ts": 222}],
        "audio": [{"ts": NOW - 50, "text": "hello"}],
        "screen": [
            {"ts": 111, "type": "context", "app": "idea", "ocr": ""},
            {"ts": 222, "type": "text", "app": "google chrome", "ocr": "Docs", "ssim": 0.5},
        ],
        "audioCount": 1,
        "screenCount": 2,
        "windowMs": MAX_AGE,
        "newestEventTs": NOW - 30,
        "images": [],
    }


def test_to_json_of_empty_window():
    assert window().to_json() == {
        "currentApp": "unknown",
        "appHistory": [],
        "audio": [],
        "screen": [],
        "audioCount": 0,
        "screenCount": 0,
        "windowMs": MAX_AGE,
        "newestEventTs": None,
        "images": [],
    }


def test_screen_to_json_keeps_zero_ssim():
    event = ScreenEvent(ts=1, type="visual", app="a", ocr="o", ssim=0.0)
    shown = msgspec.to_builtins(event.shape())
    assert shown == {"ts": 1, "type": "visual", "app": "a", "ocr": "o", "ssim": 0.0}


def test_screen_to_json_omits_missing_ssim():
    event = ScreenEvent(ts=1, type="visual", app="a", ocr="o", ssim=None)
    assert "ssim" not in msgspec.to_builtins(event.shape())


def test_to_json_is_serialisable():
    ctx = TickWindow(
        current_app="idea",
        app_history=(AppSwitch("idea", 1),),
        audio=(AudioEvent(2, "Привет 👋"),),
        screen=(ScreenEvent(3, "text", "idea", "日本語", None),),
        audio_count=1,
        screen_count=1,
        window_ms=10,
    )
    assert orjson.loads(orjson.dumps(ctx.to_json())) == ctx.to_json()


# -- what the capture client says beyond the OCR ----------------------------------------------


def observed(
    *,
    ocr: str = "",
    type_: str = "text",
    app: str = "Code",
    window_title: str | None = None,
    observation: dict[str, object] | None = None,
    received_at: int = NOW - 1_000,
) -> SenseRecord:
    payload: dict[str, object] = {"type": type_, "ts": received_at, "ocr": ocr}
    payload["meta"] = {"app": app, "windowTitle": window_title, "screen": 0}
    if observation is not None:
        payload["observation"] = observation
    return SenseRecord(
        id=1,
        received_at=received_at,
        type=type_,
        ts=received_at,
        ocr=ocr,
        app=app,
        ssim=None,
        payload=payload,
    )


def test_a_window_title_that_says_more_than_the_ocr_is_kept():
    event = screen_event(observed(ocr="def main():", window_title="main.py — relay"))
    assert event.window_title == "main.py — relay"


def test_a_window_title_already_in_the_ocr_is_left_out():
    event = screen_event(
        observed(ocr="File  MAIN.PY — relay  Edit", window_title="main.py — relay")
    )
    assert event.window_title == ""


def test_the_clients_placeholder_observation_title_is_left_out():
    for title in ("text in Code", "text event", "Code"):
        assert screen_event(observed(ocr="x", observation={"title": title})).title == ""


def test_an_observation_title_repeating_the_window_title_is_left_out():
    event = screen_event(
        observed(ocr="x", window_title="Inbox — Mail", observation={"title": "Inbox — Mail"})
    )
    assert (event.window_title, event.title) == ("Inbox — Mail", "")


def test_an_observation_title_and_narrative_that_say_more_are_kept():
    event = screen_event(
        observed(
            ocr="Traceback (most recent call last)",
            observation={"title": "A failing test", "narrative": "pytest shows one failure"},
        )
    )
    assert (event.title, event.narrative) == ("A failing test", "pytest shows one failure")


def test_an_event_with_only_an_observation_is_kept_in_the_screen():
    events = [observed(type_="visual", observation={"narrative": "A chart of latencies"})]
    assert [e.narrative for e in window(sense_events=events).screen] == ["A chart of latencies"]


def test_the_same_ocr_in_another_window_is_kept():
    events = [
        observed(ocr="README", window_title="one", received_at=NOW - 2),
        observed(ocr="README", window_title="two", received_at=NOW - 1),
    ]
    assert [e.window_title for e in window(sense_events=events).screen] == ["one", "two"]


def test_a_repeated_transcript_is_kept_once_at_its_newest_but_counted():
    items = [
        feed("[a openrouter] Let's ship it", ts=NOW - 30),
        feed("[a openrouter] let's   SHIP it", ts=NOW - 20),
        feed("[a openrouter] something new", ts=NOW - 10),
    ]
    ctx = window(items)
    assert [a.text for a in ctx.audio] == ["let's   SHIP it", "something new"]  # the newest
    assert ctx.audio_count == 3


def test_a_transcript_repeated_after_three_others_is_kept_again():
    texts = ["one", "two", "three", "four", "one"]
    items = [feed(f"[a openrouter] {t}", ts=NOW - 50 + n) for n, t in enumerate(texts)]
    assert [a.text for a in window(items).audio] == texts


def test_newest_ms_is_the_arrival_of_the_newest_event_in_the_window():
    items = [feed("[a openrouter] hi", ts=NOW - 500), feed("no transcript", ts=NOW - 5)]
    events = [sense(received_at=NOW - 900, ocr="x"), sense(received_at=NOW - 700 - MAX_AGE)]
    assert window(items, events).newest_ms == NOW - 500
    assert window(sense_events=events).newest_ms == NOW - 900
    assert window().newest_ms is None


# --- plain transcripts -----------------------------------------------------------------------


def heard(text: str, source: str | None = None, ts: int = NOW - 1_000) -> AudioEvent | None:
    return extract_audio(FeedRecord(id=1, text=text, priority="normal", ts=ts, source=source))


def test_a_post_with_source_audio_is_a_transcript_as_sent():
    assert heard("we should ship on friday", source="audio") == AudioEvent(
        ts=NOW - 1_000, text="we should ship on friday"
    )


def test_a_transcript_marked_with_the_memo_prefix_is_heard_without_it():
    assert heard("[📝] let's look at the failing test") == AudioEvent(
        ts=NOW - 1_000, text="let's look at the failing test"
    )


def test_the_memo_prefix_is_dropped_from_a_source_audio_post_too():
    event = heard("[📝]   spaced  out\nsecond line ", source="audio")
    assert event is not None
    assert event.text == "spaced  out second line"


@pytest.mark.parametrize("source", ["audio", None])
@pytest.mark.parametrize(("mark", "speaker"), [("[🔊] ", "system"), ("[🎙] ", "mic")])
def test_a_transcript_marked_with_its_source_is_heard_without_the_mark(source, mark, speaker):
    assert heard(mark + "where is the config file?", source=source) == AudioEvent(
        ts=NOW - 1_000, text="where is the config file?", source=speaker
    )


def test_only_a_mark_at_the_start_says_whose_words_they_are():
    assert heard("[🎙]  spaced  out\nsecond line ", source="audio") == AudioEvent(
        ts=NOW - 1_000, text="spaced  out second line", source="mic"
    )
    assert heard("so [🔊] it said", source="audio") == AudioEvent(
        ts=NOW - 1_000, text="so [🔊] it said"
    )


@pytest.mark.parametrize(
    ("text", "source"),
    [
        ("Sinain's advice: run the tests first", None),
        ("see [🔊] later in the line", None),
        ("[🎙]", None),
        ("[🔊]    ", "audio"),
        ("[🔊] what the agent said", "agent"),
        ("a note that mentions 📝 in passing", None),
        ("see [📝] later in the line", None),
        ("[📝]", None),
        ("[📝]    ", None),
        ("   ", "audio"),
        ("[📝] what the agent said", "agent"),
        ("a note from the overlay", "overlay"),
    ],
)
def test_posts_without_a_transcript_mark_are_not_heard(text, source):
    assert heard(text, source=source) is None


def test_plain_and_bridge_transcripts_share_the_window():
    items = [
        FeedRecord(id=1, text="[x openrouter] bridge format", priority="normal", ts=NOW - 3_000),
        FeedRecord(id=2, text="[📝] core format", priority="normal", ts=NOW - 2_000),
        FeedRecord(id=3, text="plain post", priority="normal", ts=NOW - 1_500, source="audio"),
        FeedRecord(id=4, text="a note, not heard", priority="normal", ts=NOW - 1_000),
    ]
    built = window(items)
    assert [a.text for a in built.audio] == ["bridge format", "core format", "plain post"]
    assert built.audio_count == 3


def test_app_switch_times_are_whole_epoch_milliseconds_whatever_the_client_sent():
    events = [
        sense(received_at=NOW - 3, ts=1_769_901_100_000.6, app="code", ocr="a"),
        sense(received_at=NOW - 2, ts=-1e308, app="idea", ocr="b"),
        sense(received_at=NOW - 1, ts=2.5, app="code", ocr="c"),
    ]
    switches = window(sense_events=events).to_json()["appHistory"]
    assert [s["ts"] for s in switches] == [1_769_901_100_001, -(2**53 - 1), 2]
    assert all(type(s["ts"]) is int for s in switches)


def test_the_context_says_whose_words_a_marked_transcript_is():
    ctx = TickWindow(
        current_app="idea",
        app_history=(),
        audio=(AudioEvent(2, "heard", "system"), AudioEvent(3, "said", "mic"), AudioEvent(4, "?")),
        screen=(),
        audio_count=3,
        screen_count=0,
        window_ms=10,
    )
    assert ctx.to_json()["audio"] == [
        {"ts": 2, "text": "heard", "source": "system"},
        {"ts": 3, "text": "said", "source": "mic"},
        {"ts": 4, "text": "?"},
    ]
