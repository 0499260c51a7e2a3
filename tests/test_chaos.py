"""Chaos drill, end to end: every actor crashes (and the buffers hang) under steady traffic.

A real ``python run.py`` with ``RELAY_FAULTS=1`` and the agent ticking against the fake LLM.
A poster thread posts to ``/feed`` and ``/sense`` at a fixed, moderate rate and records every
attempt; two readers poll ``GET /feed?after=`` and ``GET /sense?after=`` and record every item
they see (the load, the readers and the checks are ``bench/chaos.py``'s). Meanwhile
The relay also hears: it captures system audio (``tests/support/chaos_audio.py``) and transcribes it
with the stand-in speech service. ``POST /debug/fault`` crashes each of the seven actors in
turn, then the transcriber and the capture (waiting for each restart to show in ``/health``),
then hangs the feed and the sense buffers for a second each, then points the agent (without
the economy: it calls the LLM on every tick with news) at each fault mode of the fake LLM once
(``LLMDrill``). At the end: nothing acknowledged is lost or changed, ids only grow, each actor
restarted exactly as often as it was crashed, transcripts were stored after both audio
crashes by exactly one capture process, no endpoint kept failing for longer than a restart
takes, and every fault mode met a request.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.chaos import (
    ENDPOINTS,
    ITEMS_KEY,
    RING,
    Reader,
    Record,
    acked_by_id,
    catch_up,
    inject,
    labels,
    longest_failing_run,
    run_load,
)
from tests.support.chaos_hearing import Hearing, VariedStt, stored
from tests.support.chaos_llm import LLM_FAULTS, LLMDrill
from tests.support.harness import Server, log_tail, relay_env, server_process
from transport.agent.fake_llm import FakeLLM

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]
"""A long drill: on a loaded machine each of its phases waits longer (the suite's 60 s is
for the rest)."""

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
DRILL_VISIT_S = 5.0
"""Bound on one mode's visit of the LLM drill (a request ends within the 1 s call timeout)."""
CRASHED = ("feed", "sense", "context", "llm", "digest", "ticker", "http", "stt", "capture_system")
HUNG = ("feed", "sense")
ALL_ACTORS = ("feed", "sense", "digest", "context", "llm", "ticker", "agent", "http")
AUDIO_ACTORS = ("stt", "capture_system", "audio")
AUDIO_SPEED = 4.0
"""The capture program's pace: about an utterance every 0.7 s."""
HEARD_TIMEOUT_S = 10.0


class Chaos:
    """Talks to the relay under test: faults, health, waits."""

    def __init__(self, relay: Server) -> None:
        self.client = httpx.Client(base_url=relay.base_url, timeout=REQUEST_TIMEOUT_S)
        self.relay = relay

    def fail(self, message: str) -> None:
        pytest.fail(f"{message}\n--- relay log tail ---\n{log_tail(self.relay.log_path, 40)}")

    def actors(self) -> dict[str, dict[str, Any]] | None:
        """``/health.actors`` (also from a 503 answer), or None if the relay is not answering."""
        try:
            actors: dict[str, dict[str, Any]] = self.client.get("/health").json()["actors"]
        except (httpx.HTTPError, ValueError, KeyError):
            return None
        return actors

    def inject(self, actor: str, kind: str, seconds: float = 0.0) -> None:
        assert inject(self.client, actor, kind, seconds) == "ok"

    def wait_restarted(self, actor: str, expected: dict[str, int]) -> None:
        deadline = time.monotonic() + RESTART_TIMEOUT_S
        last: dict[str, Any] | None = None
        while time.monotonic() < deadline:
            if self.relay.proc.poll() is not None:
                self.fail(
                    f"the relay exited with {self.relay.proc.returncode} after {actor} crashed"
                )
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


class Poster(threading.Thread):
    """Posts to both endpoints at :data:`RATE_PER_S` until stopped; never retries a payload."""

    def __init__(self, base_url: str, stop: threading.Event) -> None:
        super().__init__(name="poster", daemon=True)
        self.base_url = base_url
        self.stop = stop
        self.records: list[Record] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.records = run_load(
                self.base_url, RATE_PER_S, time.monotonic(), math.inf, self.stop
            )
        except BaseException as exc:  # reported by the test, never lost with the thread
            self.error = exc


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as llm:
        yield llm


@pytest.fixture
def hearing() -> Iterator[Hearing]:
    """The system audio's capture program, and a speech service with a new sentence each time."""
    with VariedStt() as stt:
        yield Hearing(stt, AUDIO_SPEED)


def heard_after(chaos: Chaos, reader: Reader, hearing: Hearing) -> int:
    """Wait for a transcript stored from now on; exactly one capture process meanwhile."""
    before = stored(labels(reader))["system"]
    deadline = time.monotonic() + HEARD_TIMEOUT_S
    while time.monotonic() < deadline:
        if stored(labels(reader))["system"] > before:
            return len(hearing.processes(chaos.relay.proc.pid)["system"])
        time.sleep(0.05)
    chaos.fail(f"no transcript stored within {HEARD_TIMEOUT_S} s after the audio crashes")
    return 0


