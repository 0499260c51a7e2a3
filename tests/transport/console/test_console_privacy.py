"""The console's Privacy card in a real browser, over a real relay: a pause from the card is
the relay's and the header says so, a range forgotten from the card is gone from the page and
from every answer, an app excluded from its row is dropped from then on, a refused change says
why, and the privacy matrix shows its preset's cells."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import httpx
import pytest
from playwright.sync_api import Page, expect

from actors.kernel.clock import FakeClock
from actors.tree import Relay
from config.privacy import PrivacySettings
from tests.support.actor_calls import show
from tests.support.posts import screen_event
from tests.support.relay import base_url, client_for, relay_settings
from tests.transport.console.conftest import Watched, opened
from transport.agent.fake_llm import FakeLLM

# Every test here drives Chromium, which the first test of the module starts.
pytestmark = pytest.mark.slow

TOKEN = "console-privacy-token-9012"
MINUTE_MS = 60_000
HEAR_PAUSE = """() => {
  const card = CARDS.find((c) => c.appRow), told = card.health;
  card.health = (health) => {
    told(health);
    if (health.privacy && health.privacy.paused) window.pauseHeard = true;
  };
}"""
"""Sets ``window.pauseHeard`` once the Privacy card hears of a pause from ``/health`` (which
the stream sends when it looks, once a second) rather than from the answer to its click (it
is the card with an ``appRow`` hook)."""


def local_input(page: Page, ms: int) -> str:
    """``ms`` as a datetime-local field takes it, in the browser's time zone."""
    return str(
        page.evaluate(
            "ms => new Date(ms - new Date(ms).getTimezoneOffset() * 60000)"
            ".toISOString().slice(0, 19)",
            ms,
        )
    )


def test_pause_and_resume_from_the_card_with_the_token(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, watched: Watched, clock: FakeClock
) -> None:
    relay = make_relay(replace(relay_settings(fake_llm), token=TOKEN))
    watched.origin = base_url(relay)
    page = watched.page
    page.goto(watched.origin + "/")
    page.get_by_label("Token").fill(TOKEN)
    page.keyboard.press("Enter")
    link = page.locator("#link")
    expect(link).to_contain_text("live")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    page.evaluate(HEAR_PAUSE)
    with httpx.Client(base_url=watched.origin, headers=headers, timeout=5) as api:
        page.get_by_role("button", name="Pause for 15 minutes").click()
        expect(link).to_contain_text("paused until")
        expect(link).not_to_have_class(re.compile(r"\blive\b"))
        controls = api.get("/privacy").json()
        assert controls["paused"] is True
        assert controls["pausedUntil"] == clock.now_ms() + 15 * MINUTE_MS
        assert api.post("/feed", json={"text": "while paused"}).json()["dropped"] == "paused"
        page.wait_for_function("() => window.pauseHeard === true")  # /health/stream said it too
        clock.advance(15 * 60)  # the pause ends by itself: /health says so, and the header
        expect(link).to_have_text("live")

        page.get_by_role("button", name="Pause for an hour").click()
        expect(link).to_contain_text("paused until")
        page.get_by_role("button", name="Resume now").click()
        expect(link).to_have_text("live")
        assert api.get("/privacy").json()["paused"] is False

        page.get_by_role("button", name="Pause until I resume").click()
        expect(link).to_have_text("paused")
        expect(page.locator("#privacy-state")).to_contain_text("Paused until you resume")
        controls = api.get("/privacy").json()
        assert (controls["paused"], controls["pausedUntil"]) == (True, None)
    # The browser logs the refused first request (401) as an error; nothing else may be one.
    refused = "the server responded with a status of 401 (Unauthorized)"
    watched.errors[:] = [e for e in watched.errors if refused not in e]


