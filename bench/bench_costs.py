"""Cost benchmark of sinain-relay: a tick's own cost, idle CPU and start-up time (issue 5).

Run from the repository root::

    python bench/bench_costs.py               # everything: idle 60 s, 5 starts
    python bench/bench_costs.py --quick       # idle 10 s, 2 starts, fewer repetitions
    python bench/bench_costs.py --only tick   # one part (tick, idle, startup; comma-separated)

It prints figures and a table of the targets, and asserts nothing.

Parts, in the order they run:

``idle``     ``python run.py`` as a subprocess (``--port <free port> --data-dir <temp dir>``,
             the agent on: ``OPENROUTER_API_KEY=x``, ``AGENT_BASE_URL`` at a ``python -m
             transport.demo.fake_llm`` subprocess, every other setting its default, so a tick every
             30 s). Once ``GET /health`` answers, 5 s to settle, then nothing arrives for
             ``--idle-seconds`` (60): the relay's CPU over that window from ``/proc/<pid>/stat``
             (utime + stime, all threads) as a share of one core (target < 0.5 %), and its
             voluntary context switches (its wake-ups): the main thread's from
             ``/proc/<pid>/status`` and every thread's from ``/proc/<pid>/task/*/status``, with
             the busiest threads (switches and CPU from ``schedstat``).
``startup``  the time from spawning that same ``python run.py`` (a fresh port; one temporary
             data directory for all starts, so the first start creates the databases and the
             others reopen them) to the first 200 of ``GET /health``, polled every 50 ms
             (``bench_ingest.wait_healthy``), median of ``--starts`` (5) starts, each stopped
             with SIGTERM; target < 1 s. Each start is followed by the floors, timed from spawn
             to exit: ``python -c pass`` (the interpreter), ``python -c "import aiohttp, pykka,
             structlog, httpx, orjson"`` (the dependencies) and ``python -c "import run"``
             (the relay's modules too), so the relay's own share is visible.
``tick``     in-process, no network: a relay from ``run.start_relay`` (``data_dir=":memory:"``,
             port 0, a 1-hour agent interval, a key, ``base_url`` at an in-process
             ``FakeLLM``, ``SystemClock``), its rings filled through the actors' handles with
             realistic items (100 feed items: transcripts of ~300 characters behind
             ``[PERIODIC]`` and short messages; 30 sense events with 4 KiB of code-like or UI
             OCR, five apps, ssim values, every fifth screen unchanged). Then (a) the pure part,
             ``build_context_window`` and ``build_prompt`` on the buffers' snapshots, per call;
             (b) the actor part: ``context.window(120000)`` (both snapshots and the window, as
             a tick takes them), each snapshot alone, and the bookkeeping
             ``digest.record(TickResult(...))`` (a new hud each time, so it is pushed to the
             feed), also with its commit (a ping queued behind it). Medians and p99 (nearest
             rank). The tick's own cost is window (actor) + prompt + record with its commit;
             target < 2 ms. The LLM call is not part of it. For comparison, not in that sum:
             the record again on a relay whose data directory is on disk (a temporary
             directory, ``RELAY_SYNC=full``, so each commit is an fsync).

Quiet machine. Before each part the script waits (at most ``--max-wait`` s, 300) until the
1-minute load average is below 0.5 and no other bench is running (``bench_ingest``,
``bench_costs``, ``bench/chaos`` in a command line, this script and its parents excepted).
During each measurement it also counts the CPU the rest of the machine used (``/proc/stat``
busy time minus this script, its children and the relay); above 0.25 of a core the
measurement is thrown away and repeated (3 attempts). A part that never got a quiet machine
is reported as not measured, never with figures from a busy one.

Everything is bounded: every wait has a timeout, every subprocess is stopped (SIGTERM, then
SIGKILL) in a ``finally``, which SIGTERM and Ctrl-C of this script run too. Only 127.0.0.1
is used.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/bench_costs.py``: make packages importable
    sys.path.insert(0, str(ROOT))

from actors.core.completion import Analysis  # noqa: E402
from actors.core.prompt import PreviousDigest, build_prompt, fingerprint  # noqa: E402
from actors.core.records import FeedSnapshot, SenseSnapshot  # noqa: E402
from actors.core.ticks import TickResult  # noqa: E402
from actors.core.validation import validate_sense  # noqa: E402
from actors.core.window import ContextWindow, build_context_window  # noqa: E402
from actors.kernel.clock import SystemClock  # noqa: E402
from actors.tree import Relay as RelayTree  # noqa: E402
from actors.tree import start_relay  # noqa: E402
from bench.bench_ingest import (  # noqa: E402
    HOST,
    MEMORY,
    Relay,
    cpu_s,
    data_directory,
    filesystem,
    free_port,
    health,
    machine_busy_s,
    percentile,
    print_log_summary,
    server_process,
    summarize_log,
    timed_stop,
)
from bench.chaos import stop_process, wait_answering  # noqa: E402
from config import Settings, configure_logging  # noqa: E402
from config.settings import AgentConfig  # noqa: E402
from transport.demo.fake_llm import FakeLLM  # noqa: E402

PARTS = ("idle", "startup", "tick")
COMMAND = "python bench/bench_costs.py --only {part}"
TICK_LIMIT_MS = 2.0
IDLE_LIMIT_PCT = 0.5
START_LIMIT_S = 1.0
MAX_AGE_MS = 120_000
"""The default context window (``AGENT_MAX_AGE_MS``)."""
HOUR_MS = 3_600_000
CALL_TIMEOUT_S = 5.0
SETTLE_S = 5.0
FLOOR_TIMEOUT_S = 30.0
QUIET_LOAD = 0.5
QUIET_OTHER_CORES = 0.25
QUIET_POLL_S = 5.0
ATTEMPTS = 3
DISK_REPS = 300
"""``digest.record`` calls on disk at most (each commits with an fsync)."""
THREADS_SHOWN = 12
IMPORT_FLOOR = "import aiohttp, pykka, structlog, httpx, orjson"
FLOORS = {"interpreter": "pass", "dependencies": IMPORT_FLOOR, "relay modules": "import run"}
"""The floors of a start: ``python -c <code>``, timed from spawn to exit."""
BENCH_PATTERNS = ("bench_ingest", "bench_costs", "bench/chaos")
"""Command-line fragments of the benchmarks that must not run beside this one."""


@dataclass(frozen=True, slots=True)
class TableRow:
    """One line of the final table."""

    target: str
    measured: str
    limit: str
    result: str
    part: str


# -- a quiet machine -----------------------------------------------------------------------------


def load_1min() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def own_lineage() -> set[int]:
    """This process and its ancestors (a ``timeout`` or shell that started it names it too)."""
    pids: set[int] = set()
    pid = os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat[stat.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def other_benches() -> list[str]:
    """``pid: command`` of every other benchmark running (what ``pgrep -f`` would find)."""
    mine = own_lineage()
    found: list[str] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(pattern in cmdline for pattern in BENCH_PATTERNS):
            found.append(f"{entry.name}: {cmdline.strip()[:80]}")
    return found


def busy_reasons() -> list[str]:
    """Why the machine is not quiet now (empty when it is)."""
    reasons: list[str] = []
    load = load_1min()
    if load >= QUIET_LOAD:
        reasons.append(f"1-min load {load:.2f} (>= {QUIET_LOAD})")
    others = other_benches()
    if others:
        reasons.append("other benches running: " + "; ".join(others))
    return reasons


def wait_quiet(max_wait_s: float) -> list[str]:
    """Wait until the machine is quiet, at most ``max_wait_s``; the reasons if it never was."""
    deadline = time.monotonic() + max_wait_s
    said = 0.0
    while True:
        reasons = busy_reasons()
        now = time.monotonic()
        if not reasons or now >= deadline:
            return reasons
        if now - said >= 30.0:
            print(f"  machine busy ({'; '.join(reasons)}); waiting (up to {deadline - now:.0f} s)")
            said = now
        time.sleep(min(QUIET_POLL_S, max(0.0, deadline - now)))


def mine_cpu_s(pids: Sequence[int]) -> float:
    """CPU seconds of this process, of its children already reaped, and of ``pids`` (alive)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system + sum(cpu_s(p) for p in pids)


