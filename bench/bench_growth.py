"""Growth benchmark of sinain-relay: how throughput, p99 and memory change as the work grows.

Issue 5: "OCR from 1 KiB to 1 MiB, connections from 1 to 256, and rings held full for an
hour-equivalent of events. Nothing should grow faster than linearly, and nothing without
bound." Run from the repository root::

    python bench/bench_growth.py                 # 3 s x 3 rounds per step, 12 hour chunks
    python bench/bench_growth.py --quick         # 1 s x 1 round, fewer steps: a smoke run
    python bench/bench_growth.py --sweeps hour   # some sweeps (ocr, conns, hour; comma-separated)
    python bench/bench_growth.py --sweeps hour --feed-every 1 --sense-every 0.5 --sense-kib 16

It prints figures and verdicts, and asserts nothing. ``wrk`` must be installed
(``bench/wrk.py``; exit code 2 with the install hint when it is not).

The relay. Each sweep starts its own relay, exactly as ``bench_ingest.py`` does
(``bench_ingest.relay_process``): ``python run.py --port <free port> --log-level warning
--data-dir <fresh temporary directory>`` with the default ``RELAY_SYNC=full`` (a 200 means
fsynced; the directory's filesystem is printed), pointed at an in-process fake LLM
(``transport/demo/fake_llm.py``, mode ``ok``) with ``AGENT_INTERVAL_MS=1000``, so the agent ticks
every second while data is new and its CPU is part of the relay's. A fresh relay per sweep
keeps one sweep's leftovers (a sense ring of 1 MiB events, a WAL grown by them) out of the
next sweep's figures. Each sweep starts with a 1 s ``wrk`` warm-up that is not recorded.

Measurements. Every load below is one ``wrk`` run (``bench/wrk.py``: one thread, keep-alive
connections, the same body for every request; wrk takes whole seconds, so ``--seconds`` is
rounded, at least 1). Each step is measured ``--rounds`` times and shows the median of each
figure across rounds. Around each run this script reads the relay's CPU (utime + stime of all
its threads, ``/proc/<pid>/stat``), wrk's (``RUSAGE_CHILDREN``), its own and the whole
machine's busy time (``/proc/stat``); ``other`` is the machine minus those three, as a share
of one core (within about +-0.08 of 0 is the 10 ms granularity of the counters, more is
another process on the machine, whose figures should then be read with care). RSS is the
relay's VmRSS (``/proc/<pid>/status``), in MB (2^20 bytes, as are all MiB figures). The
first line also names the SQLite library and its build's ``secure_delete`` default (on in
Debian's build: a delete rewrites the freed pages); the relay sets ``FAST`` on every
connection whatever the build.

Sweep ``ocr``: ``POST /sense`` text events whose ``ocr`` is 1, 4, 16, 64, 256 and 1024 KiB of
code-like ASCII (``--quick``: 1, 16, 256, 1024; the body limit of ``/sense`` is 2 MiB) at
16 connections, smallest first. Each step starts with 146 posts of its size sent by this
script and not measured (the sense ring's 30 + the 100 rows the sense buffer lets pile up
before it prunes + 16): the ring, the table and the files have then seen a whole prune cycle
at that size, so the step measures the steady state rather than the switch from the smaller
size (without it, a 1 s step at 1 MiB is mostly the file growing and the first prune).
Columns:

    ``ocr KiB``      the OCR string's size; ``body KiB`` the whole JSON body
    ``req/s``        answered requests per second (wrk's count over wrk's duration)
    ``MiB/s``        req/s x body size: request bytes the relay took in
    ``p50``/``p99``  latency in ms (wrk's percentiles)
    ``cpu us/req``   relay CPU seconds over the run / wrk's requests, in microseconds
    ``us/KiB``       the same per KiB of body
    ``cores``        relay / wrk / other CPU as a share of one core over the run
    ``RSS``          the relay's RSS after the step's rounds
    ``ring MiB``     what the sense ring holds at this size: 30 events x body size
    ``RSS/ring``     (RSS after the step - RSS after start) / ring MiB: about how many copies
                     of each ring event the relay keeps (``-`` while the ring is under 1 MiB,
                     when allocator noise is larger than it)
    ``disk MiB``     the data directory's database files after the step (``.db`` + ``-wal`` +
                     ``-shm`` of all three); ``wal MiB`` the three ``-wal`` files alone

then a growth table, each step against the 1 KiB step: ``size x`` (body size ratio), ``cpu
x`` (cpu us/req ratio), ``cpu x/size x`` (<= 1: CPU per request grows at most linearly with
the size), ``p99 x/size x`` (the same for p99) and ``step exp``: the local exponent
log(cpu ratio) / log(size ratio) against the previous step (1: linear over that step; above 1:
faster than linear there). Verdict: super-linear when a step's ``cpu x/size x`` or ``p99
x/size x`` is above 1.2, or a step at 64 KiB or more has a ``step exp`` above 1.2 (the 20 %
is noise margin).

Sweep ``conns``: ``POST /feed`` (the ``bench_ingest`` body) at 1, 4, 16, 64, 128 and 256
connections (``--quick``: 1, 16, 256). Columns: ``req/s``, ``p50``, ``p99``, ``little ms``
(Little's law: the mean time a request spends in the system when ``conns`` requests are
always outstanding, conns / req/s), ``p50/L`` and ``p99/L`` (the latencies over that: when
these stay about constant, latency grows only because requests queue), ``cpu us/req``,
``cpu x`` (against the 1-connection step), ``cores`` and ``RSS``. Verdicts: latency grows
only by queueing when ``p99/L`` at every step from 16 connections on stays within 2 x its
value at 16 connections (or the first measured step at or above 16); CPU per request does not
grow with connections when no step's ``cpu us/req`` is above 1.3 x the lowest at the same or
fewer connections (it falls from 1 connection on, as group commits amortise the fsync).

Sweep ``hour``: a realistic hour of events posted as fast as the relay takes them: a
transcript (``POST /feed``, the ``bench_ingest`` text with its own prefix) every
``--feed-every`` s (2) and a screen event (``POST /sense``, ``--sense-kib`` (4) KiB of OCR,
the text and app changing per event) every ``--sense-every`` s (1) over ``--hour-seconds``
(3600) simulated seconds: 1800 + 3600 posts by default. They are sent in ``--chunks`` (12;
``--quick``: 4) chunks of simulated time, in timeline order, by this script (an aiohttp client
with 16 connections; every request has a 10 s timeout and each chunk a 600 s bound). Row
``start`` is read before the first chunk; after each chunk:

    ``sim min``        the simulated minutes posted so far
    ``posts``/``err``  posts answered 200 in the chunk / any other outcome
    ``post/s``         the chunk's posting rate; ``post p99`` its p99 in ms (this script's
                       client, so it includes the client's own time)
    ``cpu us/post``    relay CPU over the chunk / posts; ``other`` the rest of the machine's
                       CPU meanwhile (this script, which posts, left out), share of one core
    ``RSS``            the relay's RSS after the chunk
    ``feed``/``sense``/``agent``  the size of ``feed.db``, ``sense.db``, ``agent.db`` in MiB
    ``wal``            the three ``-wal`` files together, MiB (SQLite does not shrink a WAL
                       at a checkpoint; it is reused, so it stays at its high-water mark)
    ``GET /feed``/``GET /sense``  p50/p99 in ms of ``GET /feed?after=0`` and ``GET
                       /sense?after=0`` (a 1 s wrk run each, 16 connections): the full rings;
                       ``~`` after a figure: other CPU above 0.25 core during that run, ``!``:
                       errors
    ``rings``          ``/health``'s ``messages`` / ``senseEvents``

Verdict: for RSS, the database files, each ``-wal`` and the two GETs' p99, the change over
the second half of the chunks (from the middle chunk to the last); bounded when RSS grew less
than max(2 MB, 3 %), each file less than max(0.25 MiB, 5 %), and the p99s less than 1.5 x. A
``-wal`` that grew more but is still under SQLite's autocheckpoint mark (1000 frames of 4 KiB
+ 24 bytes, plus 25 % for the commit that crosses it: 4.9 MiB; the relay sets neither
``wal_autocheckpoint`` nor ``page_size``) is "still filling" and bounded by it. The
agent's history (``agent.db``) grows by one entry per tick, by wall time and not by events,
and is pruned after ``RELAY_RETENTION_DAYS``: its growth is printed, never called unbounded
from this run.

Everything is bounded: every wrk run (its duration + 60 s), every request (10 s), every
chunk, and each relay is stopped (SIGTERM, then SIGKILL after 15 s) in a ``finally``, which
SIGTERM of this script runs too. Only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import signal
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import aiohttp
import orjson

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/bench_growth.py``: make packages importable
    sys.path.insert(0, str(ROOT))

from actors.core.validation import SENSE_BODY_LIMIT  # noqa: E402
from actors.feed_buffer import FEED_RING  # noqa: E402
from actors.kernel.storage import MIGRATIONS  # noqa: E402
from actors.sense_buffer import PRUNE_SLACK, SENSE_RING  # noqa: E402
from bench import wrk  # noqa: E402
from bench.bare_app import FEED_TEXT  # noqa: E402
from bench.bench_ingest import (  # noqa: E402
    JSON_HEADERS,
    REQUEST_TIMEOUT_S,
    Relay,
    children_cpu_s,
    cpu_s,
    data_directory,
    feed_body,
    filesystem,
    health,
    machine_busy_s,
    percentile,
    print_log_summary,
    relay_process,
    rss_mb,
)
from transport.demo.fake_llm import FakeLLM  # noqa: E402

SWEEPS = ("ocr", "conns", "hour")
OCR_KIB = (1, 4, 16, 64, 256, 1024)
OCR_KIB_QUICK = (1, 16, 256, 1024)
OCR_CONNS = 16
CONNS = (1, 4, 16, 64, 128, 256)
CONNS_QUICK = (1, 16, 256)
WARMUP_S = 1.0
STEP_WARMUP = SENSE_RING + PRUNE_SLACK + OCR_CONNS
"""Posts before each OCR step: the ring and the table full of that size, one prune done."""
GET_SECONDS = 1.0
GET_CONNS = 16
HOUR_CONNS = 16
BUSY_OTHER = 0.25
"""Other CPU (a share of one core) above which a GET's figures are marked ``~``."""
CHUNK_MAX_S = 600.0
DB_PARTS = tuple(MIGRATIONS)
"""``feed``, ``sense``, ``agent``: the data directory holds ``<part>.db`` and its -wal, -shm."""
MIB = 1024 * 1024
APPS = ("code", "idea", "chrome", "slack", "terminal")
OCR_LINE = "def handle(request): return json_response({'ok': True})  # editor text\n"

