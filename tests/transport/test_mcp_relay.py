"""The MCP server's client of the relay: where the relay is, and each failure as one line."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from config.common.errors import ConfigError
from transport.mcp.relay import RelayAddress, RelayCallFailed, RelayClient, default_address

URL = "http://127.0.0.1:18791"


def test_default_address_is_the_relays_own_settings() -> None:
    assert default_address({}) == RelayAddress(URL, "")
    env = {"RELAY_HOST": "0.0.0.0", "RELAY_PORT": "9500", "RELAY_TOKEN": "s3cret-token"}
    assert default_address(env) == RelayAddress("http://127.0.0.1:9500", "s3cret-token")
    assert default_address({"RELAY_HOST": "::1"}).url == "http://[::1]:18791"
    assert default_address({"RELAY_HOST": "::"}).url == "http://127.0.0.1:18791"
    assert default_address({"RELAY_HOST": "my-laptop.local"}).url == "http://my-laptop.local:18791"
    listed = default_address({"RELAY_ALLOWED_HOSTS": "My-Laptop.local., tunnel.example:8443"})
    assert listed.allowed_hosts == ("my-laptop.local", "tunnel.example:8443")


def test_an_invalid_setting_is_named() -> None:
    with pytest.raises(ConfigError, match="RELAY_PORT"):
        default_address({"RELAY_PORT": "eighty"})


def call(
    handler: Any, method: str = "GET", body: dict[str, Any] | None = None, token: str = ""
) -> Any:
    """One call through a client whose transport is ``handler`` (``httpx.MockTransport``)."""

    async def go() -> Any:
        relay = RelayClient(RelayAddress(URL, token), transport=httpx.MockTransport(handler))
        try:
            if method == "POST":
                return await relay.post("/feed", body or {})
            return await relay.get("/health", {"after": 3})
        finally:
            await relay.aclose()

    return anyio.run(go)


def failure(handler: Any, **kwargs: Any) -> str:
    with pytest.raises(RelayCallFailed) as raised:
        call(handler, **kwargs)
    text = str(raised.value)
    assert "\n" not in text
    return text


def test_the_token_is_sent_as_a_bearer_and_the_answer_is_its_json() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"ok": True, "n": "é"})

    assert call(handler, token="s3cret-token") == {"ok": True, "n": "é"}
    assert seen[0].headers["authorization"] == "Bearer s3cret-token"
    assert seen[0].url.params["after"] == "3"
    call(handler)
    assert "authorization" not in seen[1].headers


def test_each_failure_is_one_clear_line() -> None:
    def status(code: int, **kwargs: Any) -> Any:
        return lambda _request: httpx.Response(code, **kwargs)

    error = {"ok": False, "error": "bad\nthing"}
    assert failure(status(500, json=error)) == "the relay answered 500 to GET /health: bad thing"
    assert "401 to GET /health" in failure(status(401, json=error))
    assert "RELAY_TOKEN" in failure(status(401, json=error))
    assert failure(status(502, text="<html>")).endswith("502 to GET /health: Bad Gateway")
    assert failure(status(200, text="<html>")) == "the relay's answer to GET /health is not JSON"
    assert failure(status(200, json=error), method="POST") == (
        "the relay refused POST /feed: bad thing"
    )

    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    assert failure(timeout) == f"the relay at {URL} did not answer GET /health within 10 s"
