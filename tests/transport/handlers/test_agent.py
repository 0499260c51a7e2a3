"""The agent's answers over HTTP: what a client reads of the digest and the window."""

from __future__ import annotations

from collections.abc import Callable

from actors.tree import Relay
from tests.support.actor_calls import tick
from tests.support.observe import LogSink
from tests.support.relay import client_for, relay_settings
from transport.agent.fake_llm import FakeLLM

CLIENT_TS = 1_769_901_100_000.75
"""A capture client's clock with a fraction of a millisecond, as Python's ``time.time()``
gives it."""


def test_app_switch_times_are_whole_epoch_milliseconds_in_the_digest_and_the_window(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink
) -> None:
    relay = make_relay(relay_settings(fake_llm))
    event = {"type": "text", "ts": CLIENT_TS, "ocr": "pytest -x", "meta": {"app": "Code"}}
    with client_for(relay) as client:
        assert client.post("/sense", json=event).status_code == 200
        window = client.get("/agent/context").json()["context"]
        assert tick(relay, logs) == "ok"
        digest = client.get("/agent/digest").json()["digest"]
        raw = client.get("/agent/digest").content

    for switches in (window["appHistory"], digest["appHistory"]):
        assert [s["ts"] for s in switches] == [1_769_901_100_001]
        assert all(type(s["ts"]) is int for s in switches)
    assert b'"ts":1769901100001}' in raw  # no fraction, no exponent on the wire
