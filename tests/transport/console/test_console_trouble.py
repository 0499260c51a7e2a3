"""Trouble first: when the agent cannot do its work, the top of the console says what is wrong
and which setting fixes it, and the header's pill stops saying all is well; both clear when
the trouble ends."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import cast

import pytest
from playwright.sync_api import Page, expect

from actors.agent.ticker import Ticker
from actors.kernel.clock import FakeClock
from actors.tree import Relay
from config.audio.settings import AudioConfig
from tests.audio.pcm_program import command as program
from tests.support.actor_calls import asked, show, tick
from tests.support.harness import ROOT, free_port
from tests.support.observe import LogSink, wait_until
from tests.support.relay import client_for, relay_settings
from tests.transport.console.conftest import Watched, opened
from transport.agent.fake_llm import FakeLLM
from transport.doctor.command import check_in_background
from transport.frontend import HttpFrontend

# Every test here drives Chromium, which the first test of the module starts.
pytestmark = pytest.mark.slow

GREEN = "rgb(26, 127, 55)"
"""The light palette's `--ok`: the colour of all being well."""


def a_failed_tick(relay: Relay, fake_llm: FakeLLM, logs: LogSink) -> None:
    """A tick with news whose call the model refuses (a wrong key: not retried)."""
    fake_llm.mode = "http401"
    show(relay, ocr="def test_the_banner():", app="Code")
    assert tick(relay, logs) == "failed"


def pill_colour(page: Page) -> str:
    return str(page.evaluate("getComputedStyle(document.getElementById('link')).color"))


def test_the_banner_names_the_failing_model_and_its_setting_and_clears_when_it_answers(
    relay: Relay, watched: Watched, fake_llm: FakeLLM, logs: LogSink
) -> None:
    page = opened(watched, relay).page
    banner = page.locator("#trouble")
    expect(banner).to_be_hidden()
    a_failed_tick(relay, fake_llm, logs)
    expect(banner).to_be_visible()
    expect(banner).to_have_attribute("role", "alert")
    expect(banner).to_contain_text(fake_llm.base_url)
    expect(banner).to_contain_text("OPENROUTER_API_KEY")
    assert page.evaluate("document.getElementById('trouble').getBoundingClientRect().top") < 120
    fake_llm.mode = "ok"
    show(relay, ocr="def test_the_banner_clears():", app="Code")
    assert tick(relay, logs) == "ok"
    expect(banner).to_be_hidden()


def test_the_banner_says_the_model_is_unreachable_and_clears_once_it_answers(
    make_relay: Callable[..., Relay], watched: Watched, logs: LogSink, clock: FakeClock
) -> None:
    """Nothing listens where the model should be: the tick's calls are refused, retried on the
    relay's clock, and fail; the banner names the address. A server there, the next tick
    answers and the banner clears."""
    port = free_port()
    relay = make_relay(relay_settings(api_key="k", base_url=f"http://127.0.0.1:{port}/v1"))
    page = opened(watched, relay).page
    banner = page.locator("#trouble")
    show(relay, ocr="def test_the_unreachable_model():", app="Code")
    assert asked(relay.handles["ticker"], Ticker.tick) == "started"

    def failed() -> bool:
        clock.advance(5)  # past each retry's backoff
        return any(line["outcome"] == "failed" for line in logs.named("tick"))

    wait_until(failed, 15, "the tick to fail")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text(f"127.0.0.1:{port}")
    with FakeLLM(port=port):
        show(relay, ocr="def test_the_model_back():", app="Code")
        assert tick(relay, logs) == "ok"
        expect(banner).to_be_hidden()


def test_the_pill_is_not_live_green_while_the_model_fails(
    relay: Relay, watched: Watched, fake_llm: FakeLLM, logs: LogSink
) -> None:
    page = opened(watched, relay).page
    pill = page.locator("#link")
    expect(pill).to_have_text("live")
    assert pill_colour(page) == GREEN
    a_failed_tick(relay, fake_llm, logs)
    expect(pill).not_to_have_text("live")
    expect(pill).not_to_have_class(re.compile(r"\blive\b"))
    assert pill_colour(page) != GREEN


def test_a_relay_without_a_key_says_which_setting_gives_it_one(
    make_relay: Callable[..., Relay], watched: Watched
) -> None:
    page = opened(watched, make_relay()).page
    expect(page.locator("#trouble")).to_contain_text("OPENROUTER_API_KEY")


def test_a_failed_start_up_check_is_in_the_banner_until_it_passes(
    make_relay: Callable[..., Relay], watched: Watched
) -> None:
    """The model's server is down when the relay starts: its check names the setting; once a
    server listens there, the next round of checks passes and the banner clears."""
    port = free_port()
    settings = relay_settings(api_key="k", base_url=f"http://127.0.0.1:{port}/v1")
    relay = make_relay(settings)
    checks = cast("HttpFrontend", relay.frontend).checks
    stop = threading.Event()
    checking = check_in_background(settings, checks.publish, stop=stop, every_s=0.2)
    try:
        page = opened(watched, relay).page
        banner = page.locator("#trouble")
        expect(banner).to_contain_text("llm server")
        expect(banner).to_contain_text(f"127.0.0.1:{port}")
        expect(banner).to_contain_text("AGENT_BASE_URL")
        with socket.create_server(("127.0.0.1", port)):
            expect(banner).to_be_hidden()
    finally:
        stop.set()
        checking.join(timeout=5)


def test_a_capture_that_gave_up_is_in_the_banner_with_its_setting(
    make_relay: Callable[..., Relay],
    watched: Watched,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The microphone's program exits before any audio, run after run: the banner says the
    capture stopped, why (its stderr) and which setting names it."""
    monkeypatch.chdir(ROOT)  # ``-m tests.audio.pcm_program`` is found from the top
    failing = program("--stderr", "no device 'Studio Mic (Alice)'", "--exit-after", "0")
    relay = make_relay(replace(relay_settings(), audio=AudioConfig(mic_source=failing)))
    page = opened(watched, relay).page
    banner = page.locator("#trouble")
    # The first run's stderr before the clock moves: moved first, the clock could reach each
    # run's stall deadline before its program began, and every run would be ended unheard.
    with client_for(relay) as client:

        def said() -> str:
            return str(client.get("/health").json()["audio"]["sources"]["mic"]["lastStderr"] or "")

        wait_until(said, 30, "the microphone program's stderr")

    def gave_up() -> bool:
        clock.advance(5)  # past each restart's backoff, and the next look of /health/stream
        text = banner.text_content() or ""
        return "gave up" in text and "Studio Mic (Alice)" in text  # its stderr read as well

    wait_until(gave_up, 15, "the banner to say the microphone's capture gave up")
    expect(banner).to_contain_text("Capture of the microphone (MIC_SOURCE) stopped")
    expect(banner).to_contain_text("no device 'Studio Mic (Alice)'")
