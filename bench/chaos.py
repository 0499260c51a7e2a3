"""Chaos soak of sinain-relay: steady ingestion while every actor crashes or hangs at random.

Run from the repository root::

    python bench/chaos.py               # 10 minutes
    python bench/chaos.py --quick       # 1 minute: a smoke run
    python bench/chaos.py --minutes 3 --seed 7

It prints figures and asserts nothing about speed.

Set-up. The fake LLM runs as ``python -m transport.demo.fake_llm --port <free port>`` and the
relay as ``python run.py --port <free port>`` with ``RELAY_FAULTS=1``, its own temporary
data directory, ``OPENROUTER_API_KEY=unused``, ``AGENT_BASE_URL`` pointing at the fake,
``AGENT_INTERVAL_MS=1000`` and ``AGENT_TIMEOUT_MS=5000`` (both subprocesses log to files
in that directory; ``--keep`` keeps it). Only 127.0.0.1 is used.

Load. A spawned process (asyncio, one ``aiohttp.ClientSession``) posts to ``/feed`` and
``/sense`` at a fixed rate each (``--rate``, 200/s by default), from ``WORKERS`` coroutines
per endpoint on a shared schedule; a coroutine that was held up resumes at once and then
keeps its spacing, so an outage is never followed by a burst above the rate. Each request
has a 5 s timeout and is never retried; every attempt is recorded with its start time,
latency and outcome (the HTTP status, or the client-side exception's name).

Phases. The first 10 % of the run (``--baseline``) is fault-free. Then, every 5 to 8 s
(uniformly at random), ``POST /debug/fault`` makes a random actor (feed, sense, context,
llm, digest, ticker, http) crash (70 %) or hang for 0.5 to 3 s (30 %): at most 7 faults in
any 30 s, under the restart intensity of 10 per 30 s per supervisor, and hangs stay well
under the 10 s ping deadline, so only crashes should restart anything. Faults stop 8 s
before the end so that the last one has recovered. Meanwhile the fake LLM changes mode
every 20 s (``POST /_mode``), cycling through all of its modes (``slow`` with a 2 s delay).

Checks. For each endpoint, three staggered poller threads (several, because a request
queued at an actor that crashes waits for the actor timeout) poll ``GET /feed?after=<last
id seen>`` and ``GET /sense?after=...`` continuously and keep a fingerprint of every item.
Each answer must hold ids above its ``after``, strictly increasing, with no gap unless a
whole ring went by, and an id seen twice must not change. At the end: acknowledged posts
never seen or seen with other content (must be 0), order violations, the id ranges the
pollers all missed because a whole ring went by (a limit of this script, not of the relay:
"behind"), and the rings re-read after the run compared with what was acknowledged.

Figures. Posts sent and acknowledged, ingestion p50/p99 (ms, successful posts, nearest rank)
during the baseline and during the faults, errors by status per phase, the longest run of
consecutive failures per endpoint, restarts per actor from ``/health`` beside the crashes
injected, faults per actor and kind, the relay's VmRSS at start and end, whether the relay
is still alive, and its exit code after SIGTERM. Every loop and wait is bounded; both
subprocesses are stopped (SIGTERM, then SIGKILL) in a ``finally``.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import hashlib
import itertools
import multiprocessing
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import aiohttp
import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/chaos.py``: make the packages importable
    sys.path.insert(0, str(ROOT))

from actors.feed_buffer import FEED_RING  # noqa: E402
from actors.sense_buffer import SENSE_RING  # noqa: E402
from bench.bench_ingest import free_port, rss_mb  # noqa: E402
from transport.demo.fake_llm import MODES  # noqa: E402

HOST = "127.0.0.1"
ENDPOINTS = ("/feed", "/sense")
RING = {"/feed": FEED_RING, "/sense": SENSE_RING}
ITEMS_KEY = {"/feed": "messages", "/sense": "events"}
FAULT_ACTORS = ("feed", "sense", "context", "llm", "digest", "ticker", "http")
HEALTH_ACTORS = ("feed", "sense", "digest", "context", "llm", "ticker", "agent", "http")
WORKERS = 8
"""Coroutines per endpoint in the load process."""
REQUEST_TIMEOUT_S = 5.0
READER_TIMEOUT_S = 5.0
READER_PAUSE_S = 0.02
POLLERS = 3
"""Concurrent pollers per endpoint."""
START_TIMEOUT_S = 20.0
TERM_TIMEOUT_S = 15.0
LEAD_S = 1.0
"""How far ahead the load process is told to start (it has to spawn and import first)."""
FAULT_GAP_S = (5.0, 8.0)
HANG_S = (0.5, 3.0)
CRASH_SHARE = 0.7
QUIET_END_S = 8.0
"""No fault is injected in the last seconds of the run, so that the last one recovers."""
MODE_EVERY_S = 20.0
SLOW_DELAY_S = 2.0
CATCH_UP_S = 10.0
OCR_CHARS = 256
JSON_HEADERS = {"Content-Type": "application/json"}


# -- payloads (the load process and the checks build the same ones) -------------------------


def payload(endpoint: str, seq: int) -> dict[str, Any]:
    """The body of post number ``seq`` to ``endpoint``: unique and deterministic."""
    if endpoint == "/feed":
        return {"text": f"chaos feed #{seq}", "priority": "high" if seq % 3 == 0 else "normal"}
    ocr = f"chaos sense #{seq} " + "x" * OCR_CHARS
    return {
        "type": "text",
        "ts": 1_769_901_200_000 + seq,
        "ocr": ocr[:OCR_CHARS],
        "meta": {"app": "idea", "ssim": round(0.5 + (seq % 50) / 100, 2)},
        "seq": seq,
    }


def digest_of(body: dict[str, Any]) -> bytes:
    """A short fingerprint of a body, key order aside."""
    return hashlib.blake2b(orjson.dumps(body, option=orjson.OPT_SORT_KEYS), digest_size=8).digest()


def as_posted(endpoint: str, item: dict[str, Any]) -> dict[str, Any]:
    """An item as served, less the server's fields: what the client posted."""
    server_fields = ("id", "ts") if endpoint == "/feed" else ("id", "receivedAt")
    return {k: v for k, v in item.items() if k not in server_fields}