def test_a_range_forgotten_from_the_card_is_gone_from_the_page_and_the_api(
    relay: Relay, watched: Watched, clock: FakeClock
) -> None:
    """Three minutes, one forgotten: its feed item and screen event leave the feed, what the
    agent sees and every answer; an export of it from the card held them before."""
    inside_ms = clock.now_ms() + MINUTE_MS
    with client_for(relay) as client:
        for minute in ("before", "inside", "after"):
            assert client.post("/feed", json={"text": f"note {minute}word"}).is_success
            event = screen_event(f"Editor shows {minute}screen", meta={"app": "Notes"})
            assert client.post("/sense", json=event).is_success
            clock.advance(60)
        page = opened(watched, relay).page
        feed = page.locator("#feed")
        expect(feed).to_contain_text("insidescreen")
        expect(page.locator("#context")).to_contain_text("insidescreen")

        page.locator("#range-since").fill(local_input(page, inside_ms - 10_000))
        page.locator("#range-until").fill(local_input(page, inside_ms + 10_000))
        with page.expect_download() as saved:
            page.get_by_role("button", name="Export this range").click()
        exported = saved.value
        assert re.fullmatch(r"sinain-relay-\d+-\d+\.ndjson", exported.suggested_filename)
        with open(exported.path(), encoding="utf-8") as file:
            lines = file.read()
        assert "insideword" in lines and "insidescreen" in lines and "beforeword" not in lines

        page.get_by_role("button", name="Forget this range").click()
        expect(page.locator("#forget-question")).to_contain_text("cannot be undone")
        page.get_by_role("button", name="Forget it").click()
        answer = page.locator("#forget-answer")
        expect(answer).to_contain_text("Forgotten: 1 feed item")
        expect(answer).to_contain_text("1 screen event")
        expect(feed).not_to_contain_text("inside")
        expect(feed).to_contain_text("beforeword")
        expect(feed).to_contain_text("afterscreen")
        expect(page.locator("#context")).not_to_contain_text("insidescreen")
        expect(page.locator("#context")).to_contain_text("afterscreen")

        for path in ("/feed?after=0", "/sense?after=0", "/export"):
            body = client.get(path).text
            assert "inside" not in body, path
            assert "afterscreen" in body or "afterword" in body, path


def test_never_watch_an_app_from_its_row(relay: Relay, watched: Watched) -> None:
    show(relay, ocr="A message from Alice", app="Signal")
    show(relay, ocr="def main():", app="Code")
    page = opened(watched, relay).page
    row = page.locator("#context summary", has_text="Signal")
    row.get_by_role("button", name="never watch this app").click()
    expect(row).to_contain_text("never watched")
    expect(page.locator("#context summary", has_text="Code")).to_contain_text(
        "never watch this app"
    )
    expect(page.locator("#exclude-apps")).to_contain_text("Signal")
    with client_for(relay) as client:
        assert client.get("/privacy").json()["excludeApps"] == ["Signal"]
        event = screen_event("Another message", meta={"app": "Signal"})
        assert client.post("/sense", json=event).json() == {"ok": True, "dropped": "excluded"}


def test_a_change_the_relay_refuses_says_why_and_one_it_takes_is_kept(
    relay: Relay, watched: Watched
) -> None:
    page = opened(watched, relay).page
    page.get_by_label("Add an expression").fill("(private")
    page.get_by_label("Add an expression").press("Enter")
    refusal = page.locator("#watch-answer")
    expect(refusal).to_contain_text("not a valid regular expression")
    expect(refusal).to_have_class("error")
    expect(page.locator("#exclude-titles")).to_have_text("None.")
    page.get_by_label("The agent's entries, beyond the newest 50, for").fill("2.5")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#keep-answer")).to_contain_text("kept 2.5 days")
    with client_for(relay) as client:
        assert client.get("/privacy").json()["retentionDays"] == 2.5
    # The browser logs the refused request (400) as an error; nothing else may be one.
    refused = "the server responded with a status of 400 (Bad Request)"
    watched.errors[:] = [e for e in watched.errors if refused not in e]


def test_the_matrix_shows_its_preset_cells(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, watched: Watched
) -> None:
    strict = PrivacySettings(mode="strict")
    relay = make_relay(replace(relay_settings(fake_llm), privacy=strict))
    page = opened(watched, relay).page
    expect(page.locator("#matrix-meta")).to_contain_text("PRIVACY_MODE=strict")
    heads = page.locator("#matrix thead th")
    expect(heads).to_have_text(
        ["Stored here", "Model over HTTP", "Model on this machine", "Agents"]
    )
    text = page.locator('#matrix tr[data-kind="ocr"]')
    expect(text.locator("th")).to_have_text("Screen text")
    expect(text.locator("td")).to_have_text(
        ["secrets removed", "a summary", "a summary", "nothing"]
    )
    expect(page.locator('#matrix tr[data-kind="images"] td')).to_have_text(["nothing"] * 4)
