"""``POST /privacy/forget`` and ``GET /export`` on a real relay: real HTTP, real SQLite files in
the test's directory, the fake LLM, the fake clock.

A session of three minutes is posted: a minute before the range, a minute in it, a minute
after. Each minute has a feed item, a screen event and an agent entry whose words are its
own; the words of the minute in the range must be gone from every answer and from every
byte under the data directory (and from SITUATION.md), the others' must stay.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from actors.agent.ticker import Ticker
from actors.audio.core.wav import wav_bytes
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from tests.support.observe import LogSink, wait_until
from tests.support.posts import jpeg, screen_event
from tests.support.relay import assert_error, client_for, relay_settings
from transport.agent.fake_llm import FakeLLM
from transport.demo.fake_stt import FakeStt
from transport.forget import export

MINUTES = ("before", "inside", "after")
"""The session's three minutes; the range forgotten is the second."""


def words(minute: str) -> dict[str, str]:
    """The words only ``minute`` posts (lower case: the search index keeps them so), by where
    they go."""
    return {
        "feed": f"feedword{minute}",
        "screen": f"screenword{minute}",
        "digest": f"digestword{minute}",
        "hud": f"hudword{minute}",
    }


@dataclass(frozen=True)
class Session:
    relay: Relay
    client: httpx.Client
    data_dir: Path
    situation: Path
    since: int
    until: int


def tick(relay: Relay, client: httpx.Client, fake_llm: FakeLLM, minute: str) -> None:
    """One tick, answered with ``minute``'s hud and digest; waits until its entry is stored."""
    said = words(minute)
    fake_llm.hud, fake_llm.digest = f"Reading {said['hud']}", f"The user reads {said['digest']}"
    assert relay.handles["ticker"].ask(Ticker.tick).result(timeout=5) == "started"

    def stored() -> bool:
        last = client.get("/agent/last").json()["result"]
        return last is not None and said["hud"] in last["hud"]

    wait_until(stored, what=f"the {minute} tick")


def post_minute(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, clock: FakeClock, minute: str
) -> None:
    """``minute``'s feed item, screen event (with a picture) and agent entry."""
    said = words(minute)
    assert client.post("/feed", json={"text": f"Heard {said['feed']}"}).status_code == 200
    event = screen_event(f"Editor shows {said['screen']}", jpeg(len(minute)))
    assert client.post("/sense", json=event).status_code == 200
    clock.advance(1)
    tick(relay, client, fake_llm, minute)


@pytest.fixture
def session(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, clock: FakeClock, tmp_path: Path
) -> Iterator[Session]:
    """The three minutes posted on a relay with real files and SITUATION.md; the range is
    the second minute's."""
    data_dir, situation = tmp_path / "data", tmp_path / "workspace" / "SITUATION.md"
    settings = replace(
        relay_settings(fake_llm, escalation_mode="rich", escalation_cooldown_ms=0),
        data_dir=str(data_dir),
        situation_file=str(situation),
    )
    relay = make_relay(settings)
    with client_for(relay) as client:
        bounds = []
        for minute in MINUTES:
            bounds.append(clock.now_ms())
            post_minute(relay, client, fake_llm, clock, minute)
            bounds.append(clock.now_ms())
            clock.advance(60)
        digest = words("after")["digest"]  # the file is there once the writer first wrote it
        wait_until(lambda: situation.is_file() and digest in situation.read_text(), what=digest)
        yield Session(relay, client, data_dir, situation, bounds[2], bounds[3])


def forget(session: Session) -> dict[str, Any]:
    answer = session.client.post(
        "/privacy/forget", json={"since": session.since, "until": session.until}
    )
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def files_holding(directory: Path, word: str) -> list[str]:
    """The files under ``directory`` whose bytes hold ``word`` (ASCII, in any case)."""
    needle = word.lower().encode()
    return [
        str(path.relative_to(directory))
        for path in sorted(directory.rglob("*"))
        if path.is_file() and needle in path.read_bytes().lower()
    ]


