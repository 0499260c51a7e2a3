"""``/health`` reflects every write whose answer came before it was asked (read-your-writes).

A monitoring script checks a count right after a write: each test reads ``/health`` before
the write too, so a shared or cached answer from before the write would be caught.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

import httpx

from actors.agent.ticker import Ticker
from actors.common.check import Check
from actors.kernel.base import ChildHandle
from actors.tree import Relay
from tests.support.observe import wait_until
from tests.support.relay import client_for, relay_settings
from transport.frontend import HttpFrontend

ROUNDS = 20


def health(client: httpx.Client) -> dict[str, Any]:
    response = client.get("/health")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_health_counts_each_feed_post_answered_before_it(client: httpx.Client) -> None:
    for n in range(1, ROUNDS + 1):
        health(client)
        assert client.post("/feed", json={"text": f"message {n}"}).status_code == 200
        assert health(client)["messages"] == n


def test_health_counts_each_sense_post_answered_before_it(client: httpx.Client) -> None:
    for n in range(1, ROUNDS + 1):
        health(client)
        event = {"type": "text", "ts": 1_000 + n, "ocr": f"screen {n}", "meta": {"app": "code"}}
        assert client.post("/sense", json=event).status_code == 200
        assert health(client)["senseEvents"] == n


def test_health_shows_a_config_change_at_once(client: httpx.Client) -> None:
    for n in range(ROUNDS):
        enabled = n % 2 == 1
        health(client)
        assert client.post("/agent/config", json={"enabled": enabled}).status_code == 200
        assert health(client)["agent"]["enabled"] is enabled


def test_health_counts_a_tick_entry_once_it_can_be_read(client: httpx.Client, relay: Relay) -> None:
    """An entry readable at ``/agent/last`` is counted in ``/health`` asked after it."""
    ticker: ChildHandle[Ticker] = relay.handles["ticker"]
    for n in range(1, 6):
        event = {"type": "text", "ts": n, "ocr": f"def tick_{n}():", "meta": {"app": "code"}}
        assert client.post("/sense", json=event).status_code == 200
        health(client)
        assert ticker.ask(Ticker.tick).result(timeout=5) == "started"

        def stored(n: int = n) -> bool:
            return (client.get("/agent/last").json()["result"] or {}).get("id") == n

        wait_until(stored, what=f"entry {n}")
        assert health(client)["agent"]["totalCalls"] == n


def test_health_shows_the_checks_and_what_they_found_to_the_token_holder_only(
    make_relay: Callable[..., Relay],
) -> None:
    token = "health-test-token-1234"
    relay = make_relay(replace(relay_settings(), token=token))
    found = Check("llm server", "FAIL", "http://10.0.0.7/v1 is unreachable", "check AGENT_BASE_URL")
    cast("HttpFrontend", relay.frontend).checks.publish((found,))
    with client_for(relay) as client:
        authorized = {"Authorization": f"Bearer {token}"}
        (shown,) = client.get("/health", headers=authorized).json()["checks"]
        (hidden,) = client.get("/health").json()["checks"]
    assert shown == {
        "name": "llm server",
        "verdict": "FAIL",
        "found": found.found,
        "remedy": found.remedy,
    }
    assert hidden == {"name": "llm server", "verdict": "FAIL", "found": None, "remedy": None}
