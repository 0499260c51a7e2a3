"""Durability of a real ``python run.py``: what got a 200 survives kills, restarts, corruption."""

from __future__ import annotations

import itertools
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from actors.ingest.feed_buffer import PRUNE_SLACK as FEED_SLACK
from actors.ingest.sense_buffer import PRUNE_SLACK as SENSE_SLACK
from tests.support.harness import free_port
from tests.support.observe import wait_until
from tests.support.run_relay import relay_env, spawn_relay, wait_healthy
from transport.agent.fake_llm import FakeLLM

pytestmark = pytest.mark.slow

FEED_RING = 100
SENSE_RING = 30
EXIT_TIMEOUT_S = 15.0
POST_TIMEOUT_S = 2.0
LOAD_TIMEOUT_S = 30.0
PAST_PRUNE = {"/feed": FEED_RING + FEED_SLACK + 1, "/sense": SENSE_RING + SENSE_SLACK + 1}
"""Posts acknowledged before the signal, by endpoint: past each buffer's batched prune, so the
kill may meet one (a count, not a time: a loaded machine posts fewer a second)."""
MAX_POSTS = 50_000  # per endpoint, whatever the deadline
WAIT_S = 10.0
THREADS = 2  # client threads per endpoint
AGENT_OFF = {"AGENT_ENABLED": "false"}


@dataclass
class Relay:
    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    def get(self, path: str) -> Any:
        return ok(httpx.get(self.url + path, timeout=5))

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return ok(httpx.post(self.url + path, json=body, timeout=5))

    def wait_exit(self, sig: signal.Signals | None = None) -> int:
        """Send ``sig`` if given; the exit code (a relay that does not exit fails the test)."""
        if sig is not None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"relay still running {EXIT_TIMEOUT_S} s after a signal:\n{self.tail()}")

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


def ok(answer: httpx.Response) -> Any:
    assert answer.status_code == 200, answer.text
    return answer.json()


@contextmanager
def relay(data_dir: Path, **env: str) -> Iterator[Relay]:
    """``run.py`` on a free port with its log in a file beside ``data_dir``; killed at the end."""
    port = free_port()
    log = data_dir.parent / f"relay-{port}.log"
    with log.open("wb") as out:
        proc = spawn_relay(port, relay_env(data_dir, **env), stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_healthy(port, proc)
        yield Relay(proc, f"http://127.0.0.1:{port}", log)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=EXIT_TIMEOUT_S)


@dataclass
class Poster:
    """Client threads posting to one endpoint, back to back, until told to stop."""

    url: str
    endpoint: str
    acked: dict[int, Any] = field(default_factory=dict)
    """id -> what the relay must give back for it."""
    unanswered: list[str] = field(default_factory=list)
    """Posts that may be stored without a 200: in flight at the signal, or not a 200."""
    numbers: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def payload(self, n: int) -> tuple[dict[str, Any], Any]:
        if self.endpoint == "/feed":
            return {"text": f"m{n}"}, f"m{n}"
        return {"type": "text", "ts": n, "ocr": f"o{n}"}, ("text", n, f"o{n}")

    def run(self, stop: threading.Event) -> None:
        deadline = time.monotonic() + LOAD_TIMEOUT_S + WAIT_S
        with httpx.Client(timeout=POST_TIMEOUT_S) as client:
            for n in self.numbers:
                if stop.is_set() or time.monotonic() > deadline or n > MAX_POSTS:
                    return
                body, expected = self.payload(n)
                try:
                    answer = client.post(self.url + self.endpoint, json=body)
                except httpx.ConnectError:  # never reached the relay
                    time.sleep(0.01)
                    continue
                except httpx.HTTPError as exc:
                    self.unanswered.append(repr(exc))
                    continue
                if answer.status_code == 200:
                    self.acked[answer.json()["id"]] = expected
                else:
                    self.unanswered.append(f"{answer.status_code} {answer.text}")


def visible(relay: Relay, endpoint: str) -> dict[int, Any]:
    if endpoint == "/feed":
        return {m["id"]: m["text"] for m in relay.get("/feed")["messages"]}
    return {e["id"]: (e["type"], e["ts"], e["ocr"]) for e in relay.get("/sense")["events"]}