# -- the load process -----------------------------------------------------------------------


class Record(NamedTuple):
    """One POST of the load process."""

    endpoint: str
    seq: int
    started: float
    """``time.monotonic()`` (system-wide on Linux, so comparable across processes)."""
    latency_ms: float
    status: str
    """``"200"``, another status, ``"200-bad-body"`` or a client-side exception's name."""
    id: int
    """The id the relay gave, or -1."""


def run_load(base_url: str, rate: float, start_at: float, end_at: float) -> list[Record]:
    """Post to both endpoints at ``rate`` per second each from ``start_at`` to ``end_at``."""
    return asyncio.run(_load(base_url, rate, start_at, end_at))


async def _load(base_url: str, rate: float, start_at: float, end_at: float) -> list[Record]:
    records: list[Record] = []
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)
    connector = aiohttp.TCPConnector(limit=2 * WORKERS)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        seqs = {endpoint: itertools.count(1) for endpoint in ENDPOINTS}

        async def worker(endpoint: str, index: int) -> None:
            period = WORKERS / rate
            next_at = start_at + index / rate
            url = f"{base_url}{endpoint}"
            while True:
                delay = next_at - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                if time.monotonic() >= end_at:
                    return
                seq = next(seqs[endpoint])
                body = orjson.dumps(payload(endpoint, seq))
                started = time.monotonic()
                item_id = -1
                try:
                    async with session.post(url, data=body, headers=JSON_HEADERS) as answer:
                        raw = await answer.read()
                        status = str(answer.status)
                        if answer.status == 200:
                            data = orjson.loads(raw)
                            if data.get("ok") is True and isinstance(data.get("id"), int):
                                item_id = data["id"]
                            else:
                                status = "200-bad-body"
                except (aiohttp.ClientError, TimeoutError, orjson.JSONDecodeError) as exc:
                    status = type(exc).__name__
                ended = time.monotonic()
                records.append(
                    Record(endpoint, seq, started, (ended - started) * 1000, status, item_id)
                )
                next_at = max(next_at + period, ended)

        await asyncio.gather(
            *(worker(endpoint, i) for endpoint in ENDPOINTS for i in range(WORKERS))
        )
    return records