def everything_served(client: httpx.Client) -> str:
    """What the relay's reading routes answer, in one text."""
    paths = ("/feed", "/sense", "/agent/context", "/agent/history", "/agent/last")
    answers = [client.get(path).text for path in paths]
    answers.append(client.get("/agent/history", params={"since": 0, "until": 2**52}).text)
    answers.append(client.get("/escalation/pending").text)
    answers.append(client.get("/export", params={"since": 0, "until": 2**52}).text)
    return "\n".join(answers)


def test_forget_answers_what_it_removed_by_kind(session: Session) -> None:
    pending = session.client.get("/escalation/pending").json()["escalation"]
    assert pending is not None, "the rich mode escalated a moment of the range"
    body = forget(session)
    assert body["ok"] is True
    assert (body["since"], body["until"]) == (session.since, session.until)
    forgotten = body["forgotten"]
    # the feed: the item posted and the hud the agent pushed
    assert forgotten["feed"] == 2
    assert forgotten["screen"] == 1
    assert forgotten["entries"] == 1
    assert forgotten["searchRows"] == 1
    assert forgotten["escalations"] == 1
    assert forgotten["situationLines"] >= 1
    assert session.client.get("/escalation/pending").json()["escalation"] is None


def test_forgotten_words_are_in_no_answer_and_the_others_are(session: Session) -> None:
    forget(session)
    served = everything_served(session.client)
    for word in words("inside").values():
        assert word not in served
    for minute in ("before", "after"):
        for where, word in words(minute).items():
            if minute == "before" and where in ("feed", "screen"):
                continue  # the newest rings hold them still; the tables do (below)
            assert word in served, (minute, where)
    for word in ("inside", "before"):
        found = session.client.get("/agent/history", params={"q": f"digestword{word}"}).json()
        assert len(found["results"]) == (0 if word == "inside" else 1)


def test_forgotten_words_leave_no_byte_in_the_data_directory(session: Session) -> None:
    inside = words("inside")
    held = {word: files_holding(session.data_dir, word) for word in inside.values()}
    assert all(held.values()), f"the files held the words before the forget: {held}"
    forget(session)
    for word in inside.values():
        assert files_holding(session.data_dir, word) == [], word
        assert word not in session.situation.read_text(), word
    for minute in ("before", "after"):
        for word in words(minute).values():
            assert files_holding(session.data_dir, word), (minute, word)
    assert words("after")["screen"] in session.situation.read_text()


def test_forget_refuses_a_bad_range_and_changes_nothing(session: Session) -> None:
    before = everything_served(session.client)
    bad: list[Any] = [
        {},
        {"since": session.since},
        {"until": session.until},
        {"since": session.until, "until": session.since},
        {"since": "1", "until": session.until},
        {"since": 1.5, "until": session.until},
        {"since": True, "until": session.until},
        {"since": session.since, "until": session.until, "other": 1},
        [session.since, session.until],
    ]
    for body in bad:
        answer = session.client.post("/privacy/forget", json=body)
        assert answer.status_code == 400, (body, answer.text)
        assert answer.json()["ok"] is False
    assert_error(
        session.client.post("/privacy/forget", json={"since": 2, "until": 1}), 400, "until"
    )
    assert everything_served(session.client) == before


def export_lines(session: Session, **params: int) -> tuple[httpx.Response, list[dict[str, Any]]]:
    answer = session.client.get("/export", params=params)
    assert answer.status_code == 200, answer.text
    return answer, [orjson.loads(line) for line in answer.content.splitlines()]


def test_export_answers_the_range_as_ndjson_in_time_order(session: Session) -> None:
    answer, lines = export_lines(session, since=session.since, until=session.until)
    assert answer.headers["Content-Type"].startswith("application/x-ndjson")
    disposition = answer.headers["Content-Disposition"]
    assert disposition.startswith("attachment; filename=")
    assert str(session.since) in disposition
    assert [line["kind"] for line in lines] == ["feed", "screen", "feed", "entry"]  # the hud pushed
    stamps = [line["ts"] for line in lines]
    assert stamps == sorted(stamps)
    assert all(session.since <= ts <= session.until for ts in stamps)
    text = answer.text
    for word in words("inside").values():
        assert word in text
    assert "feedwordbefore" not in text and "feedwordafter" not in text
    screen = next(line for line in lines if line["kind"] == "screen")["item"]
    assert "data" not in screen["roi"], "pictures are left out"
    assert "bbox" in screen["roi"]
    _, everything = export_lines(session)  # the whole of what is kept
    assert len(everything) == 3 * len(lines)