def check_ring(poster: Poster, after: dict[int, Any], ring: int) -> None:
    """Every acknowledged item that must still be in the ring is there, unchanged.

    At most ``len(unanswered)`` stored items were never acknowledged, so the newest
    ``ring - len(unanswered)`` acknowledged ids have fewer than ``ring`` stored ids above them.
    """
    acked, maybe = poster.acked, len(poster.unanswered)
    name = poster.endpoint
    assert len(acked) > ring, f"{name}: only {len(acked)} posts acknowledged"
    assert maybe < ring // 3, f"{name}: {maybe} posts without an answer: {poster.unanswered}"
    newest = sorted(acked)[-(ring - maybe) :]
    wrong = {i: (acked[i], after.get(i)) for i in newest if after.get(i) != acked[i]}
    sample = dict(itertools.islice(wrong.items(), 5))
    assert not wrong, f"{name}: {len(wrong)} acknowledged items lost or changed, e.g. {sample}"
    assert max(after) >= max(acked), f"{name}: rolled back from {max(acked)} to {max(after)}"
    assert max(after) - max(acked) <= maybe, f"{name}: more stored than was sent"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_no_acknowledged_post_is_lost_when_the_relay_is_killed(
    tmp_path: Path, sig: signal.Signals
) -> None:
    data = tmp_path / "data"
    with relay(data) as first:
        epoch = first.get("/health")["epoch"]
        posters = [Poster(first.url, "/feed"), Poster(first.url, "/sense")]
        stop = threading.Event()
        threads = [threading.Thread(target=p.run, args=(stop,)) for p in posters * THREADS]
        for thread in threads:
            thread.start()
        try:
            wait_until(
                lambda: all(len(p.acked) >= PAST_PRUNE[p.endpoint] for p in posters),
                LOAD_TIMEOUT_S,
                "posts past each buffer's prune",
            )
            assert all(t.is_alive() for t in threads), "the client stopped before the signal"
            first.proc.send_signal(sig)
            time.sleep(0.2)  # the client keeps posting into the shutdown
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=POST_TIMEOUT_S + 1)
        assert not any(t.is_alive() for t in threads)
        code = first.wait_exit()
        if sig == signal.SIGTERM:
            assert code == 0, first.tail()

    with relay(data) as second:
        assert second.get("/health")["epoch"] == epoch
        seen: dict[str, int] = {}
        for poster, ring in zip(posters, (FEED_RING, SENSE_RING), strict=True):
            after = visible(second, poster.endpoint)
            check_ring(poster, after, ring)
            seen[poster.endpoint] = max(*poster.acked, *after)
        assert second.post("/feed", {"text": "after"})["id"] > seen["/feed"]
        assert second.post("/sense", {"type": "text", "ts": 1})["id"] > seen["/sense"]


def tick_once(relay: Relay) -> None:
    """One successful tick and one unchanged-window skip, then the agent is switched off."""
    event = {"type": "text", "ts": 1, "ocr": "def main()", "meta": {"app": "idea"}}
    relay.post("/sense", event)
    wait_until(lambda: relay.get("/agent/last")["result"], WAIT_S, "a tick")
    relay.post("/sense", event)  # the same screen again: no call
    wait_until(lambda: relay.get("/health")["agent"]["unchangedSkips"], WAIT_S, "a skip")
    relay.post("/agent/config", {"enabled": False})
    wait_until(lambda: not relay.get("/health")["agent"]["inFlight"], WAIT_S, "a quiet agent")


def agent_state(relay: Relay) -> dict[str, Any]:
    agent = relay.get("/health")["agent"]
    keys = (
        "totalCalls",
        "totalTokens",
        "idleSkips",
        "emptySkips",
        "unchangedSkips",
        "failures",
        "lastAnalysis",
        "parseSuccessRate",
        "contextFreshnessMedianMs",
    )
    return {
        "digest": relay.get("/agent/digest")["digest"],
        "history": relay.get("/agent/history?limit=50")["results"],
        "counters": {key: agent[key] for key in keys},
    }


def agent_env(llm: FakeLLM) -> dict[str, str]:
    return {"OPENROUTER_API_KEY": "k", "AGENT_BASE_URL": llm.base_url, "AGENT_INTERVAL_MS": "200"}


def test_agent_state_survives_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with FakeLLM(mode="ok") as llm, relay(data, **agent_env(llm)) as first:
        tick_once(first)
        before = agent_state(first)
        assert first.wait_exit(signal.SIGTERM) == 0
    assert before["digest"] is not None and before["counters"]["totalCalls"] >= 1

    with relay(data, **AGENT_OFF) as second:
        assert agent_state(second) == before
        texts = [m["text"] for m in second.get("/feed")["messages"]]
        assert f"[🧠] {llm.hud}" in texts


DURABLE_METRICS = (
    "relay_ticks",
    "relay_llm_requests",
    "relay_llm_request_duration_seconds",
    "relay_llm_tokens",
    "relay_llm_cost_usd",
    "relay_llm_fallbacks",
    "relay_huds_withheld",
    "relay_situation_write_failures",
)
"""The ``/metrics`` families the relay keeps on disk (the others count since it started)."""
DURABLE_AGENT = (
    "totalCalls",
    "totalTokens",
    "estimatedCost",
    "costByModel",
    "fallbacks",
    "idleSkips",
    "emptySkips",
    "unchangedSkips",
    "minorSkips",
    "deferredTicks",
    "failures",
    "parseFailures",
    "hudsWithheld",
    "situationWriteFailures",
)
"""The cumulative ``/health.agent`` figures the relay keeps on disk."""


