"""Hud freshness: the event-driven tick schedule against a fixed 30 s beat, on a real session.

Run from the repository root::

    python -m bench.bench_freshness               # the session at real speed: about 6 minutes
    python -m bench.bench_freshness --speed 10    # a quick check: about 45 s
    python -m bench.bench_freshness --llm-delay-s 2.5 --session my_session.jsonl

The capture session ``transport/demo/session.jsonl`` (about five minutes of editing, a failing
test, a search, a chat, speech, repeats and two quiet spells) is replayed over HTTP
(``transport.demo.replay.Replayer``) against two relays at once (``python run.py``
subprocesses), each with its own fake LLM (mode ``summarise``) answering after
``--llm-delay-s``:

``event-driven``     the defaults: ``AGENT_DEBOUNCE_MS=3000``, ``AGENT_INTERVAL_MS=30000``,
                     ``AGENT_ECONOMY=true``
``fixed 30 s beat``  ``AGENT_DEBOUNCE_MS=30000 AGENT_INTERVAL_MS=30000 AGENT_ECONOMY=false``: a
                     call at most every 30 s while anything is new, whatever changed (the
                     relay has no fixed-timer mode)
``fixed 30 s timer (model)``  computed from the session's times, not measured: a tick every
                     30 s calling the LLM when anything arrived since the last one, answered
                     the measured median LLM latency later

Columns, in session seconds: ``LLM calls``; ``entries`` (``/agent/history``); ``unchanged``
(ticks without a call because the window's fingerprint did not change); ``freshness p50``
(median ``contextFreshnessMs``); ``event→hud p50/p90``, from each request's acknowledgement to
the first entry whose LLM call started after it (``unanswered``: none did); ``new p50``, the
same over the requests that changed something (another app, title, OCR or feed text).
``--speed S`` replays S times faster and divides debounce, interval, ``AGENT_MAX_AGE_MS`` and
the LLM delay by S; the figures are multiplied back (approximate above 1). It prints figures
and asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import httpx

from bench.harness import Server, percentile, relay_env, relay_process
from config.logs import configure_logging
from transport.demo.fake_llm import FakeLLM
from transport.demo.replay import DEMO_SESSION, Posted, Replayer, SessionEvent, load_session

TIMER_S = 30.0
"""The fixed timer of the modelled row."""
DEFAULT_DEBOUNCE_MS = 3_000
DEFAULT_INTERVAL_MS = 30_000
DEFAULT_MAX_AGE_MS = 120_000
TAIL_MARGIN_S = 3.0
"""Wall seconds waited after the last tick could have answered."""


class Config(NamedTuple):
    """One relay configuration to measure."""

    name: str
    debounce_ms: int
    interval_ms: int
    economy: bool = True
    """``AGENT_ECONOMY``: the spec's beat calls on every new window, whatever changed."""


CONFIGS = (
    Config("event-driven", DEFAULT_DEBOUNCE_MS, DEFAULT_INTERVAL_MS),
    Config("fixed 30 s beat", 30_000, 30_000, economy=False),
)


@dataclass
class Run:
    """One relay, its fake LLM and its replayer, and what they measured."""

    config: Config
    llm: FakeLLM
    server: Server
    replayer: Replayer | None = None
    start_ms: int = 0
    entries: list[dict[str, Any]] = field(default_factory=list)
    health: dict[str, Any] = field(default_factory=dict)


HEADER = (
    "configuration",
    "debounce",
    "interval",
    "LLM calls",
    "entries",
    "unchanged",
    "freshness p50",
    "event→hud p50",
    "event→hud p90",
    "new p50",
    "unanswered",
)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def changed(events: Sequence[SessionEvent]) -> list[bool]:
    """For each request: whether it says something the request before it on its path did not."""
    last: dict[str, Any] = {}
    out = []
    for event in events:
        body = event.body
        if event.path == "/sense":
            meta = body.get("meta") or {}
            key: Any = (meta.get("app"), meta.get("windowTitle"), body.get("ocr"))
        else:
            key = body.get("text")
        out.append(last.get(event.path, object()) != key)
        last[event.path] = key
    return out