def test_an_export_read_a_row_at_a_time_is_the_same_file(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = session.client.get("/export").content
    monkeypatch.setattr(export, "PAGE_ROWS", 1)
    monkeypatch.setattr(export, "CHUNK_LINES", 2)
    assert session.client.get("/export").content == whole
    assert len(whole.splitlines()) == 12  # three minutes of four lines


def test_export_refuses_bad_query_values(session: Session) -> None:
    bad: list[dict[str, str]] = [
        {"since": "x", "until": "5"},
        {"until": "-5"},
        {"since": "5", "until": "1"},
        {"since": "1.5", "until": "5"},
        {"since": "-1", "until": "5"},
    ]
    for params in bad:
        answer = session.client.get("/export", params=params)
        assert answer.status_code == 400, (params, answer.text)
        assert answer.json()["ok"] is False


def test_a_forget_logs_counts_only(session: Session, logs: LogSink) -> None:
    forget(session)
    (line,) = logs.named("privacy.forgotten")
    assert line["level"] == "info"
    assert line["feed"] == 2 and line["entries"] == 1
    assert not any(word in str(line) for word in words("inside").values())


SAID = (
    "The {} build failed twice this morning",
    "Could you send me {} before lunch?",
    "Remember that {} ships on Friday",
)
"""What is heard in each minute: different enough that none repeats another."""


def test_forget_takes_the_transcripts_stored_and_those_the_audio_path_keeps(
    make_relay: Callable[..., Relay], fake_stt: FakeStt, clock: FakeClock, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    relay = make_relay(replace(relay_settings(fake_stt=fake_stt), data_dir=str(data_dir)))
    with client_for(relay) as client:
        stamps = []
        for minute, said in zip(MINUTES, SAID, strict=True):
            fake_stt.text = said.format(f"spokenword{minute}")
            stamps.append(clock.now_ms())
            answer = client.post(
                "/audio", content=wav_bytes(bytes(32_000)), headers={"Content-Type": "audio/wav"}
            )
            assert answer.json()["id"] is not None, answer.text
            clock.advance(60)
        span = {"since": stamps[1], "until": stamps[1]}
        forgotten = client.post("/privacy/forget", json=span).json()["forgotten"]
        assert (forgotten["feed"], forgotten["transcripts"], forgotten["heard"]) == (1, 1, 1)
        assert "spokenwordinside" not in client.get("/feed").text
        assert files_holding(data_dir, "spokenwordinside") == []
        assert files_holding(data_dir, "spokenwordafter")
        fake_stt.text = SAID[1].format("spokenwordinside")  # no longer a repeat of one kept
        answer = client.post(
            "/audio", content=wav_bytes(bytes(32_000)), headers={"Content-Type": "audio/wav"}
        )
        assert answer.json()["id"] is not None, answer.text


def test_without_the_token_or_from_another_site_nothing_is_forgotten_nor_exported(
    make_relay: Callable[..., Relay],
) -> None:
    token = "forget-token"
    relay = make_relay(replace(relay_settings(), token=token))
    auth = {"Authorization": f"Bearer {token}"}
    with client_for(relay) as client:
        assert client.post("/feed", json={"text": "feedwordkept"}, headers=auth).is_success
        everything = {"since": 0, "until": 2**52}
        refused: tuple[tuple[dict[str, str], int], ...] = (
            ({}, 401),
            ({"Authorization": "Bearer wrong"}, 401),
            ({**auth, "Sec-Fetch-Site": "cross-site"}, 403),
        )
        for headers, status in refused:
            assert client.post("/privacy/forget", json=everything, headers=headers).status_code == (
                status
            )
            answer = client.get("/export", headers=headers)
            assert answer.status_code == status
            assert "feedwordkept" not in answer.text
        assert "feedwordkept" in client.get("/export", headers=auth).text
        assert "feedwordkept" in client.get("/feed", headers=auth).text
