"""How long ``POST /privacy/forget`` takes to forget an hour: the day session replayed twice
(about 70 minutes of feed and screen posts on the relay's clock, a tick every 30 s answered by
the fake LLM, SITUATION.md written), then the first or the last hour forgotten, timed from the
request to its answer (the deletes, the search index's merge and the WAL's truncation
included). ``--week N`` stores N older agent entries first, so that the index is a week's.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import httpx

from actors.agent.core.entries import AgentRecord
from actors.agent.ticker import Ticker
from actors.kernel.clock import FakeClock
from actors.kernel.storage import close_storage, connect, open_storage
from actors.tree import Relay, start_relay
from bench.figures import Table
from bench.runner import arg
from bench.stats import median
from config.logs import configure_logging
from tests.support.day_session import DAY_SESSION
from tests.support.relay import base_url, relay_settings
from transport.agent.fake_llm import FakeLLM
from transport.demo.replay import load_session
from transport.frontend import HttpFrontend

HOUR_MS, WEEK_MS = 3_600_000, 7 * 86_400_000
OPTIONS = [
    arg("--runs", type=int, default=5, help="relays replayed and forgotten"),
    arg("--week", type=int, default=0, help="older agent entries stored first"),
    arg("--last", action="store_true", help="forget the last hour, not the first"),
]


def _fill_week(data_dir: Path, count: int, start_ms: int) -> None:
    info = open_storage(str(data_dir))
    db = connect(info.stores["agent"])
    rows = []
    for n in range(count):
        ts = start_ms - WEEK_MS + n * (WEEK_MS // max(count, 1))
        digest = f"The user edits part {n} of the parser and runs tests {n % 97}."
        entry = AgentRecord(
            n + 1,
            ts,
            f"Editing module {n}",
            digest,
            "Code",
            (("Code", ts),),
            1,
            2,
            True,
            "fake",
            500,
            900,
            60,
            True,
        )
        rows.append((entry.id, entry.ts, entry.to_record()))
    with db:
        db.executemany("INSERT INTO agent_entries (id, ts, entry) VALUES (?, ?, ?)", rows)
    db.close()
    close_storage(info)


def _ticks(client: httpx.Client) -> int:
    """Ticks ended so far, by any outcome."""
    agent = client.get("/health").json()["agent"]
    ends = ("totalCalls", "unchangedSkips", "emptySkips", "minorSkips", "idleSkips", "failures")
    return sum(agent[k] for k in ends)


def _replay(client: httpx.Client, relay: Relay, clock: FakeClock, llm: FakeLLM) -> None:
    """The day session twice over, a tick every 30 s of it, each waited for."""
    events, at_last, ticked, done = load_session(DAY_SESSION), 0.0, -30.0, _ticks(client)
    for loop in range(2):
        for event in events:
            at = event.at + loop * (events[-1].at + 60)
            clock.advance(max(0.0, at - at_last))
            at_last = at
            client.post(event.path, json=event.body).raise_for_status()
            if at - ticked >= 30:
                ticked = at
                llm.hud, llm.digest = f"Reading the parser, part {at:.0f}", f"Second {at:.0f}."
                if relay.handles["ticker"].ask(Ticker.tick).result(timeout=10) == "started":
                    deadline = time.monotonic() + 10
                    while _ticks(client) == done and time.monotonic() < deadline:
                        time.sleep(0.005)
                    done = _ticks(client)


def one_run(week: int, last: bool) -> tuple[float, dict[str, int]]:
    """One relay replayed and an hour forgotten: seconds the forget took, and its counts."""
    clock = FakeClock()
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as llm:
        data_dir, start_ms = Path(tmp) / "data", clock.now_ms()
        if week:
            _fill_week(data_dir, week, start_ms)
        settings = replace(
            relay_settings(llm), data_dir=str(data_dir), situation_file=f"{tmp}/SITUATION.md"
        )
        relay = start_relay(settings, clock, frontend=HttpFrontend(settings))
        try:
            with httpx.Client(base_url=base_url(relay), timeout=30) as client:
                _replay(client, relay, clock, llm)
                since = clock.now_ms() - HOUR_MS if last else start_ms
                began = time.perf_counter()
                answer = client.post(
                    "/privacy/forget", json={"since": since, "until": since + HOUR_MS}
                )
                took = time.perf_counter() - began
                return took, answer.raise_for_status().json()["forgotten"]
        finally:
            relay.stop(timeout_s=10)


def run(args: argparse.Namespace) -> None:
    configure_logging(level="warning")
    times = []
    table = Table("run >4|forget ms >10.1f|what it forgot <70")
    table.head()
    for n in range(args.runs):
        took, counts = one_run(args.week, args.last)
        times.append(took * 1000)
        table.row(n + 1, took * 1000, ", ".join(f"{k} {v}" for k, v in counts.items() if v))
    print(f"median {median(times):.1f} ms over {args.runs} runs")
