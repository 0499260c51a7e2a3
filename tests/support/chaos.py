"""The chaos drills' machinery: steady posts to ``/feed`` and ``/sense`` (never retried),
readers that poll ``GET <endpoint>?after=<last id seen>`` and check ids and contents, fault
injection through ``POST /debug/fault`` (the LLM's faults are :mod:`tests.support.chaos_llm`'s).
``tests/test_chaos.py`` runs a short drill with them; ``python -m bench chaos`` runs the long
soak and prints its figures.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import aiohttp
import httpx
import orjson

from actors.core.control_bodies import FAULT_ACTORS
from actors.ingest.feed_buffer import FEED_RING
from actors.ingest.sense_buffer import SENSE_RING
from tests.support.harness import JSON_HEADERS

ENDPOINTS = ("/feed", "/sense")
RING = {"/feed": FEED_RING, "/sense": SENSE_RING}
ITEMS_KEY = {"/feed": "messages", "/sense": "events"}
AUDIO_FAULT_ACTORS = ("stt", "capture_system", "capture_mic")
NOT_RUNNING = ("situation", "stt_worker", "llm_worker")
"""Drill targets the soak's relay does not run: it writes no SITUATION.md, and its speech and
its LLM are stand-in services, not models of its own."""
OTHER_FAULT_ACTORS = tuple(
    a for a in FAULT_ACTORS if a not in AUDIO_FAULT_ACTORS and a not in NOT_RUNNING
)
ACTORS = ("feed", "sense", "digest", "context", "llm", "ticker", "agent", "http")
WORKERS, POLLERS = 8, 3
REQUEST_TIMEOUT_S = 5.0
READER_PAUSE_S = 0.02
START_TIMEOUT_S, LEAD_S, QUIET_END_S, CATCH_UP_S = 20.0, 1.0, 8.0, 10.0
FAULT_GAP_S, HANG_S, CRASH_SHARE = (5.0, 8.0), (0.5, 3.0), 0.7
OCR_CHARS = 256
AGENT = {"AGENT_ECONOMY": "false", "AGENT_INTERVAL_MS": "250", "AGENT_TIMEOUT_MS": "2000"}
"""The chaos relay's agent: a call on every tick with news, four a second at most."""
IMAGE_EVERY = 4
"""Every fourth screen event carries a picture: the vision path, and the ring's older pictures
read back from disk, run under the faults too."""


def payload(endpoint: str, seq: int) -> dict[str, Any]:
    """The body of post number ``seq`` to ``endpoint``: unique and deterministic."""
    if endpoint == "/feed":
        priority, channel = "high" if seq % 3 == 0 else "normal", "agent" if seq % 2 else "stream"
        return {"text": f"chaos feed #{seq}", "priority": priority, "channel": channel}
    ocr = (f"chaos sense #{seq} " + "x" * OCR_CHARS)[:OCR_CHARS]
    meta = {"app": "idea", "ssim": round(0.5 + (seq % 50) / 100, 2)}
    body = {"type": "text", "ts": 1_769_901_200_000 + seq, "ocr": ocr, "meta": meta, "seq": seq}
    if seq % IMAGE_EVERY == 0:  # a picture, a JPEG by its signature; every fifth one is not
        pixels = hashlib.blake2b(seq.to_bytes(8, "big"), digest_size=64).digest() * 16
        start = b"GIF89a" if seq % (5 * IMAGE_EVERY) == 0 else b"\xff\xd8\xff\xe0"
        picture = base64.b64encode(start + pixels + b"\xff\xd9").decode()
        body["roi"] = {"data": picture, "bbox": [0, 0, 64, 64], "thumb": True}
    return body


def digest_of(body: dict[str, Any]) -> bytes:
    """A short fingerprint of a body, key order aside."""
    return hashlib.blake2b(orjson.dumps(body, option=orjson.OPT_SORT_KEYS), digest_size=8).digest()


