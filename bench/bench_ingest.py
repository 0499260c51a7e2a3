"""Ingest benchmark of sinain-relay: ``POST /feed`` and ``POST /sense`` under load.

Run from the repository root::

    python bench/bench_ingest.py            # 3 s x 3 rounds per row, 100k posts for memory
    python bench/bench_ingest.py --quick    # 1 s x 1 round, 10k posts: a smoke run

It prints figures and asserts nothing about speed.

Scenarios. Each scenario starts its own relay (``python run.py --port <free port>
--log-level warning``) as a subprocess, pointed at a fake OpenAI-compatible LLM
(``tests/fake_llm.py``) with ``AGENT_INTERVAL_MS=1000`` and ``AGENT_TIMEOUT_MS=5000``, so
the agent ticks every second and the LLM path runs during the measurements:

``healthy``   the fake LLM answers at once (mode ``ok``)
``llm-hang``  the fake LLM never answers (mode ``hang``); every tick times out after 5 s

Measurements. For each endpoint and 1, 16 and 64 concurrent connections: a warm-up
(0.5 s), then a fixed window (``--seconds``) during which every request that completes is
recorded with its latency; non-200 answers and client-side failures are errors (counted by
kind, never retried). Each row is measured ``--rounds`` times; the table shows the median
req/s and the median p50 and p99 (nearest rank) across rounds. Memory is the relay's
VmRSS from ``/proc/<pid>/status``: right after start, after ``--posts`` POSTs (half
``/feed``, half ``/sense``, at 64 connections, healthy scenario), and at the end of each
scenario.

Load generator. It runs outside the relay process: ``--procs`` spawned worker processes
(a ``ProcessPoolExecutor``, started once and reused), each an asyncio loop with one
``aiohttp.ClientSession`` (``TCPConnector(limit=n)``) and ``n`` coroutines that send
requests back to back on keep-alive connections; the connections of a row are split evenly
across the workers, and the workers start on a shared ``time.monotonic()`` instant
(CLOCK_MONOTONIC is system-wide on Linux). The fake LLM runs on a thread of this script's
own process, not in the workers. The CPU seconds of the relay (``/proc/<pid>/stat``) and of
the workers (``time.process_time``) over each window are printed as a share of one core,
so one can see which side is the bottleneck.

Why one generator process by default (measured on the 2-core machine this was written on,
alternating --procs 1, 2 and 3 against one healthy relay, 4 rounds of 2 s, rounds with
other load on the machine left out): with one worker the relay used 0.95-1.0 core (its
aiohttp loop and its actors share one GIL, so about one core is its ceiling) and the worker
0.85-0.9 core, about 14-16k req/s at 64 connections. Two workers gave 6-16 % fewer req/s
(28 % in one round) and a higher p99 at 64 connections (10-18 ms against 6-11 ms), three
workers 15-30 % fewer: with both cores already busy, more client processes only take CPU
from the relay. The relay sits at its one-core ceiling with one worker, so the default is
``--procs 1``; on a machine with more cores, try ``--procs 2``. Other processes on the
machine distort the figures; the ``other cpu`` column (machine busy time from
``/proc/stat`` minus the relay, the workers and this script) shows when that happened;
values within about +-0.08 of zero are the 10 ms granularity of ``/proc`` CPU counters,
not load.

Everything is bounded: each request has a 10 s timeout, each worker a hard deadline, each
wait on the relay or a worker a timeout; relays get SIGTERM, then SIGKILL after 15 s, in a
``finally``. Only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import multiprocessing
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import aiohttp
import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/bench_ingest.py``: make ``tests`` importable
    sys.path.insert(0, str(ROOT))

from tests.fake_llm import FakeLLM  # noqa: E402

HOST = "127.0.0.1"
CONNECTIONS = (1, 16, 64)
ENDPOINTS = ("/feed", "/sense")
SCENARIOS = (("healthy", "ok"), ("llm-hang", "hang"))
WARMUP_S = 0.5
HEALTH_TIMEOUT_S = 15.0
TERM_TIMEOUT_S = 15.0
REQUEST_TIMEOUT_S = 10.0
LEAD_S = 0.3
"""How far ahead of ``now`` the workers are told to start, so they all start together."""
POSTS_CONNECTIONS = 64
POSTS_MAX_S = 600.0
"""Hard bound on the memory phase, whatever ``--posts`` is."""
OCR_BYTES = 4096
JSON_HEADERS = {"Content-Type": "application/json"}


# -- request bodies ------------------------------------------------------------------------


def feed_body() -> bytes:
    """A ``POST /feed`` body like the one the sinain overlay sends."""
    text = (
        "[PERIODIC] status check\n"
        "[2s ago, openrouter] so the relay keeps the last messages and the agent reads them"
    )
    return orjson.dumps({"text": text, "priority": "normal"})


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
    """Request paths; each coroutine cycles through them (all POST)."""
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


@dataclass(slots=True)
class JobResult:
    """What one worker process measured."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    window_s: float = 0.0
    cpu_s: float = 0.0
    late_s: float = 0.0
    """How late the worker got the job (after ``start_at``); 0 when on time."""


