"""A tick's own cost for ``python3 -m bench costs --only tick``: rings filled like the bridge's and
the capture client's, then each step of a tick but the LLM call, timed call by call in-process.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from actors.agent.context_builder import ContextBuilder
from actors.agent.core.change import Change, Gist, gist, judge
from actors.agent.core.completion import Analysis
from actors.agent.core.prompt import build_prompt, fingerprint
from actors.agent.core.ticks import TickResult
from actors.agent.digest_store import DigestStore
from actors.core.bodies import sense_input
from actors.core.records import FeedSnapshot, SenseSnapshot
from actors.core.window import TickWindow, build_context_window
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from actors.kernel.clock import SystemClock
from actors.tree import Relay, start_relay
from bench.figures import data
from bench.stats import median, percentile
from config.agent.settings import AgentSettings
from config.settings import Settings
from transport.agent.fake_llm import FakeLLM
from transport.frontend import HttpFrontend

MAX_AGE_MS, HOUR_MS, CALL_TIMEOUT_S, OCR_CHARS = 120_000, 3_600_000, 5.0, 4096
TICK_PARTS = (  # the figures whose sum is a tick's own cost
    "context.window(120000) (snapshots + window)",
    "build_prompt",
    "gist + judge, the newest event never seen",
    "digest.record + commit (ping behind it)",
)
TEXTS = data("tick_window")
_FRESH = itertools.count()  # suffixes that make a text new to the caches, for the whole process


def feed_texts(count: int) -> list[str]:
    """Feed items like the bridge's: mostly ``[PERIODIC]`` transcripts, some short messages."""
    words, short = TEXTS["transcript"].split(), TEXTS["short_messages"]
    texts: list[str] = []
    for i in range(count):
        t = " ".join(words[i % len(words) :] + words[: i % len(words)])[:300]
        if i % 10 < 6:
            texts.append(f"[PERIODIC] transcript #{i}\n[2s ago, openrouter] {t}")
        elif i % 10 == 6:
            texts.append(
                f"[PERIODIC] transcript #{i}\n[7s ago, openrouter] {t[:150]}\n"
                f"[2s ago, openrouter] {t[150:]}"
            )
        else:
            texts.append(short[i % len(short)])
    return texts


def ocr_text(kind: str, seed: int) -> str:
    """4 KiB of OCR: lines of code, web UI, chat or a terminal."""
    lines, out, size = TEXTS["ocr_lines"][kind], [], 0
    for n in itertools.count(seed):
        out.append(lines[n % len(lines)].format(n=n, m=n % 60))
        if (size := size + len(out[-1]) + 1) > OCR_CHARS:
            return "\n".join(out)[:OCR_CHARS]
    raise AssertionError  # itertools.count never ends


def sense_bodies(now_ms: int) -> list[dict[str, Any]]:
    """30 ``POST /sense`` bodies; every fifth repeats the screen before it."""
    apps = [app for app, run in TEXTS["app_runs"].items() for _ in range(run)]
    bodies: list[dict[str, Any]] = []
    ocr = ""
    for i, app in enumerate(apps):
        if i % 5 != 4 or not ocr:
            ocr = ocr_text(TEXTS["ocr_kind"].get(app, "terminal"), seed=i * 13)
        ssim, ts = round(0.55 + (i * 7 % 44) / 100, 2), now_ms - (len(apps) - i) * 3000
        bodies.append({"type": "text", "ts": ts, "ocr": ocr, "meta": {"app": app, "ssim": ssim}})
    return bodies


class Figure(NamedTuple):
    """One operation's nanoseconds per call, sorted, and the process's CPU per call."""

    name: str
    ns: list[int]
    cpu_us: float = math.nan

    def line(self) -> str:
        cpu = "" if math.isnan(self.cpu_us) else f"  CPU/call {self.cpu_us:7.1f} µs"
        return (
            f"  {self.name:<50} median {median(self.ns) / 1000:8.1f} µs  p99 "
            f"{percentile(self.ns, 99) / 1000:8.1f} µs  max {self.ns[-1] / 1000:8.1f} µs  "
            f"({len(self.ns)} calls){cpu}"
        )


def timed(name: str, fn: Callable[[], object], reps: int, *, cpu: bool = False) -> Figure:
    """Nanoseconds of each of ``reps`` calls (after ``reps // 10`` untimed ones); with
    ``cpu``, this process's CPU (all threads: the actors too) per call."""
    warm, cpu0 = max(1, reps // 10), time.process_time()
    for _ in range(warm):
        fn()
    samples: list[int] = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - t0)
    cpu_us = (time.process_time() - cpu0) / (warm + reps) * 1e6 if cpu else math.nan
    return Figure(name, sorted(samples), cpu_us)