@dataclass(slots=True)
class OtherLoad:
    """What the rest of the machine used while something was measured (cores)."""

    pids: Sequence[int] = ()
    """Live processes of ours (the relay, the fake LLM) throughout the window."""
    start: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def begin(self) -> None:
        self.start = (machine_busy_s(), mine_cpu_s(self.pids), time.monotonic())

    def cores(self) -> float:
        busy0, mine0, t0 = self.start
        busy = machine_busy_s() - busy0
        mine = mine_cpu_s(self.pids) - mine0
        return (busy - mine) / max(time.monotonic() - t0, 1e-9)


def quiet_attempts(part: str, max_wait_s: float) -> Iterator[int]:
    """Attempt numbers while the machine is quiet; stops (and says why) when it is not."""
    for attempt in range(1, ATTEMPTS + 1):
        reasons = wait_quiet(max_wait_s)
        if reasons:
            print(f"  {part}: the machine was never quiet ({'; '.join(reasons)}); not measured")
            return
        yield attempt
    print(f"  {part}: other processes were busy in each of {ATTEMPTS} attempts; not measured")


def busy_during(part: str, attempt: int, other: float) -> bool:
    """Whether the rest of the machine used too much CPU during an attempt (and say so)."""
    if other <= QUIET_OTHER_CORES:
        return False
    print(
        f"  {part} attempt {attempt}: the rest of the machine used {other:.2f} cores "
        f"(> {QUIET_OTHER_CORES}); discarded, retrying"
    )
    return True


# -- subprocesses: the fake LLM and the relay --------------------------------------------------