async def _send_loop(
    session: aiohttp.ClientSession,
    urls: Sequence[str],
    bodies: Sequence[bytes],
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
            async with session.post(urls[k], data=bodies[k], headers=JSON_HEADERS) as resp:
                await resp.read()
                status = resp.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            status = type(exc).__name__
        done = time.monotonic()
        if lo <= done < hi:
            if status == 200:
                result.latencies_ms.append((done - started) * 1000)
            else:
                result.errors[f"{urls[k].rsplit('/', 1)[-1]}:{status}"] += 1


async def _run_timed_job(job: Job) -> JobResult:
    """A time-bound job: senders run from ``start_at``; CPU is sampled over the window."""
    result = JobResult()
    result.late_s = max(0.0, time.monotonic() - job.start_at)
    await asyncio.sleep(max(0.0, job.start_at - time.monotonic()))
    lo = job.start_at + job.warmup_s
    hi = min(lo + job.seconds, job.start_at + job.max_s)
    urls = [job.base_url + p for p in job.paths]
    bodies = [feed_body() if p == "/feed" else sense_body() for p in job.paths]
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
    urls = [job.base_url + p for p in job.paths]
    bodies = [feed_body() if p == "/feed" else sense_body() for p in job.paths]
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


@dataclass(frozen=True, slots=True)
class Usage:
    """CPU seconds spent over one measured window, and its length."""

    relay: float
    machine: float
    """All processes on the machine (the relay, the generator and anything else)."""
    me: float
    """This script's own process (the fake LLM's thread and the sampling)."""
    wall: float


@dataclass(slots=True)
class Relay:
    """A relay subprocess and where it listens."""

    proc: subprocess.Popen[bytes]
    base_url: str
    log_path: Path


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


@contextlib.contextmanager
def relay_process(llm_base_url: str, log_file: IO[bytes], log_path: Path) -> Iterator[Relay]:
    """Start ``run.py`` on a free port, wait for ``GET /health`` 200, stop it on exit."""
    port = free_port()
    env = dict(os.environ)
    env.update(
        OPENROUTER_API_KEY="bench-key",
        AGENT_BASE_URL=llm_base_url,
        AGENT_INTERVAL_MS="1000",
        AGENT_TIMEOUT_MS="5000",
    )
    cmd = [sys.executable, "run.py", "--port", str(port), "--log-level", "warning"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT)
    try:
        relay = Relay(proc=proc, base_url=f"http://{HOST}:{port}", log_path=log_path)
        wait_healthy(relay)
        yield relay
    finally:
        stop_process(proc, "relay")


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
            time.sleep(0.1)
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
) -> tuple[list[JobResult], Usage]:
    """Run one load across the workers; what each worker saw, and the CPU used meanwhile."""
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
        )
        for i, c in enumerate(per_proc)
    ]
    futures = [pool.submit(run_job, job) for job in jobs]
    lo = start_at if count else start_at + warmup_s
    time.sleep(max(0.0, lo - time.monotonic()))
    cpu0, busy0, me0, t0 = (
        cpu_s(relay.proc.pid),
        machine_busy_s(),
        time.process_time(),
        time.monotonic(),
    )
    if count:
        concurrent.futures.wait(futures, timeout=max_s + 30)
    else:
        time.sleep(max(0.0, lo + seconds - time.monotonic()))
    cpu1, busy1, me1, t1 = (
        cpu_s(relay.proc.pid),
        machine_busy_s(),
        time.process_time(),
        time.monotonic(),
    )
    results = [f.result(timeout=max_s + 30) for f in futures]
    late = max(r.late_s for r in results)
    if late > 0:
        print(f"  warning: a worker started {late:.3f} s late (lead is {LEAD_S} s)")
    return results, Usage(relay=cpu1 - cpu0, machine=busy1 - busy0, me=me1 - me0, wall=t1 - t0)