def counters_shown(relay: Relay) -> dict[str, float]:
    """Every durable cumulative counter of one ``/health`` and one ``/metrics``, flattened."""
    shown: dict[str, float] = {}

    def flatten(name: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                flatten(f"{name}.{key}", inner)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            shown[name] = value

    agent = relay.get("/health")["agent"]
    for key in DURABLE_AGENT:
        flatten(f"health.{key}", agent[key])
    answer = httpx.get(relay.url + "/metrics", timeout=5)
    assert answer.status_code == 200, answer.text
    for family in text_string_to_metric_families(answer.text):
        if family.name in DURABLE_METRICS:
            for sample in family.samples:
                labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
                shown[f"metrics.{sample.name}{{{labels}}}"] = sample.value
    return shown


def test_no_counter_a_reader_saw_goes_back_after_a_kill(tmp_path: Path) -> None:
    """A kill -9 loses no count a reader was shown: idle skips counted while the agent was
    quiet included, and calls, tokens, cost and skips."""
    data = tmp_path / "data"
    event = {"type": "text", "ts": 1, "ocr": "def main()", "meta": {"app": "idea"}}
    with FakeLLM(mode="ok") as llm, relay(data, **agent_env(llm)) as first:
        first.post("/sense", event)
        wait_until(lambda: first.get("/agent/last")["result"], WAIT_S, "a tick")
        first.post("/sense", event)  # the same screen again: no call
        wait_until(lambda: first.get("/health")["agent"]["unchangedSkips"], WAIT_S, "a skip")
        llm.mode = "echo"
        first.post("/sense", {**event, "ocr": "def echo()"})
        wait_until(lambda: first.get("/health")["agent"]["hudsWithheld"], WAIT_S, "a withheld hud")
        llm.mode = "http500"
        first.post("/sense", {**event, "ocr": "def fail()"})
        wait_until(lambda: first.get("/health")["agent"]["failures"], WAIT_S, "a failed tick")
        llm.mode = "ok"  # the retry succeeds, then the agent is quiet
        wait_until(lambda: first.get("/health")["agent"]["state"] == "ok", WAIT_S, "a retry")
        banked = first.get("/health")["agent"]["idleSkips"]

        def quiet_intervals() -> bool:
            return bool(first.get("/health")["agent"]["idleSkips"] >= banked + 3)

        wait_until(quiet_intervals, WAIT_S, "idle skips counted in a quiet spell")
        before = counters_shown(first)
        assert first.wait_exit(signal.SIGKILL) == -signal.SIGKILL
    for key in ("totalCalls", "unchangedSkips", "hudsWithheld.echo", "failures", "idleSkips"):
        assert before[f"health.{key}"] >= 1, key

    with relay(data, **AGENT_OFF) as second:
        after = counters_shown(second)
    back = {k: (v, after.get(k)) for k, v in before.items() if after.get(k, -1) < v}
    assert not back, f"counters shown before the kill, then less after it: {back}"


def test_a_wiped_data_dir_gets_a_new_epoch(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with relay(data) as first:
        epoch = first.get("/health")["epoch"]
        assert first.post("/feed", {"text": "one"})["id"] == 1
        assert first.post("/feed", {"text": "two"})["id"] == 2
        assert first.wait_exit(signal.SIGTERM) == 0
    shutil.rmtree(data)

    with relay(data) as second:
        assert second.get("/health")["epoch"] != epoch
        assert second.get("/feed")["messages"] == []
        assert second.post("/feed", {"text": "again"})["id"] == 1
        assert second.post("/sense", {"type": "text", "ts": 1})["id"] == 1


def test_a_corrupt_database_is_moved_aside_and_the_relay_serves(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with FakeLLM(mode="ok") as llm, relay(data, **agent_env(llm)) as first:
        epoch = first.get("/health")["epoch"]
        for n in range(3):
            first.post("/feed", {"text": f"m{n}"})
        tick_once(first)  # posts a sense event, stores an agent entry
        sense = first.get("/sense")["events"]
        agent = agent_state(first)
        assert first.wait_exit(signal.SIGTERM) == 0
    feed_db = data / "feed.db"
    garbage = b"this is not an SQLite database\n" * 256
    feed_db.write_bytes(garbage)
    for suffix in ("-wal", "-shm"):
        Path(f"{feed_db}{suffix}").unlink(missing_ok=True)

    with relay(data, **AGENT_OFF) as second:
        health = second.get("/health")
        storage = health["storage"]
        assert storage["recovered"] is True
        [moved] = storage["movedAside"]
        assert Path(moved).name.startswith("feed.db.") and Path(moved).read_bytes() == garbage
        assert health["epoch"] != epoch
        assert second.post("/feed", {"text": "fresh"})["id"] == 1
        assert second.get("/sense")["events"] == sense
        assert agent_state(second) == agent
