"""A whole relay in the test's process, as ``make_relay`` (``tests/conftest.py``) starts one:
its settings, an HTTP client of it, and checks of what it answers (errors, ``GET /metrics``)."""

from __future__ import annotations

import functools
import ssl
from dataclasses import replace
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from actors.tree import Relay
from config.agent.settings import AgentSettings
from config.audio.settings import AudioConfig
from config.settings import Settings
from transport.agent.fake_llm import FakeLLM
from transport.demo.fake_stt import FakeStt

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


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for the test process's clients: httpx builds one for every client,
    even of a plain ``http://`` address, and building one reads the whole CA bundle."""
    return httpx.create_ssl_context()


def client_for(relay: Relay, timeout: float = 5) -> httpx.Client:
    """An HTTP client of ``relay`` (close it, or use it in a ``with``)."""
    return httpx.Client(base_url=base_url(relay), timeout=timeout, verify=tls_context())


def assert_error(response: httpx.Response, status: int, fragment: str) -> None:
    """``response`` is a JSON error answer ``{ok: false, error}`` of ``status`` whose error holds
    ``fragment``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["ok"] is False
    assert fragment in body["error"], body


def refused_config_change(client: httpx.Client, body: dict[str, Any], status: int) -> str:
    """``POST /agent/config`` of ``body``, which must be refused with ``status`` and change
    nothing ``GET /agent/config`` shows; the error."""
    before = client.get("/agent/config").json()
    refused = client.post("/agent/config", json=body)
    assert refused.status_code == status
    assert refused.json()["ok"] is False
    assert client.get("/agent/config").json() == before
    return str(refused.json()["error"])


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