def measure(
    pool: concurrent.futures.ProcessPoolExecutor,
    procs: int,
    relay: Relay,
    endpoint: str,
    conns: int,
    seconds: float,
) -> Round:
    """One round of one row."""
    results, usage = run_jobs(
        pool, procs, relay, (endpoint,), conns, warmup_s=WARMUP_S, seconds=seconds
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
        other_cpu=(usage.machine - usage.relay - gen - usage.me) / usage.wall,
        requests=len(latencies) + sum(errors.values()),
    )


def posts_phase(
    pool: concurrent.futures.ProcessPoolExecutor, procs: int, relay: Relay, posts: int
) -> None:
    """Send ``posts`` POSTs (alternating /feed and /sense) at 64 connections; print RSS."""
    before = rss_mb(relay.proc.pid)
    results, usage = run_jobs(
        pool, procs, relay, ENDPOINTS, POSTS_CONNECTIONS, warmup_s=0.0, seconds=0.0, count=posts
    )
    wall = usage.wall
    after = rss_mb(relay.proc.pid)
    ok = sum(len(r.latencies_ms) for r in results)
    errors: Counter[str] = Counter()
    for r in results:
        errors.update(r.errors)
    gen = sum(r.cpu_s for r in results)
    print(
        f"  memory: {ok + sum(errors.values())} POSTs at {POSTS_CONNECTIONS} connections in "
        f"{wall:.1f} s ({ok / wall:.0f} ok/s), errors {dict(errors) or 0}; "
        f"relay CPU {usage.relay / wall:.2f} cores, generator {gen / wall:.2f} cores, "
        f"other {(usage.machine - usage.relay - gen - usage.me) / wall:.2f} cores"
    )
    print(
        f"  RSS before the POSTs {before:.1f} MB, after {after:.1f} MB ({after - before:+.1f} MB)"
    )


def run_scenario(
    pool: concurrent.futures.ProcessPoolExecutor,
    args: argparse.Namespace,
    scenario: str,
    mode: str,
) -> tuple[list[Row], dict[str, float]]:
    """Start a fake LLM and a relay, measure every row, stop both."""
    rows: list[Row] = []
    rss: dict[str, float] = {}
    print(f"\n== scenario {scenario} (fake LLM mode {mode!r})")
    with (
        tempfile.NamedTemporaryFile(prefix=f"relay-{scenario}-", suffix=".log") as log_file,
        FakeLLM(mode=mode) as llm,
    ):
        log_path = Path(log_file.name)
        try:
            with relay_process(llm.base_url, log_file, log_path) as relay:
                rss["start"] = rss_mb(relay.proc.pid)
                print(
                    f"  relay pid {relay.proc.pid} at {relay.base_url}; "
                    f"RSS after start {rss['start']:.1f} MB"
                )
                if scenario == "healthy" and args.posts:
                    posts_phase(pool, args.procs, relay, args.posts)
                    rss["posts"] = rss_mb(relay.proc.pid)
                for endpoint in ENDPOINTS:
                    for conns in CONNECTIONS:
                        row = Row(scenario, endpoint, conns)
                        for _ in range(args.rounds):
                            row.rounds.append(
                                measure(pool, args.procs, relay, endpoint, conns, args.seconds)
                            )
                        rows.append(row)
                        print(
                            f"  {endpoint:<6} {conns:>3} conns: {row.median('rps'):8.0f} req/s "
                            f"p50 {row.median('p50'):7.2f} ms p99 {row.median('p99'):7.2f} ms "
                            f"errors {sum(row.errors().values())}; per round req/s "
                            f"{[round(r.rps) for r in row.rounds]} p99 "
                            f"{[round(r.p99, 1) for r in row.rounds]} other cpu "
                            f"{[round(r.other_cpu, 2) for r in row.rounds]}"
                        )
                rss["end"] = rss_mb(relay.proc.pid)
                status, body = health(relay)
                print(f"  RSS at the end {rss['end']:.1f} MB; fake LLM got {llm.calls} calls")
                print(f"  GET /health -> {status}: agent={body.get('agent')}")
                actors = body.get("actors")
                restarts = {
                    name: a.get("restarts")
                    for name, a in (actors.items() if isinstance(actors, dict) else ())
                    if isinstance(a, dict) and a.get("restarts")
                }
                print(f"  actor restarts: {restarts or 'none'}")
        finally:
            log_file.flush()
            lines = log_path.read_text(errors="replace").splitlines()
            print(f"  relay log (level warning): {len(lines)} lines")
            for line in summarize_log(lines):
                print(f"    {line}")
    return rows, rss


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
    header = (
        f"{'scenario':<9} {'endpoint':<8} {'conns':>5} {'req/s':>8} {'p50 ms':>8} "
        f"{'p99 ms':>8} {'errors':>6}  {'relay cpu':>9} {'gen cpu':>7} {'other cpu':>9}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row.scenario:<9} {row.endpoint:<8} {row.conns:>5} {row.median('rps'):>8.0f} "
            f"{row.median('p50'):>8.2f} {row.median('p99'):>8.2f} "
            f"{sum(row.errors().values()):>6}  {row.median('relay_cpu'):>9.2f} "
            f"{row.median('gen_cpu'):>7.2f} {row.median('other_cpu'):>9.2f}"
        )
    for row in rows:
        errors = row.errors()
        if errors:
            print(f"errors {row.scenario} {row.endpoint} {row.conns}: {dict(errors)}")


