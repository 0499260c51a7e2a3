"""Exclusion at ingest: sense events of excluded apps or window titles are answered, counted,
and never stored, served or ticked on (RELAY_EXCLUDE_APPS, RELAY_EXCLUDE_TITLES)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx
import pytest

from actors.core.bodies import sense_input
from actors.core.exclusion import ExclusionRule, Exclusions
from actors.ingest.sense_buffer import SenseBuffer
from actors.tree import Relay
from config.command_line import load_settings
from config.common.errors import ConfigError
from tests.support.actor_calls import asked, tick
from tests.support.observe import LogSink
from tests.support.posts import recorded
from tests.support.relay import client_for, relay_settings
from transport.agent.fake_llm import FakeLLM

DROPPED = {"ok": True, "dropped": "excluded"}
TITLES = r"(?i)incognito|private browsing"


def event(app: str | None = "Terminal", title: str | None = None, **more: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"ssim": 0.8}
    if app is not None:
        meta["app"] = app
    if title is not None:
        meta["windowTitle"] = title
    return {"type": "text", "ts": 1, "ocr": f"screen of {app}", "meta": meta, **more}


# -- the rule -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("app", "excluded"),
    [
        ("code", True),
        ("Code", True),
        (" CODE ", True),
        ("VS Code", True),  # the normalised name of "code"
        ("1Password", True),
        ("1password 7", False),
        ("Code Helper", False),
        ("Terminal", False),
        ("", False),
        (None, False),
    ],
)
def test_apps_match_by_name_ignoring_case_and_after_normalisation(
    app: str | None, excluded: bool
) -> None:
    rule = ExclusionRule.of(("Code", "1password"))
    assert rule.reason(sense_input(event(app))) == ("app" if excluded else None)


def test_an_app_configured_by_its_display_name_matches_the_process_name() -> None:
    rule = ExclusionRule.of(("IntelliJ IDEA",))
    assert rule.reason(sense_input(event("idea"))) == "app"
    assert rule.reason(sense_input(event("IntelliJ IDEA"))) == "app"


def test_titles_are_searched_in_the_window_title_and_the_observation_subtitle() -> None:
    rule = ExclusionRule.of((), TITLES)
    assert rule.reason(sense_input(event("Google Chrome", "New Incognito Tab"))) == "title"
    private = {"title": "text in Firefox", "subtitle": "Private Browsing"}
    assert rule.reason(sense_input(event("Firefox", observation=private))) == "title"
    assert rule.reason(sense_input(event("Firefox", "Docs — Mozilla Firefox"))) is None
    assert rule.reason(sense_input(event("Firefox"))) is None


def test_the_title_pattern_is_applied_as_written() -> None:
    rule = ExclusionRule.of((), "Incognito")
    assert rule.reason(sense_input(event("Chrome", "New Incognito Tab"))) == "title"
    assert rule.reason(sense_input(event("Chrome", "new incognito tab"))) is None


@pytest.mark.timeout(20)
def test_a_pattern_that_would_backtrack_costs_one_pass_over_the_title() -> None:
    # The title is searched on the event loop: a backtracking engine spends 2^n steps on
    # this pattern over a title of n letters that does not end in one, and stalls every
    # request meanwhile. RE2 reads the title once.
    rule = ExclusionRule.of((), r"^(a|aa)+$")
    title = "a" * 60 + "!"
    started = time.thread_time()
    assert rule.reason(sense_input(event("Chrome", title))) is None
    assert rule.reason(sense_input(event("Chrome", "a" * 60))) == "title"
    assert time.thread_time() - started < 1


@pytest.mark.parametrize("pattern", [r"(?<!x)private", r"(a)\1", r"(?=a)a"])
def test_a_pattern_that_needs_backtracking_stops_start_up(pattern: str) -> None:
    with pytest.raises(ConfigError, match=r"RELAY_EXCLUDE_TITLES .*look-around"):
        load_settings([], {"RELAY_EXCLUDE_TITLES": pattern}, isatty=False)


def test_exclusions_count_by_reason_and_an_empty_rule_excludes_nothing() -> None:
    exclusions = Exclusions(ExclusionRule.of(("Code",), TITLES))
    for body in (event("Code"), event("Code", "Incognito"), event("Chrome", "Incognito")):
        assert exclusions.check(sense_input(body)) is not None
    assert exclusions.check(sense_input(event("Terminal"))) is None
    assert exclusions.counts() == {"app": 2, "title": 1}
    nothing = Exclusions()
    assert not nothing.rule.active
    assert nothing.check(sense_input(event("Code", "Incognito"))) is None
    assert nothing.counts() == {"app": 0, "title": 0}


# -- over HTTP ------------------------------------------------------------------------------


@pytest.fixture
def relay(make_relay: Callable[..., Relay], fake_llm: FakeLLM) -> Relay:
    settings = load_settings(
        [],
        {"RELAY_EXCLUDE_APPS": "code, 1Password", "RELAY_EXCLUDE_TITLES": TITLES},
        isatty=False,
    )
    test = relay_settings(fake_llm)
    return make_relay(
        replace(test, exclude_apps=settings.exclude_apps, exclude_titles=settings.exclude_titles)
    )


EXCLUDED = [
    event("Code"),
    event("VS Code"),
    event("CODE"),
    event("1password"),
    event("Google Chrome", "New Incognito Tab - Google Chrome"),
    event("Firefox", observation={"title": "text in Firefox", "subtitle": "Private Browsing"}),
    *recorded(),  # the capture client's real events: all of "Code"
]


def test_excluded_events_are_answered_dropped_and_never_stored(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    for body in EXCLUDED:
        response = client.post("/sense", json=body)
        assert response.status_code == 200
        assert response.json() == DROPPED
    assert client.get("/sense").json()["events"] == []
    assert client.get("/agent/context").json()["context"]["screen"] == []
    assert asked(relay.handles["sense"], SenseBuffer.snapshot).activity == 0
    assert tick(relay, logs) == "empty"  # nothing in the window: no LLM call
    assert fake_llm.calls == 0
    assert client.get("/health").json()["senseEvents"] == 0


def test_kept_events_are_stored_and_ticked_on_without_the_excluded_ones(
    relay: Relay, client: httpx.Client, fake_llm: FakeLLM, logs: LogSink
) -> None:
    assert client.post("/sense", json=event("Code", ocr="secret plans")).json() == DROPPED
    kept = client.post("/sense", json=event("Terminal", "zsh", ocr="pytest -q"))
    assert kept.json() == {"ok": True, "id": 1}
    assert client.post("/sense", json=event("Chrome", "Incognito", ocr="my bank")).json() == DROPPED
    assert [e["ocr"] for e in client.get("/sense").json()["events"]] == ["pytest -q"]
    assert tick(relay, logs) == "ok"
    prompt = fake_llm.requests[0].body["messages"][0]["content"]
    assert "pytest -q" in prompt
    assert "secret plans" not in prompt and "my bank" not in prompt


def test_each_drop_is_logged_at_debug_without_the_title(
    client: httpx.Client, logs: LogSink
) -> None:
    client.post("/sense", json=event("Code")).raise_for_status()
    client.post("/sense", json=event("Chrome", "Incognito: my bank")).raise_for_status()
    dropped = logs.named("sense.excluded")
    assert [(e["level"], e["reason"]) for e in dropped] == [("debug", "app"), ("debug", "title")]
    assert all("my bank" not in str(e) for e in dropped)


def test_a_malformed_event_of_an_excluded_app_is_still_a_400(client: httpx.Client) -> None:
    response = client.post("/sense", json={**event("Code"), "ts": "now"})
    assert response.status_code == 400
    assert response.json()["ok"] is False


def test_without_exclusions_every_app_is_stored(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM
) -> None:
    relay = make_relay(relay_settings(fake_llm))
    with client_for(relay) as client:
        for n, body in enumerate(EXCLUDED, start=1):
            assert client.post("/sense", json=body).json() == {"ok": True, "id": n}