def scaled_ms(ms: int, speed: float) -> int:
    return max(1, round(ms / speed))


@contextlib.contextmanager
def started(config: Config, speed: float, llm_delay_s: float, tmp: Path) -> Iterator[Run]:
    """A fake LLM and a relay subprocess for ``config``; both stopped on exit."""
    slug = config.name.replace(" ", "-")
    with FakeLLM(mode="summarise", latency_s=llm_delay_s / speed) as llm:
        env = relay_env(
            OPENROUTER_API_KEY="bench-freshness",
            AGENT_BASE_URL=llm.base_url,
            AGENT_DEBOUNCE_MS=str(scaled_ms(config.debounce_ms, speed)),
            AGENT_ECONOMY=str(config.economy).lower(),
            AGENT_INTERVAL_MS=str(scaled_ms(config.interval_ms, speed)),
            AGENT_MAX_AGE_MS=str(scaled_ms(DEFAULT_MAX_AGE_MS, speed)),
            LOG_FORMAT="json",
        )
        with relay_process(str(tmp / slug), tmp / f"{slug}.log", env, log_level=None) as server:
            run = Run(config, llm, server)
            try:
                yield run
            finally:
                if run.replayer is not None:
                    run.replayer.stop()


def collect(run: Run) -> None:
    """Read the run's agent entries (every page) and ``/health``."""
    entries: list[dict[str, Any]] = []
    before: int | None = None
    with httpx.Client(base_url=run.server.base_url, timeout=5.0) as client:
        while True:
            params: dict[str, Any] = {"since": run.start_ms, "limit": 500}
            if before is not None:
                params["before"] = before
            page = client.get("/agent/history", params=params).json()
            entries.extend(page["results"])
            before = page.get("next")
            if before is None:
                break
        run.health = client.get("/health").json()
    run.entries = sorted(entries, key=lambda e: e["ts"])


def event_to_hud_s(
    posted: Sequence[Posted], entries: Sequence[dict[str, Any]], speed: float
) -> list[float | None]:
    """For each request: session seconds from its acknowledgement to the first entry whose
    LLM call started at or after it, or None when no entry followed."""
    out: list[float | None] = []
    for post in posted:
        answer = next((e["ts"] for e in entries if e["ts"] - e["latencyMs"] >= post.acked_ms), None)
        out.append(None if answer is None else (answer - post.acked_ms) * speed / 1000)
    return out


def table_row(
    head: tuple[str, str, str, int, int, str],
    freshness: Sequence[float],
    latencies: Sequence[float | None],
    events: Sequence[SessionEvent],
) -> tuple[str, ...]:
    """A row of the table: ``head`` (name, debounce, interval, calls, entries, unchanged), then
    the figures from the freshness of the entries and each request's event→hud latency."""
    answered = [v for v in latencies if v is not None]
    new = [v for v, n in zip(latencies, changed(events), strict=True) if v is not None and n]
    figures = (median(freshness), median(answered), percentile(answered, 90), median(new))
    return (
        *(str(cell) for cell in head),
        *("-" if math.isnan(v) else f"{v:.1f} s" for v in figures),
        str(len(latencies) - len(answered)),
    )


def measured(run: Run, events: Sequence[SessionEvent], speed: float) -> tuple[str, ...]:
    assert run.replayer is not None
    latencies = event_to_hud_s(list(run.replayer.posted), run.entries, speed)
    freshness = [
        e["contextFreshnessMs"] * speed / 1000
        for e in run.entries
        if e.get("contextFreshnessMs") is not None
    ]
    unchanged = run.health.get("agent", {}).get("unchangedSkips")
    head = (
        run.config.name,
        f"{run.config.debounce_ms / 1000:g} s",
        f"{run.config.interval_ms / 1000:g} s",
        run.llm.calls,
        len(run.entries),
        "?" if unchanged is None else str(unchanged),
    )
    return table_row(head, freshness, latencies, events)


