"""What the tests share besides fixtures: waits, the log sink, a test relay's settings and the
calls tests make into it, shared test data, and ``python run.py`` subprocesses.

Fixtures are in ``tests/conftest.py`` (found by name); test modules import plain functions,
classes and constants from here and never from one another. The process helpers build on
:mod:`tests.support.harness` (a free port, the relay's environment, waiting for an answer); import
``ROOT`` and ``free_port`` from there.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import logging
import random
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import replace
from pathlib import Path
from typing import IO, Any, Concatenate, ParamSpec, TypeVar

import httpx
import msgspec
import pytest
import structlog
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from prometheus_client.parser import text_string_to_metric_families

from actors.agent.core.completion import Analysis
from actors.agent.core.ticks import LLMAttempt, TickResult
from actors.agent.core.window import build_context_window, extract_audio
from actors.agent.digest_store import DigestStore
from actors.agent.ticker import Ticker
from actors.core.bodies import FeedInput, convert, sense_input
from actors.core.records import FeedRecord, SensePost
from actors.core.redaction_rules import marker
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from actors.kernel.base import ChildHandle, RelayActor, Reporter
from actors.kernel.clock import FakeClock
from actors.kernel.supervisor import ChildSpec, Supervisor
from actors.tree import Relay
from config.agent_settings import AgentSettings
from config.audio.settings import AudioConfig
from config.logs import QUIET_LOGGERS, configure_logging
from config.settings import Settings
from tests.support import harness
from tests.support.harness import HOST, ROOT
from transport.demo.fake_llm import FakeLLM
from transport.demo.fake_stt import FakeStt
from transport.demo.replay import SessionEvent, load_session

# -- waiting and logs ----------------------------------------------------------------------------


def wait_until(predicate: Callable[[], Any], timeout_s: float = 5.0, what: str = "") -> Any:
    """Poll ``predicate`` until it returns something truthy; fail the test after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout_s} s waiting for {what or predicate}")
        time.sleep(0.01)


@contextlib.contextmanager
def rendered_logs() -> Iterator[io.StringIO]:
    """The relay's log as production writes it (:func:`config.logs.configure_logging`, JSON,
    level info), into the yielded buffer: what would fail to render shows here, as it would
    on stdout. The standard library's logging is put back after (the ``logs`` fixture puts
    structlog back for the next test)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: logging.getLogger(name).level for name in QUIET_LOGGERS}
    buffer = io.StringIO()
    configure_logging("json", "info", stream=buffer, cache=False)
    try:
        yield buffer
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        for name, was in levels.items():
            logging.getLogger(name).setLevel(was)


class LogSink:
    """Every structlog event of the test, as dicts (thread-safe, unlike capture_logs)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[dict[str, Any]] = []

    def __call__(self, _logger: Any, method: str, event: MutableMapping[str, Any]) -> Any:
        with self._lock:
            self.events.append({**event, "level": method})
        raise structlog.DropEvent

    def named(self, name: str) -> list[dict[str, Any]]:
        """Events whose name is ``name``."""
        with self._lock:
            return [e for e in self.events if e.get("event") == name]

    def clear(self) -> None:
        with self._lock:
            self.events.clear()


# -- a test relay --------------------------------------------------------------------------------

HOUR_MS = 3_600_000


def relay_settings(
    fake_llm: FakeLLM | None = None, fake_stt: FakeStt | None = None, **agent: Any
) -> Settings:
    """Settings for a test relay: a free port, an hour-long interval and debounce (tests tick
    by hand, or set ``interval_ms``/``debounce_ms`` to test the schedule), every new window
    called (``economy=True`` to judge changes as the relay does by default); with
    ``fake_stt``, its transcriber asks the stand-in speech service (else it has no key and
    sends nothing)."""
    config = AgentSettings(
        interval_ms=HOUR_MS, debounce_ms=HOUR_MS, timeout_ms=2_000, economy=False
    )
    if fake_llm is not None:
        config = replace(config, base_url=fake_llm.base_url, api_key="test-key")
    audio = AudioConfig()
    if fake_stt is not None:
        audio = AudioConfig(stt_api="openai", stt_base_url=fake_stt.base_url, stt_api_key="k")
    return Settings(
        port=0,
        actor_timeout_ms=1_000,
        data_dir=":memory:",
        agent=replace(config, **agent),
        audio=audio,
    )


