"""Chaos drill, end to end: every actor crashes (and the buffers hang) under steady traffic.

A real ``python run.py`` with ``RELAY_FAULTS=1`` and the agent ticking against the fake LLM.
Two poster threads post to ``/feed`` and ``/sense`` at a fixed, moderate rate and record
every acknowledged item and every failure; two reader threads poll ``GET /feed?after=`` and
``GET /sense?after=`` and record every item they see. Meanwhile ``POST /debug/fault``
crashes each of the seven actors in turn (waiting for each restart to show in ``/health``),
then hangs the feed and the sense buffers for a second each. At the end: nothing
acknowledged is lost or changed, ids only grow, each actor restarted exactly as often as it
was crashed, and no endpoint kept failing for longer than a restart takes.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.feed_buffer import FEED_RING
from actors.sense_buffer import SENSE_RING
from tests.test_run import ROOT, free_port, relay_env, wait_healthy
from transport.demo.fake_llm import FakeLLM

ENDPOINTS = ("/feed", "/sense")
RING = {"/feed": FEED_RING, "/sense": SENSE_RING}
ITEMS_KEY = {"/feed": "messages", "/sense": "events"}
RATE_PER_S = {"/feed": 100.0, "/sense": 50.0}
"""Posts per second. The reader must poll before a ring turns over (sense: 30 items, 0.6 s);
a read queued at a buffer that crashes is only answered 503 after the actor timeout (0.3 s),
which leaves it half that margin."""
REQUEST_TIMEOUT_S = 2.0
READER_PAUSE_S = 0.003
ACTOR_TIMEOUT_MS = 300
HANG_S = 1.0
RESTART_TIMEOUT_S = 12.0
"""Bound on waiting for one restart to show in ``/health`` (the ping deadline is 10 s)."""
SETTLE_S = 0.5
"""Steady traffic between two faults, so that every recovery is measured."""
MAX_FAILING_S = 5.0
CATCH_UP_S = 5.0
CRASHED = ("feed", "sense", "context", "llm", "digest", "ticker", "http")
HUNG = ("feed", "sense")
ALL_ACTORS = ("feed", "sense", "digest", "context", "llm", "ticker", "agent", "http")


@dataclass(frozen=True, slots=True)
class Attempt:
    """One POST: when it started and ended, and what came of it."""

    started: float
    ended: float
    ok: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Ack:
    """A POST answered 200: the id the relay gave and what was posted."""

    endpoint: str
    id: int
    payload: dict[str, Any]


def _stop_clients(threads: list[Any], stop: threading.Event) -> None:
    stop.set()
    for thread in threads:
        thread.join(timeout=REQUEST_TIMEOUT_S + 3)


class Poster(threading.Thread):
    """Posts to one endpoint at a fixed rate until stopped; never retries a payload."""

    def __init__(self, base_url: str, endpoint: str, stop: threading.Event) -> None:
        super().__init__(name=f"poster{endpoint.replace('/', '-')}", daemon=True)
        self.base_url = base_url
        self.endpoint = endpoint
        self.stop = stop
        self.interval_s = 1.0 / RATE_PER_S[endpoint]
        self.attempts: list[Attempt] = []
        self.acks: list[Ack] = []
        self.problems: list[str] = []
        self.error: BaseException | None = None

    def payload(self, n: int) -> dict[str, Any]:
        if self.endpoint == "/feed":
            return {"text": f"chaos feed #{n}", "priority": "high" if n % 3 == 0 else "normal"}
        return {
            "type": "text",
            "ts": 1_769_901_200_000 + n,
            "ocr": f"chaos sense #{n}",
            "meta": {"app": "idea", "ssim": round(0.5 + (n % 50) / 100, 2)},
            "seq": n,
        }

    def run(self) -> None:
        try:
            self._run()
        except BaseException as exc:  # reported by the test, never lost with the thread
            self.error = exc

    def _run(self) -> None:
        n = 0
        next_at = time.monotonic()
        with httpx.Client(base_url=self.base_url, timeout=REQUEST_TIMEOUT_S) as client:
            while not self.stop.is_set():
                n += 1
                body = self.payload(n)
                started = time.monotonic()
                try:
                    answer = client.post(self.endpoint, json=body)
                except httpx.HTTPError as exc:
                    self.attempts.append(
                        Attempt(started, time.monotonic(), False, type(exc).__name__)
                    )
                else:
                    ended = time.monotonic()
                    if answer.status_code == 200:
                        data = answer.json()
                        if data.get("ok") is not True or not isinstance(data.get("id"), int):
                            self.problems.append(f"{self.endpoint} 200 with body {data!r}")
                        else:
                            self.acks.append(Ack(self.endpoint, data["id"], body))
                        self.attempts.append(Attempt(started, ended, True))
                    else:
                        self.attempts.append(
                            Attempt(started, ended, False, str(answer.status_code))
                        )
                next_at = max(next_at + self.interval_s, time.monotonic())
                self.stop.wait(max(0.0, next_at - time.monotonic()))


@dataclass
class ReaderState:
    seen: dict[int, dict[str, Any]] = field(default_factory=dict)
    last_id: int = 0
    epochs: set[str] = field(default_factory=set)
    violations: list[str] = field(default_factory=list)
    fell_behind: list[str] = field(default_factory=list)
    polls: int = 0
    failures: int = 0


class Reader(threading.Thread):
    """Polls ``GET <endpoint>?after=<last id seen>`` as fast as it can; checks the order."""

    def __init__(self, base_url: str, endpoint: str, stop: threading.Event) -> None:
        super().__init__(name=f"reader{endpoint.replace('/', '-')}", daemon=True)
        self.base_url = base_url
        self.endpoint = endpoint
        self.stop = stop
        self.state = ReaderState()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with httpx.Client(base_url=self.base_url, timeout=REQUEST_TIMEOUT_S) as client:
                while not self.stop.is_set():
                    self.poll(client)
                    self.stop.wait(READER_PAUSE_S)
        except BaseException as exc:  # reported by the test, never lost with the thread
            self.error = exc

    def poll(self, client: httpx.Client) -> None:
        state = self.state
        try:
            answer = client.get(self.endpoint, params={"after": state.last_id})
        except httpx.HTTPError:
            state.failures += 1
            return
        if answer.status_code != 200:
            state.failures += 1
            return
        state.polls += 1
        data = answer.json()
        state.epochs.add(str(data.get("epoch")))
        items: list[dict[str, Any]] = data[ITEMS_KEY[self.endpoint]]
        if items and items[0]["id"] > state.last_id + 1:
            missed = f"ids {state.last_id + 1}..{items[0]['id'] - 1}"
            if len(items) >= RING[self.endpoint]:
                state.fell_behind.append(f"{self.endpoint}: a full ring past the cursor, {missed}")
            else:
                state.violations.append(
                    f"{self.endpoint}?after={state.last_id} skipped {missed} "
                    f"({len(items)} items, ring {RING[self.endpoint]})"
                )
        for item in items:
            item_id = item["id"]
            if item_id <= state.last_id:
                state.violations.append(
                    f"{self.endpoint}?after={state.last_id} returned id {item_id} "
                    f"(backwards or repeated); first seen as {state.seen.get(item_id)!r}, "
                    f"now {item!r}"
                )
                continue
            state.seen[item_id] = item
            state.last_id = item_id


def _as_posted(endpoint: str, item: dict[str, Any]) -> dict[str, Any]:
    """What the client posted, as the reader got it back (server fields dropped)."""
    if endpoint == "/feed":
        return {k: v for k, v in item.items() if k not in ("id", "ts")}
    return {k: v for k, v in item.items() if k not in ("id", "receivedAt")}


def _longest_failing_run(attempts: list[Attempt]) -> tuple[float, int, str]:
    """The longest run of consecutive failed posts by wall time: (seconds, count, reasons)."""
    best: tuple[float, int, str] = (0.0, 0, "")
    run: list[Attempt] = []
    for attempt in [*attempts, Attempt(0.0, 0.0, True)]:
        if not attempt.ok:
            run.append(attempt)
            continue
        if run:
            span = run[-1].ended - run[0].started
            if span > best[0]:
                reasons = sorted({a.reason for a in run})
                best = (span, len(run), ",".join(reasons))
        run = []
    return best


def _log_tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no relay log)"
    return "\n".join(text.splitlines()[-lines:])


class Chaos:
    """Talks to the relay under test: faults, health, waits."""

    def __init__(self, base_url: str, proc: subprocess.Popen[bytes], log_path: Path) -> None:
        self.client = httpx.Client(base_url=base_url, timeout=REQUEST_TIMEOUT_S)
        self.proc = proc
        self.log_path = log_path

    def fail(self, message: str) -> None:
        pytest.fail(f"{message}\n--- relay log tail ---\n{_log_tail(self.log_path)}")

    def actors(self) -> dict[str, dict[str, Any]] | None:
        """``/health.actors`` (also from a 503 answer), or None if the relay is not answering."""
        try:
            answer = self.client.get("/health")
            actors: dict[str, dict[str, Any]] = answer.json()["actors"]
        except (httpx.HTTPError, ValueError, KeyError):
            return None
        return actors

    def inject(self, actor: str, kind: str, seconds: float = 0.0) -> None:
        body: dict[str, Any] = {"actor": actor, "kind": kind}
        if kind == "hang":
            body["seconds"] = seconds
        answer = self.client.post("/debug/fault", json=body)
        assert answer.json() == {"ok": True}, answer.text

    def wait_restarted(self, actor: str, expected: dict[str, int]) -> None:
        deadline = time.monotonic() + RESTART_TIMEOUT_S
        last: dict[str, Any] | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.fail(f"the relay exited with {self.proc.returncode} after {actor} crashed")
            actors = self.actors()
            if actors is not None:
                last = actors.get(actor)
                if (
                    last is not None
                    and last["restarts"] == expected[actor]
                    and last["alive"]
                    and last["state"] == "running"
                ):
                    return
            time.sleep(0.05)
        self.fail(
            f"{actor} did not show restart {expected[actor]} in /health within "
            f"{RESTART_TIMEOUT_S} s; last seen {last!r}"
        )

    def wait_answering(self, endpoint: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if self.client.get(endpoint, params={"after": 1 << 40}).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.fail(f"GET {endpoint} still failing {timeout_s} s after a {HANG_S} s hang")


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as llm:
        yield llm


def test_no_acknowledged_post_is_lost_while_every_actor_crashes_and_hangs(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = relay_env(
        tmp_path / "data",
        RELAY_FAULTS="1",
        RELAY_ACTOR_TIMEOUT_MS=str(ACTOR_TIMEOUT_MS),
        OPENROUTER_API_KEY="unused",
        AGENT_BASE_URL=fake_llm.base_url,
        AGENT_INTERVAL_MS="200",
        AGENT_TIMEOUT_MS="1000",
    )
    log_path = tmp_path / "relay.log"
    with log_path.open("wb") as log_file:  # a file, not a pipe: a full pipe would stall it
        proc = subprocess.Popen(
            [sys.executable, "run.py", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    stop_posting, stop_reading = threading.Event(), threading.Event()
    posters = {e: Poster(base_url, e, stop_posting) for e in ENDPOINTS}
    readers = {e: Reader(base_url, e, stop_reading) for e in ENDPOINTS}
    chaos = Chaos(base_url, proc, log_path)
    try:
        wait_healthy(port, proc)
        for thread in [*posters.values(), *readers.values()]:
            thread.start()
        time.sleep(SETTLE_S)

        expected = dict.fromkeys(ALL_ACTORS, 0)
        for actor in CRASHED:
            chaos.inject(actor, "crash")
            expected[actor] += 1
            chaos.wait_restarted(actor, expected)
            time.sleep(SETTLE_S)
        for actor in HUNG:
            chaos.inject(actor, "hang", HANG_S)
            time.sleep(HANG_S)
            chaos.wait_answering(f"/{actor}", timeout_s=5.0)
            time.sleep(SETTLE_S)

        _stop_clients(list(posters.values()), stop_posting)
        deadline = time.monotonic() + CATCH_UP_S
        while time.monotonic() < deadline and any(
            readers[e].state.last_id < max((a.id for a in posters[e].acks), default=0)
            for e in ENDPOINTS
        ):
            time.sleep(0.05)
        _stop_clients(list(readers.values()), stop_reading)
        final_actors = chaos.actors()
        final_rings = {
            e: chaos.client.get(e, params={"after": 0}).json()[ITEMS_KEY[e]] for e in ENDPOINTS
        }
        assert proc.poll() is None, f"the relay exited with {proc.returncode}"
    finally:
        _stop_clients(list(posters.values()), stop_posting)
        _stop_clients(list(readers.values()), stop_reading)
        chaos.client.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)

    clients: list[Poster | Reader] = [*posters.values(), *readers.values()]
    for thread in clients:
        assert not thread.is_alive(), f"{thread.name} did not stop"
        assert thread.error is None, f"{thread.name} died: {thread.error!r}"
    tail = f"\n--- relay log tail ---\n{_log_tail(log_path)}"

    for endpoint in ENDPOINTS:
        poster, state = posters[endpoint], readers[endpoint].state
        assert not state.fell_behind, (
            f"the test is wrong, not the relay: the reader of {endpoint} fell behind by more "
            f"than the ring ({RING[endpoint]}); post slower or read faster: {state.fell_behind}"
        )
        assert len(poster.acks) > 100, f"too few acknowledged posts to {endpoint}: {poster.acks}"
        assert state.polls > 100, f"too few successful reads of {endpoint}: {state.polls}"
        assert not poster.problems, poster.problems
        assert not state.violations, f"{endpoint}: {state.violations}{tail}"
        assert len(state.epochs) == 1, f"{endpoint}: the epoch changed: {state.epochs}"

        ids = [ack.id for ack in poster.acks]
        assert len(set(ids)) == len(ids), f"{endpoint}: an id was acknowledged twice"
        lost = [ack for ack in poster.acks if ack.id not in state.seen]
        assert not lost, (
            f"{endpoint}: {len(lost)} acknowledged posts never seen by the reader, "
            f"first {lost[:5]}{tail}"
        )
        changed = [
            (ack, state.seen[ack.id])
            for ack in poster.acks
            if _as_posted(endpoint, state.seen[ack.id]) != ack.payload
        ]
        assert not changed, f"{endpoint}: acknowledged posts changed: {changed[:5]}{tail}"
        for item in final_rings[endpoint]:
            assert state.seen.get(item["id"]) == item, (
                f"{endpoint}: the final ring holds {item!r}, the reader saw "
                f"{state.seen.get(item['id'])!r}"
            )

        span, count, reasons = _longest_failing_run(poster.attempts)
        assert span < MAX_FAILING_S, (
            f"POST {endpoint} kept failing for {span:.2f} s ({count} posts in a row: {reasons})"
        )

    assert final_actors is not None, "no /health at the end"
    restarts = {name: final_actors[name]["restarts"] for name in ALL_ACTORS}
    assert restarts == expected, f"restarts {restarts}, injected {expected}{tail}"
    assert all(a["alive"] and a["state"] == "running" for a in final_actors.values()), final_actors
