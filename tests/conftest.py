"""Shared fixtures: a log sink, a fake clock, the fake LLM, a whole relay on a free port."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pykka
import pytest
import structlog

from actors.kernel.clock import FakeClock
from actors.kernel.storage import StorageInfo, close_storage, open_storage
from actors.tree import Relay, start_relay
from config.settings import AgentConfig, Settings
from transport.demo.fake_llm import FakeLLM

HOUR_MS = 3_600_000


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


SINK = LogSink()


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


@pytest.fixture(autouse=True)
def _stop_all_actors() -> Iterator[None]:
    """Stop every actor a test left running, newest first; a hung one is abandoned."""
    yield
    for ref in reversed(pykka.ActorRegistry.get_all()):
        with contextlib.suppress(pykka.Timeout, pykka.ActorDeadError):
            ref.stop(block=True, timeout=5)


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


def relay_settings(fake_llm: FakeLLM | None = None, **agent: Any) -> Settings:
    """Settings for a test relay: a free port, an hour-long interval and debounce (tests tick
    by hand, or set ``interval_ms``/``debounce_ms`` to test the schedule)."""
    config = AgentConfig(interval_ms=HOUR_MS, debounce_ms=HOUR_MS, timeout_ms=2_000)
    if fake_llm is not None:
        config = replace(config, base_url=fake_llm.base_url, api_key="test-key")
    return Settings(
        port=0, actor_timeout_ms=1_000, data_dir=":memory:", agent=replace(config, **agent)
    )


@pytest.fixture
def make_relay(clock: FakeClock) -> Iterator[Callable[..., Relay]]:
    """Start a whole relay on the fake clock; it is stopped after the test."""
    started: list[Relay] = []

    def make(settings: Settings | None = None, **kwargs: Any) -> Relay:
        relay = start_relay(settings or relay_settings(), clock, **kwargs)
        started.append(relay)
        return relay

    yield make
    for relay in started:
        relay.stop(timeout_s=10)
