"""A tick's own cost, in-process: the window, the prompt, the change check and the digest's
record and commit, with full rings (``python -m bench costs --only tick``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from actors.agent.context_builder import ContextBuilder
from actors.agent.core.change import Change, Gist, gist, judge
from actors.agent.core.completion import Analysis
from actors.agent.core.prompt import PreviousDigest, build_prompt, fingerprint
from actors.agent.core.ticks import TickResult
from actors.agent.core.window import TickWindow, build_context_window
from actors.agent.digest_store import DigestStore
from actors.core.bodies import sense_input
from actors.core.records import FeedSnapshot, SenseSnapshot
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from actors.kernel.clock import SystemClock
from actors.tree import Relay, start_relay
from bench.figures import data
from bench.quiet import Row, busy_during, quiet_attempts, table_rows
from bench.stats import median, percentile
from config.logs import configure_logging
from config.settings import AgentSettings, Settings
from tests.support import harness as h
from transport.demo.fake_llm import FakeLLM
from transport.frontend import HttpFrontend

TICK_LIMIT_MS, IDLE_LIMIT_PCT, START_LIMIT_S = 2.0, 0.5, 1.0
MAX_AGE_MS = 120_000
HOUR_MS = 3_600_000
CALL_TIMEOUT_S = 5.0
DISK_REPS = 300
TICK_PARTS = (
    "context.window(120000) (snapshots + window)",
    "build_prompt",
    "gist + judge, the newest event never seen",
    "digest.record + commit (ping behind it)",
)
"""The figures whose sum is a tick's own cost."""
TEXTS = data("tick_window")
OCR_CHARS = 4096
PREVIOUS_DIGEST = TEXTS["previous_digest"] * 4


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