# -- the reader -----------------------------------------------------------------------------


@dataclass
class ReaderState:
    """What one reader saw: a fingerprint and a label per id, and what went wrong."""

    seen: dict[int, tuple[bytes, str]] = field(default_factory=dict)
    last_id: int = 0
    epochs: set[str] = field(default_factory=set)
    violations: list[str] = field(default_factory=list)
    behind: list[tuple[int, int]] = field(default_factory=list)
    """Id ranges the reader missed because a whole ring went by between two polls."""
    polls: int = 0
    failures: Counter[str] = field(default_factory=Counter)


class Reader:
    """:data:`POLLERS` threads polling ``GET <endpoint>?after=<last id seen>`` until stopped.

    Several pollers, not one: a request queued at an actor that crashes is not answered
    until the actor timeout (2 s), and one blind poller would let a whole sense ring go by.
    Each answer is checked against the ``after`` it was asked with: ids above it, strictly
    increasing, no gap unless a whole ring went by, and an id seen twice never changes.
    """

    def __init__(self, base_url: str, endpoint: str, stop: threading.Event) -> None:
        self.base_url = base_url
        self.endpoint = endpoint
        self.stop = stop
        self.state = ReaderState()
        self.lock = threading.Lock()
        self.errors: list[BaseException] = []
        self.threads = [
            threading.Thread(
                target=self._run,
                args=(i,),
                name=f"reader{endpoint.replace('/', '-')}-{i}",
                daemon=True,
            )
            for i in range(POLLERS)
        ]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def join(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        for thread in self.threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def _run(self, index: int) -> None:
        try:
            self.stop.wait(index * READER_PAUSE_S / POLLERS)  # staggered
            with httpx.Client(base_url=self.base_url, timeout=READER_TIMEOUT_S) as client:
                while not self.stop.is_set():
                    self.poll(client)
                    self.stop.wait(READER_PAUSE_S)
        except BaseException as exc:  # printed at the end, never lost with the thread
            with self.lock:
                self.errors.append(exc)

    def poll(self, client: httpx.Client) -> None:
        state = self.state
        with self.lock:
            after = state.last_id
        try:
            answer = client.get(self.endpoint, params={"after": after})
        except httpx.HTTPError as exc:
            with self.lock:
                state.failures[type(exc).__name__] += 1
            return
        if answer.status_code != 200:
            with self.lock:
                state.failures[str(answer.status_code)] += 1
            return
        data = answer.json()
        items: list[dict[str, Any]] = data[ITEMS_KEY[self.endpoint]]
        seen = [(item["id"], digest_of(as_posted(self.endpoint, item)), item) for item in items]
        with self.lock:
            self._check(after, str(data.get("epoch")), seen)

    def _check(self, after: int, epoch: str, seen: list[tuple[int, bytes, dict[str, Any]]]) -> None:
        state = self.state
        state.polls += 1
        state.epochs.add(epoch)
        if seen and seen[0][0] > after + 1:
            gap = (after + 1, seen[0][0] - 1)
            if len(seen) >= RING[self.endpoint]:
                state.behind.append(gap)
            else:
                state.violations.append(
                    f"after={after} skipped ids {gap[0]}..{gap[1]} "
                    f"({len(seen)} items, ring {RING[self.endpoint]})"
                )
        previous = after
        for item_id, digest, item in seen:
            if item_id <= previous:
                state.violations.append(
                    f"after={after} returned id {item_id} after id {previous} "
                    "(backwards or repeated)"
                )
                continue
            previous = item_id
            known = state.seen.get(item_id)
            if known is not None and known[0] != digest:
                state.violations.append(
                    f"id {item_id} changed: first {known[1]!r}, now {_label(item)!r}"
                )
            state.seen[item_id] = (digest, _label(item))
            state.last_id = max(state.last_id, item_id)


def _label(item: dict[str, Any]) -> str:
    if "text" in item:
        return str(item["text"])[:60]
    return f"seq={item.get('seq')} type={item.get('type')}"


# -- the fake LLM's mode cycle --------------------------------------------------------------


class ModeCycler(threading.Thread):
    """Every :data:`MODE_EVERY_S`, the next fault mode of the fake LLM (then ``ok`` again)."""

    def __init__(self, llm_url: str, start_at: float, stop: threading.Event) -> None:
        super().__init__(name="mode-cycler", daemon=True)
        self.llm_url = llm_url
        self.start_at = start_at
        self.stop = stop
        self.changes: list[tuple[float, str, str]] = []
        """(time, mode, outcome)."""

    def run(self) -> None:
        order = [m for m in MODES if m != "ok"] + ["ok"]
        if self.stop.wait(max(0.0, self.start_at - time.monotonic())):
            return
        with httpx.Client(timeout=5.0) as client:
            for mode in itertools.cycle(order):
                try:
                    answer = client.post(
                        f"{self.llm_url}/_mode", json={"mode": mode, "delay_s": SLOW_DELAY_S}
                    )
                    outcome = str(answer.status_code)
                except httpx.HTTPError as exc:
                    outcome = type(exc).__name__
                self.changes.append((time.monotonic(), mode, outcome))
                if self.stop.wait(MODE_EVERY_S):
                    return


# -- processes ------------------------------------------------------------------------------


def wait_answering(url: str, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            msg = f"{what} exited with {proc.returncode} before answering"
            raise RuntimeError(msg)
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    msg = f"{what} did not answer {url} within {START_TIMEOUT_S} s"
    raise RuntimeError(msg)


def stop_process(proc: subprocess.Popen[bytes] | None) -> int | None:
    """SIGTERM, then SIGKILL after :data:`TERM_TIMEOUT_S`; the exit code (None if unknown)."""
    if proc is None:
        return None
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=TERM_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            print(f"  pid {proc.pid} still running {TERM_TIMEOUT_S} s after SIGTERM: killed")
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
    return proc.returncode


# -- figures --------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest rank; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def longest_failing_run(records: list[Record]) -> tuple[float, int]:
    """Longest run of consecutive failed posts (by start time), in seconds and posts."""
    best = (0.0, 0)
    first: Record | None = None
    last_end = 0.0
    count = 0
    for record in [*sorted(records, key=lambda r: r.started), None]:
        if record is not None and record.id < 0:
            if first is None:
                first, count = record, 0
            count += 1
            last_end = max(last_end, record.started + record.latency_ms / 1000)
            continue
        if first is not None:
            span = last_end - first.started
            if span > best[0]:
                best = (span, count)
        first, last_end = None, 0.0
    return best


@dataclass(frozen=True, slots=True)
class Fault:
    at: float
    actor: str
    kind: str
    seconds: float
    outcome: str


def inject(client: httpx.Client, actor: str, kind: str, seconds: float) -> str:
    body: dict[str, Any] = {"actor": actor, "kind": kind}
    if kind == "hang":
        body["seconds"] = round(seconds, 2)
    try:
        answer = client.post("/debug/fault", json=body)
    except httpx.HTTPError as exc:
        return type(exc).__name__
    return "ok" if answer.status_code == 200 else str(answer.status_code)


_URN = re.compile(r"\(urn:uuid:[0-9a-f-]+\)")


def log_events(path: Path) -> Counter[str]:
    """``level event`` of the relay's warning-and-worse log lines."""
    counts: Counter[str] = Counter()
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return counts
    for line in lines:
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            counts["(not JSON) " + line[:60].decode(errors="replace")] += 1
            continue
        if isinstance(entry, dict) and entry.get("level") in ("warning", "error", "critical"):
            event = _URN.sub("(urn)", str(entry.get("event")))
            counts[f"{entry['level']} {event}"] += 1
    return counts


# -- the run --------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the run")
    parser.add_argument("--quick", action="store_true", help="a 1-minute run")
    parser.add_argument("--rate", type=float, default=200.0, help="posts/s to each endpoint")
    parser.add_argument("--baseline", type=float, default=0.1, help="fault-free share")
    parser.add_argument("--seed", type=int, default=None, help="seed of the fault schedule")
    parser.add_argument("--keep", action="store_true", help="keep the data dir and the logs")
    args = parser.parse_args(argv)
    minutes = 1.0 if args.quick else args.minutes
    duration_s = minutes * 60
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)

    workdir = Path(tempfile.mkdtemp(prefix="sinain-chaos-"))
    relay_log, llm_log = workdir / "relay.log", workdir / "fake_llm.log"
    relay: subprocess.Popen[bytes] | None = None
    llm: subprocess.Popen[bytes] | None = None
    stop_reading, stop_cycling = threading.Event(), threading.Event()
    readers: dict[str, Reader] = {}
    cycler: ModeCycler | None = None
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn")
    )
    try:
        llm_port, relay_port = free_port(), free_port()
        llm_url, base_url = f"http://{HOST}:{llm_port}", f"http://{HOST}:{relay_port}"
        with llm_log.open("wb") as out:
            llm = subprocess.Popen(
                [sys.executable, "-m", "transport.demo.fake_llm", "--port", str(llm_port)],
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        wait_answering(f"{llm_url}/_mode", llm, "the fake LLM")
        env = {
            **{k: v for k, v in os.environ.items() if k != "RELAY_TOKEN"},
            "RELAY_FAULTS": "1",
            "RELAY_DATA_DIR": str(workdir / "data"),
            "OPENROUTER_API_KEY": "unused",
            "AGENT_BASE_URL": f"{llm_url}/v1",
            "AGENT_INTERVAL_MS": "1000",
            "AGENT_TIMEOUT_MS": "5000",
            "LOG_FORMAT": "json",
        }
        with relay_log.open("wb") as out:
            relay = subprocess.Popen(
                [sys.executable, "run.py", "--port", str(relay_port)],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        wait_answering(f"{base_url}/health", relay, "the relay")
        rss_start = rss_mb(relay.pid)
        print(
            f"chaos: {minutes:g} min, {args.rate:g} posts/s to each of /feed and /sense, "
            f"baseline {args.baseline:.0%}, seed {seed}"
        )
        print(f"  relay pid {relay.pid} on {base_url}, fake LLM on {llm_url}, data in {workdir}")

        # Warm the spawn up (import time) before the schedule starts.
        pool.submit(time.monotonic).result(timeout=START_TIMEOUT_S)
        start_at = time.monotonic() + LEAD_S
        end_at = start_at + duration_s
        faults_at = start_at + duration_s * args.baseline
        load = pool.submit(run_load, base_url, args.rate, start_at, end_at)
        readers = {e: Reader(base_url, e, stop_reading) for e in ENDPOINTS}
        for reader in readers.values():
            reader.start()
        cycler = ModeCycler(llm_url, faults_at, stop_cycling)
        cycler.start()

        faults: list[Fault] = []
        with httpx.Client(base_url=base_url, timeout=5.0) as client:
            next_fault = faults_at + rng.uniform(*FAULT_GAP_S) / 2
            while time.monotonic() < end_at - QUIET_END_S:
                if relay.poll() is not None:
                    print(f"  the relay exited with {relay.returncode} during the run")
                    break
                if time.monotonic() < next_fault:
                    time.sleep(min(0.1, next_fault - time.monotonic()))
                    continue
                actor = rng.choice(FAULT_ACTORS)
                kind = "crash" if rng.random() < CRASH_SHARE else "hang"
                seconds = rng.uniform(*HANG_S) if kind == "hang" else 0.0
                outcome = inject(client, actor, kind, seconds)
                faults.append(Fault(time.monotonic(), actor, kind, seconds, outcome))
                next_fault = time.monotonic() + rng.uniform(*FAULT_GAP_S)

        records = load.result(timeout=duration_s + LEAD_S + REQUEST_TIMEOUT_S + 60)
        acked = {e: {r.id: r for r in records if r.endpoint == e and r.id >= 0} for e in ENDPOINTS}
        deadline = time.monotonic() + CATCH_UP_S
        while time.monotonic() < deadline and any(
            readers[e].state.last_id < max(acked[e], default=0) for e in ENDPOINTS
        ):
            time.sleep(0.05)
        stop_reading.set()
        stop_cycling.set()
        for reader in readers.values():
            reader.join(READER_TIMEOUT_S + 2)
        cycler.join(timeout=READER_TIMEOUT_S + 2)

        alive = relay.poll() is None
        health: dict[str, Any] | None = None
        rings: dict[str, list[dict[str, Any]] | None] = dict.fromkeys(ENDPOINTS)
        with httpx.Client(base_url=base_url, timeout=5.0) as client:
            with contextlib.suppress(httpx.HTTPError, ValueError):
                answer = client.get("/health")
                health = answer.json()
                if answer.status_code != 200:
                    print(f"  final /health answered {answer.status_code}: {health}")
            for e in ENDPOINTS:
                with contextlib.suppress(httpx.HTTPError, ValueError, KeyError):
                    rings[e] = client.get(e, params={"after": 0}).json()[ITEMS_KEY[e]]
        rss_end = rss_mb(relay.pid)

        problems = report(records, acked, readers, rings, faults, cycler, health, faults_at)
        print(f"relay RSS: {rss_start:.1f} MB at start, {rss_end:.1f} MB at the end")
        print(f"relay alive at the end: {'yes' if alive else f'NO (exit {relay.returncode})'}")
        code = stop_process(relay)
        print(f"relay exit code after SIGTERM: {code}")
        events = log_events(relay_log)
        print("relay warning/error log lines:")
        for name, count in sorted(events.items()):
            print(f"  {count:6d}  {name}")
        print(f"correctness problems: {problems}")
        return 0 if alive and problems == 0 and code == 0 else 1
    finally:
        stop_reading.set()
        stop_cycling.set()
        stop_process(relay)
        stop_process(llm)
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in multiprocessing.active_children():
            proc.kill()
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def report(
    records: list[Record],
    acked: dict[str, dict[int, Record]],
    readers: dict[str, Reader],
    rings: dict[str, list[dict[str, Any]] | None],
    faults: list[Fault],
    cycler: ModeCycler,
    health: dict[str, Any] | None,
    faults_at: float,
) -> int:
    """Print the figures; return the number of correctness problems found."""
    problems = 0
    print()
    print("ingestion")
    header = f"  {'endpoint':9} {'sent':>8} {'acked':>8} {'missing':>8} {'changed':>8}"
    print(header + f" {'behind':>7} {'longest failing run':>22}")
    for e in ENDPOINTS:
        sent = [r for r in records if r.endpoint == e]
        state = readers[e].state
        missing = [r for r in acked[e].values() if r.id not in state.seen]
        changed = [
            r
            for r in acked[e].values()
            if r.id in state.seen and state.seen[r.id][0] != digest_of(payload(e, r.seq))
        ]
        in_gap = [r for r in missing if any(a <= r.id <= b for a, b in state.behind)]
        behind = [
            (a, b) for a, b in state.behind if any(i not in state.seen for i in range(a, b + 1))
        ]
        span, count = longest_failing_run(sent)
        print(
            f"  {e:9} {len(sent):8d} {len(acked[e]):8d} {len(missing):8d} {len(changed):8d}"
            f" {len(behind):7d} {span:14.2f} s ({count:3d})"
        )
        problems += len(missing) + len(changed) + len(state.violations)
        problems += len(state.epochs) != 1
        if missing:
            print(f"    MISSING acknowledged ids (first 10): {sorted(r.id for r in missing)[:10]}")
            if in_gap:
                print(f"    of which {len(in_gap)} in ranges the reader fell behind on")
        for r in changed[:10]:
            print(f"    CHANGED id {r.id}: posted seq {r.seq}, seen {state.seen[r.id][1]!r}")
        for v in state.violations[:10]:
            print(f"    ORDER {e}: {v}")
        if len(state.violations) > 10:
            print(f"    ... {len(state.violations)} order violations in all")
        if len(state.epochs) != 1:
            print(f"    EPOCH changed: {sorted(state.epochs)}")
        if readers[e].errors:
            problems += 1
            print(f"    a poller died: {readers[e].errors!r}")
        ring = rings[e]
        if ring is None:
            print("    the ring could not be re-read after the run")
        else:
            problems += check_ring(e, ring, acked[e])
        failures = ", ".join(f"{k} {v}" for k, v in sorted(state.failures.items()))
        print(
            f"    reader: {state.polls} polls, {len(state.seen)} items, failures: {failures or '0'}"
        )

    print()
    print("ingestion latency of acknowledged posts (ms)")
    print(
        f"  {'endpoint':9} {'phase':9} {'n':>7} {'p50':>8} {'p99':>8} {'max':>8}  errors by status"
    )
    for e in ENDPOINTS:
        for phase, during_faults in (("baseline", False), ("faults", True)):
            rows = [
                r for r in records if r.endpoint == e and (r.started >= faults_at) == during_faults
            ]
            ok = [r.latency_ms for r in rows if r.id >= 0]
            errors = Counter(r.status for r in rows if r.id < 0)
            shown = ", ".join(f"{k} {v}" for k, v in sorted(errors.items())) or "none"
            print(
                f"  {e:9} {phase:9} {len(ok):7d} {percentile(ok, 50):8.2f} "
                f"{percentile(ok, 99):8.2f} {max(ok, default=float('nan')):8.2f}  {shown}"
            )

    print()
    print("faults injected (actor: kind count)")
    by_actor: Counter[tuple[str, str]] = Counter(
        (f.actor, f.kind) for f in faults if f.outcome == "ok"
    )
    undelivered = [f for f in faults if f.outcome != "ok"]
    actors = health.get("actors", {}) if health else {}
    print(f"  {'actor':8} {'crash':>6} {'hang':>6} {'restarts':>9} {'alive':>6}  state")
    for name in HEALTH_ACTORS:
        info = actors.get(name, {})
        crashes = by_actor[(name, "crash")]
        restarts = info.get("restarts")
        flag = "" if restarts == crashes else "   <- restarts differ from crashes injected"
        print(
            f"  {name:8} {crashes:6d} {by_actor[(name, 'hang')]:6d} {restarts!s:>9} "
            f"{info.get('alive')!s:>6}  {info.get('state')}{flag}"
        )
    print(f"  {sum(by_actor.values())} faults delivered, {len(undelivered)} not delivered")
    for f in undelivered:
        print(f"    not delivered: {f.actor} {f.kind} ({f.outcome})")
    hangs = [f.seconds for f in faults if f.kind == "hang" and f.outcome == "ok"]
    if hangs:
        print(f"  hangs: {min(hangs):.2f} to {max(hangs):.2f} s, {sum(hangs):.1f} s in all")
    modes = Counter(mode for _, mode, outcome in cycler.changes if outcome == "200")
    print(f"  fake LLM modes set: {dict(modes)}")
    if health and "agent" in health:
        agent = health["agent"]
        keys = ("totalCalls", "failures", "parseFailures", "busySkips", "idleSkips", "state")
        print("  agent: " + ", ".join(f"{k} {agent.get(k)}" for k in keys))
    return problems


def check_ring(endpoint: str, ring: list[dict[str, Any]], acked: dict[int, Record]) -> int:
    """The ring after the run against what was acknowledged; the number of differences."""
    if not ring:
        print(f"    final ring of {endpoint} is empty")
        return int(bool(acked))
    oldest = ring[0]["id"]
    in_ring = {item["id"]: item for item in ring}
    absent = [i for i in acked if i >= oldest and i not in in_ring]
    wrong = [
        i
        for i, item in in_ring.items()
        if i in acked
        and digest_of(as_posted(endpoint, item)) != digest_of(payload(endpoint, acked[i].seq))
    ]
    verdict = "matches" if not absent and not wrong else "DIFFERS"
    print(
        f"    final ring: ids {oldest}..{ring[-1]['id']} ({len(ring)} items) {verdict}: "
        f"{len(absent)} acknowledged ids absent, {len(wrong)} with other content"
    )
    return len(absent) + len(wrong)


if __name__ == "__main__":
    sys.exit(main())
