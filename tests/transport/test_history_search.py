"""``GET /agent/history?q=``: full-text search of the agent's entries over HTTP, on a real
relay whose agent asks the fake LLM."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from actors.agent.ticker import Ticker
from actors.kernel import search_index
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from tests.support.observe import wait_until
from tests.support.relay import assert_error, client_for, relay_settings
from transport.agent.fake_llm import FakeLLM
from transport.openapi import openapi_document

DIGESTS = (
    "Reviewing the deployment pipeline in the terminal",
    "Writing the café menu in a document",
    "Debugging the parser of the deployment tool",
)


def tick_with(relay: Relay, client: httpx.Client, fake_llm: FakeLLM, n: int, digest: str) -> int:
    """One tick answered with ``digest`` (hud ``hud <n>``); the new entry's ``ts``."""
    fake_llm.hud, fake_llm.digest = f"hud {n}", digest
    screen = {"type": "text", "ts": 1_769_901_200_000 + n, "ocr": f"screen {n}", "meta": {}}
    client.post("/sense", json=screen)
    assert relay.handles["ticker"].ask(Ticker.tick).result(timeout=5) == "started"

    def stored() -> dict[str, Any] | None:
        last = client.get("/agent/last").json()["result"]
        return last if last is not None and last["hud"] == f"hud {n}" else None

    entry: dict[str, Any] = wait_until(stored, what=f"tick {n}")
    return int(entry["ts"])


def search(client: httpx.Client, **params: Any) -> list[str]:
    answer = client.get("/agent/history", params=params)
    assert answer.status_code == 200, answer.text
    return [entry["digest"] for entry in answer.json()["results"]]


@pytest.fixture
def ticked(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, clock: FakeClock
) -> Iterator[tuple[httpx.Client, list[int]]]:
    """A client of a relay with one entry per digest of :data:`DIGESTS`, a second apart, and
    their ``ts``."""
    relay = make_relay(relay_settings(fake_llm))
    with client_for(relay) as client:
        stamps = []
        for n, digest in enumerate(DIGESTS):
            stamps.append(tick_with(relay, client, fake_llm, n, digest))
            clock.advance(1)
        yield client, stamps


def test_search_finds_a_digest_by_a_word(ticked: tuple[httpx.Client, list[int]]) -> None:
    client, _ = ticked
    assert search(client, q="parser") == [DIGESTS[2]]
    assert search(client, q="deploy") == [DIGESTS[2], DIGESTS[0]]  # prefix, newest first
    assert search(client, q="CAFE menu") == [DIGESTS[1]]  # case and accents ignored
    assert search(client, q="deployment café") == []  # every word is needed
    assert search(client, q="hud 1") == [DIGESTS[1]]  # the hud is searched too
    assert search(client, q="the", limit=2) == [DIGESTS[2], DIGESTS[1]]
    page = client.get("/agent/history", params={"q": "the", "limit": 2}).json()
    assert search(client, q="the", before=page["next"]) == [DIGESTS[0]]


def test_search_honours_since_and_until(ticked: tuple[httpx.Client, list[int]]) -> None:
    client, stamps = ticked
    assert search(client, q="the", since=stamps[1]) == [DIGESTS[2], DIGESTS[1]]
    assert search(client, q="the", until=stamps[1]) == [DIGESTS[0]]
    assert search(client, q="deploy", since=stamps[1], until=stamps[2]) == []
    assert search(client, q="deploy", since=stamps[2], until=stamps[2] + 1) == [DIGESTS[2]]
    assert_error(
        client.get("/agent/history", params={"q": "x", "since": 5, "until": 1}), 400, "until"
    )


HOSTILE = (
    '"',
    '""',
    '"deploy',
    "deploy\"'",
    "*",
    "deploy*",
    "NEAR(deploy parser)",
    "deploy OR parser",
    "deploy AND NOT parser",
    "(deploy",
    ")",
    "digest:deploy",
    "^deploy",
    "-deploy +parser",
    "{digest hud}: deploy",
    "café 日本語 🧠 Ωmega",
    "\x00deploy\x01",
    "deploy " * 16,
    "\u202edeploy",
)


@pytest.mark.parametrize("q", HOSTILE)
def test_hostile_queries_are_words_never_a_5xx(
    ticked: tuple[httpx.Client, list[int]], q: str
) -> None:
    client, _ = ticked
    answer = client.get("/agent/history", params={"q": q})
    assert answer.status_code in (200, 400), answer.text
    body = answer.json()
    if answer.status_code == 200:
        assert all(isinstance(e["digest"], str) for e in body["results"])
    else:
        assert "q must" in body["error"]
    # "deploy" typed inside syntax still finds what the plain word finds, or less
    assert set(search(client, q="deploy")) >= {e["digest"] for e in body.get("results", [])}


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("q=" + "x" * 501, "at most 500 characters"),
        ("q=" + "+".join(["w"] * 17), "at most 16 words"),
        ("q=", "a letter or a digit"),
        ("q=%2A%28%29", "a letter or a digit"),
    ],
)
def test_unsearchable_queries_are_a_400(
    ticked: tuple[httpx.Client, list[int]], raw: str, fragment: str
) -> None:
    client, _ = ticked
    assert_error(client.get(f"/agent/history?{raw}"), 400, fragment)


@pytest.mark.parametrize("raw", ["q=%ED%A0%80", "q=%FF%FE", "q=%C0%AF", "q=a%00b", "q=%"])
def test_undecodable_queries_are_never_a_5xx(
    ticked: tuple[httpx.Client, list[int]], raw: str
) -> None:
    client, _ = ticked
    answer = client.get(f"/agent/history?{raw}")
    assert answer.status_code in (200, 400), answer.text
    assert answer.json()["ok"] is (answer.status_code == 200)


def test_without_fts5_search_is_a_503_and_the_rest_works(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_index, "fts5_available", lambda: False)
    relay = make_relay(relay_settings(fake_llm))
    with client_for(relay) as client:
        tick_with(relay, client, fake_llm, 0, DIGESTS[0])
        assert_error(client.get("/agent/history", params={"q": "deploy"}), 503, "FTS5")
        assert search(client) == [DIGESTS[0]]
        assert search(client, since=0) == [DIGESTS[0]]
        assert client.get("/health").status_code == 200


def test_the_openapi_document_describes_q() -> None:
    history = openapi_document()["paths"]["/agent/history"]["get"]
    (q,) = [p for p in history["parameters"] if p["name"] == "q"]
    assert q["in"] == "query"
    assert q["schema"] == {"type": "string", "maxLength": search_index.MAX_QUERY_CHARS}
    assert "every word" in q["description"]
