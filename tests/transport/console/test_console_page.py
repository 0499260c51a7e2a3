"""The console in a real browser, over a real relay and the stand-in LLM: what a person sees
arrives live, search finds the past, a crashed actor is seen coming back, and with a token
the page shows nothing until it is given."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect

from actors.kernel.clock import FakeClock
from actors.tree import Relay
from tests.actors.core.test_situation import TRACE
from tests.support.actor_calls import show, tick
from tests.support.observe import LogSink, wait_until
from tests.support.posts import screen_event
from tests.support.relay import base_url, client_for, relay_settings
from tests.transport.console.conftest import Watched, opened
from transport.agent.fake_llm import FakeLLM
from transport.shell.auth import PAGE_ROUTES

# Every test here drives Chromium, which the first test of the module starts.
pytestmark = pytest.mark.slow

TOKEN = "console-test-token-1234"
ONE_SECOND_MS = 1_000


def test_a_posted_item_appears_within_a_second(relay: Relay, watched: Watched) -> None:
    page = opened(watched, relay).page
    with client_for(relay) as client:
        assert client.post("/feed", json={"text": "[🔊] the build is green again"}).is_success
    row = page.locator("#feed li.heard", has_text="the build is green again")
    expect(row).to_be_visible(timeout=ONE_SECOND_MS)
    expect(row.locator(".tag")).to_have_text("heard")


def test_a_hud_from_the_model_appears_and_the_tick_with_it(
    relay: Relay, watched: Watched, fake_llm: FakeLLM, logs: LogSink
) -> None:
    page = opened(watched, relay).page
    fake_llm.hud = "Reviewing the console's tests"
    fake_llm.digest = "The user reads the console's browser tests in an editor."
    show(relay, ocr="def test_a_hud_from_the_model_appears():", app="Code")
    assert tick(relay, logs) == "ok"
    expect(page.locator("#hud")).to_have_text("[🧠] Reviewing the console's tests")
    expect(page.locator("#digest")).to_have_text(fake_llm.digest)
    ticks = page.locator("#feed li.tick", has_text="ok")
    expect(ticks).to_contain_text("tokens")
    expect(page.locator("#context")).to_contain_text("def test_a_hud_from_the_model_appears")
    expect(page.locator("#feed li.screen")).to_contain_text("def test_a_hud_from_the_model")


def test_search_finds_a_digest_by_a_word_and_links_to_its_moment(
    relay: Relay, watched: Watched, fake_llm: FakeLLM, logs: LogSink, clock: FakeClock
) -> None:
    fake_llm.digest = "The user compares zeppelin timetables for Friedrichshafen."
    show(relay, ocr="Zeppelin NT flights", app="Firefox")
    assert tick(relay, logs) == "ok"
    clock.advance(120)  # the next entry two minutes later
    fake_llm.digest = "The user writes an email about the budget."
    show(relay, ocr="Budget 2027", app="Mail")
    assert tick(relay, logs) == "ok"
    page = opened(watched, relay).page
    page.get_by_label("Words in a digest or a hud").fill("zeppelin")
    page.keyboard.press("Enter")
    results = page.locator("#results li")
    expect(results).to_have_count(1)
    expect(results).to_contain_text("zeppelin timetables")
    results.locator("a").click()
    expect(page).to_have_url(re.compile(r"#t=\d+$"))
    expect(page.locator("#moment li.at")).to_contain_text("zeppelin timetables")
    expect(page.locator("#moment-list li")).to_have_count(2)


def test_a_crashed_actor_shows_restarting_then_alive(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, clock: FakeClock, watched: Watched
) -> None:
    """The LLM caller is restarted at once after a healthy run, and after a backoff when it
    dies again soon: the page shows the backoff, the error and the banner, then the caller
    alive and no banner."""
    relay = make_relay(replace(relay_settings(fake_llm), faults=True))
    page = opened(watched, relay).page
    cells = page.locator('#actors tr[data-actor="llm"] td')
    expect(cells.nth(0)).to_have_text("running")
    with client_for(relay) as client:

        def restarts() -> int:
            return int(client.get("/health").json()["actors"]["llm"]["restarts"])

        fault = {"actor": "llm", "kind": "crash"}
        assert client.post("/debug/fault", json=fault).is_success
        wait_until(lambda: restarts() == 1 and relay.handles["llm"].alive, what="a restart")
        expect(cells.nth(1)).to_have_text("1")
        assert client.post("/debug/fault", json=fault).is_success
        expect(cells.nth(0)).to_have_text("backoff")
        expect(cells.nth(2)).to_contain_text("injected crash in llm")
        expect(page.locator("#trouble")).to_contain_text("The llm actor stopped")
        clock.advance(5)  # past the second restart's backoff
        expect(cells.nth(0)).to_have_text("running")
        expect(cells.nth(1)).to_have_text("2")
        expect(page.locator("#trouble")).to_be_hidden()


def test_with_a_token_the_page_reveals_nothing_before_it_is_entered(
    make_relay: Callable[..., Relay], watched: Watched
) -> None:
    relay = make_relay(replace(relay_settings(), token=TOKEN))
    with httpx.Client(base_url=base_url(relay), headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        assert c.post("/feed", json={"text": "my private note about the merger"}).is_success
    watched.origin = base_url(relay)
    page = watched.page
    page.goto(watched.origin + "/")
    expect(page.locator("#token")).to_be_visible()
    expect(page.locator("#console")).to_be_hidden()
    assert "merger" not in page.content()
    answered = [r.response() for r in watched.requests]
    files = {f"{watched.origin}{path}" for _, path in PAGE_ROUTES}
    assert all(a is not None and (a.status == 401 or a.url in files) for a in answered)
    assert not any("merger" in a.text() for a in answered if a is not None and a.status == 401)

    page.get_by_label("Token").fill("not-the-token")
    page.keyboard.press("Enter")
    expect(page.locator("#token-error")).to_contain_text("not this relay's")
    assert "merger" not in page.content()

    page.get_by_label("Token").fill(TOKEN)
    page.keyboard.press("Enter")
    expect(page.locator("#feed")).to_contain_text("my private note about the merger")
    expect(page.locator("#link")).to_contain_text("live")  # with the missing key's problem
    asked_api = [r for r in watched.requests if r.url not in files]
    assert all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in asked_api[-5:])
    assert page.evaluate("localStorage.length") == 0  # the token is kept for this tab only
    assert page.evaluate("Object.keys(sessionStorage)") == ["sinain-relay-token"]
    # The browser logs each refused request (401) as an error; nothing else may be one.
    refused = "the server responded with a status of 401 (Unauthorized)"
    watched.errors[:] = [e for e in watched.errors if refused not in e]


def test_the_screenshot_of_the_page(
    relay: Relay, watched: Watched, fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    """The picture of the README: the console after a short session. It is written where
    ``CONSOLE_SCREENSHOT`` says (``docs/console.png`` to refresh the README's)."""
    fake_llm.mode = "summarise"
    with client_for(relay) as client:
        client.post(
            "/feed", json={"text": "[🎙] Let's see why the idle test fails", "source": "audio"}
        )
        show(
            relay, ocr="FAILED tests/test_idle.py::test_paused_video - AssertionError", app="iTerm2"
        )
        assert tick(relay, logs) == "ok"
        client.post(
            "/feed",
            json={"text": "[🔊] a paused video should still count as watching", "source": "audio"},
        )
        show(
            relay,
            ocr="def classify(last_input_ms, now_ms, media):\n    if media is PAUSED:",
            app="Code",
        )
        assert tick(relay, logs) == "ok"
    page = opened(watched, relay).page
    expect(page.locator("#feed li.tick")).to_have_count(2)
    expect(page.locator("#hud")).not_to_have_text("—")
    target = Path(os.environ.get("CONSOLE_SCREENSHOT") or tmp_path / "console.png")
    page.screenshot(path=str(target), full_page=False)
    assert target.stat().st_size > 10_000


def test_the_pending_escalation_is_answered_from_the_page(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, watched: Watched
) -> None:
    relay = make_relay(relay_settings(fake_llm, escalation_mode="selective"))
    page = opened(watched, relay).page
    fake_llm.digest = "The paused-state test failed."
    show(relay, ocr=TRACE, app="iTerm2")
    assert tick(relay, logs) == "ok"
    expect(page.locator("#escalation")).to_contain_text("The paused-state test failed.")
    page.get_by_label("Your answer (shown on the HUD)").fill("Check the PAUSED branch first")
    page.get_by_role("button", name="Answer").click()
    expect(page.locator("#feed li.escalation")).to_contain_text("Check the PAUSED branch first")
    expect(page.locator("#respond")).to_be_hidden()
    with client_for(relay) as client:
        assert client.get("/escalation/pending").json()["escalation"] is None


def test_a_setting_changed_on_the_page_is_the_relays(relay: Relay, watched: Watched) -> None:
    page = opened(watched, relay).page
    temperature = page.get_by_label("Temperature")
    expect(temperature).to_have_value("0.3")
    temperature.fill("0.7")
    page.get_by_label("Escalation", exact=True).select_option("focus")
    page.get_by_role("button", name="Apply changes").click()
    expect(page.locator("#settings-answer")).to_have_text("Applied: Temperature, Escalation.")
    with client_for(relay) as client:
        config = client.get("/agent/config").json()["config"]
    assert config["temperature"] == 0.7 and config["escalationMode"] == "focus"
    temperature.fill("9")  # beyond the API's bound: the browser keeps the form
    page.get_by_role("button", name="Apply changes").click()
    expect(page.locator("#settings-answer")).to_have_text("Applied: Temperature, Escalation.")
    temperature.fill("0.7")
    page.get_by_label("Model", exact=True).fill("   ")  # the relay refuses it, and says why
    page.get_by_role("button", name="Apply changes").click()
    expect(page.locator("#settings-answer")).to_contain_text("Refused: ")
    expect(page.locator("#settings-answer")).to_contain_text("model")
    watched.errors[:] = [e for e in watched.errors if "status of 400" not in e]


def test_on_a_phone_in_dark_mode_it_is_one_readable_column(relay: Relay, browser: Browser) -> None:
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, color_scheme="dark", is_mobile=True
    )
    page = context.new_page()
    page.goto(base_url(relay) + "/")
    expect(page.locator("#link")).to_have_text("live")
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1]  # nothing wider than the screen
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(13, 17, 23)"  # the dark palette
    page.keyboard.press("Tab")  # the first stop: the skip link, shown when focused
    assert page.evaluate("document.activeElement.textContent") == "Skip to the feed"
    context.close()


PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJ"
    "RU5ErkJggg=="
)
"""A real 1x1 PNG, which the browser decodes."""


def test_the_picture_the_next_call_sends_is_shown(relay: Relay, watched: Watched) -> None:
    with client_for(relay) as client:
        assert client.post("/sense", json=screen_event("a chart", PIXEL_PNG)).is_success
        assert client.get("/agent/context").json()["context"]["images"]
    page = opened(watched, relay).page
    picture = page.locator("#pictures img")
    expect(picture).to_have_count(1)
    expect(picture).to_have_attribute("src", re.compile(r"^data:image/png;base64,iVBOR"))
    assert page.evaluate("document.querySelector('#pictures img').naturalWidth") == 1


def test_the_local_models_worker_is_shown_with_the_llm_path(
    make_relay: Callable[..., Relay], watched: Watched
) -> None:
    settings = relay_settings()
    local = replace(settings.agent, api="local", model="smollm2-135m-instruct", local_threads=1)
    relay = make_relay(replace(settings, agent=local))
    relay.wiring.local_models.chat(local.model, 1).warm()  # loaded, as after a first call
    page = opened(watched, relay).page
    expect(page.locator("#agent-state")).to_contain_text(
        re.compile(r"on this machine: ready, \d+ MB")
    )
