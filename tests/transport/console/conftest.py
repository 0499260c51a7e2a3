"""A real Chromium on the relay's console, through Playwright: each test gets a page that
records console errors and any request to another origin, and fails on either."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, expect, sync_playwright

from actors.tree import Relay
from tests.support.browser import MISSING, chromium_path
from tests.support.relay import base_url

PAGE_TIMEOUT_MS = 10_000
"""The longest any step of a browser test waits."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Chromium, headless, launched by path (Playwright downloads no browser here)."""
    path = chromium_path()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(MISSING)
        pytest.skip(MISSING)
    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@dataclass
class Watched:
    """A page and what it did wrong: console errors, page errors, other origins asked."""

    page: Page
    origin: str
    errors: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)


@pytest.fixture
def watched(browser: Browser) -> Iterator[Watched]:
    """A new page of its own context (no storage shared between tests); at the end, no
    console error and no request to another origin."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    seen = Watched(page, "")

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            seen.errors.append(message.text)

    def request(sent: Request) -> None:
        seen.requests.append(sent)
        url = sent.url
        if seen.origin and not (url.startswith(seen.origin + "/") or url.startswith("data:")):
            seen.foreign.append(url)

    page.on("console", console)
    page.on("pageerror", lambda error: seen.errors.append(str(error)))
    page.on("request", request)
    yield seen
    context.close()
    assert not seen.errors, seen.errors
    assert not seen.foreign, seen.foreign


def opened(watched: Watched, relay: Relay, path: str = "/") -> Watched:
    """The console of ``relay`` at ``path``, loaded and live (every stream open)."""
    watched.origin = base_url(relay)
    watched.page.goto(watched.origin + path)
    expect(watched.page.locator("#link")).to_contain_text("live")
    return watched
