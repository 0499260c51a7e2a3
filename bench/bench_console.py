"""The console in the system's Chromium: the page's weight, its first paint and how soon a
posted item shows, with 10 and 1,000 items in its feed, while a thread keeps posting screen
events (docs/benchmarks.md says how to read the figures)."""

from __future__ import annotations

import argparse
import contextlib
import threading
import time
from collections.abc import Iterator

import httpx
from playwright.sync_api import sync_playwright

from bench.figures import Table
from bench.runner import UsageError, flags
from bench.stats import median
from tests.support import harness
from tests.support.browser import MISSING, chromium_path
from transport.shell.auth import CONSOLE_FILES

FILES = ("/", *(f"/{name}" for name in CONSOLE_FILES))
PAINT = (  # the first paint, from the start of the page's navigation, in ms
    "new Promise(r => new PerformanceObserver((l, o) => { o.disconnect(); "
    "r(l.getEntries()[0].startTime); }).observe({type: 'paint', buffered: true}))"
)
SHOWN = "shown ms p50 >13.1f|shown ms max >13.1f"


def busy(base_url: str, per_s: float, stop: threading.Event) -> None:
    """``POST /sense`` ``per_s`` times a second until ``stop``: a relay at work."""
    with httpx.Client(base_url=base_url, headers=harness.JSON_HEADERS, timeout=5) as client:
        while not stop.wait(1 / per_s):
            client.post("/sense", content=harness.sense_body())


def measure(base_url: str, rounds: int, table: Table) -> None:
    """Per row, a fresh page: its first paint and when it is live; then, once it shows
    ``items`` posted items, from a post's send to its row, ``rounds`` times."""
    path = chromium_path()
    if path is None:
        raise UsageError(MISSING)
    with sync_playwright() as driver, httpx.Client(base_url=base_url, timeout=10) as client:
        browser = driver.chromium.launch(executable_path=path, args=["--no-sandbox"])
        for items in (10, 1000):
            page = browser.new_page()
            page.goto(base_url + "/")
            paint = page.evaluate(PAINT)
            page.locator("#link", has_text="live").wait_for()
            live = page.evaluate("performance.now()")
            for n in range(items):
                client.post("/feed", json={"text": f"filler {n}"})
            page.wait_for_function(f"document.querySelectorAll('#feed li').length >= {items}")
            took = []
            for n in range(rounds):
                started = time.perf_counter()
                client.post("/feed", json={"text": f"marker {n} {started}"})
                page.locator("#feed li", has_text=f"marker {n} {started}").wait_for()
                took.append((time.perf_counter() - started) * 1000)
            table.row(items, paint, live, median(took), max(took))
            page.close()


@contextlib.contextmanager
def relay(args: argparse.Namespace) -> Iterator[str]:
    """``--base-url``, or a relay of this checkout with the stand-in LLM in mode ``summarise``."""
    if args.base_url:
        yield args.base_url.rstrip("/")
        return
    with harness.agent_setup("console", mode="summarise") as (llm, data_dir, log_path):
        env = harness.agent_env(llm.base_url)
        with harness.relay_process(data_dir, log_path, env) as server:
            yield server.base_url


OPTIONS = flags(
    rounds=(int, 7, "posts timed per row"),
    busy=(float, 20.0, "POST /sense per second meanwhile (0: none)"),
    base_url=(str, None, "a relay already running (with a real model, say)"),
)


def run(args: argparse.Namespace) -> int:
    with relay(args) as base_url:
        sizes = {path: len(httpx.get(base_url + path).content) / 1000 for path in FILES}
        files = ", ".join(f"{path} {size:.1f}" for path, size in sizes.items())
        print(f"== the console of {base_url}: {sum(sizes.values()):.1f} KB ({files})")
        stop = threading.Event()
        if args.busy > 0:
            threading.Thread(target=busy, args=(base_url, args.busy, stop), daemon=True).start()
        table = Table(f"feed items >10,|first paint ms >14.0f|live ms >8.0f|{SHOWN}")
        table.head()
        try:
            measure(base_url, args.rounds, table)
        finally:
            stop.set()
    return 0