REMOTE_LLM = "https://llm.example.test/v1"
"""A base URL off this machine, so that the agent needs a key for it (:func:`via_remote`)."""


class _ToFake(httpx.AsyncBaseTransport):
    """Sends what was meant for :data:`REMOTE_LLM` to a stand-in on loopback."""

    def __init__(self, port: int) -> None:
        self._port = port
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.url = request.url.copy_with(scheme="http", host="127.0.0.1", port=self._port)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def via_remote(fake_llm: FakeLLM, **agent: Any) -> tuple[Settings, httpx.AsyncBaseTransport]:
    """Test settings whose agent asks :data:`REMOTE_LLM` (a server that needs a key, unlike
    one on this machine), and the LLM transport that takes its requests to ``fake_llm``:
    ``make_relay(*via_remote(fake))`` with ``llm_transport=`` as the second."""
    settings = relay_settings(fake_llm, **agent)
    remote = replace(settings.agent, base_url=REMOTE_LLM)
    return replace(settings, agent=remote), _ToFake(fake_llm.port)


def base_url(relay: Relay) -> str:
    """Where a relay started in the test listens, as ``http://host:port``."""
    host, port = relay.address()
    return f"http://{host}:{port}"


def client_for(relay: Relay, timeout: float = 5) -> httpx.Client:
    """An HTTP client of ``relay`` (close it, or use it in a ``with``)."""
    return httpx.Client(base_url=base_url(relay), timeout=timeout)