# verdict margins (see the docstring)
GROWTH_LIMIT = 1.2
QUEUE_LIMIT = 2.0
CPU_FLAT_LIMIT = 1.3
RSS_SLACK_MB, RSS_SLACK_SHARE = 2.0, 0.03
DISK_SLACK_MIB, DISK_SLACK_SHARE = 0.25, 0.05
P99_SLACK = 1.5
WAL_CHECKPOINT_PAGES, PAGE_SIZE, FRAME_HEADER = 1000, 4096, 24
"""SQLite's defaults (``wal_autocheckpoint``, ``page_size``); the relay sets neither."""
WAL_COMMIT_SHARE = 0.25
"""Room for the commit that crosses the checkpoint mark (a group of posts, or a prune)."""


# -- bodies ------------------------------------------------------------------------------------


def ocr_text(size: int, prefix: str = "") -> str:
    """``size`` bytes of code-like ASCII, starting with ``prefix``."""
    text = prefix + OCR_LINE * (size // len(OCR_LINE) + 1)
    return text[:size]


def sense_body(ocr_bytes: int, n: int = 0, ts: int | None = None) -> bytes:
    """A ``POST /sense`` text event with ``ocr_bytes`` of OCR; ``n`` varies the text and app."""
    body = {
        "type": "text",
        "ts": ts if ts is not None else int(time.time() * 1000),
        "ocr": ocr_text(ocr_bytes, f"# screen {n}\n" if n else ""),
        "meta": {"app": APPS[n % len(APPS)], "ssim": 0.9},
    }
    return orjson.dumps(body)


def transcript_body(n: int) -> bytes:
    """A ``POST /feed`` body: the bench's transcript, numbered."""
    return orjson.dumps({"text": f"[{n}] {FEED_TEXT}", "priority": "normal"})


# -- one wrk run, with the CPU around it -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    """One wrk run against the relay."""

    rps: float
    p50: float
    p99: float
    requests: int
    errors: dict[str, int]
    relay_cpu_s: float
    relay_cores: float
    gen_cores: float
    other_cores: float

    @property
    def cpu_us(self) -> float:
        """Relay CPU per request, in microseconds."""
        return 1e6 * self.relay_cpu_s / self.requests if self.requests else float("nan")


def run_sample(
    relay: Relay, path: str, conns: int, seconds: float, body: bytes | None = None
) -> Sample:
    """One wrk run (``POST`` with ``body``, else ``GET``) and the CPU everyone used meanwhile."""
    pid = relay.proc.pid
    relay0, gen0, me0, busy0, t0 = (
        cpu_s(pid),
        children_cpu_s(),
        time.process_time(),
        machine_busy_s(),
        time.monotonic(),
    )
    result = wrk.run_wrk(
        relay.base_url + path,
        conns=conns,
        seconds=seconds,
        method="POST" if body is not None else "GET",
        body=body,
    )
    relay1, gen1, me1, busy1, t1 = (
        cpu_s(pid),
        children_cpu_s(),
        time.process_time(),
        machine_busy_s(),
        time.monotonic(),
    )
    wall = t1 - t0
    relay_cpu, gen = relay1 - relay0, gen1 - gen0
    other = (busy1 - busy0) - relay_cpu - gen - (me1 - me0)
    return Sample(
        rps=result.rps,
        p50=result.p50_ms,
        p99=result.p99_ms,
        requests=result.requests,
        errors=result.errors,
        relay_cpu_s=relay_cpu,
        relay_cores=relay_cpu / wall,
        gen_cores=gen / wall,
        other_cores=other / wall,
    )


@dataclass(slots=True)
class Step:
    """All rounds of one step of a sweep, and what was read after them."""

    label: int
    samples: list[Sample] = field(default_factory=list)
    rss: float = float("nan")
    disk: dict[str, int] = field(default_factory=dict)

    def median(self, attr: str) -> float:
        return statistics.median(float(getattr(s, attr)) for s in self.samples)

    def errors(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for s in self.samples:
            total.update(s.errors)
        return total

    def cores(self) -> str:
        return (
            f"{self.median('relay_cores'):.2f}/{self.median('gen_cores'):.2f}/"
            f"{self.median('other_cores'):+.2f}"
        )


def measure_step(
    relay: Relay,
    label: int,
    path: str,
    conns: int,
    args: argparse.Namespace,
    body: bytes | None,
    data_dir: str,
) -> Step:
    step = Step(label)
    for _ in range(args.rounds):
        step.samples.append(run_sample(relay, path, conns, args.seconds, body))
    step.rss = rss_mb(relay.proc.pid)
    step.disk = disk_usage(data_dir)
    return step


# -- the data directory ------------------------------------------------------------------------


def disk_usage(data_dir: str) -> dict[str, int]:
    """Bytes of each database file (``feed.db``, ``feed.db-wal``, ...; absent files are 0)."""
    sizes: dict[str, int] = {}
    for part in DB_PARTS:
        for suffix in ("", "-wal", "-shm"):
            name = f"{part}.db{suffix}"
            try:
                sizes[name] = (Path(data_dir) / name).stat().st_size
            except OSError:
                sizes[name] = 0
    return sizes


def total_mib(sizes: dict[str, int], suffix: str | None = None) -> float:
    """All files (``suffix`` None), or those ending with ``suffix`` (e.g. ``-wal``), in MiB."""
    return sum(v for k, v in sizes.items() if suffix is None or k.endswith(suffix)) / MIB


# -- relays --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Running:
    """A relay started for one sweep, with its data directory."""

    relay: Relay
    data_dir: str
    start_rss: float


@contextlib.contextmanager
def sweep_relay(name: str) -> Iterator[Running]:
    """A fake LLM (``ok``) and a relay on a fresh data directory; the log summary at the end."""
    with (
        data_directory(None, f"relay-growth-{name}-") as data_dir,
        tempfile.NamedTemporaryFile(prefix=f"relay-growth-{name}-", suffix=".log") as log_file,
        FakeLLM(mode="ok") as llm,
    ):
        log_path = Path(log_file.name)
        try:
            with relay_process(llm.base_url, log_file, log_path, data_dir=data_dir) as relay:
                start = rss_mb(relay.proc.pid)
                print(
                    f"  relay pid {relay.proc.pid} at {relay.base_url}; data dir {data_dir} "
                    f"({filesystem(data_dir)}), RELAY_SYNC=full; RSS after start {start:.1f} MB; "
                    f"1-min load {load_1min():.2f}"
                )
                yield Running(relay, data_dir, start)
                print(f"  fake LLM got {llm.calls} calls")
        finally:
            print_log_summary(log_file, log_path)


def sqlite_info() -> str:
    """The SQLite library the relay links (the same ``sqlite3`` module) and its delete mode."""
    db = sqlite3.connect(":memory:")
    try:
        secure = db.execute("PRAGMA secure_delete").fetchone()[0]
    finally:
        db.close()
    return (
        f"SQLite {sqlite3.sqlite_version}, secure_delete {'on' if secure else 'off'} by default "
        "in this build (the relay sets FAST)"
    )


def load_1min() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def fmt(value: float, spec: str, width: int) -> str:
    """``value`` formatted, or ``-`` (right-aligned) when it is NaN."""
    return f"{'-' if math.isnan(value) else format(value, spec):>{width}}"


def print_errors(steps: Sequence[Step], unit: str) -> None:
    for step in steps:
        errors = step.errors()
        if errors:
            print(f"  errors at {step.label} {unit}: {dict(errors)}")


# -- sweep 1: OCR size -------------------------------------------------------------------------


def run_ocr(args: argparse.Namespace) -> None:
    sizes: tuple[int, ...] = args.ocr_kib
    print(
        f"\n== sweep ocr: POST /sense, OCR {', '.join(map(str, sizes))} KiB at {OCR_CONNS} "
        f"connections, {args.seconds:g} s x {args.rounds} rounds per step"
    )
    steps: list[Step] = []
    bodies = {kib: sense_body(kib * 1024) for kib in sizes}
    too_big = [kib for kib, body in bodies.items() if len(body) > SENSE_BODY_LIMIT]
    if too_big:
        print(f"  skipped (body above the /sense limit of {SENSE_BODY_LIMIT} bytes): {too_big}")
    with sweep_relay("ocr") as run:
        run_sample(run.relay, "/sense", OCR_CONNS, WARMUP_S, bodies[sizes[0]])
        for kib in sizes:
            if kib in too_big:
                continue
            warm = asyncio.run(
                post_all(run.relay.base_url, [Post("/sense", bodies[kib])] * STEP_WARMUP, OCR_CONNS)
            )
            if warm.errors:
                print(f"  warm-up errors at {kib} KiB: {dict(warm.errors)}")
            step = measure_step(
                run.relay, kib, "/sense", OCR_CONNS, args, bodies[kib], run.data_dir
            )
            steps.append(step)
            print(
                f"  {kib:>5} KiB: {step.median('rps'):8.0f} req/s p99 {step.median('p99'):8.2f} ms "
                f"cpu {step.median('cpu_us'):8.0f} us/req RSS {step.rss:6.1f} MB "
                f"per round req/s {[round(s.rps) for s in step.samples]}; "
                f"warm-up {STEP_WARMUP} posts in {warm.wall_s:.1f} s"
            )
        print_ocr(steps, bodies, run.start_rss)


def print_ocr(steps: Sequence[Step], bodies: dict[int, bytes], start_rss: float) -> None:
    if not steps:
        return
    header = (
        f"{'ocr KiB':>7} {'body KiB':>8} {'req/s':>7} {'MiB/s':>7} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'cpu us/req':>10} {'us/KiB':>7} {'cores rel/wrk/oth':>17} {'RSS MB':>7} "
        f"{'ring MiB':>8} {'RSS/ring':>8} {'disk MiB':>8} {'wal MiB':>7}"
    )
    print("\n" + header)
    print("-" * len(header))
    for step in steps:
        size = len(bodies[step.label])
        ring = SENSE_RING * size / MIB
        copies = (step.rss - start_rss) / ring if ring >= 1 else float("nan")
        print(
            f"{step.label:>7} {size / 1024:>8.1f} {step.median('rps'):>7.0f} "
            f"{step.median('rps') * size / MIB:>7.1f} {step.median('p50'):>8.2f} "
            f"{step.median('p99'):>8.2f} {step.median('cpu_us'):>10.0f} "
            f"{step.median('cpu_us') / (size / 1024):>7.1f} {step.cores():>17} "
            f"{step.rss:>7.1f} {ring:>8.2f} {fmt(copies, '.2f', 8)} {total_mib(step.disk):>8.1f} "
            f"{total_mib(step.disk, '-wal'):>7.1f}"
        )
    print_errors(steps, "KiB")
    base = steps[0]
    base_size = len(bodies[base.label])
    header = (
        f"{'ocr KiB':>7} {'size x':>7} {'cpu x':>7} {'cpu x/size x':>12} {'p99 x/size x':>12} "
        f"{'step exp':>8}"
    )
    print(f"\nGrowth against the {base.label} KiB step (<= 1: at most linear):")
    print(header)
    print("-" * len(header))
    worst: list[str] = []
    previous: tuple[int, float] | None = None
    for step in steps:
        size = len(bodies[step.label])
        size_x = size / base_size
        cpu_x = step.median("cpu_us") / base.median("cpu_us")
        p99_x = step.median("p99") / base.median("p99")
        exponent = float("nan")
        if previous is not None:
            exponent = math.log(step.median("cpu_us") / previous[1]) / math.log(size / previous[0])
        previous = (size, step.median("cpu_us"))
        print(
            f"{step.label:>7} {size_x:>7.1f} {cpu_x:>7.2f} {cpu_x / size_x:>12.3f} "
            f"{p99_x / size_x:>12.3f} {fmt(exponent, '.2f', 8)}"
        )
        if cpu_x / size_x > GROWTH_LIMIT:
            worst.append(f"cpu/request at {step.label} KiB is {cpu_x / size_x:.2f} x linear")
        if p99_x / size_x > GROWTH_LIMIT:
            worst.append(f"p99 at {step.label} KiB is {p99_x / size_x:.2f} x linear")
        if step.label >= 64 and exponent > GROWTH_LIMIT:
            worst.append(f"cpu/request grows as size^{exponent:.2f} into {step.label} KiB")
    largest = steps[-1]
    per_kib = [s.median("cpu_us") / (len(bodies[s.label]) / 1024) for s in steps]
    print(
        f"verdict ocr: {'SUPER-LINEAR: ' + '; '.join(worst) if worst else 'at most linear'} "
        f"(cpu per KiB {per_kib[0]:.1f} us at {steps[0].label} KiB, {per_kib[-1]:.1f} us at "
        f"{largest.label} KiB; RSS {largest.rss:.1f} MB with a "
        f"{SENSE_RING * len(bodies[largest.label]) / MIB:.0f} MiB sense ring; "
        f"disk {total_mib(largest.disk):.1f} MiB of which -wal "
        f"{total_mib(largest.disk, '-wal'):.1f})"
    )


# -- sweep 2: connections ------------------------------------------------------------------------


def run_conns(args: argparse.Namespace) -> None:
    conns_list: tuple[int, ...] = args.conns
    print(
        f"\n== sweep conns: POST /feed at {', '.join(map(str, conns_list))} connections, "
        f"{args.seconds:g} s x {args.rounds} rounds per step"
    )
    body = feed_body()
    steps: list[Step] = []
    with sweep_relay("conns") as run:
        run_sample(run.relay, "/feed", OCR_CONNS, WARMUP_S, body)
        for conns in conns_list:
            step = measure_step(run.relay, conns, "/feed", conns, args, body, run.data_dir)
            steps.append(step)
            print(
                f"  {conns:>4} conns: {step.median('rps'):8.0f} req/s p99 "
                f"{step.median('p99'):7.2f} ms cpu {step.median('cpu_us'):5.0f} us/req "
                f"RSS {step.rss:6.1f} MB per round req/s {[round(s.rps) for s in step.samples]}"
            )
    print_conns(steps)


def print_conns(steps: Sequence[Step]) -> None:
    if not steps:
        return
    header = (
        f"{'conns':>5} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'little ms':>9} {'p50/L':>6} "
        f"{'p99/L':>6} {'cpu us/req':>10} {'cpu x':>6} {'cores rel/wrk/oth':>17} {'RSS MB':>7}"
    )
    print("\n" + header)
    print("-" * len(header))
    base_cpu = steps[0].median("cpu_us")
    ratios: dict[int, float] = {}
    for step in steps:
        little = 1000 * step.label / step.median("rps")
        ratios[step.label] = step.median("p99") / little
        print(
            f"{step.label:>5} {step.median('rps'):>7.0f} {step.median('p50'):>8.2f} "
            f"{step.median('p99'):>8.2f} {little:>9.2f} {step.median('p50') / little:>6.2f} "
            f"{ratios[step.label]:>6.2f} {step.median('cpu_us'):>10.0f} "
            f"{step.median('cpu_us') / base_cpu:>6.2f} {step.cores():>17} {step.rss:>7.1f}"
        )
    print_errors(steps, "connections")
    loaded = [s for s in steps if s.label >= 16]
    if loaded:
        ref = ratios[loaded[0].label]
        worst = max(loaded, key=lambda s: ratios[s.label])
        grows = ratios[worst.label] > QUEUE_LIMIT * ref
        print(
            "verdict conns latency: "
            + (
                f"GROWS BEYOND QUEUEING: p99/L {ratios[worst.label]:.2f} at {worst.label} "
                f"connections against {ref:.2f} at {loaded[0].label}"
                if grows
                else f"grows only by queueing (p99/L {ref:.2f} at {loaded[0].label} connections, "
                f"at most {ratios[worst.label]:.2f} at {worst.label})"
            )
        )
    cpus = [(s.label, s.median("cpu_us")) for s in steps]
    growth = [
        (cpu / min(c for _, c in cpus[: n + 1]), label) for n, (label, cpu) in enumerate(cpus)
    ]
    worst_x, worst_at = max(growth)
    flat = worst_x <= CPU_FLAT_LIMIT
    first, last = cpus[0], cpus[-1]
    print(
        f"verdict conns cpu: {'does not grow' if flat else 'GROWS'} with connections (cpu us/req "
        f"{first[1]:.0f} at {first[0]}, {last[1]:.0f} at {last[0]}; the most above the lowest at "
        f"fewer connections: {worst_x:.2f} x at {worst_at})"
    )


# -- sweep 3: an hour-equivalent -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Post:
    path: str
    body: bytes


def hour_events(args: argparse.Namespace) -> list[tuple[float, Post]]:
    """Every post of the simulated hour, with its simulated time, in timeline order."""
    base_ts = int(time.time() * 1000) - int(args.hour_seconds * 1000)
    feeds = int(args.hour_seconds / args.feed_every)
    senses = int(args.hour_seconds / args.sense_every)
    events = [(n * args.feed_every, Post("/feed", transcript_body(n + 1))) for n in range(feeds)]
    for n in range(senses):
        t = n * args.sense_every
        body = sense_body(args.sense_kib * 1024, n + 1, base_ts + int(t * 1000))
        events.append((t, Post("/sense", body)))
    events.sort(key=lambda e: e[0])
    return events


@dataclass(slots=True)
class PostResult:
    latencies_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    wall_s: float = 0.0


async def post_all(base_url: str, posts: Sequence[Post], conns: int) -> PostResult:
    """Send ``posts`` in order over ``conns`` keep-alive connections, as fast as answered."""
    result = PostResult()
    queue: asyncio.Queue[Post] = asyncio.Queue()
    for post in posts:
        queue.put_nowait(post)
    connector = aiohttp.TCPConnector(limit=conns)
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)

    async def sender(session: aiohttp.ClientSession) -> None:
        while not queue.empty():
            post = queue.get_nowait()
            started = time.monotonic()
            status: int | str
            try:
                async with session.post(
                    base_url + post.path, data=post.body, headers=JSON_HEADERS
                ) as resp:
                    await resp.read()
                    status = resp.status
            except (aiohttp.ClientError, TimeoutError) as exc:
                status = type(exc).__name__
            if status == 200:
                result.latencies_ms.append((time.monotonic() - started) * 1000)
            else:
                result.errors[f"{post.path}:{status}"] += 1

    started = time.monotonic()
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        await asyncio.wait_for(
            asyncio.gather(*(sender(session) for _ in range(conns))), CHUNK_MAX_S
        )
    result.wall_s = time.monotonic() - started
    return result


@dataclass(slots=True)
class HourRow:
    label: str
    posts: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    post_rate: float = float("nan")
    post_p99: float = float("nan")
    cpu_us: float = float("nan")
    other: float = float("nan")
    """Other CPU on the machine while posting, as a share of one core."""
    rss: float = float("nan")
    disk: dict[str, int] = field(default_factory=dict)
    get_feed: Sample | None = None
    get_sense: Sample | None = None
    rings: tuple[object, object] = (None, None)


def read_state(run: Running, row: HourRow) -> None:
    """RSS, file sizes, the two GETs' latency and the ring sizes, into ``row``."""
    row.rss = rss_mb(run.relay.proc.pid)
    row.disk = disk_usage(run.data_dir)
    row.get_feed = run_sample(run.relay, "/feed?after=0", GET_CONNS, GET_SECONDS)
    row.get_sense = run_sample(run.relay, "/sense?after=0", GET_CONNS, GET_SECONDS)
    status, body = health(run.relay)
    row.rings = (body.get("messages"), body.get("senseEvents")) if status == 200 else (None, None)


def run_hour(args: argparse.Namespace) -> None:
    events = hour_events(args)
    feeds = sum(1 for _, p in events if p.path == "/feed")
    print(
        f"\n== sweep hour: {args.hour_seconds:g} simulated s, a transcript every "
        f"{args.feed_every:g} s and a {args.sense_kib} KiB screen event every "
        f"{args.sense_every:g} s: {feeds} /feed + {len(events) - feeds} /sense posts in "
        f"{args.chunks} chunks at {HOUR_CONNS} connections (rings: feed {FEED_RING}, sense "
        f"{SENSE_RING})"
    )
    chunk_s = args.hour_seconds / args.chunks
    rows: list[HourRow] = []
    with sweep_relay("hour") as run:
        run_sample(run.relay, "/feed?after=0", GET_CONNS, WARMUP_S)
        row = HourRow("start")
        read_state(run, row)
        rows.append(row)
        print_hour_row(row, header=True)
        for k in range(args.chunks):
            lo, hi = k * chunk_s, (k + 1) * chunk_s
            last = k == args.chunks - 1
            posts = [p for t, p in events if lo <= t < hi or (last and t >= hi)]
            row = HourRow(f"{hi / 60:.0f}")
            cpu0, busy0, me0, t0 = (
                cpu_s(run.relay.proc.pid),
                machine_busy_s(),
                time.process_time(),
                time.monotonic(),
            )
            result = asyncio.run(post_all(run.relay.base_url, posts, HOUR_CONNS))
            cpu = cpu_s(run.relay.proc.pid) - cpu0
            busy, me = machine_busy_s() - busy0, time.process_time() - me0
            row.other = (busy - cpu - me) / (time.monotonic() - t0)
            row.posts, row.errors = len(result.latencies_ms), result.errors
            row.post_rate = len(posts) / result.wall_s if result.wall_s else float("nan")
            row.post_p99 = percentile(sorted(result.latencies_ms), 99)
            row.cpu_us = 1e6 * cpu / len(posts) if posts else float("nan")
            read_state(run, row)
            rows.append(row)
            print_hour_row(row)
        final = disk_usage(run.data_dir)
        print(
            "  files at the end: " + ", ".join(f"{k} {v / 1024:.0f} KiB" for k, v in final.items())
        )
    for row in rows:
        if row.errors:
            print(f"  errors in chunk {row.label}: {dict(row.errors)}")
    hour_verdict(rows)


def print_hour_row(row: HourRow, *, header: bool = False) -> None:
    if header:
        head = (
            f"  {'sim min':>7} {'posts':>5} {'err':>4} {'post/s':>6} {'post p99':>8} "
            f"{'cpu us/post':>11} {'other':>5} {'RSS MB':>7} {'feed':>6} {'sense':>6} {'agent':>6} "
            f"{'wal':>6} {'GET /feed ms':>13} {'GET /sense ms':>13} {'rings':>7}"
        )
        print(head)
        print("  " + "-" * (len(head) - 2))

    def get(sample: Sample | None) -> str:
        if sample is None:
            return f"{'-':>13}"
        text = f"{sample.p50:.2f}/{sample.p99:.2f}"
        if sample.other_cores > BUSY_OTHER:
            text += "~"
        if sample.errors:
            text += "!"
        return f"{text:>13}"

    disk = row.disk
    rings = f"{row.rings[0]}/{row.rings[1]}"
    print(
        f"  {row.label:>7} {row.posts:>5} {sum(row.errors.values()):>4} "
        f"{fmt(row.post_rate, '.0f', 6)} {fmt(row.post_p99, '.2f', 8)} "
        f"{fmt(row.cpu_us, '.0f', 11)} {fmt(row.other, '+.2f', 5)} {row.rss:>7.1f} "
        + " ".join(f"{disk.get(f'{p}.db', 0) / MIB:>6.2f}" for p in DB_PARTS)
        + f" {total_mib(disk, '-wal'):>6.2f} {get(row.get_feed)} {get(row.get_sense)} {rings:>7}"
    )


def hour_verdict(rows: Sequence[HourRow]) -> None:
    chunks = rows[1:]
    if len(chunks) < 2:
        print("verdict hour: needs at least 2 chunks")
        return
    mid, end = chunks[(len(chunks) - 1) // 2], chunks[-1]
    print(
        f"\nSecond half of the hour (from {mid.label} to {end.label} simulated minutes; "
        "bounded = RSS under max(2 MB, 3 %), files under max(0.25 MiB, 5 %), GET p99 under 1.5 x):"
    )
    unbounded: list[str] = []
    wal_mark = WAL_CHECKPOINT_PAGES * (PAGE_SIZE + FRAME_HEADER) * (1 + WAL_COMMIT_SHARE)
    print(
        f"  (a -wal file is bounded by SQLite's autocheckpoint: {WAL_CHECKPOINT_PAGES} frames of "
        f"{PAGE_SIZE} + {FRAME_HEADER} bytes plus the commit that crosses it, counted as "
        f"{WAL_COMMIT_SHARE:.0%} more: {wal_mark / MIB:.2f} MiB per file)"
    )

    def check(name: str, a: float, b: float, slack: float, share: float, unit: str) -> None:
        grew = b - a
        limit = max(slack, share * a)
        ok = grew < limit
        print(f"  {name:<12} {a:8.2f} -> {b:8.2f} {unit} ({grew:+.2f}){'' if ok else '  GROWS'}")
        if not ok:
            unbounded.append(f"{name} {a:.2f} -> {b:.2f} {unit}")

    check("RSS", mid.rss, end.rss, RSS_SLACK_MB, RSS_SLACK_SHARE, "MB")
    for part in ("feed", "sense"):
        name = f"{part}.db"
        check(
            name,
            mid.disk.get(name, 0) / MIB,
            end.disk.get(name, 0) / MIB,
            DISK_SLACK_MIB,
            DISK_SLACK_SHARE,
            "MiB",
        )
    for part in DB_PARTS:
        name = f"{part}.db-wal"
        a, b = mid.disk.get(name, 0), end.disk.get(name, 0)
        grew = (b - a) / MIB
        if grew < max(DISK_SLACK_MIB, DISK_SLACK_SHARE * a / MIB):
            note = ""
        elif b <= wal_mark:
            note = "  still filling up to the checkpoint mark"
        else:
            note = "  GROWS beyond the checkpoint mark"
            unbounded.append(f"{name} {a / MIB:.2f} -> {b / MIB:.2f} MiB")
        print(f"  {name:<12} {a / MIB:8.2f} -> {b / MIB:8.2f} MiB ({grew:+.2f}){note}")
    for name, a_s, b_s in (
        ("GET /feed", mid.get_feed, end.get_feed),
        ("GET /sense", mid.get_sense, end.get_sense),
    ):
        if a_s is None or b_s is None:
            continue
        ok = b_s.p99 < P99_SLACK * a_s.p99
        print(
            f"  {name + ' p99':<12} {a_s.p99:8.2f} -> {b_s.p99:8.2f} ms "
            f"({b_s.p99 / a_s.p99:.2f} x){'' if ok else '  GROWS'}"
        )
        if not ok:
            unbounded.append(f"{name} p99 {a_s.p99:.2f} -> {b_s.p99:.2f} ms")
    agent_a = mid.disk.get("agent.db", 0) / MIB
    agent_b = end.disk.get("agent.db", 0) / MIB
    print(
        f"  {'agent.db':<12} {agent_a:8.2f} -> {agent_b:8.2f} MiB ({agent_b - agent_a:+.2f}; "
        "one history entry per tick, by wall time, pruned after the retention)"
    )
    print(
        "verdict hour: "
        + ("GROWS over the second half: " + "; ".join(unbounded) if unbounded else "bounded")
    )


# -- main ------------------------------------------------------------------------------------------


def parse_sweeps(parser: argparse.ArgumentParser, text: str | None) -> list[str]:
    if text is None:
        return list(SWEEPS)
    wanted = {name.strip() for name in text.split(",") if name.strip()}
    unknown = sorted(wanted - set(SWEEPS))
    if unknown or not wanted:
        parser.error(f"--sweeps takes a comma-separated list of {', '.join(SWEEPS)}")
    return [name for name in SWEEPS if name in wanted]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="How throughput, p99 and memory of sinain-relay change as the work grows "
        "(prints figures)."
    )
    parser.add_argument("--seconds", type=float, help="wrk run per round (default 3; whole s)")
    parser.add_argument("--rounds", type=int, help="rounds per step; medians shown (default 3)")
    parser.add_argument("--sweeps", help=f"comma-separated, from {','.join(SWEEPS)} (default all)")
    parser.add_argument("--chunks", type=int, help="chunks of the hour sweep (default 12)")
    parser.add_argument(
        "--hour-seconds", type=float, default=3600.0, help="simulated seconds (default 3600)"
    )
    parser.add_argument(
        "--feed-every", type=float, default=2.0, help="s between transcripts (default 2)"
    )
    parser.add_argument(
        "--sense-every", type=float, default=1.0, help="s between screen events (default 1)"
    )
    parser.add_argument(
        "--sense-kib", type=int, default=4, help="OCR KiB per screen event (default 4)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 1 s, 1 round, OCR 1/16/256/1024 KiB, 1/16/256 connections, 4 chunks",
    )
    args = parser.parse_args(argv)
    defaults = (1.0, 1, 4) if args.quick else (3.0, 3, 12)
    for name, default in zip(("seconds", "rounds", "chunks"), defaults, strict=True):
        if getattr(args, name) is None:
            setattr(args, name, default)
    if args.seconds <= 0 or args.rounds < 1 or args.chunks < 1:
        parser.error("--seconds must be above 0, --rounds and --chunks at least 1")
    if min(args.hour_seconds, args.feed_every, args.sense_every) <= 0 or args.sense_kib < 0:
        parser.error("--hour-seconds, --feed-every, --sense-every above 0; --sense-kib >= 0")
    args.ocr_kib = OCR_KIB_QUICK if args.quick else OCR_KIB
    args.conns = CONNS_QUICK if args.quick else CONNS
    args.sweep_list = parse_sweeps(parser, args.sweeps)
    return args


def _terminate(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM: unwind through the ``finally`` blocks, which stop the relays."""
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not wrk.available():
        print(wrk.INSTALL_HINT, file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _terminate)
    print(
        f"sinain-relay growth bench: {args.seconds:g} s x {args.rounds} rounds per step, sweeps "
        f"{','.join(args.sweep_list)}, {os.cpu_count()} CPUs, 1-min load {load_1min():.2f}; "
        f"{sqlite_info()}"
    )
    started = time.monotonic()
    runners: dict[str, Callable[[argparse.Namespace], None]] = {
        "ocr": run_ocr,
        "conns": run_conns,
        "hour": run_hour,
    }
    for name in args.sweep_list:
        runners[name](args)
    print(f"\ndone in {time.monotonic() - started:.0f} s; 1-min load {load_1min():.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
