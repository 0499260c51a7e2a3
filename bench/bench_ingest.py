"""Ingest benchmark of sinain-relay: ``POST /feed`` and ``POST /sense`` under load.

Run from the repository root::

    python bench/bench_ingest.py            # 3 s x 3 rounds per row, 100k + 1M posts, 5 stops
    python bench/bench_ingest.py --quick    # 1 s x 1 round, 10k + 40k posts, 2 stops: a smoke run
    python bench/bench_ingest.py --storage  # only the storage and shutdown scenarios
    python bench/bench_ingest.py --scenarios healthy,llm-slow,llm-crash,llm-hang
    python bench/bench_ingest.py --scenarios memory   # RSS after 100k posts and over 1M more
    python bench/bench_ingest.py --scenarios floor    # the relay against a bare aiohttp app
    python bench/bench_ingest.py --generator python   # this script's own load generator

It prints figures (with ``pass``/``FAIL`` against issue 5's targets where it has one) and
asserts nothing about speed.

Scenarios. ``--scenarios`` takes a comma-separated list of the names below (default: all of
them, in this order); ``--storage`` is short for ``--scenarios storage,shutdown`` (giving both
flags is an error). Each relay is ``python run.py --port <free port> --log-level warning
--data-dir <dir>`` as a subprocess, pointed at a fake OpenAI-compatible LLM
(``transport/demo/fake_llm.py``, on a thread of this script) with ``AGENT_INTERVAL_MS=1000`` and
``AGENT_TIMEOUT_MS=5000``, so the agent ticks every second and the LLM path runs during the
measurements. ``<dir>`` is a fresh temporary directory (under ``$TMPDIR``, removed at the end;
its filesystem is printed, since fsync costs depend on it) and ``RELAY_SYNC=full`` (the
default) unless said otherwise. ``healthy`` measures ``POST /feed`` and ``POST /sense`` at 1,
16 and 64 connections; the three LLM fault scenarios after it at 16 and 64 only (the
connections of issue 5's targets):

``healthy``   the fake LLM answers at once (mode ``ok``)
``llm-slow``  the fake LLM answers after 3 s (mode ``slow``, ``delay_s`` 3): every tick
              succeeds, late, and the ticks in between are skipped as busy
``llm-crash`` the LLM caller crashes in a loop: the relay runs with ``RELAY_FAULTS=1``, and a
              thread of this script POSTs ``/debug/fault {"actor": "llm", "kind": "crash"}``
              every 0.5 s from just after the relay's first RSS reading to the end of its
              last row (answers counted by status: 200 = crash sent, 503 = the caller was
              waiting out its restart backoff, 0.5 s doubling to 30 s). The relay also gets
              ``RELAY_MAX_RESTARTS=1000000``, so that no supervisor escalates (and the process
              exits with code 70) whatever the run's length; the header says so, and the
              scenario prints whether the relay was still running at the end
``llm-hang``  the fake LLM never answers (mode ``hang``); every tick times out after 5 s
``memory``    a relay like ``healthy``'s: its RSS (VmRSS from ``/proc/<pid>/status``) right
              after start, after ``--posts`` POSTs (default 100,000), then after every
              ``--rss-every`` further POSTs (default 100,000) until ``--long-posts`` more
              (default 1,000,000). POSTs are counted as 200 answers, half ``/feed`` and half
              ``/sense`` (4 KiB OCR), at 64 connections; each reading prints the counts of
              both, the RSS and its change since start and since the ``--posts`` reading.
              With wrk (which runs whole seconds, not counts), each endpoint is posted by
              timed wrk runs only as long as its highest wrk rate so far x 1.5 (50,000/s
              before the first run) says cannot overshoot, then by a counted job of the
              Python generator for the rest, so the counts are exact (unless the relay got
              faster still: the counts printed are what was answered); with ``--generator
              python`` one counted job per reading posts ``/feed`` and ``/sense``
              alternately. Verdicts: RSS at most 60 MB at the ``--posts`` reading (issue 5
              states it for 100,000 posts; fewer is said); and "flat": the last reading at
              most 1.0 MB above the ``--posts`` one, and the last 4 readings not a steady
              rise (each more than 0.05 MB above the one before).
              A least-squares trend (MB per 100,000 posts over the readings from the
              ``--posts`` one on) is printed for information. Posting stops early, and says
              so, after 3600 s or when a round of posts gets no 200 at all.
``storage``   what durability costs: three relays, one after another, each like ``healthy``
              but for its storage: ``full`` (a temporary directory, ``RELAY_SYNC=full``: a
              200 means the item is fsynced), ``normal`` (``RELAY_SYNC=normal``: survives a
              crash of the relay, not of the machine) and ``memory`` (``--data-dir
              :memory:``: the same SQLite files in ``/dev/shm``, no sync). Same endpoints,
              connections, ``--rounds`` and ``--seconds`` as above; the summary adds the
              ratios full/memory and normal/memory of req/s, p50 and p99.
``shutdown``  the time from SIGTERM to the exit of the process, median of ``--stops`` stops,
              for a relay restarted on a directory whose feed and sense rings are full (filled
              once by a relay started for that): with an idle client (16 keep-alive
              connections that each got one answer and stay open), and while a client posts
              at 16 connections (``/feed`` and ``/sense`` alternately; the signal comes 1 s into
              the load; each connection stops at its first failure). The posting client is
              always the Python generator (wrk can neither stop a connection at its first
              failure nor count the POSTs answered). It also prints each restart's time from
              spawn to the first ``/health`` 200 (polled every 50 ms).
``floor``     the relay against the floor of issue 5: ``bench/bare_app.py``, a bare aiohttp
              app started like the relay's transport (same loop, ``AppRunner``/``TCPSite``
              settings, CORS headers, orjson) that reads, parses and validates POSTs with the
              relay's own validators and answers pre-built GETs, with no actors and no
              storage. Three servers run at once: ``bare``, ``relay`` (a temporary
              directory, ``RELAY_SYNC=full``) and ``memory`` (``--data-dir :memory:``). Each
              relay gets 100 ``/feed`` posts first; the bare app is then started with the
              ``relay``'s ``GET /feed?after=0`` and ``GET /health`` answers as its bodies.
              Rows: ``POST /feed`` and ``POST /sense`` at 1, 16 and 64 connections, and
              ``GET /feed?after=0`` and ``GET /health`` at 16 and 64 (measured first, while
              the feeds hold just those 100 items); every round of a row measures the three
              servers in turn (the other two idle, their CPU not counted as ``other cpu``).
              The summary adds relay/bare and memory/bare: the req/s ratio, the p99
              difference in ms, ``pass``/``FAIL`` against issue 5's targets (req/s at least
              0.9 x bare at 16 and 64 connections; POST p99 at most bare + 2 ms at 64) and
              each server's CPU per request (its ``cpu`` over its req/s, in microseconds).

Summaries. After the scenarios: the table of every measured row (median req/s, p50, p99,
errors, and the CPU columns below); each relay's RSS at start and at the end; when
``healthy`` and at least one fault scenario ran, "LLM faults vs healthy": per endpoint and
connections, each fault scenario's median req/s and p99 over ``healthy``'s, with
``pass``/``FAIL`` against issue 5's target (p99 at most 1.1 x healthy's); the memory
readings and verdicts; then the storage, shutdown and floor tables.

Measurements. For each row: a warm-up, then a fixed window (``--seconds``) whose answers
are recorded; non-200 answers and client-side failures are errors (counted by kind, never
retried). Each row is measured ``--rounds`` times; the table shows the median req/s (200
answers per second) and the median p50 and p99 across rounds. The CPU seconds of the server
(``/proc/<pid>/stat``), of the load generator and of the whole machine (``/proc/stat``) over
each window are printed as a share of one core, so one can see which side is the
bottleneck: ``other cpu`` is the machine's busy time minus the server, the generator, this
script (the fake LLM's thread, the fault thread, the sampling) and, in ``floor``, the idle
servers. Values within about +-0.08 of zero are the 10 ms granularity of ``/proc`` CPU
counters, not load; more means other processes on the machine distorted the figures.

Load generator (``--generator``). ``wrk`` (the default when it is on ``PATH``; see
``bench/wrk.py``, which drives it) or ``python`` (the default otherwise, the script then
says so and how to install wrk; ``--generator wrk`` without it is an error). The Python
generator costs about as much CPU per request as the server, so against a fast server it
measures itself (the bare app answered about 16k ``POST /feed`` per second to it and 35k to
wrk); wrk is C and costs a few microseconds per request.

- ``wrk``: each round of a row is one warm-up run of 1 s (wrk's shortest: its ``-d`` takes
  whole seconds, so ``--seconds`` must be a whole number too), then one measured run of
  ``--seconds``, both with one wrk thread and the row's connections on keep-alive, the
  bench's body for a POST. p50 and p99 are wrk's own percentiles (its latency histogram,
  every completed answer included); req/s is wrk's completed requests minus its non-2xx
  answers, over wrk's duration. Errors are wrk's counts (``status`` for non-2xx, ``connect``,
  ``read``, ``write``, ``timeout``). The generator's CPU is wrk's own (``RUSAGE_CHILDREN``
  over the run); the other CPU figures are read around the measured run.
- ``python``: ``--procs`` spawned worker processes (a ``ProcessPoolExecutor``, started once
  and reused), each an asyncio loop with one ``aiohttp.ClientSession``
  (``TCPConnector(limit=n)``) and ``n`` coroutines that send requests back to back on
  keep-alive connections; the connections of a row are split evenly across the workers, and
  the workers start on a shared ``time.monotonic()`` instant (CLOCK_MONOTONIC is
  system-wide on Linux). Each round: a warm-up of 0.5 s, then the window, during which every
  request that completes is recorded with its latency (p50 and p99 by nearest rank). The
  generator's CPU is the workers' ``time.process_time``. The same workers post the counted
  parts of ``memory`` and the busy client of ``shutdown`` whatever ``--generator`` says.

Why one Python generator process by default (measured on the 2-core machine this was
written on, alternating --procs 1, 2 and 3 against one healthy relay, 4 rounds of 2 s,
rounds with other load on the machine left out): with one worker the relay used 0.95-1.0
core (its aiohttp loop and its actors share one GIL, so about one core is its ceiling) and
the worker 0.85-0.9 core, about 14-16k req/s at 64 connections. Two workers gave 6-16 %
fewer req/s (28 % in one round) and a higher p99 at 64 connections (10-18 ms against 6-11
ms), three workers 15-30 % fewer: with both cores already busy, more client processes only
take CPU from the relay. The relay sits at its one-core ceiling with one worker, so the
default is ``--procs 1``; on a machine with more cores, try ``--procs 2``.

Options: ``--generator {wrk,python}``; ``--seconds`` (default 3) and ``--rounds`` (default 3)
per row; ``--posts`` (default 100,000), ``--long-posts`` (default 1,000,000) and
``--rss-every`` (default 100,000) for ``memory``; ``--stops`` (default 5) for ``shutdown``;
``--procs`` (default 1) for the Python generator; ``--scenarios`` and ``--storage`` as above.
``--quick`` changes the defaults of those not given: 1 s, 1 round, 10,000 posts then 40,000
more read every 10,000, 2 stops.

Everything is bounded: each request has a 10 s timeout (wrk's ``--timeout`` too), each
Python worker a hard deadline, each wait on the relay or a worker a timeout, each wrk run
its length plus 60 s; relays get SIGTERM, then SIGKILL after 15 s, in a ``finally`` (a
relay still running 15 s after a timed SIGTERM is reported and killed). Only 127.0.0.1 is
used.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import http.client
import itertools
import multiprocessing
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

import aiohttp
import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/bench_ingest.py``: make ``tests`` importable
    sys.path.insert(0, str(ROOT))

from actors.feed_buffer import FEED_RING  # noqa: E402
from bench.bare_app import FEED_TEXT  # noqa: E402
from bench.wrk import INSTALL_HINT, run_wrk  # noqa: E402
from bench.wrk import available as wrk_available  # noqa: E402
from transport.demo.fake_llm import FakeLLM  # noqa: E402

HOST = "127.0.0.1"
CONNECTIONS = (1, 16, 64)
FAULT_CONNECTIONS = (16, 64)
"""Connections of the LLM fault scenarios (``llm-slow``, ``llm-crash``, ``llm-hang``)."""
ENDPOINTS = ("/feed", "/sense")
MEMORY = ":memory:"
WARMUP_S = 0.5
WRK_WARMUP_S = 1.0
"""The warm-up with wrk: its shortest run (``-d`` takes whole seconds)."""
GENERATORS = ("wrk", "python")
HEALTH_TIMEOUT_S = 15.0
TERM_TIMEOUT_S = 15.0
REQUEST_TIMEOUT_S = 10.0
LEAD_S = 0.3
"""How far ahead of ``now`` the workers are told to start, so they all start together."""
POSTS_CONNECTIONS = 64
POSTS_MAX_S = 600.0
"""Hard bound on one counted posting job of the Python generator."""
MEMORY_MAX_S = 3600.0
"""Hard bound on the posting of the memory scenario, whatever ``--posts`` and
``--long-posts`` are; a run cut short says so."""
WRK_POST_MAX_S = 60
"""Longest single wrk run of the memory scenario (it runs again until the count is reached)."""
WRK_RATE_PRIOR = 50_000.0
"""POSTs per second assumed of a relay before the first wrk run measured it (above what the
bare app answers, so the first run cannot overshoot)."""
WRK_RATE_MARGIN = 1.5
"""A wrk run of the memory scenario lasts at most the remaining count over this many times
the highest rate measured so far (a cold relay's first second is slower)."""
RSS_TARGET_MB = 60.0
"""Issue 5: the relay's RSS after 100k posts, at most this."""
FLAT_MB = 1.0
"""The memory scenario's "flat": the last reading at most this much above the 100k one..."""
RISING_READINGS = 4
RISING_STEP_MB = 0.05
"""... and the last :data:`RISING_READINGS` readings not each this much above the one before."""
LLM_SLOW_S = 3.0
"""How long the fake LLM takes to answer in ``llm-slow`` (under ``AGENT_TIMEOUT_MS``)."""
CRASH_EVERY_S = 0.5
"""``llm-crash``: the pause between two ``POST /debug/fault`` crashes of the LLM caller."""
CRASH_FAULT = {"actor": "llm", "kind": "crash"}
CRASH_MAX_RESTARTS = 1_000_000
"""``RELAY_MAX_RESTARTS`` of the ``llm-crash`` relay, so that its supervisors never escalate."""
FAULT_P99_TARGET = 1.1
"""Issue 5: ingestion p99 with the LLM failing, at most this multiple of the healthy one."""
OCR_BYTES = 4096
JSON_HEADERS = {"Content-Type": "application/json"}
STOP_CONNECTIONS = 16
"""Connections of the client in the shutdown scenario (idle or posting)."""
BUSY_BEFORE_STOP_S = 1.0
"""How long the client posts before the SIGTERM."""
FILL_POSTS = (150, 60)
"""``/feed`` and ``/sense`` posts that fill the rings before the shutdown samples."""


@dataclass(frozen=True, slots=True)
class Setup:
    """One relay to measure: the fake LLM's mode and where the relay keeps its state."""

    name: str
    mode: str
    data_dir: str | None = None
    """``--data-dir``; ``None``: a fresh temporary directory."""
    sync: str = "full"
    conns: tuple[int, ...] = CONNECTIONS
    """The connections of each endpoint's rows."""
    delay_s: float = 1.0
    """How long the fake LLM waits in mode ``slow``."""
    crash_loop: bool = False
    """Crash the LLM caller every :data:`CRASH_EVERY_S` for the whole scenario."""

    def header(self) -> str:
        """What the scenario header says about the LLM and the relay's extra settings."""
        text = f"fake LLM mode {self.mode!r}"
        if self.mode == "slow":
            text += f", answering after {self.delay_s:g} s"
        if self.crash_loop:
            text += (
                f"; RELAY_FAULTS=1 and RELAY_MAX_RESTARTS={CRASH_MAX_RESTARTS} (so no supervisor "
                f"escalates), a thread POSTs /debug/fault {orjson.dumps(CRASH_FAULT).decode()} "
                f"every {CRASH_EVERY_S:g} s for the whole scenario"
            )
        return text

    def env(self) -> dict[str, str]:
        """The relay's extra environment."""
        if not self.crash_loop:
            return {}
        return {"RELAY_FAULTS": "1", "RELAY_MAX_RESTARTS": str(CRASH_MAX_RESTARTS)}


AGENT_SETUPS = (
    Setup("healthy", "ok"),
    Setup("llm-slow", "slow", conns=FAULT_CONNECTIONS, delay_s=LLM_SLOW_S),
    Setup("llm-crash", "ok", conns=FAULT_CONNECTIONS, crash_loop=True),
    Setup("llm-hang", "hang", conns=FAULT_CONNECTIONS),
)
FAULT_SCENARIOS = tuple(setup.name for setup in AGENT_SETUPS[1:])
STORAGE_SETUPS = (
    Setup("full", "ok"),
    Setup("normal", "ok", sync="normal"),
    Setup("memory", "ok", data_dir=MEMORY),
)
SCENARIO_NAMES = (
    "healthy",
    "llm-slow",
    "llm-crash",
    "llm-hang",
    "memory",
    "storage",
    "shutdown",
    "floor",
)


# -- request bodies ------------------------------------------------------------------------


def feed_body() -> bytes:
    """A ``POST /feed`` body like the one the sinain overlay sends."""
    return orjson.dumps({"text": FEED_TEXT, "priority": "normal"})


def sense_body() -> bytes:
    """A ``POST /sense`` text event with a 4 KiB OCR string."""
    line = "def handle(request): return json_response({'ok': True})  # editor text\n"
    ocr = (line * (OCR_BYTES // len(line) + 1))[:OCR_BYTES]
    body = {
        "type": "text",
        "ts": int(time.time() * 1000),
        "ocr": ocr,
        "meta": {"app": "code", "ssim": 0.9},
    }
    return orjson.dumps(body)


# -- the load generator (runs in worker processes) -----------------------------------------


@dataclass(frozen=True, slots=True)
class Job:
    """What one worker process sends, and when."""

    base_url: str
    paths: tuple[str, ...]
    """Request paths; each coroutine cycles through them."""
    conns: int
    start_at: float
    """``time.monotonic()`` at which to start sending (the warm-up begins)."""
    warmup_s: float
    seconds: float
    """Length of the measured window; ignored when ``count`` is set."""
    count: int = 0
    """When above 0: send this many requests, record all of them, then stop."""
    max_s: float = 60.0
    """Hard bound on the job, from ``start_at``."""
    stop_on_error: bool = False
    """Each connection stops at its first non-200 answer or failure (the relay is going)."""
    method: str = "POST"
    """``POST`` sends the bench's body for the path (``/feed`` or ``/sense``); ``GET`` none."""


@dataclass(slots=True)
class JobResult:
    """What one worker process measured."""

    latencies_ms: list[float] = field(default_factory=list)
    ok: Counter[str] = field(default_factory=Counter)
    """200 answers in the window, by request path."""
    errors: Counter[str] = field(default_factory=Counter)
    window_s: float = 0.0
    cpu_s: float = 0.0
    late_s: float = 0.0
    """How late the worker got the job (after ``start_at``); 0 when on time."""


async def _send_loop(
    session: aiohttp.ClientSession,
    urls: Sequence[str],
    bodies: Sequence[bytes | None],
    offset: int,
    job: Job,
    window: tuple[float, float],
    budget: list[int],
    result: JobResult,
) -> None:
    """One connection's worth of load: requests back to back until the window or budget ends."""
    lo, hi = window
    i = offset
    while True:
        if job.count:
            if budget[0] <= 0:
                return
            budget[0] -= 1
        started = time.monotonic()
        if started >= hi:
            return
        k = i % len(urls)
        i += 1
        status: int | str
        try:
            async with session.request(
                job.method, urls[k], data=bodies[k], headers=JSON_HEADERS if bodies[k] else None
            ) as resp:
                await resp.read()
                status = resp.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            status = type(exc).__name__
        done = time.monotonic()
        if lo <= done < hi:
            if status == 200:
                result.latencies_ms.append((done - started) * 1000)
                result.ok[job.paths[k]] += 1
            else:
                result.errors[f"{urls[k].rsplit('/', 1)[-1]}:{status}"] += 1
        if status != 200 and job.stop_on_error:
            return


def _requests(job: Job) -> tuple[list[str], list[bytes | None]]:
    """The URLs of a job and the body of each (``None`` for a GET)."""
    urls = [job.base_url + p for p in job.paths]
    if job.method != "POST":
        return urls, [None] * len(urls)
    return urls, [feed_body() if p == "/feed" else sense_body() for p in job.paths]


async def _run_timed_job(job: Job) -> JobResult:
    """A time-bound job: senders run from ``start_at``; CPU is sampled over the window."""
    result = JobResult()
    result.late_s = max(0.0, time.monotonic() - job.start_at)
    await asyncio.sleep(max(0.0, job.start_at - time.monotonic()))
    lo = job.start_at + job.warmup_s
    hi = min(lo + job.seconds, job.start_at + job.max_s)
    urls, bodies = _requests(job)
    connector = aiohttp.TCPConnector(limit=job.conns)
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)
    cpu: list[float] = []

    async def sample() -> None:
        await asyncio.sleep(max(0.0, lo - time.monotonic()))
        cpu.append(time.process_time())
        await asyncio.sleep(max(0.0, hi - time.monotonic()))
        cpu.append(time.process_time())

    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        senders = [
            _send_loop(session, urls, bodies, n, job, (lo, hi), [0], result)
            for n in range(job.conns)
        ]
        await asyncio.gather(sample(), *senders)
    result.cpu_s = cpu[1] - cpu[0]
    result.window_s = hi - lo
    return result


async def _run_counted_job(job: Job) -> JobResult:
    """A count-bound job: ``job.count`` requests, all recorded, bounded by ``job.max_s``."""
    result = JobResult()
    result.late_s = max(0.0, time.monotonic() - job.start_at)
    await asyncio.sleep(max(0.0, job.start_at - time.monotonic()))
    lo = time.monotonic()
    urls, bodies = _requests(job)
    connector = aiohttp.TCPConnector(limit=job.conns)
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)
    budget = [job.count]
    cpu0 = time.process_time()
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        senders = [
            _send_loop(session, urls, bodies, n, job, (lo, lo + job.max_s), budget, result)
            for n in range(job.conns)
        ]
        await asyncio.gather(*senders)
    result.cpu_s = time.process_time() - cpu0
    result.window_s = time.monotonic() - lo
    return result


def run_job(job: Job) -> JobResult:
    """Entry point of a worker process: one job on a fresh event loop."""
    return asyncio.run(_run_counted_job(job) if job.count else _run_timed_job(job))


def worker_pid(delay_s: float) -> int:
    """Used to start every worker process before the first measurement."""
    time.sleep(delay_s)
    return os.getpid()


# -- the relay and /proc ---------------------------------------------------------------------


def free_port() -> int:
    """A TCP port that was free on loopback a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def rss_mb(pid: int) -> float:
    """VmRSS of a process, in MB (NaN when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return float("nan")
    fields = raw[raw.rindex(")") + 2 :].split()  # fields from 3 (state) on
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine_busy_s() -> float:
    """CPU seconds all CPUs spent busy since boot (``/proc/stat``: all but idle and iowait)."""
    try:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return float("nan")
    user, nice, system, _idle, _iowait, irq, softirq, steal = values
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


def children_cpu_s() -> float:
    """User + system CPU seconds of this process's waited-for children (``RUSAGE_CHILDREN``).

    A ``wrk`` run is a child that is waited for when it ends, so the difference over a
    :func:`run_wrk` call is that run's CPU. Relays and Python workers count only once they
    exit, which never happens during a measured window.
    """
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True, slots=True)
class Usage:
    """CPU seconds spent over one measured window, and its length."""

    relay: float
    machine: float
    """All processes on the machine (the relay, the generator and anything else)."""
    me: float
    """This script's own process (the fake LLM's thread and the sampling)."""
    wall: float
    idle: float = 0.0
    """The bench's other servers, idle meanwhile (``floor`` runs three at once)."""


@dataclass(slots=True)
class Relay:
    """A server subprocess (a relay, or the bare app of ``floor``) and where it listens."""

    proc: subprocess.Popen[bytes]
    base_url: str
    log_path: Path
    ready_s: float = float("nan")
    """From spawning the process to the first ``GET /health`` 200."""
    stopped: bool = False
    """Stopped by :func:`timed_stop`, so :func:`relay_process` has nothing left to stop."""


def stop_process(proc: subprocess.Popen[bytes], name: str) -> None:
    """SIGTERM, then SIGKILL after :data:`TERM_TIMEOUT_S`; says what happened."""
    if proc.poll() is not None:
        print(f"  [{name}] had already exited with code {proc.returncode}")
        return
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=TERM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print(f"  [{name}] did not exit {TERM_TIMEOUT_S:g} s after SIGTERM; sending SIGKILL")
        proc.kill()
        proc.wait(timeout=TERM_TIMEOUT_S)
    took = time.monotonic() - started
    print(f"  [{name}] exited with code {proc.returncode} {took:.2f} s after SIGTERM")


def log_tail(path: Path, lines: int = 15) -> str:
    """The end of the relay's log, for error messages."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def timed_stop(relay: Relay) -> tuple[float, int | None]:
    """SIGTERM; seconds until the process exited, and its exit code.

    A thread blocks in ``waitpid`` (``Popen.wait`` with a timeout polls every 50 ms), so the
    time is exact. A relay still running after :data:`TERM_TIMEOUT_S` is killed: the code is
    then ``None`` and the seconds that bound.
    """
    relay.stopped = True
    exited: list[float] = []

    def wait() -> None:
        relay.proc.wait()
        exited.append(time.monotonic())

    waiter = threading.Thread(target=wait, name="relay-exit", daemon=True)
    waiter.start()
    started = time.monotonic()
    relay.proc.send_signal(signal.SIGTERM)
    waiter.join(timeout=TERM_TIMEOUT_S)
    if not exited:
        print(f"  [relay] did not exit {TERM_TIMEOUT_S:g} s after SIGTERM; sending SIGKILL")
        relay.proc.kill()
        relay.proc.wait(timeout=TERM_TIMEOUT_S)
        return TERM_TIMEOUT_S, None
    return exited[0] - started, relay.proc.returncode


@contextlib.contextmanager
def server_process(
    args: Sequence[str],
    log_file: IO[bytes],
    log_path: Path,
    *,
    env: dict[str, str] | None = None,
    name: str = "relay",
) -> Iterator[Relay]:
    """Run ``python <args> --port <free port>``, wait for ``GET /health`` 200, stop it on exit."""
    port = free_port()
    cmd = [sys.executable, *args, "--port", str(port)]
    spawned = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT)
    relay: Relay | None = None
    try:
        relay = Relay(proc=proc, base_url=f"http://{HOST}:{port}", log_path=log_path)
        wait_healthy(relay)
        relay.ready_s = time.monotonic() - spawned
        yield relay
    finally:
        if relay is None or not relay.stopped:
            stop_process(proc, name)


@contextlib.contextmanager
def relay_process(
    llm_base_url: str,
    log_file: IO[bytes],
    log_path: Path,
    *,
    data_dir: str,
    sync: str = "full",
    extra_env: Mapping[str, str] | None = None,
) -> Iterator[Relay]:
    """Start ``run.py`` on a free port, wait for ``GET /health`` 200, stop it on exit."""
    env = dict(os.environ)
    env.update(
        OPENROUTER_API_KEY="bench-key",
        AGENT_BASE_URL=llm_base_url,
        AGENT_INTERVAL_MS="1000",
        AGENT_TIMEOUT_MS="5000",
        RELAY_SYNC=sync,
    )
    env.update(extra_env or {})
    args = ["run.py", "--log-level", "warning", "--data-dir", data_dir]
    with server_process(args, log_file, log_path, env=env) as relay:
        yield relay


@contextlib.contextmanager
def data_directory(setup_dir: str | None, prefix: str) -> Iterator[str]:
    """``setup_dir`` itself, or a fresh temporary directory removed on exit."""
    if setup_dir is not None:
        yield setup_dir
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as path:
        yield path


def filesystem(path: str) -> str:
    """The type and mount point of the filesystem holding ``path`` (from /proc/mounts)."""
    best = ("?", "")
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return "unknown filesystem"
    real = os.path.realpath(path)
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1]
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best[1]):
            best = (fields[2], point)
    return f"{best[0]} on {best[1]}"


def wait_healthy(relay: Relay) -> None:
    """Poll ``GET /health`` until it answers 200, for at most :data:`HEALTH_TIMEOUT_S`."""
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    last = "no answer yet"
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if relay.proc.poll() is not None:
                msg = f"relay exited with code {relay.proc.returncode}:\n{log_tail(relay.log_path)}"
                raise RuntimeError(msg)
            try:
                resp = client.get(relay.base_url + "/health")
                if resp.status_code == 200:
                    return
                last = f"HTTP {resp.status_code}"
            except httpx.HTTPError as exc:
                last = type(exc).__name__
            time.sleep(0.05)
    msg = f"relay not healthy after {HEALTH_TIMEOUT_S:g} s ({last}):\n{log_tail(relay.log_path)}"
    raise RuntimeError(msg)


def health(relay: Relay) -> tuple[int, dict[str, object]]:
    """``GET /health``: status and body (status 0 when it did not answer)."""
    try:
        resp = httpx.get(relay.base_url + "/health", timeout=5.0)
        body: dict[str, object] = resp.json()
    except (httpx.HTTPError, ValueError) as exc:
        return 0, {"error": repr(exc)}
    return resp.status_code, body


# -- measuring ---------------------------------------------------------------------------------


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (NaN for no values)."""
    if not sorted_values:
        return float("nan")
    rank = max(1, min(len(sorted_values), round(q / 100 * len(sorted_values) + 0.5)))
    return sorted_values[rank - 1]


@dataclass(slots=True)
class Round:
    """One measurement of one row."""

    rps: float
    p50: float
    p99: float
    errors: Counter[str]
    relay_cpu: float
    """Relay CPU over the window, as a share of one core (1.0 = one core busy)."""
    gen_cpu: float
    """All generator workers' CPU over the window, as a share of one core."""
    other_cpu: float
    """Everything else on the machine over the window (other users of the 2 cores)."""
    requests: int


@dataclass(slots=True)
class Row:
    """All rounds of one (scenario, endpoint, connections)."""

    scenario: str
    endpoint: str
    conns: int
    rounds: list[Round] = field(default_factory=list)

    def median(self, attr: str) -> float:
        values: list[float] = [getattr(r, attr) for r in self.rounds]
        return statistics.median(values)

    def errors(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for r in self.rounds:
            total.update(r.errors)
        return total


def split(conns: int, procs: int) -> list[int]:
    """Connections per worker process: as even as possible, no empty worker."""
    n = min(conns, procs)
    return [conns // n + (1 if i < conns % n else 0) for i in range(n)]


def run_jobs(
    pool: concurrent.futures.ProcessPoolExecutor,
    procs: int,
    relay: Relay,
    paths: tuple[str, ...],
    conns: int,
    *,
    warmup_s: float,
    seconds: float,
    count: int = 0,
    method: str = "POST",
    idle: Sequence[int] = (),
) -> tuple[list[JobResult], Usage]:
    """Run one load across the workers; what each worker saw, and the CPU used meanwhile.

    ``idle``: pids of the bench's other servers, whose CPU is not counted as other load.
    """
    start_at = time.monotonic() + LEAD_S
    per_proc = split(conns, procs)
    max_s = POSTS_MAX_S if count else warmup_s + seconds + 5.0
    jobs = [
        Job(
            base_url=relay.base_url,
            paths=paths,
            conns=c,
            start_at=start_at,
            warmup_s=warmup_s,
            seconds=seconds,
            count=count // len(per_proc) + (1 if i < count % len(per_proc) else 0),
            max_s=max_s,
            method=method,
        )
        for i, c in enumerate(per_proc)
    ]
    futures = [pool.submit(run_job, job) for job in jobs]
    lo = start_at if count else start_at + warmup_s
    time.sleep(max(0.0, lo - time.monotonic()))
    cpu0, busy0, me0, t0, idle0 = (
        cpu_s(relay.proc.pid),
        machine_busy_s(),
        time.process_time(),
        time.monotonic(),
        sum(cpu_s(pid) for pid in idle),
    )
    if count:
        concurrent.futures.wait(futures, timeout=max_s + 30)
    else:
        time.sleep(max(0.0, lo + seconds - time.monotonic()))
    cpu1, busy1, me1, t1, idle1 = (
        cpu_s(relay.proc.pid),
        machine_busy_s(),
        time.process_time(),
        time.monotonic(),
        sum(cpu_s(pid) for pid in idle),
    )
    results = [f.result(timeout=max_s + 30) for f in futures]
    late = max(r.late_s for r in results)
    if late > 0:
        print(f"  warning: a worker started {late:.3f} s late (lead is {LEAD_S} s)")
    usage = Usage(
        relay=cpu1 - cpu0, machine=busy1 - busy0, me=me1 - me0, wall=t1 - t0, idle=idle1 - idle0
    )
    return results, usage


def measure(
    pool: concurrent.futures.ProcessPoolExecutor,
    procs: int,
    relay: Relay,
    endpoint: str,
    conns: int,
    seconds: float,
    *,
    method: str = "POST",
    idle: Sequence[int] = (),
) -> Round:
    """One round of one row (``idle``: as for :func:`run_jobs`)."""
    results, usage = run_jobs(
        pool,
        procs,
        relay,
        (endpoint,),
        conns,
        warmup_s=WARMUP_S,
        seconds=seconds,
        method=method,
        idle=idle,
    )
    latencies = sorted(x for r in results for x in r.latencies_ms)
    errors: Counter[str] = Counter()
    for r in results:
        errors.update(r.errors)
    window = results[0].window_s
    gen = sum(r.cpu_s for r in results)
    return Round(
        rps=len(latencies) / window,
        p50=percentile(latencies, 50),
        p99=percentile(latencies, 99),
        errors=errors,
        relay_cpu=usage.relay / usage.wall,
        gen_cpu=gen / window,
        other_cpu=(usage.machine - usage.relay - gen - usage.me - usage.idle) / usage.wall,
        requests=len(latencies) + sum(errors.values()),
    )


def post_body(path: str) -> bytes:
    """The bench's ``POST`` body for ``/feed`` or ``/sense``."""
    return feed_body() if path == "/feed" else sense_body()


def wrk_errors(path: str, errors: Mapping[str, int]) -> Counter[str]:
    """wrk's error counts, keyed like the Python generator's (``feed:status``, ``sense:read``)."""
    name = path.rsplit("/", 1)[-1]
    return Counter({f"{name}:{kind}": n for kind, n in errors.items()})


def measure_wrk(
    server: Relay,
    endpoint: str,
    conns: int,
    seconds: float,
    *,
    method: str = "POST",
    idle: Sequence[int] = (),
) -> Round:
    """One round of one row with wrk: a warm-up run, then one measured run.

    The CPU of the server, the machine, this script and the idle servers is read around the
    measured :func:`run_wrk` call, and wrk's own CPU is the change of :func:`children_cpu_s`
    over it. req/s counts the 200 answers (wrk's completed requests minus its non-2xx).
    """
    url = server.base_url + endpoint
    body = post_body(endpoint) if method == "POST" else None
    run_wrk(url, conns=conns, seconds=WRK_WARMUP_S, method=method, body=body)
    pid = server.proc.pid
    cpu0, busy0, me0, gen0, idle0, t0 = (
        cpu_s(pid),
        machine_busy_s(),
        time.process_time(),
        children_cpu_s(),
        sum(cpu_s(p) for p in idle),
        time.monotonic(),
    )
    result = run_wrk(url, conns=conns, seconds=seconds, method=method, body=body)
    cpu1, busy1, me1, gen1, idle1, t1 = (
        cpu_s(pid),
        machine_busy_s(),
        time.process_time(),
        children_cpu_s(),
        sum(cpu_s(p) for p in idle),
        time.monotonic(),
    )
    wall = t1 - t0
    relay, gen = cpu1 - cpu0, gen1 - gen0
    status_errors = result.errors.get("status", 0)
    socket_errors = sum(result.errors.values()) - status_errors
    return Round(
        rps=(result.requests - status_errors) / result.seconds,
        p50=result.p50_ms,
        p99=result.p99_ms,
        errors=wrk_errors(endpoint, result.errors),
        relay_cpu=relay / wall,
        gen_cpu=gen / wall,
        other_cpu=(busy1 - busy0 - relay - gen - (me1 - me0) - (idle1 - idle0)) / wall,
        requests=result.requests + socket_errors,
    )


class Generator:
    """The load generator of the measured rows: ``wrk`` or this script's Python workers.

    The Python workers are also what the shutdown scenario's busy client runs on, whatever
    the generator: they are started on first use.
    """

    def __init__(self, kind: str, procs: int) -> None:
        self.kind = kind
        self.procs = procs
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None

    @property
    def pool(self) -> concurrent.futures.ProcessPoolExecutor:
        """The Python worker processes, started (and their pids printed) on first use."""
        if self._pool is None:
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.procs, mp_context=multiprocessing.get_context("spawn")
            )
            # start every worker now (each is busy for 1 s, so each job lands on a new one)
            warm = [self._pool.submit(worker_pid, 1.0) for _ in range(self.procs)]
            pids = {f.result(timeout=60) for f in warm}
            print(f"python generator worker pids: {sorted(pids)}")
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def measure(
        self,
        server: Relay,
        endpoint: str,
        conns: int,
        seconds: float,
        *,
        method: str = "POST",
        idle: Sequence[int] = (),
    ) -> Round:
        """One round of one row (``idle``: as for :func:`run_jobs`)."""
        if self.kind == "wrk":
            return measure_wrk(server, endpoint, conns, seconds, method=method, idle=idle)
        return measure(
            self.pool, self.procs, server, endpoint, conns, seconds, method=method, idle=idle
        )


@contextlib.contextmanager
def crash_loop(relay: Relay) -> Iterator[Counter[str]]:
    """A thread that POSTs :data:`CRASH_FAULT` every :data:`CRASH_EVERY_S` until exit.

    Yields the answers counted by status (``200``: the crash was sent; ``503``: the LLM
    caller was not running, e.g. waiting out its restart backoff) or by failure.
    """
    outcomes: Counter[str] = Counter()
    stop = threading.Event()

    def run() -> None:
        with httpx.Client(timeout=REQUEST_TIMEOUT_S) as client:
            while not stop.is_set():
                try:
                    resp = client.post(relay.base_url + "/debug/fault", json=CRASH_FAULT)
                    outcomes[str(resp.status_code)] += 1
                except httpx.HTTPError as exc:
                    outcomes[type(exc).__name__] += 1
                stop.wait(CRASH_EVERY_S)

    thread = threading.Thread(target=run, name="llm-crash-loop", daemon=True)
    thread.start()
    try:
        yield outcomes
    finally:
        stop.set()
        thread.join(timeout=REQUEST_TIMEOUT_S + 1)


def run_scenario(
    gen: Generator, args: argparse.Namespace, setup: Setup
) -> tuple[list[Row], dict[str, float]]:
    """Start a fake LLM and a relay, measure every row, stop both."""
    rows: list[Row] = []
    rss: dict[str, float] = {}
    scenario = setup.name
    with (
        data_directory(setup.data_dir, f"relay-bench-{scenario}-") as data_dir,
        tempfile.NamedTemporaryFile(prefix=f"relay-{scenario}-", suffix=".log") as log_file,
        FakeLLM(mode=setup.mode, delay_s=setup.delay_s) as llm,
    ):
        where = (
            "data dir :memory: (/dev/shm, no sync)"
            if data_dir == MEMORY
            else f"data dir {data_dir} ({filesystem(data_dir)}), RELAY_SYNC={setup.sync}"
        )
        print(f"\n== scenario {scenario} ({setup.header()}; {where})")
        log_path = Path(log_file.name)
        try:
            with relay_process(
                llm.base_url,
                log_file,
                log_path,
                data_dir=data_dir,
                sync=setup.sync,
                extra_env=setup.env(),
            ) as relay:
                rss["start"] = rss_mb(relay.proc.pid)
                print(
                    f"  relay pid {relay.proc.pid} at {relay.base_url}; "
                    f"RSS after start {rss['start']:.1f} MB"
                )
                faulting: contextlib.AbstractContextManager[Counter[str]] = (
                    crash_loop(relay) if setup.crash_loop else contextlib.nullcontext(Counter())
                )
                with faulting as faults:
                    for endpoint in ENDPOINTS:
                        for conns in setup.conns:
                            row = Row(scenario, endpoint, conns)
                            for _ in range(args.rounds):
                                row.rounds.append(gen.measure(relay, endpoint, conns, args.seconds))
                            rows.append(row)
                            print_progress(row)
                if setup.crash_loop:
                    code = relay.proc.poll()
                    print(
                        f"  POST /debug/fault answers: {dict(faults) or 'none'}; relay "
                        + ("still running" if code is None else f"EXITED with code {code}")
                    )
                rss["end"] = rss_mb(relay.proc.pid)
                print(f"  RSS at the end {rss['end']:.1f} MB; fake LLM got {llm.calls} calls")
                print_health(relay)
        finally:
            print_log_summary(log_file, log_path)
    return rows, rss


# -- memory: RSS after --posts, then over a long run ---------------------------------------------


@dataclass(frozen=True, slots=True)
class Reading:
    """One RSS reading of the memory scenario."""

    feed: int
    """``POST /feed`` answered 200 so far."""
    sense: int
    rss_mb: float
    seconds: float
    """Time spent posting since the previous reading."""
    errors: int
    """Non-200 answers and failures so far."""

    @property
    def posts(self) -> int:
        return self.feed + self.sense


@dataclass(slots=True)
class MemoryRun:
    """The readings of the memory scenario."""

    posts: int
    """``--posts``: the reading after them is the reference (index :attr:`reference`)."""
    readings: list[Reading] = field(default_factory=list)
    complete: bool = True
    """False when :data:`MEMORY_MAX_S` or a relay answering no POST cut the run short."""

    @property
    def reference(self) -> int:
        return 1 if self.posts else 0


def post_until(
    gen: Generator,
    relay: Relay,
    total: int,
    ok: Counter[str],
    errors: Counter[str],
    rates: dict[str, float],
) -> None:
    """Post until ``ok`` counts ``total`` 200 answers, half ``/feed`` and half ``/sense``.

    Python generator: one counted job at :data:`POSTS_CONNECTIONS` connections, ``/feed`` and
    ``/sense`` alternately, exactly the missing number of POSTs. wrk (which runs whole
    seconds, not counts): per endpoint, timed wrk runs at :data:`POSTS_CONNECTIONS`
    connections as long as the endpoint's highest wrk rate so far (``rates``) times
    :data:`WRK_RATE_MARGIN`, or :data:`WRK_RATE_PRIOR` before the first run, says cannot
    overshoot its half, then a counted Python job for the rest: the count is exact unless
    the relay got much faster.
    """
    if gen.kind == "python":
        post_counted(gen, relay, ENDPOINTS, total - sum(ok.values()), ok, errors)
        return
    for path, target in zip(ENDPOINTS, ((total + 1) // 2, total // 2), strict=True):
        body = post_body(path)
        while ok[path] < target:
            rate = rates[path] * WRK_RATE_MARGIN if path in rates else WRK_RATE_PRIOR
            seconds = min(WRK_POST_MAX_S, int((target - ok[path]) / rate))
            if seconds < 1:
                post_counted(gen, relay, (path,), target - ok[path], ok, errors)
                break
            result = run_wrk(
                relay.base_url + path,
                conns=POSTS_CONNECTIONS,
                seconds=seconds,
                method="POST",
                body=body,
            )
            answered = result.requests - result.errors.get("status", 0)
            ok[path] += answered
            errors.update(wrk_errors(path, result.errors))
            if answered <= 0:
                msg = f"no POST {path} answered 200 in {result.seconds:.1f} s: {result.errors}"
                raise PostingStalled(msg)
            rates[path] = max(rates.get(path, 0.0), answered / result.seconds)


def post_counted(
    gen: Generator,
    relay: Relay,
    paths: tuple[str, ...],
    count: int,
    ok: Counter[str],
    errors: Counter[str],
) -> None:
    """``count`` POSTs with the Python workers at :data:`POSTS_CONNECTIONS` connections.

    Raises:
        PostingStalled: not one of them was answered 200.
    """
    if count <= 0:
        return
    before = sum(ok.values())
    results, _ = run_jobs(
        gen.pool,
        gen.procs,
        relay,
        paths,
        POSTS_CONNECTIONS,
        warmup_s=0.0,
        seconds=0.0,
        count=count,
    )
    for r in results:
        ok.update(r.ok)
        errors.update(r.errors)
    if sum(ok.values()) == before:
        msg = f"none of {count} POSTs to {', '.join(paths)} answered 200"
        raise PostingStalled(msg)


class PostingStalled(RuntimeError):
    """The memory scenario's posting got no 200 at all: the relay is failing them."""


def memory_targets(args: argparse.Namespace) -> list[int]:
    """The post counts of the readings after the start: ``--posts``, then every ``--rss-every``."""
    targets = [args.posts] if args.posts else []
    steps = -(-args.long_posts // args.rss_every)  # ceil
    targets += [args.posts + min(k * args.rss_every, args.long_posts) for k in range(1, steps + 1)]
    return targets


def run_memory(gen: Generator, args: argparse.Namespace) -> MemoryRun:
    """A healthy relay on disk: RSS at start, after ``--posts``, then every ``--rss-every``."""
    run = MemoryRun(posts=args.posts)
    how = (
        "wrk, one endpoint at a time, and the Python generator for each last part"
        if gen.kind == "wrk"
        else "the Python generator, /feed and /sense alternately"
    )
    gen.pool  # noqa: B018  # the Python workers start before the relay (they count POSTs)
    with (
        data_directory(None, "relay-bench-memory-") as data_dir,
        tempfile.NamedTemporaryFile(prefix="relay-memory-", suffix=".log") as log_file,
        FakeLLM(mode="ok") as llm,
    ):
        print(
            f"\n== scenario memory (fake LLM mode 'ok'; data dir {data_dir} "
            f"({filesystem(data_dir)}), RELAY_SYNC=full; {args.posts:,} POSTs, then "
            f"{args.long_posts:,} more with an RSS reading every {args.rss_every:,}; half "
            f"/feed, half /sense (4 KiB OCR), at {POSTS_CONNECTIONS} connections with {how})"
        )
        log_path = Path(log_file.name)
        try:
            with relay_process(llm.base_url, log_file, log_path, data_dir=data_dir) as relay:
                ok: Counter[str] = Counter()
                errors: Counter[str] = Counter()
                rates: dict[str, float] = {}
                run.readings.append(Reading(0, 0, rss_mb(relay.proc.pid), 0.0, 0))
                print(f"  relay pid {relay.proc.pid} at {relay.base_url}")
                print(f"  {reading_line(run, run.readings[0])}")
                started = time.monotonic()
                for target in memory_targets(args):
                    if time.monotonic() - started > MEMORY_MAX_S:
                        print(f"  stopped early: the scenario's bound of {MEMORY_MAX_S:g} s")
                        run.complete = False
                        break
                    t0 = time.monotonic()
                    try:
                        post_until(gen, relay, target, ok, errors, rates)
                    except PostingStalled as exc:
                        print(f"  stopped early: {exc}")
                        run.complete = False
                        break
                    reading = Reading(
                        feed=ok["/feed"],
                        sense=ok["/sense"],
                        rss_mb=rss_mb(relay.proc.pid),
                        seconds=time.monotonic() - t0,
                        errors=sum(errors.values()),
                    )
                    run.readings.append(reading)
                    print(f"  {reading_line(run, reading)}")
                if errors:
                    print(f"  errors: {dict(errors)}")
                print(f"  fake LLM got {llm.calls} calls")
                print_health(relay)
        finally:
            print_log_summary(log_file, log_path)
    return run


def reading_line(run: MemoryRun, reading: Reading) -> str:
    """One reading as printed while the scenario runs."""
    text = (
        f"{reading.posts:>9,} posts (/feed {reading.feed:,}, /sense {reading.sense:,}): "
        f"RSS {reading.rss_mb:.1f} MB ({reading.rss_mb - run.readings[0].rss_mb:+.1f} vs start"
    )
    if len(run.readings) > run.reference + 1:
        text += f", {reading.rss_mb - run.readings[run.reference].rss_mb:+.2f} vs {run.posts:,}"
    text += ")"
    if reading.seconds:
        rate = (reading.posts - run.readings[-2].posts) / reading.seconds
        text += f"; {reading.seconds:.1f} s posting, {rate:.0f} ok/s; errors {reading.errors}"
    return text


def print_progress(row: Row, prefix: str = "") -> None:
    """One measured row, with each round's req/s, p99 and other cpu."""
    print(
        f"  {prefix}{row.endpoint:<6} {row.conns:>3} conns: {row.median('rps'):8.0f} req/s "
        f"p50 {row.median('p50'):7.2f} ms p99 {row.median('p99'):7.2f} ms "
        f"errors {sum(row.errors().values())}; per round req/s "
        f"{[round(r.rps) for r in row.rounds]} p99 "
        f"{[round(r.p99, 1) for r in row.rounds]} other cpu "
        f"{[round(r.other_cpu, 2) for r in row.rounds]}"
    )


def print_health(relay: Relay, prefix: str = "") -> None:
    """The relay's ``/health.agent`` and the actors that restarted."""
    status, body = health(relay)
    print(f"  {prefix}GET /health -> {status}: agent={body.get('agent')}")
    actors = body.get("actors")
    restarts = {
        name: a.get("restarts")
        for name, a in (actors.items() if isinstance(actors, dict) else ())
        if isinstance(a, dict) and a.get("restarts")
    }
    print(f"  {prefix}actor restarts: {restarts or 'none'}")


def print_log_summary(
    log_file: IO[bytes], log_path: Path, label: str = "relay log (level warning)"
) -> None:
    log_file.flush()
    lines = log_path.read_text(errors="replace").splitlines()
    print(f"  {label}: {len(lines)} lines")
    for line in summarize_log(lines):
        print(f"    {line}")


# -- floor: the relay against a bare aiohttp app ----------------------------------------------

FLOOR_SERVERS = ("bare", "relay", "memory")
FLOOR_GETS = ("/feed?after=0", "/health")
GET_CONNECTIONS = (16, 64)
RPS_TARGET = 0.9
"""Issue 5: the relay's req/s at 16 and 64 connections, at least this share of the bare app's."""
P99_TARGET_MS = 2.0
"""Issue 5: the relay's POST p99 at 64 connections, at most this much above the bare app's."""
TARGET_CONNECTIONS = (16, 64)


@dataclass(frozen=True, slots=True)
class Load:
    """One row of the floor scenario (measured against each server)."""

    method: str
    path: str
    conns: int

    @property
    def label(self) -> str:
        return self.path if self.method == "POST" else f"GET {self.path}"


FLOOR_LOADS = tuple(Load("POST", p, c) for p in ENDPOINTS for c in CONNECTIONS) + tuple(
    Load("GET", p, c) for p in FLOOR_GETS for c in GET_CONNECTIONS
)


def capture(relay: Relay, path: str, into: Path) -> int:
    """Save the relay's answer to ``GET path`` in ``into``; return its size in bytes."""
    resp = httpx.get(relay.base_url + path, timeout=REQUEST_TIMEOUT_S)
    resp.raise_for_status()
    into.write_bytes(resp.content)
    return len(resp.content)


@contextlib.contextmanager
def log_to_file(name: str, label: str) -> Iterator[tuple[IO[bytes], Path]]:
    """A temporary log file; its summary is printed on exit (after the process stopped)."""
    with tempfile.NamedTemporaryFile(prefix=f"relay-floor-{name}-", suffix=".log") as log_file:
        log_path = Path(log_file.name)
        try:
            yield log_file, log_path
        finally:
            print_log_summary(log_file, log_path, label)


def run_floor(gen: Generator, args: argparse.Namespace) -> list[Row]:
    """The relay (on disk with ``RELAY_SYNC=full``, and ``:memory:``) against the bare app.

    Both relays get :data:`FEED_RING` ``/feed`` posts first; the bare app then answers the
    on-disk relay's ``GET /feed?after=0`` and ``GET /health`` as captured at that moment.
    Each round of each row measures the three servers one after the other while the other
    two idle, so that a change on the machine hits all three alike. The GET rows run first,
    while the feeds hold just those posts (the POST rows make the ids longer).
    """
    rows = {
        (name, load): Row(name, load.label, load.conns)
        for load in FLOOR_LOADS
        for name in FLOOR_SERVERS
    }
    with contextlib.ExitStack() as stack:
        llm = stack.enter_context(FakeLLM(mode="ok"))
        data_dir = stack.enter_context(data_directory(None, "relay-bench-floor-"))
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="relay-floor-")))
        print(
            f"\n== scenario floor (fake LLM mode 'ok'; relay: data dir {data_dir} "
            f"({filesystem(data_dir)}), RELAY_SYNC=full; memory: data dir :memory:; "
            "bare: bench/bare_app.py)"
        )
        servers: dict[str, Relay] = {}
        for name, where in (("relay", data_dir), ("memory", MEMORY)):
            log_file, log_path = stack.enter_context(
                log_to_file(name, f"{name} log (level warning)")
            )
            servers[name] = stack.enter_context(
                relay_process(llm.base_url, log_file, log_path, data_dir=where)
            )
            fill_rings(servers[name], FEED_RING, 0)
        files = [tmp / "feed.json", tmp / "health.json"]
        sizes = [capture(servers["relay"], p, f) for p, f in zip(FLOOR_GETS, files, strict=True)]
        log_file, log_path = stack.enter_context(log_to_file("bare", "bare app output"))
        bare_args = [
            "bench/bare_app.py",
            "--feed-body",
            str(files[0]),
            "--health-body",
            str(files[1]),
        ]
        bare = stack.enter_context(server_process(bare_args, log_file, log_path, name="bare app"))
        servers = {"bare": bare, **servers}
        print("  " + ", ".join(f"{n} pid {s.proc.pid} at {s.base_url}" for n, s in servers.items()))
        print(
            f"  posted {FEED_RING} /feed to each relay; the bare app answers the relay's "
            f"GET /feed?after=0 ({sizes[0]} bytes) and GET /health ({sizes[1]} bytes)"
        )
        for load in sorted(FLOOR_LOADS, key=lambda load: load.method == "POST"):
            for _ in range(args.rounds):
                for name, server in servers.items():
                    idle = [s.proc.pid for s in servers.values() if s is not server]
                    rows[name, load].rounds.append(
                        gen.measure(
                            server,
                            load.path,
                            load.conns,
                            args.seconds,
                            method=load.method,
                            idle=idle,
                        )
                    )
            for name in servers:
                print_progress(rows[name, load], f"{name:<6} ")
        for name in ("relay", "memory"):
            print_health(servers[name], f"{name}: ")
        print(f"  fake LLM got {llm.calls} calls")
    return [rows[name, load] for load in FLOOR_LOADS for name in FLOOR_SERVERS]


# -- shutdown ----------------------------------------------------------------------------------


@dataclass(slots=True)
class StopSample:
    """One restart and SIGTERM of the shutdown scenario."""

    ready_s: float
    """From spawn to the first ``/health`` 200 (the rings are restored by then)."""
    stop_s: float
    """From SIGTERM to the exit of the process."""
    code: int | None
    """Exit code; ``None`` when it had to be killed."""
    ring: tuple[object, object] = (None, None)
    """``/health`` messages and senseEvents after the restart (idle case)."""
    ok: int = 0
    """POSTs answered 200 while the client was posting (busy case)."""
    errors: Counter[str] = field(default_factory=Counter)

    def line(self) -> str:
        text = (
            f"start->healthy {self.ready_s:5.2f} s, SIGTERM->exit {self.stop_s:5.2f} s, "
            f"exit code {self.code}"
        )
        if self.ring != (None, None):
            text += f", rings after restart: feed {self.ring[0]}, sense {self.ring[1]}"
        if self.ok or self.errors:
            text += f", client: {self.ok} POSTs ok, failures {dict(self.errors) or 0}"
        return text


def fill_rings(
    relay: Relay, feed_posts: int = FILL_POSTS[0], sense_posts: int = FILL_POSTS[1]
) -> None:
    """``/feed`` and ``/sense`` (4 KiB OCR) posts; by default more than the rings keep."""
    with httpx.Client(timeout=REQUEST_TIMEOUT_S, headers=JSON_HEADERS) as client:
        for path, body, count in (
            ("/feed", feed_body(), feed_posts),
            ("/sense", sense_body(), sense_posts),
        ):
            for _ in range(count):
                client.post(relay.base_url + path, content=body).raise_for_status()


def idle_stop(relay: Relay) -> StopSample:
    """Open :data:`STOP_CONNECTIONS` keep-alive connections, one GET each, then SIGTERM."""
    port = urlsplit(relay.base_url).port
    assert port is not None
    conns = [
        http.client.HTTPConnection(HOST, port, timeout=REQUEST_TIMEOUT_S)
        for _ in range(STOP_CONNECTIONS)
    ]
    try:
        body: dict[str, object] = {}
        for conn in conns:
            conn.request("GET", "/health")
            body = orjson.loads(conn.getresponse().read())
        time.sleep(0.2)  # idle: every connection open, nothing in flight
        took, code = timed_stop(relay)
    finally:
        for conn in conns:
            conn.close()
    ring = (body.get("messages"), body.get("senseEvents"))
    return StopSample(ready_s=relay.ready_s, stop_s=took, code=code, ring=ring)


def busy_stop(pool: concurrent.futures.ProcessPoolExecutor, relay: Relay) -> StopSample:
    """Post at :data:`STOP_CONNECTIONS` connections; SIGTERM after :data:`BUSY_BEFORE_STOP_S`."""
    start_at = time.monotonic() + LEAD_S
    max_s = BUSY_BEFORE_STOP_S + TERM_TIMEOUT_S + 5.0
    job = Job(
        base_url=relay.base_url,
        paths=ENDPOINTS,
        conns=STOP_CONNECTIONS,
        start_at=start_at,
        warmup_s=0.0,
        seconds=0.0,
        count=10**9,  # bounded by max_s and by the first failure of each connection
        max_s=max_s,
        stop_on_error=True,
    )
    future = pool.submit(run_job, job)
    time.sleep(max(0.0, start_at + BUSY_BEFORE_STOP_S - time.monotonic()))
    if future.done():
        msg = f"the client stopped before the SIGTERM: {future.result()}"
        raise RuntimeError(msg)
    took, code = timed_stop(relay)
    result = future.result(timeout=max_s + 30)
    return StopSample(
        ready_s=relay.ready_s,
        stop_s=took,
        code=code,
        ok=len(result.latencies_ms),
        errors=result.errors,
    )


def run_shutdown(gen: Generator, args: argparse.Namespace) -> dict[str, list[StopSample]]:
    """Fill the rings once, then restart and stop the relay ``--stops`` times per case.

    The busy client is the Python generator whatever ``--generator`` says: each connection
    must stop at its first failure and the POSTs answered must be counted.
    """
    samples: dict[str, list[StopSample]] = {"idle": [], "busy": []}
    pool = gen.pool  # started before any relay of the scenario
    with (
        data_directory(None, "relay-bench-shutdown-") as data_dir,
        tempfile.NamedTemporaryFile(prefix="relay-shutdown-", suffix=".log") as log_file,
        FakeLLM(mode="ok") as llm,
    ):
        print(
            f"\n== scenario shutdown (fake LLM mode 'ok'; data dir {data_dir} "
            f"({filesystem(data_dir)}), RELAY_SYNC=full)"
        )
        log_path = Path(log_file.name)
        try:
            with relay_process(llm.base_url, log_file, log_path, data_dir=data_dir) as relay:
                fill_rings(relay)
                print(f"  filled the rings: {FILL_POSTS[0]} /feed and {FILL_POSTS[1]} /sense")
            for case, sample_list in samples.items():
                for n in range(1, args.stops + 1):
                    with relay_process(
                        llm.base_url, log_file, log_path, data_dir=data_dir
                    ) as relay:
                        sample = idle_stop(relay) if case == "idle" else busy_stop(pool, relay)
                    sample_list.append(sample)
                    print(f"  {case} {n}: {sample.line()}")
        finally:
            print_log_summary(log_file, log_path)
    return samples


def summarize_log(lines: Sequence[str], limit: int = 8) -> list[str]:
    """Counts of the relay's log events, each with its first line (truncated)."""
    events: Counter[str] = Counter()
    first: dict[str, str] = {}
    for line in lines:
        try:
            record = orjson.loads(line)
            key = f"{record.get('level')} {record.get('event')}"
        except (orjson.JSONDecodeError, AttributeError):
            key = line[:80]
        events[key] += 1
        first.setdefault(key, line)
    out: list[str] = []
    for key, n in events.most_common(limit):
        out += [f"{n:6d} x {key}", f"         first: {first[key][:400]}"]
    return out


# -- output ----------------------------------------------------------------------------------


def print_table(rows: Sequence[Row]) -> None:
    width = max([8, *(len(row.endpoint) for row in rows)])
    header = (
        f"{'scenario':<9} {'endpoint':<{width}} {'conns':>5} {'req/s':>8} {'p50 ms':>8} "
        f"{'p99 ms':>8} {'errors':>6}  {'relay cpu':>9} {'gen cpu':>7} {'other cpu':>9}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row.scenario:<9} {row.endpoint:<{width}} {row.conns:>5} {row.median('rps'):>8.0f} "
            f"{row.median('p50'):>8.2f} {row.median('p99'):>8.2f} "
            f"{sum(row.errors().values()):>6}  {row.median('relay_cpu'):>9.2f} "
            f"{row.median('gen_cpu'):>7.2f} {row.median('other_cpu'):>9.2f}"
        )
    for row in rows:
        errors = row.errors()
        if errors:
            print(f"errors {row.scenario} {row.endpoint} {row.conns}: {dict(errors)}")


def print_fault_ratios(rows: Sequence[Row]) -> None:
    """Each LLM fault scenario over healthy: req/s and p99 ratios, verdict on the p99 one."""
    by_key = {(r.scenario, r.endpoint, r.conns): r for r in rows}
    faults = [name for name in FAULT_SCENARIOS if any(r.scenario == name for r in rows)]
    group = f"{'req/s':>6} {'p99':>6} {'target':>6}"
    print(f"{'':<15}" + "   ".join(f"{name + ' / healthy':^20}" for name in faults).rstrip())
    header = f"{'endpoint':<8} {'conns':>5} " + "   ".join(group for _ in faults)
    print(header)
    print("-" * len(header))
    for endpoint in ENDPOINTS:
        for conns in CONNECTIONS:
            healthy = by_key.get(("healthy", endpoint, conns))
            fault_rows = [by_key.get((name, endpoint, conns)) for name in faults]
            if healthy is None or all(row is None for row in fault_rows):
                continue
            cells = []
            for row in fault_rows:
                if row is None:
                    cells.append(f"{'':>20}")
                    continue
                p99 = row.median("p99") / healthy.median("p99")
                verdict = "pass" if p99 <= FAULT_P99_TARGET else "FAIL"
                cells.append(
                    f"{row.median('rps') / healthy.median('rps'):>6.2f} {p99:>6.2f} {verdict:>6}"
                )
            print(f"{endpoint:<8} {conns:>5} " + "   ".join(cells))


def print_memory(run: MemoryRun) -> None:
    """The readings of the memory scenario, then the verdicts on issue 5's memory targets."""
    start = run.readings[0]
    if len(run.readings) <= run.reference:
        print(f"only the reading after start: RSS {start.rss_mb:.1f} MB (cut short)")
        return
    ref = run.readings[run.reference]
    header = (
        f"{'posts':>10} {'/feed':>9} {'/sense':>9} {'RSS MB':>7} {'vs start':>8} "
        f"{'vs ' + format(run.posts, ','):>11} {'posting s':>9} {'errors':>6}"
    )
    print(header)
    print("-" * len(header))
    for n, reading in enumerate(run.readings):
        since_ref = f"{reading.rss_mb - ref.rss_mb:>+11.2f}" if n >= run.reference else " " * 11
        print(
            f"{reading.posts:>10,} {reading.feed:>9,} {reading.sense:>9,} {reading.rss_mb:>7.1f} "
            f"{reading.rss_mb - start.rss_mb:>+8.1f} {since_ref} {reading.seconds:>9.1f} "
            f"{reading.errors:>6}"
        )
    verdict = "pass" if ref.rss_mb <= RSS_TARGET_MB else "FAIL"
    note = "" if ref.posts >= 100_000 else " (fewer posts than the target's 100,000)"
    print(
        f"RSS after {ref.posts:,} posts{note}: {ref.rss_mb:.1f} MB; target <= "
        f"{RSS_TARGET_MB:g} MB after 100,000 posts: {verdict}"
    )
    later = run.readings[run.reference :]
    if len(later) < 2:
        print("flat: not judged, no reading after that one (--long-posts 0)")
        return
    growth = later[-1].rss_mb - ref.rss_mb
    tail = later[-RISING_READINGS:]
    steps = [b.rss_mb - a.rss_mb for a, b in itertools.pairwise(tail)]
    rising = len(tail) == RISING_READINGS and all(step > RISING_STEP_MB for step in steps)
    verdict = "pass" if growth <= FLAT_MB and not rising else "FAIL"
    rise_text = (
        ("yes" if rising else "no")
        if len(tail) == RISING_READINGS
        else f"not judged, {len(tail)} readings"
    )
    slope = statistics.linear_regression(
        [float(r.posts) for r in later], [r.rss_mb for r in later]
    ).slope
    cut = "" if run.complete else " (cut short: see the scenario's output)"
    print(
        f"flat over {later[-1].posts - ref.posts:,} more posts{cut}: RSS {growth:+.2f} MB since "
        f"the {ref.posts:,} reading (must be <= +{FLAT_MB:g} MB); the last {RISING_READINGS} "
        f"readings each more than +{RISING_STEP_MB:g} MB above the one before (a steady "
        f"rise): {rise_text} (must be no): {verdict}"
    )
    print(
        f"trend (least squares over the {len(later)} readings from {ref.posts:,} posts on): "
        f"{slope * 100_000:+.3f} MB per 100,000 posts"
    )


def print_storage_ratios(rows: Sequence[Row]) -> None:
    """full/memory and normal/memory of req/s, p50 and p99, per endpoint and connections."""
    by_key = {(r.scenario, r.endpoint, r.conns): r for r in rows}
    print(f"{'':<15}{'full / memory':^22}   {'normal / memory':^22}".rstrip())
    header = f"{'endpoint':<8} {'conns':>5} " + f"{'req/s':>6} {'p50':>7} {'p99':>7}   " * 2
    print(header.rstrip())
    print("-" * len(header.rstrip()))
    for endpoint in ENDPOINTS:
        for conns in CONNECTIONS:
            memory = by_key.get(("memory", endpoint, conns))
            if memory is None:
                continue
            cells = []
            for name in ("full", "normal"):
                row = by_key.get((name, endpoint, conns))
                values = (
                    [row.median(a) / memory.median(a) for a in ("rps", "p50", "p99")]
                    if row is not None
                    else [float("nan")] * 3
                )
                cells.append(f"{values[0]:>6.2f} {values[1]:>7.2f} {values[2]:>7.2f}")
            print(f"{endpoint:<8} {conns:>5} " + "   ".join(cells))


def floor_verdict(endpoint: str, conns: int, rps_ratio: float, p99_diff_ms: float) -> str:
    """``pass`` or ``FAIL`` against issue 5's targets for this row; ``-`` without a target."""
    if conns not in TARGET_CONNECTIONS:
        return "-"
    ok = rps_ratio >= RPS_TARGET
    if not endpoint.startswith("GET") and conns == max(TARGET_CONNECTIONS):
        ok = ok and p99_diff_ms <= P99_TARGET_MS
    return "pass" if ok else "FAIL"


def cpu_us_per_request(row: Row) -> float:
    """The server's CPU per answered request, in microseconds (medians)."""
    return 1e6 * row.median("relay_cpu") / row.median("rps")


def print_floor_ratios(rows: Sequence[Row]) -> None:
    """relay/bare and memory/bare: req/s ratio, p99 difference, verdict; CPU per request."""
    by_key = {(r.scenario, r.endpoint, r.conns): r for r in rows}
    width = max([8, *(len(row.endpoint) for row in rows)])
    pad = " " * (width + 7)
    group = f"{'req/s':>6} {'p99 +ms':>8} {'target':>6}"
    print(f"{pad}{'relay / bare':^22}   {'memory / bare':^22}   {'server cpu us/req':^20}".rstrip())
    header = (
        f"{'endpoint':<{width}} {'conns':>5} {group}   {group}   "
        f"{'bare':>6} {'relay':>6} {'memory':>6}"
    )
    print(header)
    print("-" * len(header))
    for bare in (r for r in rows if r.scenario == "bare"):
        others = [by_key.get((name, bare.endpoint, bare.conns)) for name in ("relay", "memory")]
        cells = []
        for row in others:
            if row is None:
                cells.append(f"{'':>22}")
                continue
            ratio = row.median("rps") / bare.median("rps")
            diff = row.median("p99") - bare.median("p99")
            verdict = floor_verdict(bare.endpoint, bare.conns, ratio, diff)
            cells.append(f"{ratio:>6.2f} {diff:>+8.2f} {verdict:>6}")
        cpu = [cpu_us_per_request(r) if r else float("nan") for r in (bare, *others)]
        print(
            f"{bare.endpoint:<{width}} {bare.conns:>5} {'   '.join(cells)}   "
            + " ".join(f"{c:>6.0f}" for c in cpu)
        )


def print_stops(samples: dict[str, list[StopSample]]) -> None:
    header = (
        f"{'client':<7} {'stops':>5} {'SIGTERM->exit median s':>22} {'min':>6} {'max':>6} "
        f"{'exit codes':<12} {'start->healthy median s':>23}"
    )
    print(header)
    print("-" * len(header))
    for case, stops in samples.items():
        if not stops:
            continue
        took = [s.stop_s for s in stops]
        codes = " ".join(str(s.code) for s in stops)
        ready = statistics.median(s.ready_s for s in stops)
        print(
            f"{case:<7} {len(stops):>5} {statistics.median(took):>22.3f} {min(took):>6.3f} "
            f"{max(took):>6.3f} {codes:<12} {ready:>23.3f}"
        )


def parse_scenarios(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """The scenarios to run, in :data:`SCENARIO_NAMES` order."""
    if args.storage and args.scenarios is not None:
        parser.error("--storage is short for --scenarios storage,shutdown; give one of them")
    if args.storage:
        return ["storage", "shutdown"]
    if args.scenarios is None:
        return list(SCENARIO_NAMES)
    wanted = {name.strip() for name in args.scenarios.split(",") if name.strip()}
    unknown = sorted(wanted - set(SCENARIO_NAMES))
    if unknown or not wanted:
        parser.error(f"--scenarios takes a comma-separated list of {', '.join(SCENARIO_NAMES)}")
    return [name for name in SCENARIO_NAMES if name in wanted]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark POST /feed and POST /sense of sinain-relay (prints figures)."
    )
    parser.add_argument(
        "--generator",
        choices=GENERATORS,
        help="load generator of the measured rows (default: wrk when installed, else python)",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        help="measured window per round (default 3; a whole number with wrk)",
    )
    parser.add_argument("--rounds", type=int, help="rounds per row; medians are shown (default 3)")
    parser.add_argument(
        "--posts", type=int, help="memory: POSTs before the reference reading (default 100000)"
    )
    parser.add_argument(
        "--long-posts",
        type=int,
        help="memory: POSTs after the reference reading (default 1000000)",
    )
    parser.add_argument(
        "--rss-every", type=int, help="memory: POSTs between two readings (default 100000)"
    )
    parser.add_argument(
        "--procs",
        type=int,
        default=1,
        help="Python generator processes (default 1; see the docstring)",
    )
    parser.add_argument(
        "--stops", type=int, help="SIGTERMs per case in the shutdown scenario (default 5)"
    )
    parser.add_argument(
        "--scenarios",
        help=f"comma-separated, from {','.join(SCENARIO_NAMES)} (default: all)",
    )
    parser.add_argument(
        "--storage", action="store_true", help="only the storage and shutdown scenarios"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 1 s, 1 round, 10000 posts then 40000 read every 10000, 2 stops",
    )
    args = parser.parse_args(argv)
    names = ("seconds", "rounds", "posts", "long_posts", "rss_every", "stops")
    quick = (1.0, 1, 10_000, 40_000, 10_000, 2)
    full = (3.0, 3, 100_000, 1_000_000, 100_000, 5)
    for name, default in zip(names, quick if args.quick else full, strict=True):
        if getattr(args, name) is None:
            setattr(args, name, default)
    if (
        args.seconds <= 0
        or args.rounds < 1
        or args.posts < 0
        or args.long_posts < 0
        or args.rss_every < 1
        or args.procs < 1
        or args.stops < 1
    ):
        parser.error(
            "--seconds must be above 0, --rounds, --rss-every, --procs and --stops at least 1, "
            "--posts and --long-posts >= 0"
        )
    args.fallback = False
    if args.generator is None:
        args.generator = "wrk" if wrk_available() else "python"
        args.fallback = args.generator == "python"
    elif args.generator == "wrk" and not wrk_available():
        parser.error(INSTALL_HINT)
    if args.generator == "wrk" and args.seconds != int(args.seconds):
        parser.error("with --generator wrk, --seconds is a whole number of seconds (wrk's -d)")
    args.scenario_list = parse_scenarios(parser, args)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    scenarios: list[str] = args.scenario_list
    warmup = WRK_WARMUP_S if args.generator == "wrk" else WARMUP_S
    procs = f" ({args.procs} process(es))" if args.generator == "python" else ""
    print(
        f"sinain-relay ingest bench: {args.seconds:g} s x {args.rounds} rounds per row, "
        f"warm-up {warmup:g} s, generator {args.generator}{procs}, {os.cpu_count()} CPUs; "
        f"memory: {args.posts:,} posts then {args.long_posts:,} read every {args.rss_every:,}; "
        f"{args.stops} stops per shutdown case; scenarios {','.join(scenarios)}"
    )
    if args.fallback:
        print(f"wrk not found, so the Python generator measures ({INSTALL_HINT})")
    rows: list[Row] = []
    storage_rows: list[Row] = []
    rss: dict[str, dict[str, float]] = {}
    stops: dict[str, list[StopSample]] = {}
    floor_rows: list[Row] = []
    memory: MemoryRun | None = None
    gen = Generator(args.generator, args.procs)
    try:
        if args.generator == "python":
            gen.pool  # noqa: B018  # start the workers before the first relay
        for setup in AGENT_SETUPS:
            if setup.name in scenarios:
                scenario_rows, rss[setup.name] = run_scenario(gen, args, setup)
                rows += scenario_rows
        if "memory" in scenarios:
            memory = run_memory(gen, args)
        if "storage" in scenarios:
            for setup in STORAGE_SETUPS:
                scenario_rows, rss[setup.name] = run_scenario(gen, args, setup)
                storage_rows += scenario_rows
        if "shutdown" in scenarios:
            stops = run_shutdown(gen, args)
        if "floor" in scenarios:
            floor_rows = run_floor(gen, args)
    finally:
        gen.close()
    gen_note = f"generator {args.generator}" + (
        "; p50/p99 are wrk's percentiles" if args.generator == "wrk" else ""
    )
    if rows:
        print(
            "\nMedians across rounds (cpu = cores busy over the window; other = rest of machine; "
            f"{gen_note}):"
        )
        print_table(rows)
    if rss:
        print("\nRelay RSS (MB):")
        for scenario, values in rss.items():
            print(f"  {scenario:<9} " + ", ".join(f"{k} {v:.1f}" for k, v in values.items()))
    if "healthy" in scenarios and set(FAULT_SCENARIOS) & set(scenarios):
        print(
            f"\nLLM faults vs healthy (same run; each fault scenario's median req/s and p99 over "
            f"healthy's; target: p99 <= {FAULT_P99_TARGET:g} x healthy):"
        )
        print_fault_ratios(rows)
    if memory is not None:
        print(
            "\nMemory (relay VmRSS; posts = POSTs answered 200, /feed and /sense; targets: RSS "
            f"<= {RSS_TARGET_MB:g} MB after 100,000 posts, flat after that):"
        )
        print_memory(memory)
    if storage_rows:
        print(
            "\nStorage (full = RELAY_SYNC=full on disk, normal = RELAY_SYNC=normal on disk, "
            f"memory = --data-dir :memory:; medians across rounds; {gen_note}):"
        )
        print_table(storage_rows)
        print("\nStorage ratios (same run; req/s below 1, p50/p99 above 1: slower than memory):")
        print_storage_ratios(storage_rows)
    if stops:
        print(
            f"\nSIGTERM to exit, relay restarted on full rings ({FILL_POSTS[0]} /feed and "
            f"{FILL_POSTS[1]} /sense posted first); idle = {STOP_CONNECTIONS} open keep-alive "
            f"connections, busy = posting at {STOP_CONNECTIONS} connections:"
        )
        print_stops(stops)
    if floor_rows:
        print(
            "\nFloor (bare = bench/bare_app.py, relay = RELAY_SYNC=full on disk, memory = "
            f"--data-dir :memory:; GET /feed?after=0 holds {FEED_RING} items; medians across "
            f"rounds; {gen_note}):"
        )
        print_table(floor_rows)
        print(
            f"\nFloor ratios (same run; p99 +ms = minus bare's p99; targets: req/s >= "
            f"{RPS_TARGET} x bare at {' and '.join(map(str, TARGET_CONNECTIONS))} connections, "
            f"POST p99 <= bare + {P99_TARGET_MS:g} ms at {max(TARGET_CONNECTIONS)}):"
        )
        print_floor_ratios(floor_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
