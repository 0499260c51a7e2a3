"""Trouble first: when the agent cannot do its work, the top of the console says what is wrong
and which setting fixes it, and the header's pill stops saying all is well; both clear when
the trouble ends."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Callable
from typing import cast

import pytest
from playwright.sync_api import Page, expect

from actors.tree import Relay
from tests.support.actor_calls import show, tick
from tests.support.harness import free_port
from tests.support.observe import LogSink
from tests.support.relay import relay_settings
from tests.transport.console.conftest import Watched, opened
from transport.demo.fake_llm import FakeLLM
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
