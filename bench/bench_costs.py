"""What the relay costs when little happens: a tick's own cost, idle CPU and start-up time.

Run from the repository root::

    python -m bench costs               # idle 60 s, 5 starts
    python -m bench costs --quick       # idle 10 s, 2 starts, fewer repetitions
    python -m bench costs --only tick   # some parts (idle, startup, tick; comma-separated)

``idle``: the CPU of an idle ``python run.py`` (target below 0.5 % of a core); ``startup``:
spawn to the first ``GET /health`` 200 (below 1 s) beside the interpreter's floors; ``tick``:
each step of a tick but the LLM call, in-process (below 2 ms). Each waits for a quiet machine.
It prints figures and a table of the targets (docs/benchmarks.md says how each is measured).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from actors.context_builder import ContextBuilder
from actors.core.bodies import sense_input
from actors.core.change import Change, Gist, gist, judge
from actors.core.completion import Analysis
from actors.core.prompt import PreviousDigest, build_prompt, fingerprint
from actors.core.records import FeedSnapshot, SenseSnapshot
from actors.core.ticks import TickResult
from actors.core.window import ContextWindow, build_context_window
from actors.digest_store import DigestStore
from actors.feed_buffer import FeedBuffer
from actors.kernel.clock import SystemClock
from actors.sense_buffer import SenseBuffer
from actors.tree import Relay, start_relay
from bench.figures import at_least, data
from bench.runner import arg, choose, exit_on_sigterm, fill_defaults, flags
from bench.stats import median, percentile
from config.logs import configure_logging
from config.settings import AgentConfig, Settings
from tests.support import harness as h
from transport.demo.fake_llm import FakeLLM
from transport.frontend import HttpFrontend

PARTS = ("idle", "startup", "tick")
TICK_LIMIT_MS, IDLE_LIMIT_PCT, START_LIMIT_S = 2.0, 0.5, 1.0
MAX_AGE_MS = 120_000
HOUR_MS = 3_600_000
CALL_TIMEOUT_S = 5.0
SETTLE_S = 5.0
QUIET_LOAD, QUIET_OTHER_CORES, ATTEMPTS = 0.5, 0.25, 3
DISK_REPS = 300
THREADS_SHOWN = 12
FLOORS = {
    "interpreter": "pass",
    "dependencies": "import aiohttp, pykka, structlog, httpx, orjson",
    "relay modules": "import run",
}
TICK_PARTS = (
    "context.window(120000) (snapshots + window)",
    "build_prompt",
    "gist + judge, the newest event never seen",
    "digest.record + commit (ping behind it)",
)
"""The figures whose sum is a tick's own cost."""
BENCHES = ("-m bench ", "bench_", "bench.chaos", "bench/chaos")
"""Command-line fragments of the benches that must not run beside this one."""
TEXTS = data("tick_window")
OCR_CHARS = 4096
PREVIOUS_DIGEST = TEXTS["previous_digest"] * 4

Row = tuple[str, str, str, str, str]
"""A target's row: target, measured, limit, result, part."""


def table_rows(part: str, limit: str, values: dict[str, float | None], unit: str) -> list[Row]:
    """A row per target: ``pass`` when its value is under ``limit``; not measured when None."""
    bound = float(limit.split(maxsplit=1)[0])
    return [
        (name, "not measured", limit, "n/a", part)
        if value is None
        else (name, f"{value:.3f} {unit}", limit, "pass" if value < bound else "FAIL", part)
        for name, value in values.items()
    ]


# -- a quiet machine -----------------------------------------------------------------------------


