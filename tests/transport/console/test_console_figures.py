"""Honest figures and labels on the console: a cost the relay cannot price is unknown, not
nothing; a transcript is heard or said whatever form it came in, shown without its wrapping;
a setting the relay clamped says so; nothing scrolls sideways on a phone; a search that finds
nothing leaves no older moment on show."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Browser, expect

from actors.kernel.clock import FakeClock
from actors.tree import Relay
from tests.support.actor_calls import show, tick
from tests.support.observe import LogSink
from tests.support.posts import TRANSCRIPT
from tests.support.relay import base_url, client_for, relay_settings
from tests.transport.console.conftest import Watched, opened
from transport.agent.fake_llm import FakeLLM

# Every test here drives Chromium, which the first test of the module starts.
pytestmark = pytest.mark.slow

UNPRICED = "stand-in/no-price-known"
"""A model the price table does not know, whose answers carry no cost."""
TRANSCRIPTS = (
    ({"text": "the build is green again", "source": "audio"}, "heard"),
    ({"text": "[🎙] let us ship it on Friday", "source": "audio"}, "said"),
    ({"text": "[🔊] a paused video counts as watching"}, "heard"),
    ({"text": "[🎙] I will look at the idle test"}, "said"),
    ({"text": "[📝] the older pipeline's line"}, "heard"),
    ({"text": TRANSCRIPT}, "heard"),
)
"""Each form a transcript is posted in, and how the page labels it."""
UNWRAPPED = (
    "the build is green again",
    "let us ship it on Friday",
    "a paused video counts as watching",
    "I will look at the idle test",
    "the older pipeline's line",
    "So what we need to fix is the idle detection",
)
"""What the page shows of each, in the same order."""


def test_a_cost_the_relay_cannot_price_shows_as_unknown(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, watched: Watched
) -> None:
    relay = make_relay(relay_settings(fake_llm, model=UNPRICED))
    show(relay, ocr="Invoice 2027-114", app="Mail")
    assert tick(relay, logs) == "ok"
    page = opened(watched, relay).page
    cost = page.locator("#cost")
    expect(page.locator("#cost-table tbody tr")).to_contain_text(UNPRICED)
    expect(page.locator("#cost-table tbody tr td").last).to_have_text("unknown")
    expect(page.locator("#cost-meta")).to_contain_text("unknown")
    expect(cost).not_to_contain_text("$0.0")


def test_a_transcript_is_labelled_heard_or_said_and_unwrapped_whatever_its_form(
    relay: Relay, watched: Watched
) -> None:
    page = opened(watched, relay).page
    with client_for(relay) as client:
        for body, _ in TRANSCRIPTS:
            assert client.post("/feed", json=body).is_success
    for (_, kind), text in zip(TRANSCRIPTS, UNWRAPPED, strict=True):
        row = page.locator("#feed li", has_text=text)
        expect(row).to_have_class(kind)
        expect(row.locator(".tag")).to_have_text(kind)
        expect(row.locator(".text")).to_have_text(text)


def test_a_clamped_setting_says_so(relay: Relay, watched: Watched) -> None:
    page = opened(watched, relay).page
    interval = page.get_by_label("Longest time between ticks")
    expect(page.locator("#settings-form")).to_contain_text("ms")
    interval.fill("1000")
    page.get_by_role("button", name="Apply changes").click()
    expect(page.locator("#settings-form")).to_contain_text("raised to 5000 ms")
    expect(interval).to_have_value("5000")
    with client_for(relay) as client:
        assert client.get("/agent/config").json()["config"]["intervalMs"] == 5000


def test_at_390_px_wide_nothing_scrolls_sideways(
    relay: Relay, browser: Browser, fake_llm: FakeLLM, logs: LogSink
) -> None:
    """A full page (the feed, a tick, a long model name, long words, every card) on a phone."""
    long_word = "https://example.test/" + "a-very-long-path-without-spaces/" * 12
    with client_for(relay) as client:
        client.post("/feed", json={"text": long_word})
        client.post("/feed", json={"text": "[🔊] " + long_word, "source": "audio"})
    show(relay, ocr=long_word, app="Firefox")
    fake_llm.digest = long_word
    assert tick(relay, logs) == "ok"
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        page = context.new_page()
        page.goto(base_url(relay) + "/")
        expect(page.locator("#link")).to_contain_text("live")
        expect(page.locator("#feed li.tick")).to_have_count(1)
        expect(page.locator("#cost-table tbody tr")).to_have_count(1)
        assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    finally:
        context.close()


def test_a_search_that_finds_nothing_clears_the_moment_shown(
    relay: Relay, watched: Watched, fake_llm: FakeLLM, logs: LogSink, clock: FakeClock
) -> None:
    fake_llm.digest = "The user compares zeppelin timetables for Friedrichshafen."
    show(relay, ocr="Zeppelin NT flights", app="Firefox")
    assert tick(relay, logs) == "ok"
    page = opened(watched, relay).page
    search = page.get_by_label("Words in a digest or a hud")
    search.fill("zeppelin")
    search.press("Enter")
    page.locator("#results li a").click()
    expect(page.locator("#moment li.at")).to_contain_text("zeppelin timetables")
    search.fill("quokka")
    search.press("Enter")
    expect(page.locator("#search-meta")).to_contain_text("Nothing found")
    expect(page.locator("#results li")).to_have_count(0)
    expect(page.locator("#moment")).to_be_hidden()
    expect(page).not_to_have_url(re.compile(r"#t="))
