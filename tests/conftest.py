"""Shared fixtures: a log sink, a fake clock, storage, the fake LLM, a whole relay on a free
port and an HTTP client of it. Plain functions, classes and constants are in
:mod:`tests.support`."""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pykka
import pytest
import structlog

from actors.core.error_text import safe_text
from actors.kernel.clock import FakeClock
from actors.kernel.scrubber import use_scrubber
from actors.kernel.storage import StorageInfo, close_storage, open_storage
from actors.tree import Relay, start_relay
from config.logs import configure_logging
from config.settings import Settings
from tests.support.observe import LogSink
from tests.support.relay import client_for, relay_settings
from transport.agent.fake_llm import FakeLLM
from transport.demo.fake_stt import FakeStt
from transport.frontend import HttpFrontend
from transport.streams import limits as stream_limits

SINK = LogSink()

use_scrubber(safe_text)  # as start_relay does: actors a test starts by hand scrub alike


@pytest.fixture(autouse=True)
def logs() -> LogSink:
    """Route structlog into :data:`SINK` (no caching, so every logger sees it)."""
    structlog.configure(
        processors=[structlog.contextvars.merge_contextvars, SINK],
        wrapper_class=structlog.make_filtering_bound_logger(0),
        cache_logger_on_first_use=False,
    )
    SINK.clear()
    return SINK


@pytest.fixture
def rendered_logs() -> Iterator[io.StringIO]:
    """Every log line of the test as the relay writes it in production (JSON, at debug, the
    standard library's loggers such as pykka's included), in place of :func:`logs`'s sink."""
    out = io.StringIO()
    root = logging.getLogger()
    named = ("pykka", "httpx", "httpcore", "aiohttp.access")
    saved = root.handlers[:], root.level, {name: logging.getLogger(name).level for name in named}
    configure_logging("json", "debug", stream=out, cache=False)
    yield out
    handlers, level, levels = saved
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, named_level in levels.items():
        logging.getLogger(name).setLevel(named_level)


@pytest.fixture(autouse=True)
def _stop_all_actors() -> Iterator[None]:
    """Stop every actor a test left running, newest first; a hung one is abandoned."""
    yield
    for ref in reversed(pykka.ActorRegistry.get_all()):
        with contextlib.suppress(pykka.Timeout, pykka.ActorDeadError):
            ref.stop(block=True, timeout=5)


@pytest.fixture
def no_scrubber() -> Iterator[None]:
    """The kernel as it is before anyone hands it a scrubber; the tests' own put back after."""
    previous = use_scrubber(None)
    yield
    use_scrubber(previous)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[StorageInfo]:
    """Real database files in the test's temporary directory, locked for the test."""
    info = open_storage(str(tmp_path / "data"))
    yield info
    close_storage(info)


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as llm:
        yield llm


@pytest.fixture
def fake_stt() -> Iterator[FakeStt]:
    with FakeStt() as stt:
        yield stt


@pytest.fixture
def make_relay(clock: FakeClock) -> Iterator[Callable[..., Relay]]:
    """Start a whole relay on the fake clock; it is stopped after the test."""
    started: list[Relay] = []

    def make(settings: Settings | None = None, **kwargs: Any) -> Relay:
        settings = settings or relay_settings()
        relay = start_relay(settings, clock, frontend=HttpFrontend(settings), **kwargs)
        started.append(relay)
        return relay

    yield make
    for relay in started:
        relay.stop(timeout_s=10)


@pytest.fixture
def relay(make_relay: Callable[..., Relay], fake_llm: FakeLLM) -> Relay:
    """A whole relay whose agent calls the fake LLM; it ticks only when a test asks (see
    :func:`tests.support.relay.relay_settings`). A module that wants the agent off overrides this
    fixture with ``make_relay()``; :func:`client` then talks to that relay."""
    return make_relay(relay_settings(fake_llm))


@pytest.fixture
def client(relay: Relay) -> Iterator[httpx.Client]:
    """An HTTP client of :func:`relay` (5 s timeout)."""
    with client_for(relay) as c:
        yield c


@pytest.fixture
def quick_stream_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream whose client left frees its slot within 50 ms, not a second (use it with
    ``pytestmark = pytest.mark.usefixtures("quick_stream_checks")``)."""
    monkeypatch.setattr(stream_limits, "CLIENT_CHECK_S", 0.05)