@contextlib.contextmanager
def fake_llm_process(log: IO[bytes]) -> Iterator[tuple[str, int]]:
    """``python -m transport.demo.fake_llm`` on a free port: its ``AGENT_BASE_URL`` and its pid."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "transport.demo.fake_llm", "--port", str(port)],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_answering(f"http://{HOST}:{port}/_mode", proc, "the fake LLM")
        yield f"http://{HOST}:{port}/v1", proc.pid
    finally:
        stop_process(proc)


def relay_env(llm_url: str) -> dict[str, str]:
    """This environment without the relay's settings, plus a key and the fake LLM's URL."""
    prefixes = ("RELAY_", "AGENT_", "LOG_", "OPENROUTER_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env.update(OPENROUTER_API_KEY="x", AGENT_BASE_URL=llm_url)
    return env


@contextlib.contextmanager
def default_relay(llm_url: str, data_dir: str, log: IO[bytes], log_path: Path) -> Iterator[Relay]:
    """``python run.py --port <free> --data-dir <data_dir>``, healthy; stopped on exit."""
    args = ["run.py", "--data-dir", data_dir]
    with server_process(args, log, log_path, env=relay_env(llm_url)) as relay:
        yield relay


# -- idle CPU ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ThreadStat:
    """One thread's counters from ``/proc/<pid>/task/<tid>/``, or their change."""

    voluntary: int
    involuntary: int
    cpu_ns: int


def thread_stats(pid: int) -> dict[int, ThreadStat]:
    """Per thread id: context switches (``status``) and CPU nanoseconds (``schedstat``)."""
    stats: dict[int, ThreadStat] = {}
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                status = (task / "status").read_text()
                cpu_ns = int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue  # the thread ended meanwhile
            values = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            stats[int(task.name)] = ThreadStat(
                voluntary=int(values["voluntary_ctxt_switches"]),
                involuntary=int(values["nonvoluntary_ctxt_switches"]),
                cpu_ns=cpu_ns,
            )
    return stats


def agent_counters(relay: Relay) -> dict[str, Any]:
    """``/health.agent``'s tick counters (read outside the measured window)."""
    _status, body = health(relay)
    agent = body.get("agent")
    keys = ("emptySkips", "idleSkips", "totalCalls", "failures", "state")
    return {k: agent.get(k) for k in keys} if isinstance(agent, dict) else {}


@dataclass(slots=True)
class IdleSample:
    """One idle window of a relay subprocess."""

    seconds: float
    cpu: float
    """utime + stime over the window, seconds."""
    main: tuple[int, int]
    """The main thread's voluntary context switches before and after."""
    total: tuple[int, int]
    """Every thread's voluntary context switches before and after."""
    threads: list[tuple[int, ThreadStat]]
    """Per thread: the change over the window (threads alive at both ends)."""
    other: float
    agent: tuple[dict[str, Any], dict[str, Any]]

    @property
    def pct(self) -> float:
        """utime + stime as a share of one core, in % (10 ms granularity)."""
        return self.cpu / self.seconds * 100

    @property
    def exact_pct(self) -> float:
        """The threads' ``schedstat`` run time (nanoseconds) as a share of one core, in %."""
        return sum(d.cpu_ns for _, d in self.threads) / 1e9 / self.seconds * 100


def measure_idle_once(
    args: argparse.Namespace, llm: tuple[str, int], data_dir: str, log: IO[bytes], log_path: Path
) -> IdleSample:
    llm_url, llm_pid = llm
    with default_relay(llm_url, data_dir, log, log_path) as relay:
        pid = relay.proc.pid
        before_agent = agent_counters(relay)
        time.sleep(SETTLE_S)
        other = OtherLoad(pids=(pid, llm_pid))
        threads0 = thread_stats(pid)
        other.begin()
        cpu0, t0 = cpu_s(pid), time.monotonic()
        time.sleep(args.idle_seconds)
        cpu1, t1 = cpu_s(pid), time.monotonic()
        threads1 = thread_stats(pid)
        other_cores = other.cores()
        after_agent = agent_counters(relay)
    deltas = [
        (
            tid,
            ThreadStat(
                s1.voluntary - s0.voluntary, s1.involuntary - s0.involuntary, s1.cpu_ns - s0.cpu_ns
            ),
        )
        for tid, s1 in threads1.items()
        if (s0 := threads0.get(tid)) is not None
    ]
    deltas.sort(key=lambda item: (-item[1].voluntary, item[0]))
    main0, main1 = threads0.get(pid), threads1.get(pid)
    return IdleSample(
        seconds=t1 - t0,
        cpu=cpu1 - cpu0,
        main=(main0.voluntary if main0 else -1, main1.voluntary if main1 else -1),
        total=(
            sum(s.voluntary for s in threads0.values()),
            sum(s.voluntary for s in threads1.values()),
        ),
        threads=deltas,
        other=other_cores,
        agent=(before_agent, after_agent),
    )