def as_posted(endpoint: str, item: dict[str, Any]) -> dict[str, Any]:
    """An item as served, less the server's fields: what the client posted."""
    server_fields = ("id", "ts") if endpoint == "/feed" else ("id", "receivedAt")
    return {k: v for k, v in item.items() if k not in server_fields}


# -- the load ------------------------------------------------------------------------------------


class Record(NamedTuple):
    endpoint: str
    seq: int
    started: float
    """``time.monotonic()`` (system-wide on Linux, so comparable across processes)."""
    latency_ms: float
    status: str
    """``"200"``, another status, ``"200-bad-body"`` or a client-side exception's name."""
    id: int
    """The id the relay gave, or -1."""


def run_load(
    base_url: str,
    rates: Mapping[str, float],
    start_at: float,
    end_at: float,
    stop: threading.Event | None = None,
) -> list[Record]:
    """Post to each endpoint at its rate per second, from ``start_at`` to ``end_at`` (or
    ``stop``), from :data:`WORKERS` coroutines per endpoint on a shared schedule."""
    return asyncio.run(_load(base_url, rates, start_at, end_at, stop or threading.Event()))


async def _load(
    base_url: str, rates: Mapping[str, float], start_at: float, end_at: float, stop: Any
) -> list[Record]:
    records: list[Record] = []
    seqs = {endpoint: itertools.count(1) for endpoint in rates}

    async def worker(session: aiohttp.ClientSession, endpoint: str, index: int) -> None:
        period, next_at = WORKERS / rates[endpoint], start_at + index / rates[endpoint]
        while True:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            if time.monotonic() >= end_at or stop.is_set():
                return
            seq, started, item_id = next(seqs[endpoint]), time.monotonic(), -1
            try:
                body = orjson.dumps(payload(endpoint, seq))
                async with session.post(base_url + endpoint, data=body, headers=JSON_HEADERS) as a:
                    raw, status = await a.read(), str(a.status)
                    if a.status == 200:
                        data = orjson.loads(raw)
                        ok = data.get("ok") is True and isinstance(data.get("id"), int)
                        item_id, status = (data["id"], status) if ok else (-1, "200-bad-body")
            except (aiohttp.ClientError, TimeoutError, orjson.JSONDecodeError) as exc:
                status = type(exc).__name__
            ended = time.monotonic()
            records.append(
                Record(endpoint, seq, started, (ended - started) * 1000, status, item_id)
            )
            next_at = max(next_at + period, ended)

    connector = aiohttp.TCPConnector(limit=len(rates) * WORKERS)
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        await asyncio.gather(*(worker(session, e, i) for e in rates for i in range(WORKERS)))
    return records


# -- the reader and the checks -------------------------------------------------------------------


class Seen(NamedTuple):
    whole: bytes
    """Fingerprint of the item as served."""
    posted: bytes
    """Fingerprint of what the client posted (:func:`as_posted`)."""
    label: str


@dataclass
class ReaderState:
    seen: dict[int, Seen] = field(default_factory=dict)
    last_id: int = 0
    epochs: set[str] = field(default_factory=set)
    violations: list[str] = field(default_factory=list)
    behind: list[tuple[int, int]] = field(default_factory=list)
    """Id ranges missed because a whole ring went by between two polls."""
    polls: int = 0
    failures: Counter[str] = field(default_factory=Counter)


