"""Ingestion with the escalation decision on, against off: two ticking relays, fed changing
screens so that every tick decides, posted to by wrk in turns; see docs/benchmarks.md."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import tempfile
import threading
from pathlib import Path

import httpx

from bench.figures import Table
from bench.load import ENDPOINTS, in_turns
from bench.runner import flags
from tests.support.harness import Server, agent_env, fake_llm_process, relay_process

SCREENS = (
    ("iTerm2", 'Traceback (most recent call last):\n  File "idle.py", line {n}\nValueError: {n}'),
    ("Slack", "why does the deploy {n} fail again?"),
    ("Code", "# TODO: retry budget {n}\ndef retry():\n    return {n}"),
    ("Safari", "Release notes, part {n}"),
)
FEED_EVERY_S = 0.25
TICKING = {"AGENT_ECONOMY": "false", "AGENT_DEBOUNCE_MS": "0", "ESCALATION_COOLDOWN_MS": "0"}
"""Every tick on every new window, and every changed digest escalating (no cooldown)."""


def feed(servers: dict[str, Server], stop: threading.Event) -> None:
    """Post a changing screen event to every relay until ``stop``."""
    with httpx.Client(timeout=5.0) as client:
        for n in itertools.count():
            if stop.wait(FEED_EVERY_S):
                return
            app, text = SCREENS[n % len(SCREENS)]
            body = {"type": "text", "ts": n, "ocr": text.format(n=n), "meta": {"app": app}}
            for server in servers.values():
                with contextlib.suppress(httpx.HTTPError):
                    client.post(server.base_url + "/sense", json=body)


OPTIONS = flags(
    mode=(str, "rich", "the escalation mode of the relay measured against off"),
    rounds=(int, 5, "turns of each relay per row"),
    seconds=(int, 3, "wrk's window per turn"),
)


def run(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="relay-esc-")))
        llm = stack.enter_context(fake_llm_process(tmp / "llm.log"))
        summarise = httpx.post(llm.base_url + "/_mode", json={"mode": "summarise"}, timeout=5)
        summarise.raise_for_status()
        servers: dict[str, Server] = {}
        for mode in ("off", args.mode):
            env = agent_env(llm.base_url + "/v1", **TICKING, ESCALATION_MODE=mode)
            servers[mode] = stack.enter_context(relay_process(":memory:", tmp / f"{mode}.log", env))
        stop = threading.Event()
        feeder = threading.Thread(target=feed, args=(servers, stop), daemon=True)
        feeder.start()
        try:
            table = Table("row <14|" + "|".join(f"{n} req/s >15.0f|p99 ms >7.2f" for n in servers))
            table.head()
            for path, conns in itertools.product(ENDPOINTS, (16, 64)):
                rows = in_turns(servers, "POST", path, conns, args.rounds, args.seconds)
                medians = (r.median(key) for r in rows.values() for key in ("rps", "p99"))
                table.row(f"{path} @{conns}", *medians)
        finally:
            stop.set()
            feeder.join(timeout=5)
        for name, server in servers.items():
            agent = httpx.get(server.base_url + "/health", timeout=5).json()["agent"]
            esc = agent["escalation"]
            calls = f"{agent['totalCalls']} LLM calls, {esc['escalations']} escalations"
            print(f"{name}: {calls}, skips {esc['skips']}")
    return 0