def assert_error(response: httpx.Response, status: int, fragment: str) -> None:
    """``response`` is a JSON error answer ``{ok: false, error}`` of ``status`` whose error holds
    ``fragment``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["ok"] is False
    assert fragment in body["error"], body


def assert_nowhere(secret: str, *texts: str, run: int = 8) -> None:
    """No ``run`` characters in a row of ``secret`` appear in any of ``texts``: neither the
    secret nor a piece of it long enough to matter."""
    for text in texts:
        for start in range(max(len(secret) - run + 1, 1)):
            piece = secret[start : start + run]
            assert piece not in text, f"{piece!r} of the secret in: {text[:2000]}"


def refused_config_change(client: httpx.Client, body: dict[str, Any], status: int) -> str:
    """``POST /agent/config`` of ``body``, which must be refused with ``status`` and change
    nothing ``GET /agent/config`` shows; the error."""
    before = client.get("/agent/config").json()
    refused = client.post("/agent/config", json=body)
    assert refused.status_code == status
    assert refused.json()["ok"] is False
    assert client.get("/agent/config").json() == before
    return str(refused.json()["error"])


TRANSCRIPT = (
    "[PERIODIC] (normal)\nContext (1 entries):\n"
    "[2s ago, openrouter] So what we need to fix is the idle detection"
)
"""A feed message the context builder reads as heard audio."""


def sense(ocr: str = "def build_context_window():", app: str = "idea", ts: int = 1) -> SensePost:
    """A validated screen event, as the transport hands it to the sense buffer."""
    return sense_input({"type": "text", "ts": ts, "ocr": ocr, "meta": {"app": app, "ssim": 0.85}})


def picture(n: int) -> str:
    """A small base64 JPEG-looking image, different for each ``n``."""
    return base64.b64encode(b"\xff\xd8\xff\xe0" + n.to_bytes(2, "big") * 300).decode()


def screen_with_images(n: int) -> dict[str, Any]:
    """Screen event ``n`` as a capture client posts it: every third has no image, every fourth
    a diff image besides its ROI image (``roi.data``, ``diff.data``)."""
    body: dict[str, Any] = {"type": "screen", "ts": n, "ocr": f"screen {n}", "meta": {"app": "x"}}
    if n % 3 != 0:
        body["roi"] = {"x": n, "data": picture(n)}
    if n % 4 == 0:
        body["diff"] = {"w": 2, "data": picture(1000 + n)}
    return body


Act = TypeVar("Act", bound=RelayActor)
Params = ParamSpec("Params")
Result = TypeVar("Result")


def asked(
    handle: ChildHandle[Act],
    method: Callable[Concatenate[Act, Params], Result],
    /,
    *args: Params.args,
    **kwargs: Params.kwargs,
) -> Result:
    """``handle.ask(method, ...)``, its answer waited for; for a buffer, also wait until what
    it wrote is published.

    Ticks read what the buffers published after their commits. An ask's answer is already
    held until the commit that publishes it
    (:meth:`~actors.kernel.durable.DurableActor._deliver`); the ping, which queues behind that
    commit, keeps the wait explicit should a write ever answer before it.
    """
    result = handle.ask(method, *args, **kwargs).result(timeout=5)
    if handle.name in ("feed", "sense"):
        handle.ask(RelayActor.ping).result(timeout=5)
    return result


def last_entry(relay: Relay) -> dict[str, Any]:
    """The digest store's newest entry (``/agent/last``'s ``result``); fails if there is none."""
    last = asked(relay.handles["digest"], DigestStore.last)
    assert last is not None, "the digest store has no entry yet"
    shown: dict[str, Any] = msgspec.to_builtins(last)
    return shown


def answered_tick(model: str, *, cost: float | None = None, fallback: bool = False) -> TickResult:
    """A tick that ``model`` answered (after a failed request to another model), as the LLM
    caller hands it to the digest store: 1,000 tokens in, 100 out."""
    return TickResult(
        tick_id=1,
        analysis=Analysis(hud="h", digest="d", parsed_ok=True),
        window=build_context_window([], [], now_ms=0, max_age_ms=1),
        model=model,
        latency_ms=1,
        tokens_in=1_000,
        tokens_out=100,
        push_to_feed=False,
        cost_usd=cost,
        fallback=fallback,
        attempts=(LLMAttempt("first", 2.0, ok=False), LLMAttempt(model, 0.4, ok=True)),
    )


def tick(relay: Relay, logs: LogSink) -> str:
    """Run one tick by hand and return its outcome (``inactive``/``busy`` if none ran). An
    ``ok`` tick's entry is recorded by then (stamped with the clock's time before the test
    moves it on): the LLM caller tells the digest store before the ticker."""
    before = len(logs.named("tick"))
    started = asked(relay.handles["ticker"], Ticker.tick)
    if started != "started":
        return str(started)
    wait_until(lambda: len(logs.named("tick")) > before, what="the tick to finish")
    outcome = str(logs.named("tick")[-1]["outcome"])
    if outcome == "ok":
        asked(relay.handles["digest"], DigestStore.stats)  # queued behind the record
    return outcome


def pinned(package: str) -> SpecifierSet:
    """The versions of ``package`` that ``pyproject.toml``'s dependencies allow."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = [Requirement(line) for line in project["project"]["dependencies"]]
    return next(pin.specifier for pin in pins if pin.name == package)


def restarted(handle: ChildHandle[Any], count: int) -> bool:
    """Whether the child behind ``handle`` was restarted ``count`` times and is up again."""
    return bool(handle.restarts == count and handle.alive)