def test_no_acknowledged_post_is_lost_while_every_actor_crashes_and_hangs(
    tmp_path: Path, fake_llm: FakeLLM, hearing: Hearing
) -> None:
    env = relay_env(
        RELAY_DATA_DIR=str(tmp_path / "data"),
        RELAY_FAULTS="1",
        RELAY_ACTOR_TIMEOUT_MS=str(ACTOR_TIMEOUT_MS),
        OPENROUTER_API_KEY="unused",
        AGENT_BASE_URL=fake_llm.base_url,
        AGENT_INTERVAL_MS="200",
        AGENT_TIMEOUT_MS="1000",
        AGENT_ECONOMY="false",
        **{k: v for k, v in hearing.env().items() if k != "MIC_SOURCE"},
    )
    stop_posting, stop_reading = threading.Event(), threading.Event()
    with server_process(["run.py"], tmp_path / "relay.log", env=env) as relay:
        poster = Poster(relay.base_url, stop_posting)
        readers = {
            e: Reader(
                relay.base_url,
                e,
                stop_reading,
                pollers=1,
                pause_s=READER_PAUSE_S,
                timeout_s=REQUEST_TIMEOUT_S,
            )
            for e in ENDPOINTS
        }
        chaos = Chaos(relay)
        try:
            poster.start()
            for reader in readers.values():
                reader.start()
            time.sleep(SETTLE_S)

            expected = dict.fromkeys((*ALL_ACTORS, *AUDIO_ACTORS), 0)
            for actor in CRASHED:
                chaos.inject(actor, "crash")
                expected[actor] += 1
                chaos.wait_restarted(actor, expected)
                time.sleep(SETTLE_S)
            capturing = heard_after(chaos, readers["/feed"], hearing)
            for actor in HUNG:
                chaos.inject(actor, "hang", HANG_S)
                time.sleep(HANG_S)
                chaos.wait_answering(f"/{actor}", timeout_s=5.0)
                time.sleep(SETTLE_S)
            llm_url = fake_llm.base_url.removesuffix("/v1")
            now = time.monotonic()
            drill = LLMDrill(
                llm_url, relay.base_url, now, math.inf, visit_s=DRILL_VISIT_S, rounds=1
            )
            drill.run()
            drilled = drill.requests(chaos.client)

            stop_posting.set()
            poster.join(timeout=REQUEST_TIMEOUT_S + 3)
            acked = {e: acked_by_id(poster.records, e) for e in ENDPOINTS}
            catch_up(readers, acked, CATCH_UP_S)
            final_actors = chaos.actors()
            final_rings = {
                e: chaos.client.get(e, params={"after": 0}).json()[ITEMS_KEY[e]] for e in ENDPOINTS
            }
            assert relay.proc.poll() is None, f"the relay exited with {relay.proc.returncode}"
        finally:
            stop_posting.set()
            stop_reading.set()
            poster.join(timeout=REQUEST_TIMEOUT_S + 3)
            chaos.client.close()

    assert not poster.is_alive(), "the poster did not stop"
    assert poster.error is None, f"the poster died: {poster.error!r}"
    for reader in readers.values():
        assert not any(t.is_alive() for t in reader.threads), f"{reader.endpoint} did not stop"
        assert not reader.errors, f"the reader of {reader.endpoint} died: {reader.errors!r}"
    tail = f"\n--- relay log tail ---\n{log_tail(tmp_path / 'relay.log', 40)}"

    for endpoint in ENDPOINTS:
        reader, state = readers[endpoint], readers[endpoint].state
        records = [r for r in poster.records if r.endpoint == endpoint]
        acks = [r for r in records if r.id >= 0]
        assert not state.behind, (
            f"the test is wrong, not the relay: the reader of {endpoint} fell behind by more "
            f"than the ring ({RING[endpoint]}); post slower or read faster: {state.behind}"
        )
        assert len(acks) > 100, f"too few acknowledged posts to {endpoint}: {len(acks)}"
        assert state.polls > 100, f"too few successful reads of {endpoint}: {state.polls}"
        bad_bodies = [r for r in records if r.status == "200-bad-body"]
        assert not bad_bodies, f"{endpoint}: 200 answers without an id: {bad_bodies[:5]}"
        assert not state.violations, f"{endpoint}: {state.violations}{tail}"
        assert len(state.epochs) == 1, f"{endpoint}: the epoch changed: {state.epochs}"

        assert len(acked[endpoint]) == len(acks), f"{endpoint}: an id was acknowledged twice"
        lost, changed = reader.unseen_and_changed(acked[endpoint])
        assert not lost, (
            f"{endpoint}: {len(lost)} acknowledged posts never seen by the reader, "
            f"first {lost[:5]}{tail}"
        )
        assert not changed, f"{endpoint}: acknowledged posts changed: {changed[:5]}{tail}"
        _absent, _other, not_as_read = reader.ring_differences(
            final_rings[endpoint], acked[endpoint]
        )
        assert not not_as_read, (
            f"{endpoint}: the final ring holds ids {not_as_read} other than the reader saw them"
        )

        span, count, reasons = longest_failing_run(records)
        assert span < MAX_FAILING_S, (
            f"POST {endpoint} kept failing for {span:.2f} s ({count} posts in a row: {reasons})"
        )

    assert drill.error is None, f"the LLM drill died: {drill.error!r}"
    assert drilled is not None, "no /metrics after the drill"
    unmet = [m for m in LLM_FAULTS if drilled[m, "ok"] + drilled[m, "error"] == 0]
    assert not unmet, f"fault modes that met no request: {unmet}; visits {drill.visits}{tail}"
    asked = {r.body.get("model") for r in fake_llm.requests}
    assert {f"drill/{m}" for m in LLM_FAULTS} <= asked, f"the fake LLM saw models {asked}"

    assert final_actors is not None, "no /health at the end"
    assert capturing == 1, f"{capturing} capture processes after the capture crashed{tail}"
    restarts = {name: final_actors[name]["restarts"] for name in (*ALL_ACTORS, *AUDIO_ACTORS)}
    assert restarts == expected, f"restarts {restarts}, injected {expected}{tail}"
    assert all(a["alive"] and a["state"] == "running" for a in final_actors.values()), final_actors