def print_idle(sample: IdleSample, pid_note: str) -> None:
    s = sample
    print(
        f"  CPU over {s.seconds:.1f} s: {s.cpu:.2f} s = {s.pct:.3f} % of one core "
        f"(/proc/<pid>/stat granularity {100 / os.sysconf('SC_CLK_TCK') / s.seconds:.3f} %); "
        f"from the threads' schedstat (ns) {s.exact_pct:.3f} %; rest of the machine "
        f"{s.other:.2f} cores"
    )
    main = s.main[1] - s.main[0]
    total = s.total[1] - s.total[0]
    print(
        f"  voluntary context switches, main thread (/proc/<pid>/status): {s.main[0]} -> "
        f"{s.main[1]} (+{main}, {main / s.seconds:.1f}/s)"
    )
    print(
        f"  voluntary context switches, all {len(s.threads)} threads: {s.total[0]} -> {s.total[1]} "
        f"(+{total}, {total / s.seconds:.1f}/s)"
    )
    print(f"  agent before/after: {s.agent[0]} / {s.agent[1]}")
    print(f"  busiest threads over the window ({pid_note}):")
    for tid, d in s.threads[:THREADS_SHOWN]:
        print(
            f"    tid {tid:>7}: {d.voluntary:5d} voluntary ({d.voluntary / s.seconds:5.2f}/s), "
            f"{d.involuntary:4d} involuntary, CPU {d.cpu_ns / 1e6:8.2f} ms"
        )
    quiet = sum(1 for _, d in s.threads if d.voluntary == 0)
    if quiet:
        print(f"    ... and {quiet} threads that never woke")


def run_idle(args: argparse.Namespace, llm: tuple[str, int]) -> list[TableRow]:
    print(
        f"\n== idle CPU: python run.py, agent on (fake LLM), default interval; settle "
        f"{SETTLE_S:g} s, then {args.idle_seconds:g} s with nothing arriving"
    )
    labels = (f"idle CPU, {args.idle_seconds:g} s (stat)", "idle CPU (schedstat, all threads)")
    rows = [
        TableRow(label, "not measured", f"{IDLE_LIMIT_PCT} %", "n/a", "idle") for label in labels
    ]
    with (
        data_directory(None, "relay-bench-idle-") as data_dir,
        tempfile.NamedTemporaryFile(prefix="relay-idle-", suffix=".log") as log,
    ):
        log_path = Path(log.name)
        try:
            for attempt in quiet_attempts("idle", args.max_wait):
                sample = measure_idle_once(args, llm, data_dir, log, log_path)
                if busy_during("idle", attempt, sample.other):
                    continue
                print_idle(sample, "tid = pid is the main thread")
                rows = [
                    TableRow(
                        row.target,
                        f"{pct:.3f} %",
                        row.limit,
                        "pass" if pct < IDLE_LIMIT_PCT else "FAIL",
                        "idle",
                    )
                    for row, pct in zip(rows, (sample.pct, sample.exact_pct), strict=True)
                ]
                break
        finally:
            print_log_summary(log, log_path, "relay log (level info)")
    return rows


# -- start-up ----------------------------------------------------------------------------------