class Held(RelayActor):
    """An actor whose calls begin, then wait until the test releases them: a call the actor
    has taken and not yet answered (a slow commit, a long batch)."""

    name = "held"

    def __init__(
        self, *, begun: threading.Event, release: threading.Event, report: Reporter | None = None
    ) -> None:
        super().__init__(report=report)
        self._begun = begun
        self._release = release
        self.done: list[int] = []

    def double(self, n: int) -> int:
        self._begun.set()
        self._release.wait(10)
        self.done.append(n)
        return 2 * n

    def append_many(self, items: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(self.double(n) for n in items)


def held(clock: FakeClock, begun: threading.Event, release: threading.Event) -> ChildHandle[Held]:
    """A supervised :class:`Held` actor, started (stopped by the ``_stop_all_actors`` fixture)."""
    handle: ChildHandle[Held] = ChildHandle("held")
    spec = ChildSpec("held", lambda r: Held.start(begun=begun, release=release, report=r), handle)
    Supervisor.start(name="t", children=[spec], clock=clock).proxy().ping().get(timeout=5)
    return handle


# -- metrics -------------------------------------------------------------------------------------

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(client: httpx.Client, **kwargs: Any) -> Samples:
    """Every sample of one ``GET /metrics``, by name and labels (parsed by prometheus-client)."""
    response = client.get("/metrics", **kwargs)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float | None:
    """The sample ``name{labels}``, or ``None`` if the scrape has none."""
    return samples.get((name, tuple(sorted(labels.items()))))


# -- the agent's schedule ------------------------------------------------------------------------


def ticker_status(relay: Relay) -> dict[str, Any]:
    """The Ticker's status, answered after every message already in its mailbox."""
    return asked(relay.handles["ticker"], Ticker.status)


def show(relay: Relay, ocr: str = "def tick():", app: str = "code") -> None:
    """A screen event, stored, published and seen by the Ticker."""
    asked(relay.handles["sense"], SenseBuffer.append, sense(ocr=ocr, app=app))
    ticker_status(relay)


def hear(relay: Relay) -> None:
    """A transcript, stored, published and seen by the Ticker."""
    asked(relay.handles["feed"], FeedBuffer.append, TRANSCRIPT, "normal")
    ticker_status(relay)


def advance(relay: Relay, clock: FakeClock, seconds: float) -> dict[str, Any]:
    """Move the clock; return the Ticker's status once it has handled what came due."""
    clock.advance(seconds)
    return ticker_status(relay)


def settled(relay: Relay, logs: LogSink, ticks: int) -> list[dict[str, Any]]:
    """Wait until ``ticks`` ticks have ended and the tick slot is free; their log lines."""
    wait_until(lambda: len(logs.named("tick")) >= ticks, what=f"{ticks} tick(s) to end")
    wait_until(lambda: not ticker_status(relay)["inFlight"], what="the tick slot to free")
    return logs.named("tick")


# -- test data -----------------------------------------------------------------------------------

FIXTURES = Path(__file__).resolve().parent / "fixtures"
RECORDED = FIXTURES / "capture_client_sense.json"
"""``POST /sense`` bodies as sinain's capture client really sent them."""


def jpeg(seed: int, size: int = 600) -> bytes:
    """``size`` bytes that read as a JPEG (its start and end markers), distinct per ``seed``:
    the relay checks an image's signature, never decodes its pixels."""
    body = random.Random(seed).randbytes(max(size - 6, 0))
    return (b"\xff\xd8\xff\xe0" + body + b"\xff\xd9")[:size]


def png(seed: int, size: int = 600) -> bytes:
    """Like :func:`jpeg`, with a PNG's signature."""
    return (b"\x89PNG\r\n\x1a\n" + random.Random(seed).randbytes(size))[:size]


def screen_event(ocr: str, picture: bytes | str | None = None, **fields: Any) -> dict[str, Any]:
    """A ``POST /sense`` body as the capture client sends one, with ``picture`` (bytes:
    base64-encoded; a string: as it is) as its ``roi.data``."""
    body: dict[str, Any] = {"type": "text", "ts": 1, "ocr": ocr, "meta": {"app": "Code"}}
    if picture is not None:
        data = picture if isinstance(picture, str) else base64.b64encode(picture).decode()
        body["roi"] = {"data": data, "bbox": [0, 0, 384, 216], "thumb": True}
    return {**body, **fields}


def recorded() -> list[dict[str, Any]]:
    """The capture client's recorded ``POST /sense`` bodies (a new list each call)."""
    events: list[dict[str, Any]] = json.loads(RECORDED.read_text(encoding="utf-8"))
    return events


def assert_session_accepted(path: Path) -> tuple[SessionEvent, ...]:
    """Check that every line of a session file is a request the relay accepts, in the shape
    Sinain's clients send: a feed post the agent hears, or the capture client's screen event
    field for field. Returns the session."""
    lines = path.read_text(encoding="utf-8").splitlines()
    events = load_session(path)
    assert len(lines) == len(events)
    for number, line in enumerate(lines, start=1):
        raw = json.loads(line)
        assert set(raw) == {"at", "path", "body"}, number
        body = raw["body"]
        if raw["path"] == "/feed":
            message = convert(body, FeedInput).record()
            assert message.priority == "normal"
            assert extract_audio(FeedRecord.stored(1, 0, message)), number
            continue
        assert raw["path"] == "/sense", number
        sense_input(body)
        assert body["type"] in ("text", "visual", "context"), number
        assert isinstance(body["ts"], float), number
        assert isinstance(body["ocr"], str), number
        assert set(body["meta"]) == {"ssim", "app", "windowTitle", "screen"}, number
        assert set(body["observation"]) <= {"title", "subtitle", "facts", "narrative", "concepts"}
        assert {"title", "subtitle", "facts"} <= set(body["observation"]), number
        if "roi" in body:
            assert set(body["roi"]) == {"data", "bbox", "thumb"}, number
            assert len(body["roi"]["data"]) < 1024, number
        if body["type"] != "context":
            assert body["ocr"], number
    return events


# Secrets the redaction tests post, and the markers that replace them.
SK = "sk-proj-Ab12Cd34Ef56Gh78Ij90KlMnOpQrSt"
GHP = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
AWS = "AKIAIOSFODNN7EXAMPLE"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
VISA = "4111 1111 1111 1111"
"""The classic test number: it passes Luhn."""
P = marker("private")
A = marker("api-key")
W = marker("aws-key")
T = marker("token")
PW = marker("password")
C = marker("card")


def capture_with_secrets() -> dict[str, Any]:
    """The capture client's recorded shape with secrets in every kind of field."""
    body = recorded()[1]
    return {
        **body,
        "ocr": body["ocr"] + f"\nOPENAI_API_KEY={SK}",
        "meta": {**body["meta"], "windowTitle": f"password=hunter2 — {body['meta']['app']}"},
        "roi": {**body["roi"], "data": AWS + "/9j/4AAQ", "label": AWS},
        "observation": {
            **body["observation"],
            "facts": [*body["observation"]["facts"], f"card: {VISA}"],
            "narrative": f"The user pastes {JWT} into a form",
            "concepts": ["auth", f"<private>{GHP}</private>"],
        },
        "extra": {"nested": [{"note": f"Bearer {GHP}"}], "n": 4111111111111111},
    }


# -- python run.py -------------------------------------------------------------------------------


def relay_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a test relay: none of the relay's own settings from outside (no key,
    no token; see :func:`harness.relay_env`), its own data directory, and ``extra``."""
    return harness.relay_env(RELAY_DATA_DIR=str(data_dir), **extra)


def spawn_relay(
    port: int,
    env: dict[str, str],
    *args: str,
    stdout: int | IO[bytes] = subprocess.PIPE,
    stderr: int | IO[bytes] = subprocess.PIPE,
    nofile: int | None = None,
) -> subprocess.Popen[bytes]:
    """``python run.py ARGS --port PORT`` from the repository, its output piped by default;
    with at most ``nofile`` open files (``ulimit -n``) if set."""
    return subprocess.Popen(
        harness.with_open_files(nofile, [sys.executable, "run.py", *args, "--port", str(port)]),
        cwd=ROOT,
        env=env,
        stdout=stdout,
        stderr=stderr,
    )


def run_to_end(
    args: list[str], env: dict[str, str], timeout_s: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python run.py ARGS`` from the repository, to its end: its exit code and output."""
    return subprocess.run(
        [sys.executable, "run.py", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s, check=False,
    )  # fmt: skip


def stopped_once_healthy(port: int, proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """Wait until the relay ``proc`` answers ``GET /health``, stop it with SIGTERM, and return
    its output; it is killed if it outlives the test's patience."""
    try:
        wait_healthy(port, proc)
        proc.send_signal(signal.SIGTERM)
        return proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


def wait_answering(
    url: str, proc: subprocess.Popen[bytes], what: str = "relay", timeout_s: float = 15
) -> None:
    """Wait until ``GET url`` answers 200 (:func:`harness.wait_answering`); fail the test
    if ``proc`` exits first or ``timeout_s`` goes by."""
    try:
        harness.wait_answering(url, proc, what, timeout_s=timeout_s)
    except RuntimeError as exc:
        pytest.fail(str(exc))


def wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 15) -> None:
    """Wait until the relay on ``port`` answers ``GET /health``; fail the test if it exits or
    is late."""
    wait_answering(f"http://{HOST}:{port}/health", proc, timeout_s=timeout_s)