def fixed_timer_model(events: Sequence[SessionEvent], latency_s: float) -> tuple[str, ...]:
    """A fixed 30 s timer, computed from the session's times (see the module)."""
    ats = [e.at for e in events]
    max_age_s = DEFAULT_MAX_AGE_MS / 1000
    calls: list[float] = []
    freshness: list[float] = []
    for tick in (TIMER_S * k for k in range(1, math.ceil(ats[-1] / TIMER_S) + 1)):
        if any(tick - TIMER_S < at <= tick for at in ats):
            calls.append(tick)
            newest = max(at for at in ats if tick - max_age_s <= at <= tick)
            freshness.append(tick + latency_s - newest)
    latencies: list[float | None] = []
    for at in ats:
        call = next((t for t in calls if t >= at), None)
        latencies.append(None if call is None else call + latency_s - at)
    head = ("fixed 30 s timer (model)", "-", "30 s", len(calls), len(calls), "-")
    return table_row(head, freshness, latencies, events)


def print_table(rows: Sequence[tuple[str, ...]]) -> None:
    table = [HEADER, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
    for n, row in enumerate(table):
        cells = [row[0].ljust(widths[0])]
        cells += [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        print("  " + "  ".join(cells))
        if n == 0:
            print("  " + "  ".join("-" * w for w in widths))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Replay a capture session against the event-driven schedule and the "
        "fixed 30 s beat; print LLM calls and hud freshness.",
    )
    parser.add_argument("--speed", type=float, default=1.0, help="replay speed (default 1.0)")
    parser.add_argument("--llm-delay-s", type=float, default=1.0, help="LLM latency (default 1.0)")
    parser.add_argument("--session", type=Path, default=DEMO_SESSION, help="a session file")
    args = parser.parse_args(argv)
    if not (math.isfinite(args.speed) and args.speed > 0):
        parser.error("--speed must be a positive number")
    if not (math.isfinite(args.llm_delay_s) and args.llm_delay_s >= 0):
        parser.error("--llm-delay-s must be 0 or more")
    # the replayers' and fake LLMs' own log lines: warnings only (a failed post), on stderr
    configure_logging("console", "warning", stream=sys.stderr)
    speed: float = args.speed
    events = load_session(args.session)
    duration_s = events[-1].at
    tail_s = (max(c.interval_ms for c in CONFIGS) / 1000 + args.llm_delay_s) / speed
    print(
        f"sinain-relay hud freshness: {args.session.name} ({len(events)} requests over "
        f"{duration_s:g} s) at speed {speed:g}, fake LLM (mode summarise) answering after "
        f"{args.llm_delay_s:g} s; both relays at once, about "
        f"{(duration_s / speed + tail_s + TAIL_MARGIN_S):.0f} s"
    )
    if speed != 1:
        print(
            f"  debounce, interval, AGENT_MAX_AGE_MS and the LLM delay divided by {speed:g}; "
            "figures multiplied back (session seconds)"
        )
    with (
        tempfile.TemporaryDirectory(prefix="relay-freshness-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        runs = [
            stack.enter_context(started(c, speed, args.llm_delay_s, Path(tmp))) for c in CONFIGS
        ]
        for run in runs:
            run.start_ms = int(time.time() * 1000) - 1
            run.replayer = Replayer(run.server.base_url, events, speed=speed).start()
        for run in runs:
            assert run.replayer is not None
            if not run.replayer.wait(duration_s / speed + 60):
                print(f"  [{run.config.name}] the replay did not end in time")
        time.sleep(tail_s + TAIL_MARGIN_S)
        for run in runs:
            collect(run)
        for run in runs:
            assert run.replayer is not None
            if run.replayer.failures:
                print(f"  [{run.config.name}] {run.replayer.failures} posts failed")
    rows = [measured(run, events, speed) for run in runs]
    latency_ms = [e["latencyMs"] for run in runs for e in run.entries]
    latency_s = median(latency_ms) * speed / 1000 if latency_ms else args.llm_delay_s
    rows.append(fixed_timer_model(events, latency_s))
    print()
    print_table(rows)
    print()
    print(
        f"  the model's LLM latency: {latency_s:.2f} s (the measured median latencyMs). "
        "Session seconds throughout; see the module docstring for each column."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