def run_to_exit(code: str) -> float:
    """Seconds from spawning ``python -c code`` to its exit (a watchdog kills it if stuck)."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    watchdog = threading.Timer(FLOOR_TIMEOUT_S, proc.kill)
    watchdog.start()
    try:
        _out, err = proc.communicate()  # blocks in waitpid: the exit time is exact
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=FLOOR_TIMEOUT_S)
    took = time.monotonic() - started
    if proc.returncode != 0:
        msg = f"python -c {code!r} exited with {proc.returncode}: {err.decode()[-400:]}"
        raise RuntimeError(msg)
    return took


@dataclass(slots=True)
class Starts:
    """The start-up samples (seconds), one per start, and the floors after each."""

    ready: list[float] = field(default_factory=list)
    stop: list[float] = field(default_factory=list)
    codes: list[int | None] = field(default_factory=list)
    floors: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in FLOORS})


def measure_starts_once(
    args: argparse.Namespace, llm_url: str, log: IO[bytes], log_path: Path
) -> Starts:
    starts = Starts()
    with data_directory(None, "relay-bench-start-") as data_dir:
        for n in range(1, args.starts + 1):
            with default_relay(llm_url, data_dir, log, log_path) as relay:
                stop_s, code = timed_stop(relay)
            starts.ready.append(relay.ready_s)
            starts.stop.append(stop_s)
            starts.codes.append(code)
            for name, code_text in FLOORS.items():
                starts.floors[name].append(run_to_exit(code_text))
            floors = ", ".join(f"{k} {v[-1]:.3f} s" for k, v in starts.floors.items())
            print(
                f"  start {n}: spawn -> /health 200 {relay.ready_s:.3f} s, SIGTERM -> exit "
                f"{stop_s:.3f} s (code {code}); {floors}"
            )
    return starts


def run_startup(args: argparse.Namespace, llm: tuple[str, int]) -> list[TableRow]:
    print(
        f"\n== start-up: spawn -> first GET /health 200 of python run.py, {args.starts} starts "
        "(one data dir: the first start creates it), each with the floors after it"
    )
    row = TableRow(
        f"start-up to /health 200, median of {args.starts}",
        "not measured",
        f"{START_LIMIT_S:g} s",
        "n/a",
        "startup",
    )
    llm_url, llm_pid = llm
    with tempfile.NamedTemporaryFile(prefix="relay-start-", suffix=".log") as log:
        log_path = Path(log.name)
        try:
            for attempt in quiet_attempts("startup", args.max_wait):
                other = OtherLoad(pids=(llm_pid,))
                other.begin()
                starts = measure_starts_once(args, llm_url, log, log_path)
                other_cores = other.cores()
                if busy_during("startup", attempt, other_cores):
                    continue
                ready = statistics.median(starts.ready)
                floors = {k: statistics.median(v) for k, v in starts.floors.items()}
                deps = floors["dependencies"]
                stop = statistics.median(starts.stop)
                print(
                    f"  medians: relay {ready:.3f} s (min {min(starts.ready):.3f}, max "
                    f"{max(starts.ready):.3f}); SIGTERM -> exit {stop:.3f} s; rest of the "
                    f"machine {other_cores:.2f} cores"
                )
                for name, value in floors.items():
                    print(f"    floor {name:<13} python -c {FLOORS[name]!r}: {value:.3f} s")
                print(
                    f"  the relay's own share (relay - dependency imports): {ready - deps:.3f} s, "
                    f"of which importing its own modules {floors['relay modules'] - deps:.3f} s"
                )
                result = "pass" if ready < START_LIMIT_S else "FAIL"
                row = TableRow(row.target, f"{ready:.3f} s", row.limit, result, "startup")
                break
        finally:
            print_log_summary(log, log_path, "relay logs (level info)")
    return [row]


# -- a tick's own cost -------------------------------------------------------------------------

TRANSCRIPT = (
    "okay so the relay keeps the last hundred feed messages and thirty screen events, and "
    "every thirty seconds the agent builds a two minute window and asks the model for a short "
    "hud line and a longer digest; the question is whether the tick itself costs anything "
    "next to the model call, so let's measure it before we optimise anything at all"
)
SHORT_MESSAGES = (
    "build passed on main",
    "standup moved to 10:30",
    "can you review PR 412?",
    "deploy to staging done",
    "lunch?",
)
APP_RUNS = (("idea", 8), ("Google Chrome", 6), ("Slack", 4), ("iTerm2", 6), ("code", 6))
"""The sense ring's apps, oldest first, in runs (30 events; five app switches)."""
OCR_LINES = {
    "code": (
        "{n:>4}  async def handle_feed(request: web.Request) -> web.Response:",
        "{n:>4}      body = await read_json(request, limit=FEED_BODY_LIMIT)",
        "{n:>4}      text, priority = validate_feed(body)",
        "{n:>4}      item = await call(peers.feed, 'append', text, priority)",
        "{n:>4}      return json_response({{'ok': True, 'id': item.id}})",
        "{n:>4}  # TODO(issue 5): measure the tick before optimising it",
        "Problems: 2   Warnings: 14   hud-relay.mjs   server/routes.py:{n}",
    ),
    "browser": (
        "Pull requests · sinain/relay · GitHub",
        "Performance: a tick's own cost, idle CPU, start-up #{n}",
        "Files changed  12     Conversation  8     Checks  3 passing",
        "bench/bench_costs.py  +{n} -0   Viewed",
        "maya commented: the p99 of the window looks fine; what wakes the process when idle?",
        "Review required   Merging is blocked   Squash and merge",
    ),
    "chat": (
        "#relay-dev   Maya  10:{m:02d}  the idle relay wakes every second: the supervisors?",
        "Tom  10:{m:02d}  yes, one poll per supervisor and a ping to each child",
        "Maya  10:{m:02d}  ok; the tick itself is well under a millisecond here",
        "Threads   Mentions & reactions   Drafts & sent   Direct messages",
        "Message #relay-dev",
    ),
    "terminal": (
        "$ python -m pytest -q tests/actors/test_window.py",
        "........................................................... [{n:>3}%]",
        "FAILED tests/actors/test_prompt.py::test_prompt_shape - AssertionError: assert 'hud'",
        "E       assert 'Active app: IntelliJ IDEA' in prompt",
        "{n} passed, 1 failed, 2 warnings in 3.{m:02d}s",
        "$ git status --short",
        " M actors/prompt.py",
    ),
}
OCR_KIND = {
    "idea": "code",
    "code": "code",
    "Google Chrome": "browser",
    "Slack": "chat",
    "iTerm2": "terminal",
}
OCR_CHARS = 4096


def transcript(i: int) -> str:
    """About 300 characters of speech, different for each ``i``."""
    words = TRANSCRIPT.split()
    k = i % len(words)
    return " ".join(words[k:] + words[:k])[:300]


def feed_texts(count: int) -> list[str]:
    """Feed items like the bridge's: mostly ``[PERIODIC]`` transcripts, some short messages."""
    texts: list[str] = []
    for i in range(count):
        kind = i % 10
        if kind < 6:
            texts.append(f"[PERIODIC] transcript #{i}\n[2s ago, openrouter] {transcript(i)}")
        elif kind == 6:
            t = transcript(i)
            texts.append(
                f"[PERIODIC] transcript #{i}\n[7s ago, openrouter] {t[:150]}\n"
                f"[2s ago, openrouter] {t[150:]}"
            )
        else:
            texts.append(SHORT_MESSAGES[i % len(SHORT_MESSAGES)])
    return texts