def print_ratios(rows: Sequence[Row]) -> None:
    by_key = {(r.scenario, r.endpoint, r.conns): r for r in rows}
    header = f"{'endpoint':<8} {'conns':>5} {'req/s hang/healthy':>19} {'p99 hang/healthy':>17}"
    print(header)
    print("-" * len(header))
    for endpoint in ENDPOINTS:
        for conns in CONNECTIONS:
            healthy = by_key.get(("healthy", endpoint, conns))
            hang = by_key.get(("llm-hang", endpoint, conns))
            if healthy is None or hang is None:
                continue
            print(
                f"{endpoint:<8} {conns:>5} {hang.median('rps') / healthy.median('rps'):>19.2f} "
                f"{hang.median('p99') / healthy.median('p99'):>17.2f}"
            )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark POST /feed and POST /sense of sinain-relay (prints figures)."
    )
    parser.add_argument("--seconds", type=float, help="measured window per round (default 3)")
    parser.add_argument("--rounds", type=int, help="rounds per row; medians are shown (default 3)")
    parser.add_argument(
        "--posts", type=int, help="POSTs before the second RSS reading (default 100000)"
    )
    parser.add_argument(
        "--procs",
        type=int,
        default=1,
        help="load-generator processes (default 1; see the docstring)",
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 s, 1 round, 10000 posts")
    args = parser.parse_args(argv)
    defaults = (1.0, 1, 10_000) if args.quick else (3.0, 3, 100_000)
    for name, default in zip(("seconds", "rounds", "posts"), defaults, strict=True):
        if getattr(args, name) is None:
            setattr(args, name, default)
    if args.seconds <= 0 or args.rounds < 1 or args.posts < 0 or args.procs < 1:
        parser.error("--seconds must be above 0, --rounds and --procs at least 1, --posts >= 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print(
        f"sinain-relay ingest bench: {args.seconds:g} s x {args.rounds} rounds per row, "
        f"warm-up {WARMUP_S} s, {args.posts} posts for memory, {args.procs} generator "
        f"process(es), {os.cpu_count()} CPUs"
    )
    rows: list[Row] = []
    rss: dict[str, dict[str, float]] = {}
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=args.procs, mp_context=multiprocessing.get_context("spawn")
    )
    try:
        # start every worker now (each is busy for 1 s, so each job lands on a new one)
        warm = [pool.submit(worker_pid, 1.0) for _ in range(args.procs)]
        pids = {f.result(timeout=60) for f in warm}
        print(f"generator worker pids: {sorted(pids)}")
        for scenario, mode in SCENARIOS:
            scenario_rows, scenario_rss = run_scenario(pool, args, scenario, mode)
            rows += scenario_rows
            rss[scenario] = scenario_rss
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    print("\nMedians across rounds (cpu = cores busy over the window; other = rest of machine):")
    print_table(rows)
    print("\nRelay RSS (MB):")
    for scenario, values in rss.items():
        print(f"  {scenario:<9} " + ", ".join(f"{k} {v:.1f}" for k, v in values.items()))
    print("\nllm-hang / healthy (same run):")
    print_ratios(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