@dataclass(frozen=True, slots=True)
class Figure:
    """Sorted nanoseconds of one operation, and the process's CPU per call."""

    name: str
    ns: list[int]
    cpu_us: float = math.nan

    def median_us(self) -> float:
        return median(self.ns) / 1000

    def p99_us(self) -> float:
        return percentile(self.ns, 99) / 1000

    def line(self) -> str:
        cpu = "" if math.isnan(self.cpu_us) else f"  CPU/call {self.cpu_us:7.1f} µs"
        return (
            f"  {self.name:<50} median {self.median_us():8.1f} µs  p99 {self.p99_us():8.1f} µs  "
            f"max {self.ns[-1] / 1000:8.1f} µs  ({len(self.ns)} calls){cpu}"
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


_fresh = itertools.count()


def judge_new(ctx: TickWindow, before: Gist) -> Change:
    """``judge`` of ``ctx`` whose newest screen event's text was never keyed before (as in a
    tick after a new screen event: the others are keyed once in their life)."""
    fresh = replace(ctx.screen[-1], ocr=f"{ctx.screen[-1].ocr}\n{next(_fresh)}")
    window = replace(ctx, screen=(*ctx.screen[:-1], fresh))
    return judge(before, window, gist(window))


def measure_pure(feed: FeedSnapshot, sense: SenseSnapshot, reps: int) -> list[Figure]:
    now_ms = SystemClock().now_ms()
    previous = PreviousDigest(PREVIOUS_DIGEST, now_ms - 20_000)

    def window(events: Sequence[Any] = sense.events, now: int = now_ms) -> TickWindow:
        return build_context_window(feed.items, events, now_ms=now, max_age_ms=MAX_AGE_MS)

    ctx = window()
    before = gist(window(sense.events[:-1], now_ms - 1_000))  # the last call saw one event less
    calls: dict[str, Callable[[], object]] = {
        "build_context_window": window,
        "build_prompt": lambda: build_prompt(ctx, now_ms=now_ms, previous=previous),
        "fingerprint": lambda: fingerprint(ctx),
        "gist + judge (economy)": lambda: judge(before, ctx, gist(ctx)),
        "gist + judge, the newest event never seen": lambda: judge_new(ctx, before),
        "all three": lambda: (
            build_prompt(w := window(), now_ms=now_ms, previous=previous),
            fingerprint(w),
        ),
    }
    return [timed(name, call, reps) for name, call in calls.items()]


def tick_result(n: int, window: TickWindow) -> TickResult:
    """A successful call of 850 ms, 1200 tokens in and 90 out, its hud pushed to the feed."""
    analysis = Analysis(TEXTS["hud"].format(n=n), TEXTS["digest"].format(n=n), True)
    return TickResult(n, analysis, window, "google/gemini-2.5-flash-lite", 850, 1200, 90, True)


def measure_records(relay: Relay, window: TickWindow, reps: int, where: str = "") -> list[Figure]:
    """``digest.record`` until its reply, and until its commit (a ping queued behind it)."""
    digest, reply, committed = relay.handles["digest"], [], []
    warm, cpu0 = max(1, reps // 10), time.process_time()
    for n in range(warm + reps):
        t0 = time.perf_counter_ns()
        digest.ask(DigestStore.record, tick_result(n, window)).result(timeout=CALL_TIMEOUT_S)
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


def run_tick(args: argparse.Namespace) -> list[Row]:
    print(
        f"\n== a tick's own cost: in-process relay (:memory:, SystemClock, fake LLM in-process, "
        f"interval 1 h); {args.reps} pure calls, {args.actor_reps} actor calls per figure"
    )
    values: dict[str, float | None] = {"tick own cost, median": None, "tick own cost, p99": None}
    log = io.StringIO()
    configure_logging("json", "info", stream=log)
    for attempt in quiet_attempts("tick", args.max_wait):
        stopped: list[bool] = []
        with FakeLLM() as llm, in_process_relay(llm, h.MEMORY, stopped) as relay:
            feed, sense = fill_rings(relay)
            meter = h.Meter()
            pure = measure_pure(feed, sense, args.reps)
            actor, window = measure_actors(relay, args.actor_reps)
            actor += measure_records(relay, window, args.actor_reps)
        with (
            FakeLLM() as llm,
            h.data_directory(None, "relay-bench-tick-") as data_dir,
            in_process_relay(llm, data_dir, stopped) as relay,
        ):
            fs = h.filesystem(data_dir)
            disk = measure_records(relay, window, min(args.actor_reps, DISK_REPS), " on disk")
        if (other := busy_during("tick", attempt, meter.read())) is None:
            continue
        now_ms = SystemClock().now_ms()
        prompt = build_prompt(
            window, now_ms=now_ms, previous=PreviousDigest(PREVIOUS_DIGEST, now_ms)
        )
        transcripts = sum(1 for item in feed.items if "openrouter]" in item.text)
        ocr = sorted({len(e.ocr) for e in sense.events})
        print(
            f"  rings: feed {len(feed.items)} items ({transcripts} transcripts), sense "
            f"{len(sense.events)} events (OCR {ocr[0]}-{ocr[-1]} chars, apps "
            f"{sorted({e.app for e in sense.events})}); window: audio {window.audio_count} "
            f"(kept {len(window.audio)}), screen {window.screen_count} (kept "
            f"{len(window.screen)} after dedup), {len(window.app_history)} app switches; prompt "
            f"{len(prompt)} chars; rest of the machine {other:.2f} cores; relays stopped "
            f"cleanly: {stopped}"
        )
        on_disk = f"not in the sum: the same on disk ({fs}, RELAY_SYNC=full: a commit is an fsync):"
        for title, figures in (
            ("(a) pure, on the snapshots:", pure),
            ("(b) through the actors (wall time of the caller; CPU/call: whole process):", actor),
            (on_disk, disk),
        ):
            print(f"  {title}\n" + "\n".join(figure.line() for figure in figures))
        parts = [f for f in pure + actor if f.name in TICK_PARTS]
        median_ms = sum(f.median_us() for f in parts) / 1000
        p99_ms = sum(f.p99_us() for f in parts) / 1000
        print(
            f"  tick own cost = window (actor) + prompt + judgement + record with commit: median "
            f"{median_ms:.3f} ms, p99 {p99_ms:.3f} ms (sum of the p99s, pessimistic)"
        )
        values = {"tick own cost, median": median_ms, "tick own cost, p99": p99_ms}
        break
    h.print_log_summary(log.getvalue().splitlines(), "in-process relay log", above_info=True)
    return table_rows("tick", f"{TICK_LIMIT_MS:g} ms", values, "ms")


# -- arguments and the table ---------------------------------------------------------------------