def fill_rings(relay: Relay) -> tuple[FeedSnapshot, SenseSnapshot]:
    """Fill both rings through the actors; the snapshots a tick would take."""
    feed, sense = relay.handles["feed"], relay.handles["sense"]
    for text in feed_texts(100):
        feed.ask(FeedBuffer.append, text, "normal").result(timeout=CALL_TIMEOUT_S)
    for body in sense_bodies(SystemClock().now_ms()):
        sense.ask(SenseBuffer.append, sense_input(body)).result(timeout=CALL_TIMEOUT_S)
    return (
        feed.ask(FeedBuffer.snapshot).result(timeout=CALL_TIMEOUT_S),
        sense.ask(SenseBuffer.snapshot).result(timeout=CALL_TIMEOUT_S),
    )


def measure_pure(feed: FeedSnapshot, sense: SenseSnapshot, reps: int) -> list[Figure]:
    now_ms = SystemClock().now_ms()

    def window(events: Sequence[Any] = sense.events, now: int = now_ms) -> TickWindow:
        return build_context_window(feed.items, events, now_ms=now, max_age_ms=MAX_AGE_MS)

    def judge_new(ctx: TickWindow, before: Gist) -> Change:
        """``judge`` of ``ctx`` whose newest screen event's text was never keyed before (as in a
        tick after a new screen event: the others are keyed once in their life)."""
        fresh = replace(ctx.screen[-1], ocr=f"{ctx.screen[-1].ocr}\n{next(_FRESH)}")
        renewed = replace(ctx, screen=(*ctx.screen[:-1], fresh))
        return judge(before, renewed, gist(renewed))

    ctx = window()
    before = gist(window(sense.events[:-1], now_ms - 1_000))  # the last call saw one event less
    calls: dict[str, Callable[[], object]] = {
        "build_context_window": window,
        "build_prompt": lambda: build_prompt(ctx, now_ms=now_ms),
        "fingerprint": lambda: fingerprint(ctx),
        "gist + judge (economy)": lambda: judge(before, ctx, gist(ctx)),
        "gist + judge, the newest event never seen": lambda: judge_new(ctx, before),
        "all three": lambda: (
            build_prompt(w := window(), now_ms=now_ms),
            fingerprint(w),
        ),
    }
    return [timed(name, call, reps) for name, call in calls.items()]


def measure_records(relay: Relay, window: TickWindow, reps: int, where: str = "") -> list[Figure]:
    """``digest.record`` until its reply, and until its commit (a ping queued behind it), of
    a successful call of 850 ms, 1200 tokens in and 90 out, its hud pushed to the feed."""
    digest, reply, committed = relay.handles["digest"], [], []
    warm, cpu0, model = max(1, reps // 10), time.process_time(), "google/gemini-2.5-flash-lite"
    for n in range(warm + reps):
        t0 = time.perf_counter_ns()
        analysis = Analysis(TEXTS["hud"].format(n=n), TEXTS["digest"].format(n=n), True)
        result = TickResult(n, analysis, window, model, 850, 1200, 90, True)
        digest.ask(DigestStore.record, result).result(timeout=CALL_TIMEOUT_S)
        t1 = time.perf_counter_ns()
        digest.ask(DigestStore.ping).result(timeout=CALL_TIMEOUT_S)
        if n >= warm:
            reply.append(t1 - t0)
            committed.append(time.perf_counter_ns() - t0)
    cpu_us = (time.process_time() - cpu0) / (warm + reps) * 1e6
    return [
        Figure(f"digest.record (reply){where}", sorted(reply)),
        Figure(f"digest.record + commit (ping behind it){where}", sorted(committed), cpu_us),
    ]


def measure_actors(relay: Relay, reps: int) -> tuple[list[Figure], TickWindow]:
    feed, sense, context = (relay.handles[k] for k in ("feed", "sense", "context"))

    def window() -> TickWindow:
        return context.ask(ContextBuilder.window, AgentSettings(max_age_ms=MAX_AGE_MS)).result(
            timeout=CALL_TIMEOUT_S
        )

    calls: dict[str, Callable[[], object]] = {
        "feed.snapshot()": lambda: feed.ask(FeedBuffer.snapshot).result(CALL_TIMEOUT_S),
        "sense.snapshot()": lambda: sense.ask(SenseBuffer.snapshot).result(CALL_TIMEOUT_S),
        "context.window(120000) (snapshots + window)": window,
    }
    return [timed(name, call, reps, cpu=True) for name, call in calls.items()], window()


@contextlib.contextmanager
def in_process_relay(llm: FakeLLM, data_dir: str, stopped: list[bool]) -> Iterator[Relay]:
    """``start_relay`` with a 1-hour interval, pointed at ``llm``; whether it stopped in time
    is appended to ``stopped``."""
    agent = AgentSettings(interval_ms=HOUR_MS, api_key="bench-key", base_url=llm.base_url)
    settings = Settings(port=0, data_dir=data_dir, agent=agent)
    relay = start_relay(settings, SystemClock(), frontend=HttpFrontend(settings))
    try:
        yield relay
    finally:
        stopped.append(relay.stop())