class Reader:
    """``pollers`` threads polling ``GET <endpoint>?after=<last id seen>`` until ``stop``.
    Several: a read queued at a crashing actor waits for the actor timeout, and one blind
    poller would let a whole sense ring go by."""

    def __init__(
        self,
        base_url: str,
        endpoint: str,
        stop: threading.Event,
        *,
        pollers: int = POLLERS,
        pause_s: float = READER_PAUSE_S,
        timeout_s: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self.base_url, self.endpoint, self.stop = base_url, endpoint, stop
        self.pause_s, self.timeout_s = pause_s, timeout_s
        self.state, self.lock = ReaderState(), threading.Lock()
        self.errors: list[BaseException] = []
        self.threads = [
            threading.Thread(target=self._run, args=(i, pollers), daemon=True)
            for i in range(pollers)
        ]

    def start(self) -> Reader:
        for thread in self.threads:
            thread.start()
        return self

    def join(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        for thread in self.threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def _run(self, index: int, pollers: int) -> None:
        try:
            self.stop.wait(index * self.pause_s / pollers)  # staggered
            with httpx.Client(base_url=self.base_url, timeout=self.timeout_s) as client:
                while not self.stop.is_set():
                    self.poll(client)
                    self.stop.wait(self.pause_s)
        except BaseException as exc:  # reported at the end, never lost with the thread
            with self.lock:
                self.errors.append(exc)

    def poll(self, client: httpx.Client) -> None:
        with self.lock:
            after = self.state.last_id
        try:
            answer = client.get(self.endpoint, params={"after": after})
            failure = None if answer.status_code == 200 else str(answer.status_code)
        except httpx.HTTPError as exc:
            failure = type(exc).__name__
        if failure is not None:
            with self.lock:
                self.state.failures[failure] += 1
            return
        data = answer.json()
        seen = [(item["id"], self.fingerprint(item)) for item in data[ITEMS_KEY[self.endpoint]]]
        with self.lock:
            self._check(after, str(data.get("epoch")), seen)

    def fingerprint(self, item: dict[str, Any]) -> Seen:
        label = str(item["text"])[:60] if "text" in item else f"seq={item.get('seq')}"
        return Seen(digest_of(item), digest_of(as_posted(self.endpoint, item)), label)

    def _check(self, after: int, epoch: str, seen: list[tuple[int, Seen]]) -> None:
        state, ring = self.state, RING[self.endpoint]
        state.polls += 1
        state.epochs.add(epoch)
        if seen and seen[0][0] > after + 1:
            gap = (after + 1, seen[0][0] - 1)
            if len(seen) >= ring:
                state.behind.append(gap)
            else:
                state.violations.append(
                    f"after={after} skipped ids {gap[0]}..{gap[1]} ({len(seen)} items, ring {ring})"
                )
        previous = after
        for item_id, fingerprint in seen:
            if item_id <= previous:
                state.violations.append(
                    f"after={after} returned id {item_id} after id {previous} "
                    "(backwards or repeated)"
                )
                continue
            previous, known = item_id, state.seen.get(item_id)
            if known is not None and known.whole != fingerprint.whole:
                state.violations.append(
                    f"id {item_id} changed: first {known.label!r}, now {fingerprint.label!r}"
                )
            state.seen[item_id] = fingerprint
            state.last_id = max(state.last_id, item_id)

    def _posted(self, record: Record) -> bytes:
        return digest_of(payload(self.endpoint, record.seq))

    def unseen_and_changed(self, acked: Mapping[int, Record]) -> tuple[list[Record], list[Record]]:
        """The acknowledged posts the reader never saw, and those it saw with other content."""
        seen = self.state.seen
        unseen = [r for r in acked.values() if r.id not in seen]
        changed = [
            r for r in acked.values() if r.id in seen and seen[r.id].posted != self._posted(r)
        ]
        return unseen, changed

    def ring_differences(
        self, ring: Sequence[dict[str, Any]], acked: Mapping[int, Record]
    ) -> tuple[list[int], list[int], list[int]]:
        """A ring re-read at the end against what was acknowledged and what was read: the
        acknowledged ids absent from it, its items with content other than what was posted,
        and its items not as the reader saw them (or never seen, up to the last id it saw:
        the relay's own items, a hud or a transcript, may come after the reader stopped)."""
        if not ring:
            return list(acked), [], []
        in_ring = {item["id"]: self.fingerprint(item) for item in ring}
        absent = [i for i in acked if i >= ring[0]["id"] and i not in in_ring]
        other = [i for i, f in in_ring.items() if i in acked and f.posted != self._posted(acked[i])]
        last = self.state.last_id
        not_as_read = [i for i, f in in_ring.items() if i <= last and self.state.seen.get(i) != f]
        return absent, other, not_as_read


def catch_up(
    readers: Mapping[str, Reader], acked: Mapping[str, Mapping[int, Record]], seconds: float
) -> None:
    """Wait (``seconds`` at most) until each reader saw the last id acknowledged; stop them."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(
        reader.state.last_id < max(acked[e], default=0) for e, reader in readers.items()
    ):
        time.sleep(0.05)
    for reader in readers.values():
        reader.stop.set()
        reader.join(reader.timeout_s + 2)


def acked_by_id(records: Sequence[Record], endpoint: str) -> dict[int, Record]:
    return {r.id: r for r in records if r.endpoint == endpoint and r.id >= 0}


def longest_failing_run(records: Sequence[Record]) -> tuple[float, int, str]:
    """Longest run of consecutive failed posts (by start time): seconds, posts, statuses."""
    best, run = (0.0, 0, ""), list[Record]()
    for record in [*sorted(records, key=lambda r: r.started), None]:
        if record is not None and record.id < 0:
            run.append(record)
            continue
        if run:
            span = max(r.started + r.latency_ms / 1000 for r in run) - run[0].started
            if span > best[0]:
                best = (span, len(run), ",".join(sorted({r.status for r in run})))
        run = []
    return best


def inject(client: httpx.Client, actor: str, kind: str, seconds: float = 0.0) -> str:
    """``POST /debug/fault``: ``ok``, another status, or the client-side exception's name."""
    body: dict[str, Any] = {"actor": actor, "kind": kind}
    if kind == "hang":
        body["seconds"] = round(seconds, 2)
    try:
        answer = client.post("/debug/fault", json=body)
    except httpx.HTTPError as exc:
        return type(exc).__name__
    return "ok" if answer.status_code == 200 else str(answer.status_code)


# -- the soak ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fault:
    actor: str
    kind: str
    seconds: float
    outcome: str


def fault_actors(rng: random.Random) -> Iterator[str]:
    """The actors to fault, in turn: every other one on the audio path; each group's actors
    in rounds, shuffled, so that a short run meets every audio actor."""
    groups = [_rounds(rng, AUDIO_FAULT_ACTORS), _rounds(rng, OTHER_FAULT_ACTORS)]
    for n in itertools.count():
        yield next(groups[n % 2])


def _rounds(rng: random.Random, actors: Sequence[str]) -> Iterator[str]:
    while True:
        deck = list(actors)
        rng.shuffle(deck)
        yield from deck


def inject_faults(
    base_url: str,
    relay_alive: Callable[[], bool],
    rng: random.Random,
    faults_at: float,
    until: float,
) -> list[Fault]:
    """A fault every 5 to 8 s from ``faults_at`` to ``until`` (:func:`fault_actors`)."""
    faults: list[Fault] = []
    actors = fault_actors(rng)
    with httpx.Client(base_url=base_url, timeout=5.0) as client:
        next_fault = faults_at + rng.uniform(*FAULT_GAP_S) / 2
        while time.monotonic() < until and relay_alive():
            if time.monotonic() < next_fault:
                time.sleep(min(0.1, next_fault - time.monotonic()))
                continue
            actor = next(actors)
            kind = "crash" if rng.random() < CRASH_SHARE else "hang"
            seconds = rng.uniform(*HANG_S) if kind == "hang" else 0.0
            faults.append(Fault(actor, kind, seconds, inject(client, actor, kind, seconds)))
            next_fault = time.monotonic() + rng.uniform(*FAULT_GAP_S)
    return faults


def labels(reader: Reader) -> list[str]:
    """The labels (texts cut short) of the items a reader saw."""
    with reader.lock:
        return [seen.label for seen in reader.state.seen.values()]