def busy_reasons() -> list[str]:
    """Why the machine is not quiet now (empty when it is)."""
    load = h.load_1min()
    reasons = [f"1-min load {load:.2f} (>= {QUIET_LOAD})"] if load >= QUIET_LOAD else []
    mine, pid = set(), os.getpid()  # this process and its ancestors (a shell, ``timeout``)
    while pid > 1 and pid not in mine:
        mine.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat[stat.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            break
    others: list[str] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        with contextlib.suppress(OSError):
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if any(pattern in cmdline for pattern in BENCHES):
                others.append(f"{entry.name}: {cmdline.strip()[:80]}")
    return reasons + (["other benches running: " + "; ".join(others)] if others else [])


def quiet_attempts(part: str, max_wait_s: float) -> Iterator[int]:
    """Attempt numbers, each once the machine is quiet; stops (and says why) when it is not."""
    for attempt in range(1, ATTEMPTS + 1):
        deadline, said = time.monotonic() + max_wait_s, 0.0
        while (reasons := busy_reasons()) and time.monotonic() < deadline:
            if time.monotonic() - said >= 30.0:
                left = deadline - time.monotonic()
                print(f"  machine busy ({'; '.join(reasons)}); waiting (up to {left:.0f} s)")
                said = time.monotonic()
            time.sleep(min(5.0, max(0.0, deadline - time.monotonic())))
        if reasons:
            print(f"  {part}: the machine was never quiet ({'; '.join(reasons)}); not measured")
            return
        yield attempt
    print(f"  {part}: other processes were busy in each of {ATTEMPTS} attempts; not measured")


def busy_during(part: str, attempt: int, used: h.Usage) -> float | None:
    """The cores the rest of the machine used; None (and say so) when too many."""
    if (other := used.other(used.children)) <= QUIET_OTHER_CORES:
        return other
    print(
        f"  {part} attempt {attempt}: the rest of the machine used {other:.2f} cores "
        f"(> {QUIET_OTHER_CORES}); discarded, retrying"
    )
    return None


@contextlib.contextmanager
def default_relay(llm: h.Server, data_dir: str, log_path: Path) -> Iterator[h.Server]:
    """``python run.py --data-dir <data_dir>`` with a key and the fake LLM, its defaults else."""
    env = h.relay_env(OPENROUTER_API_KEY="x", AGENT_BASE_URL=llm.base_url + "/v1")
    with h.relay_process(data_dir, log_path, env, log_level=None) as relay:
        yield relay


# -- idle CPU ------------------------------------------------------------------------------------


class ThreadStat(NamedTuple):
    """One thread's counters from ``/proc/<pid>/task/<tid>/``, or their change."""

    voluntary: int
    involuntary: int
    cpu_ns: int

    def __sub__(self, other: ThreadStat) -> ThreadStat:
        return ThreadStat(*(a - b for a, b in zip(self, other, strict=True)))


def thread_stats(pid: int) -> dict[int, ThreadStat]:
    """Per thread id: context switches (``status``) and CPU nanoseconds (``schedstat``)."""
    stats: dict[int, ThreadStat] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = dict(line.split(":", 1) for line in (task / "status").read_text().splitlines())
            cpu_ns = int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # the thread ended meanwhile
        voluntary, involuntary = (
            int(status[f"{k}_ctxt_switches"]) for k in ("voluntary", "nonvoluntary")
        )
        stats[int(task.name)] = ThreadStat(voluntary, involuntary, cpu_ns)
    return stats


def agent_counters(relay: h.Server) -> dict[str, Any]:
    agent = h.health(relay)[1].get("agent")
    keys = ("emptySkips", "idleSkips", "totalCalls", "failures", "state")
    return {k: agent.get(k) for k in keys} if isinstance(agent, dict) else {}


def measure_idle(
    args: argparse.Namespace, relay: h.Server, llm: h.Server, attempt: int
) -> tuple[float, float] | None:
    """One idle window, printed; the relay's CPU in % of a core from ``stat`` and from the
    threads' ``schedstat`` (None: the machine was busy)."""
    pid, before_agent = relay.pid, agent_counters(relay)
    time.sleep(SETTLE_S)
    threads0, meter = thread_stats(pid), h.Meter(pid, idle=(llm.pid,))
    time.sleep(args.idle_seconds)
    threads1, used = thread_stats(pid), meter.read()
    if (other := busy_during("idle", attempt, used)) is None:
        return None
    deltas = sorted(
        ((tid, s1 - threads0[tid]) for tid, s1 in threads1.items() if tid in threads0),
        key=lambda item: (-item[1].voluntary, item[0]),
    )
    seconds, pct = used.wall, used.server / used.wall * 100
    exact = sum(d.cpu_ns for _, d in deltas) / 1e9 / seconds * 100
    print(
        f"  CPU over {seconds:.1f} s: {used.server:.2f} s = {pct:.3f} % of one core "
        f"(/proc/<pid>/stat granularity {100 / h.CLK_TCK / seconds:.3f} %); "
        f"from the threads' schedstat (ns) {exact:.3f} %; rest of the machine {other:.2f} cores"
    )
    main_thread = "main thread (/proc/<pid>/status)"
    for label, ids in ((main_thread, {pid}), (f"all {len(deltas)} threads", None)):
        a, b = (
            sum(s.voluntary for t, s in ts.items() if ids is None or t in ids)
            for ts in (threads0, threads1)
        )
        rate = (b - a) / seconds
        print(f"  voluntary context switches, {label}: {a} -> {b} (+{b - a}, {rate:.1f}/s)")
    print(f"  agent before/after: {before_agent} / {agent_counters(relay)}")
    print("  busiest threads over the window (tid = pid is the main thread):")
    for tid, d in deltas[:THREADS_SHOWN]:
        print(
            f"    tid {tid:>7}: {d.voluntary:5d} voluntary ({d.voluntary / seconds:5.2f}/s), "
            f"{d.involuntary:4d} involuntary, CPU {d.cpu_ns / 1e6:8.2f} ms"
        )
    if quiet := sum(1 for _, d in deltas if d.voluntary == 0):
        print(f"    ... and {quiet} threads that never woke")
    return pct, exact


def run_idle(args: argparse.Namespace, llm: h.Server) -> list[Row]:
    print(
        f"\n== idle CPU: python run.py, agent on (fake LLM), default interval; settle "
        f"{SETTLE_S:g} s, then {args.idle_seconds:g} s with nothing arriving"
    )
    pct: tuple[float, float] | None = None
    with (
        h.data_directory(None, "relay-bench-idle-") as data_dir,
        h.log_file("idle", "relay log (level info)") as log,
    ):
        for attempt in quiet_attempts("idle", args.max_wait):
            with default_relay(llm, data_dir, log) as relay:
                pct = measure_idle(args, relay, llm, attempt)
            if pct is not None:
                break
    values = {
        f"idle CPU, {args.idle_seconds:g} s (stat)": pct[0] if pct else None,
        "idle CPU (schedstat, all threads)": pct[1] if pct else None,
    }
    return table_rows("idle", f"{IDLE_LIMIT_PCT} %", values, "%")


# -- start-up ------------------------------------------------------------------------------------


def run_to_exit(code: str) -> float:
    """Seconds from spawning ``python -c code`` to its exit."""
    started = time.monotonic()
    command = [sys.executable, "-c", code]
    done = subprocess.run(command, cwd=h.ROOT, capture_output=True, timeout=30, check=False)
    if done.returncode != 0:
        msg = f"python -c {code!r} exited with {done.returncode}: {done.stderr.decode()[-400:]}"
        raise RuntimeError(msg)
    return time.monotonic() - started


def measure_starts(
    args: argparse.Namespace, llm: h.Server, log_path: Path
) -> dict[str, list[float]]:
    """Per start: ``ready`` (spawn to 200), ``stop`` (SIGTERM to exit) and each floor."""
    starts: dict[str, list[float]] = {k: [] for k in ("ready", "stop", *FLOORS)}
    with h.data_directory(None, "relay-bench-start-") as data_dir:
        for n in range(1, args.starts + 1):
            with default_relay(llm, data_dir, log_path) as relay:
                stop_s, code = h.timed_stop(relay)
            starts["ready"].append(relay.ready_s)
            starts["stop"].append(stop_s)
            for name, code_text in FLOORS.items():
                starts[name].append(run_to_exit(code_text))
            floors = ", ".join(f"{k} {starts[k][-1]:.3f} s" for k in FLOORS)
            print(
                f"  start {n}: spawn -> /health 200 {relay.ready_s:.3f} s, SIGTERM -> exit "
                f"{stop_s:.3f} s (code {code}); {floors}"
            )
    return starts


def run_startup(args: argparse.Namespace, llm: h.Server) -> list[Row]:
    print(
        f"\n== start-up: spawn -> first GET /health 200 of python run.py, {args.starts} starts "
        "(one data dir: the first start creates it), each with the floors after it"
    )
    ready: float | None = None
    with h.log_file("start", "relay logs (level info)") as log_path:
        for attempt in quiet_attempts("startup", args.max_wait):
            meter = h.Meter(idle=(llm.pid,))
            starts = measure_starts(args, llm, log_path)
            if (other := busy_during("startup", attempt, meter.read())) is None:
                continue
            ready, ready_all = median(starts["ready"]), starts["ready"]
            floors = {k: median(starts[k]) for k in FLOORS}
            print(
                f"  medians: relay {ready:.3f} s (min {min(ready_all):.3f}, max "
                f"{max(ready_all):.3f}); SIGTERM -> exit {median(starts['stop']):.3f} "
                f"s; rest of the machine {other:.2f} cores"
            )
            for name, value in floors.items():
                print(f"    floor {name:<13} python -c {FLOORS[name]!r}: {value:.3f} s")
            deps = floors["dependencies"]
            print(
                f"  the relay's own share (relay - dependency imports): {ready - deps:.3f} s, "
                f"of which importing its own modules {floors['relay modules'] - deps:.3f} s"
            )
            break
    target = f"start-up to /health 200, median of {args.starts}"
    return table_rows("startup", f"{START_LIMIT_S:g} s", {target: ready}, "s")


# -- a tick's own cost ---------------------------------------------------------------------------


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


def judge_new(ctx: ContextWindow, before: Gist) -> Change:
    """``judge`` of ``ctx`` whose newest screen event's text was never keyed before (as in a
    tick after a new screen event: the others are keyed once in their life)."""
    fresh = replace(ctx.screen[-1], ocr=f"{ctx.screen[-1].ocr}\n{next(_fresh)}")
    window = replace(ctx, screen=(*ctx.screen[:-1], fresh))
    return judge(before, window, gist(window))


def measure_pure(feed: FeedSnapshot, sense: SenseSnapshot, reps: int) -> list[Figure]:
    now_ms = SystemClock().now_ms()
    previous = PreviousDigest(PREVIOUS_DIGEST, now_ms - 20_000)

    def window(events: Sequence[Any] = sense.events, now: int = now_ms) -> ContextWindow:
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


def tick_result(n: int, window: ContextWindow) -> TickResult:
    """A successful call of 850 ms, 1200 tokens in and 90 out, its hud pushed to the feed."""
    analysis = Analysis(TEXTS["hud"].format(n=n), TEXTS["digest"].format(n=n), True)
    return TickResult(n, analysis, window, "google/gemini-2.5-flash-lite", 850, 1200, 90, True)


def measure_records(
    relay: Relay, window: ContextWindow, reps: int, where: str = ""
) -> list[Figure]:
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


def measure_actors(relay: Relay, reps: int) -> tuple[list[Figure], ContextWindow]:
    feed, sense, context = (relay.handles[k] for k in ("feed", "sense", "context"))

    def window() -> ContextWindow:
        return context.ask(ContextBuilder.window, AgentConfig(max_age_ms=MAX_AGE_MS)).result(
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
    agent = AgentConfig(interval_ms=HOUR_MS, api_key="bench-key", base_url=llm.base_url)
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


OPTIONS = [
    *flags(quick=(bool, None, "idle 10 s, 2 starts, fewer reps")),
    arg("--only", help=f"comma-separated, from {','.join(PARTS)} (default: all)"),
    arg("--idle-seconds", type=at_least(0, float, above=True), help="idle window (60; quick 10)"),
    arg("--starts", type=at_least(1), help="relay starts (default 5; quick 2)"),
    arg("--reps", type=at_least(1), help="calls per pure figure (default 20000)"),
    arg("--actor-reps", type=at_least(1), help="calls per actor figure (default 2000)"),
    arg("--max-wait", type=at_least(0, float), default=300.0, help="s to wait for quiet (300)"),
]


def run(args: argparse.Namespace) -> int:
    fill_defaults(
        args, idle_seconds=(10, 60), starts=(2, 5), reps=(2000, 20_000), actor_reps=(200, 2000)
    )
    args.parts = choose(args.only, PARTS)
    exit_on_sigterm()
    print(
        f"sinain-relay cost bench: parts {','.join(args.parts)}; {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]}, 1-min load {h.load_1min():.2f}"
    )
    rows: list[Row] = []
    if "idle" in args.parts or "startup" in args.parts:
        with (
            h.log_file("fake-llm", "fake LLM output") as llm_log,
            h.fake_llm_process(llm_log) as llm,
        ):
            if "idle" in args.parts:
                rows += run_idle(args, llm)
            if "startup" in args.parts:
                rows += run_startup(args, llm)
    if "tick" in args.parts:
        rows += run_tick(args)
    head = f"{'target':<40} {'measured':>12} {'limit':>8} {'result':>7}  command"
    print(f"\n{head}\n{'-' * (len(head) + 33)}")
    for target, measured, limit, result, part in rows:
        command = f"python -m bench costs --only {part}"
        print(f"{target:<40} {measured:>12} {limit:>8} {result:>7}  {command}")
    return 0