def ocr_text(kind: str, seed: int) -> str:
    """4 KiB of OCR: lines of code, web UI, chat or a terminal, with newlines."""
    lines = OCR_LINES[kind]
    out: list[str] = []
    size = 0
    for n in itertools.count(seed):
        line = lines[n % len(lines)].format(n=n, m=n % 60)
        out.append(line)
        size += len(line) + 1
        if size > OCR_CHARS:
            break
    return "\n".join(out)[:OCR_CHARS]


def sense_bodies(now_ms: int) -> list[dict[str, Any]]:
    """30 ``POST /sense`` bodies; every fifth repeats the screen before it (deduplicated)."""
    apps = [app for app, run in APP_RUNS for _ in range(run)]
    bodies: list[dict[str, Any]] = []
    ocr = ""
    for i, app in enumerate(apps):
        if i % 5 != 4 or not ocr:
            ocr = ocr_text(OCR_KIND[app], seed=i * 13)
        bodies.append(
            {
                "type": "text",
                "ts": now_ms - (len(apps) - i) * 3000,
                "ocr": ocr,
                "meta": {"app": app, "ssim": round(0.55 + (i * 7 % 44) / 100, 2)},
            }
        )
    return bodies


def timed(fn: Callable[[], object], reps: int) -> list[int]:
    """Nanoseconds of each of ``reps`` calls (after ``reps // 10`` untimed ones), sorted."""
    for _ in range(max(1, reps // 10)):
        fn()
    clock = time.perf_counter_ns
    samples: list[int] = []
    for _ in range(reps):
        t0 = clock()
        fn()
        samples.append(clock() - t0)
    samples.sort()
    return samples


@dataclass(frozen=True, slots=True)
class Figure:
    """Sorted nanoseconds of one operation, and the process's CPU per call."""

    name: str
    ns: list[int]
    cpu_us: float = float("nan")

    def median_us(self) -> float:
        return statistics.median(self.ns) / 1000

    def p99_us(self) -> float:
        return percentile(self.ns, 99) / 1000

    def line(self) -> str:
        cpu = "" if math.isnan(self.cpu_us) else f"  CPU/call {self.cpu_us:7.1f} µs"
        return (
            f"  {self.name:<50} median {self.median_us():8.1f} µs  p99 {self.p99_us():8.1f} µs  "
            f"max {self.ns[-1] / 1000:8.1f} µs  ({len(self.ns)} calls){cpu}"
        )


def cpu_timed(name: str, fn: Callable[[], object], reps: int) -> Figure:
    """:func:`timed`, with this process's CPU (all threads: the actors too) per call."""
    cpu0 = time.process_time()
    samples = timed(fn, reps)
    calls = reps + max(1, reps // 10)
    return Figure(name, samples, (time.process_time() - cpu0) / calls * 1e6)


def fill_rings(relay: RelayTree) -> tuple[FeedSnapshot, SenseSnapshot]:
    """Fill both rings through the actors' handles; the snapshots a tick would take."""
    feed, sense = relay.handles["feed"], relay.handles["sense"]
    for text in feed_texts(100):
        feed.proxy().append(text, "normal").get(timeout=CALL_TIMEOUT_S)
    for body in sense_bodies(SystemClock().now_ms()):
        sense.proxy().append(validate_sense(body)).get(timeout=CALL_TIMEOUT_S)
    feed_snap: FeedSnapshot = feed.proxy().snapshot().get(timeout=CALL_TIMEOUT_S)
    sense_snap: SenseSnapshot = sense.proxy().snapshot().get(timeout=CALL_TIMEOUT_S)
    return feed_snap, sense_snap


PREVIOUS_DIGEST = (
    "The user is in IntelliJ IDEA editing server/routes.py (handle_feed), after reading a "
    "failing test in iTerm. Earlier they discussed the idle check in Telegram. " * 4
)
"""A previous digest of the length a tick carries (it is cut to 600 characters)."""


def measure_pure(feed: FeedSnapshot, sense: SenseSnapshot, reps: int) -> list[Figure]:
    now_ms = SystemClock().now_ms()

    def window() -> ContextWindow:
        return build_context_window(feed.items, sense.events, now_ms=now_ms, max_age_ms=MAX_AGE_MS)

    ctx = window()
    previous = PreviousDigest(PREVIOUS_DIGEST, now_ms - 20_000)

    def prompt(of: ContextWindow) -> str:
        return build_prompt(of, now_ms=now_ms, previous=previous)

    return [
        Figure("build_context_window", timed(window, reps)),
        Figure("build_prompt", timed(lambda: prompt(ctx), reps)),
        Figure("fingerprint", timed(lambda: fingerprint(ctx), reps)),
        Figure("all three", timed(lambda: (prompt(w := window()), fingerprint(w)), reps)),
    ]


def tick_result(n: int, window: ContextWindow) -> TickResult:
    hud = f"Editing hud-relay.mjs in IDEA, tests failing ({n})"
    digest = (
        "The user is in IntelliJ IDEA editing server/routes.py (handle_feed), after reading a "
        "pull request about the relay's performance in Chrome and a Slack thread on what wakes "
        f"the idle relay. A pytest run shows one failure in test_prompt_shape (run {n}). They "
        "said they want to measure the tick before optimising it."
    )
    return TickResult(
        tick_id=n,
        analysis=Analysis(hud=hud, digest=digest, parsed_ok=True),
        window=window,
        model="google/gemini-2.5-flash-lite",
        latency_ms=850,
        tokens_in=1200,
        tokens_out=90,
        push_to_feed=True,
    )


def measure_records(
    relay: RelayTree, window: ContextWindow, reps: int, where: str = ""
) -> list[Figure]:
    """``digest.record`` until its reply, and until its commit (a ping queued behind it)."""
    digest = relay.handles["digest"]
    clock = time.perf_counter_ns
    reply: list[int] = []
    committed: list[int] = []
    warm = max(1, reps // 10)
    cpu0 = time.process_time()
    for n in range(warm + reps):
        result = tick_result(n, window)
        t0 = clock()
        digest.proxy().record(result).get(timeout=CALL_TIMEOUT_S)
        t1 = clock()
        digest.proxy().ping().get(timeout=CALL_TIMEOUT_S)
        t2 = clock()
        if n >= warm:
            reply.append(t1 - t0)
            committed.append(t2 - t0)
    cpu_us = (time.process_time() - cpu0) / (warm + reps) * 1e6
    return [
        Figure(f"digest.record (reply){where}", sorted(reply)),
        Figure(f"digest.record + commit (ping behind it){where}", sorted(committed), cpu_us),
    ]


def measure_actors(relay: RelayTree, reps: int) -> tuple[list[Figure], ContextWindow]:
    handles = relay.handles
    window: ContextWindow = handles["context"].proxy().window(MAX_AGE_MS).get(timeout=5)
    figures = [
        cpu_timed(
            "feed.snapshot()",
            lambda: handles["feed"].proxy().snapshot().get(timeout=CALL_TIMEOUT_S),
            reps,
        ),
        cpu_timed(
            "sense.snapshot()",
            lambda: handles["sense"].proxy().snapshot().get(timeout=CALL_TIMEOUT_S),
            reps,
        ),
        cpu_timed(
            "context.window(120000) (snapshots + window)",
            lambda: handles["context"].proxy().window(MAX_AGE_MS).get(timeout=CALL_TIMEOUT_S),
            reps,
        ),
    ]
    return figures, window


@contextlib.contextmanager
def in_process_relay(llm: FakeLLM, data_dir: str, stopped: list[bool]) -> Iterator[RelayTree]:
    """``run.start_relay`` with a 1-hour interval, pointed at ``llm``; stopped on exit.

    Whether the stop finished in time is appended to ``stopped``.
    """
    agent = AgentConfig(interval_ms=HOUR_MS, api_key="bench-key", base_url=llm.base_url)
    relay = start_relay(Settings(port=0, data_dir=data_dir, agent=agent), SystemClock())
    try:
        yield relay
    finally:
        stopped.append(relay.stop())


def run_tick(args: argparse.Namespace) -> list[TableRow]:
    print(
        f"\n== a tick's own cost: in-process relay (:memory:, SystemClock, fake LLM in-process, "
        f"interval 1 h); {args.reps} pure calls, {args.actor_reps} actor calls per figure"
    )
    rows = [
        TableRow(f"tick own cost, {q}", "not measured", f"{TICK_LIMIT_MS:g} ms", "n/a", "tick")
        for q in ("median", "p99")
    ]
    log = io.StringIO()
    configure_logging("json", "info", stream=log)
    for attempt in quiet_attempts("tick", args.max_wait):
        other = OtherLoad()
        stopped: list[bool] = []
        with FakeLLM() as llm, in_process_relay(llm, MEMORY, stopped) as relay:
            feed, sense = fill_rings(relay)
            other.begin()
            pure = measure_pure(feed, sense, args.reps)
            actor, window = measure_actors(relay, args.actor_reps)
            actor += measure_records(relay, window, args.actor_reps)
        with (
            FakeLLM() as llm,
            data_directory(None, "relay-bench-tick-") as data_dir,
            in_process_relay(llm, data_dir, stopped) as relay,
        ):
            fs = filesystem(data_dir)
            disk = measure_records(relay, window, min(args.actor_reps, DISK_REPS), " on disk")
        other_cores = other.cores()
        if busy_during("tick", attempt, other_cores):
            continue
        transcripts = sum(1 for item in feed.items if "openrouter]" in item.text)
        ocr = sorted({len(e.ocr) for e in sense.events})
        prompt = build_prompt(
            window,
            now_ms=SystemClock().now_ms(),
            previous=PreviousDigest(PREVIOUS_DIGEST, SystemClock().now_ms()),
        )
        print(
            f"  rings: feed {len(feed.items)} items ({transcripts} transcripts), sense "
            f"{len(sense.events)} events (OCR {ocr[0]}-{ocr[-1]} chars, apps "
            f"{sorted({e.app for e in sense.events})}); window: audio {window.audio_count} "
            f"(kept {len(window.audio)}), screen {window.screen_count} (kept "
            f"{len(window.screen)} after dedup), {len(window.app_history)} app switches; prompt "
            f"{len(prompt)} chars; rest of the machine {other_cores:.2f} cores; relays stopped "
            f"cleanly: {stopped}"
        )
        print("  (a) pure, on the snapshots:")
        for figure in pure:
            print(figure.line())
        print("  (b) through the actors (wall time of the caller; CPU/call: whole process):")
        for figure in actor:
            print(figure.line())
        print(f"  not in the sum: the same on disk ({fs}, RELAY_SYNC=full: a commit is an fsync):")
        for figure in disk:
            print(figure.line())
        by_name = {f.name: f for f in pure + actor}
        parts = (
            by_name["context.window(120000) (snapshots + window)"],
            by_name["build_prompt"],
            by_name["digest.record + commit (ping behind it)"],
        )
        median_ms = sum(f.median_us() for f in parts) / 1000
        p99_ms = sum(f.p99_us() for f in parts) / 1000
        print(
            f"  tick own cost = window (actor) + prompt + record with commit: median "
            f"{median_ms:.3f} ms, p99 {p99_ms:.3f} ms (sum of the p99s, pessimistic)"
        )
        rows = [
            TableRow(
                f"tick own cost, {q}",
                f"{value:.3f} ms",
                f"{TICK_LIMIT_MS:g} ms",
                "pass" if value < TICK_LIMIT_MS else "FAIL",
                "tick",
            )
            for q, value in (("median", median_ms), ("p99", p99_ms))
        ]
        break
    lines = log.getvalue().splitlines()
    warnings = [line for line in lines if '"level":"info"' not in line]
    print(f"  in-process relay log: {len(lines)} lines, {len(warnings)} above info")
    for line in summarize_log(warnings):
        print(f"    {line}")
    return rows


# -- output and arguments ------------------------------------------------------------------------


def print_table(rows: Sequence[TableRow]) -> None:
    header = f"{'target':<40} {'measured':>12} {'limit':>8} {'result':>7}  command"
    print("\n" + header)
    print("-" * (len(header) + 33))
    for r in rows:
        command = COMMAND.format(part=r.part)
        print(f"{r.target:<40} {r.measured:>12} {r.limit:>8} {r.result:>7}  {command}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="A tick's own cost, idle CPU and start-up of sinain-relay (prints figures)."
    )
    parser.add_argument("--quick", action="store_true", help="idle 10 s, 2 starts, fewer reps")
    parser.add_argument("--only", help=f"comma-separated, from {','.join(PARTS)} (default: all)")
    parser.add_argument("--idle-seconds", type=float, help="idle window (default 60; quick 10)")
    parser.add_argument("--starts", type=int, help="relay starts (default 5; quick 2)")
    parser.add_argument("--reps", type=int, help="calls per pure figure (default 20000)")
    parser.add_argument("--actor-reps", type=int, help="calls per actor figure (default 2000)")
    parser.add_argument(
        "--max-wait",
        type=float,
        default=300.0,
        help="seconds to wait for a quiet machine before each part (default 300)",
    )
    args = parser.parse_args(argv)
    defaults = (10.0, 2, 2000, 200) if args.quick else (60.0, 5, 20_000, 2000)
    names = ("idle_seconds", "starts", "reps", "actor_reps")
    for name, default in zip(names, defaults, strict=True):
        if getattr(args, name) is None:
            setattr(args, name, default)
    if args.idle_seconds <= 0 or min(args.starts, args.reps, args.actor_reps) < 1:
        parser.error("--idle-seconds must be above 0; --starts, --reps, --actor-reps at least 1")
    if args.max_wait < 0:
        parser.error("--max-wait must be 0 or more")
    wanted = {p.strip() for p in (args.only or ",".join(PARTS)).split(",") if p.strip()}
    if not wanted or wanted - set(PARTS):
        parser.error(f"--only takes a comma-separated list of {', '.join(PARTS)}")
    args.parts = [p for p in PARTS if p in wanted]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # SIGTERM ends the run through the ``finally`` blocks, which stop every subprocess.
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    print(
        f"sinain-relay cost bench: parts {','.join(args.parts)}; {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]}, 1-min load {load_1min():.2f}"
    )
    rows: list[TableRow] = []
    if "idle" in args.parts or "startup" in args.parts:
        with (
            tempfile.TemporaryFile(prefix="fake-llm-") as llm_log,
            fake_llm_process(llm_log) as llm,
        ):
            if "idle" in args.parts:
                rows += run_idle(args, llm)
            if "startup" in args.parts:
                rows += run_startup(args, llm)
    if "tick" in args.parts:
        rows += run_tick(args)
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
