"""``python run.py mcp`` as agents run it: a subprocess driven by the MCP SDK's own clients
(stdio and Streamable HTTP) against a real relay on loopback."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from actors.tree import Relay
from tests.support import harness
from tests.support.actor_calls import show, tick
from tests.support.harness import ROOT, free_port
from tests.support.observe import LogSink, wait_until
from tests.support.relay import base_url, client_for, relay_settings
from transport.agent.fake_llm import FakeLLM

pytestmark = pytest.mark.slow

TOKEN = "mcp-test-token-5a7263a"
T = TypeVar("T")
READ_ONLY = {
    "sinain_context",
    "sinain_health",
    "sinain_get_escalation",
    "sinain_search",
    "sinain_feed",
}
WRITES = {"sinain_notify", "sinain_respond"}


def run(test: Callable[[], Awaitable[T]], timeout_s: float = 30) -> T:
    """One async test body, failed if it takes longer than ``timeout_s``."""

    async def bounded() -> T:
        with anyio.fail_after(timeout_s):
            return await test()

    return anyio.run(bounded)


@contextlib.asynccontextmanager
async def stdio_session(url: str, errlog: Path, **env: str) -> AsyncIterator[ClientSession]:
    """``python run.py mcp --url URL`` over stdio, initialized; its log in ``errlog``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["run.py", "mcp", "--url", url],
        env=harness.relay_env(**env),
        cwd=ROOT,
    )
    with errlog.open("a") as log:
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write, read_timeout_seconds=15) as session,
        ):
            await session.initialize()
            yield session


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def answer_of(result: CallToolResult) -> Any:
    """A tool's answer: the relay's JSON, pretty-printed."""
    assert not result.is_error, text_of(result)
    text = text_of(result)
    assert text.startswith(("{", "[")) and "\n  " in text, text
    return json.loads(text)


def error_of(result: CallToolResult) -> str:
    """A tool error's text: one line."""
    assert result.is_error
    text = text_of(result)
    assert "\n" not in text
    return text


def test_stdio_lists_every_tool_with_annotations_and_calls_them(
    relay: Relay, logs: LogSink, tmp_path: Path
) -> None:
    show(relay, ocr="def classify(last_input_ms, now_ms):", app="Code")
    assert tick(relay, logs) == "ok"
    url = base_url(relay)

    async def drive() -> dict[str, CallToolResult]:
        async with stdio_session(url, tmp_path / "mcp.log") as session:
            tools = (await session.list_tools()).tools
            listed = {tool.name: tool for tool in tools}
            assert set(listed) == READ_ONLY | WRITES
            for name, tool in listed.items():
                assert tool.annotations is not None and tool.annotations.title, name
                assert tool.annotations.read_only_hint is (name in READ_ONLY), name
                assert tool.annotations.open_world_hint is False, name
                assert tool.description
            assert set(listed["sinain_respond"].input_schema["required"]) == {"id", "response"}
            calls: dict[str, tuple[str, dict[str, Any]]] = {
                "context": ("sinain_context", {}),
                "notify": ("sinain_notify", {"text": "Run the failing test", "priority": "high"}),
                "health": ("sinain_health", {}),
                "feed": ("sinain_feed", {"after": 0}),
                "escalation": ("sinain_get_escalation", {}),
                "respond": ("sinain_respond", {"id": "0123456789abcdef", "response": "hi"}),
                "search": ("sinain_search", {"q": "classify", "since": 0}),
            }
            return {key: await session.call_tool(name, args) for key, (name, args) in calls.items()}

    results = run(drive)

    context = text_of(results["context"])
    assert context.startswith("## Digest\n{") and "\n\n## Context window\n{" in context
    digest_part, window_part = context.removeprefix("## Digest\n").split("\n\n## Context window\n")
    with client_for(relay) as client:
        assert json.loads(digest_part) == client.get("/agent/digest").json()
        assert json.loads(window_part) == client.get("/agent/context").json()
        assert json.loads(digest_part)["digest"]["id"] >= 1  # the tick's digest

        notified = answer_of(results["notify"])
        assert notified["ok"] is True
        items = client.get("/feed", params={"after": 0}).json()["messages"]
        (posted,) = [item for item in items if item["id"] == notified["id"]]
        assert posted["text"] == "Run the failing test"
        assert (posted["channel"], posted["source"], posted["priority"]) == ("agent", "mcp", "high")

        health = answer_of(results["health"])
        assert health["ok"] is True and "agent" in health
        assert notified["id"] in [item["id"] for item in answer_of(results["feed"])["messages"]]

        # escalation off (the default): nothing pending, and an answer is refused in one line
        assert answer_of(results["escalation"]) == client.get("/escalation/pending").json()
        assert "no pending escalation" in error_of(results["respond"])
        history = client.get("/agent/history", params={"q": "classify", "since": 0})
        assert answer_of(results["search"]) == history.json()


def test_an_agent_reads_the_escalation_answers_it_and_finds_the_digest_by_a_word(
    make_relay: Callable[..., Relay], fake_llm: FakeLLM, logs: LogSink, tmp_path: Path
) -> None:
    relay = make_relay(relay_settings(fake_llm, escalation_mode="rich"))
    show(relay, ocr="def classify(last_input_ms, now_ms):", app="Code")
    assert tick(relay, logs) == "ok"
    with client_for(relay) as client:
        pending = client.get("/escalation/pending").json()["escalation"]
    assert pending is not None, "a rich escalation after the tick"

    async def drive() -> tuple[CallToolResult, CallToolResult, CallToolResult]:
        async with stdio_session(base_url(relay), tmp_path / "mcp.log") as session:
            read = await session.call_tool("sinain_get_escalation", {})
            answered = await session.call_tool(
                "sinain_respond", {"id": pending["id"], "response": "Run pytest -k classify"}
            )
            found = await session.call_tool("sinain_search", {"q": "ticker", "since": 0})
            return read, answered, found

    read, answered, found = run(drive)
    assert answer_of(read)["escalation"]["id"] == pending["id"]
    assert answer_of(answered) == {"ok": True}
    with client_for(relay) as client:
        assert client.get("/escalation/pending").json()["escalation"] is None
        items = client.get("/feed", params={"after": 0}).json()["messages"]
    (shown,) = [item for item in items if item["text"].startswith("[🤖] ")]
    assert shown["text"] == "[🤖] Run pytest -k classify"
    assert (shown["channel"], shown["priority"]) == ("agent", "high")
    entries = answer_of(found)["results"]
    assert entries and all("ticker" in (e["digest"] + e["hud"]).lower() for e in entries)


def test_unreachable_relay_is_a_tool_error_and_the_server_keeps_serving(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there

    async def drive() -> list[CallToolResult]:
        async with stdio_session(url, tmp_path / "mcp.log") as session:
            first = await session.call_tool("sinain_health", {})
            second = await session.call_tool("sinain_context", {})
            tools = await session.list_tools()
            assert len(tools.tools) == 7  # still serving
            return [first, second]

    for result in run(drive):
        assert f"the relay at {url} cannot be reached" in error_of(result)
    log = (tmp_path / "mcp.log").read_text()
    assert '"event":"mcp.tool"' in log and '"outcome":"error"' in log


def test_bad_arguments_are_a_tool_error(relay: Relay, tmp_path: Path) -> None:
    async def drive() -> CallToolResult:
        async with stdio_session(base_url(relay), tmp_path / "mcp.log") as session:
            return await session.call_tool("sinain_notify", {"text": "x", "priority": "loud"})

    refused = run(drive)
    assert refused.is_error  # the SDK's own validation text, which names the argument
    assert "priority" in text_of(refused) and "'urgent'" in text_of(refused)
    with client_for(relay) as client:
        assert client.get("/feed", params={"after": 0}).json()["messages"] == []


@pytest.fixture
def token_relay(make_relay: Callable[..., Relay], fake_llm: FakeLLM) -> Relay:
    return make_relay(replace(relay_settings(fake_llm), token=TOKEN))


def test_relay_token_is_sent_and_a_refusal_is_a_tool_error(
    token_relay: Relay, tmp_path: Path
) -> None:
    url = base_url(token_relay)

    async def drive(**env: str) -> CallToolResult:
        async with stdio_session(url, tmp_path / "mcp.log", **env) as session:
            return await session.call_tool("sinain_feed", {})

    refused = error_of(run(drive))
    assert "the relay answered 401 to GET /feed" in refused
    assert "RELAY_TOKEN" in refused
    assert answer_of(run(lambda: drive(RELAY_TOKEN=TOKEN)))["messages"] == []
    assert TOKEN not in (tmp_path / "mcp.log").read_text()


@contextlib.contextmanager
def http_server(relay_url: str, log_path: Path, **env: str) -> Iterator[str]:
    """``python run.py mcp --http --port 0``; yields its endpoint once it listens."""
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "run.py", "mcp", "--http", "--port", "0", "--url", relay_url],
            cwd=ROOT,
            env=harness.relay_env(**env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        yield _listening(proc, log_path)
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def _listening(proc: subprocess.Popen[bytes], log_path: Path) -> str:
    """The endpoint its ``mcp.listening`` line names; fails if it exits or is late."""

    def endpoint() -> str | None:
        assert proc.poll() is None, f"mcp --http exited: {log_path.read_text()}"
        for line in log_path.read_text().splitlines():
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("event") == "mcp.listening":
                return str(event["url"])
        return None

    return str(wait_until(endpoint, timeout_s=20, what="mcp --http to listen"))


async def http_feed(endpoint: str, headers: dict[str, str]) -> CallToolResult:
    """Over Streamable HTTP with the SDK's client: list the tools, read the feed."""
    async with (
        httpx2.AsyncClient(headers=headers, timeout=15) as http,
        streamable_http_client(endpoint, http_client=http) as (read, write),
        ClientSession(read, write, read_timeout_seconds=15) as session,
    ):
        await session.initialize()
        assert len((await session.list_tools()).tools) == 7
        return await session.call_tool("sinain_feed", {})


def test_http_transport_without_a_token(relay: Relay, tmp_path: Path) -> None:
    with http_server(base_url(relay), tmp_path / "mcp.log") as endpoint:
        assert endpoint.startswith("http://127.0.0.1:") and endpoint.endswith("/mcp")
        assert answer_of(run(lambda: http_feed(endpoint, {})))["messages"] == []
        # DNS rebinding: another name for this machine is refused
        foreign = httpx.post(endpoint, json={}, headers={"Host": "evil.example"}, timeout=5)
        assert foreign.status_code == 421


def test_http_transport_needs_the_relays_token(token_relay: Relay, tmp_path: Path) -> None:
    with http_server(base_url(token_relay), tmp_path / "mcp.log", RELAY_TOKEN=TOKEN) as endpoint:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            refused = httpx.post(endpoint, json={}, headers=headers, timeout=5)
            assert refused.status_code == 401
            assert refused.json() == {"ok": False, "error": "missing or wrong bearer token"}
            assert refused.headers["www-authenticate"].startswith("Bearer")
        allowed = {"Authorization": f"Bearer {TOKEN}"}
        assert answer_of(run(lambda: http_feed(endpoint, allowed)))["messages"] == []
    assert TOKEN not in (tmp_path / "mcp.log").read_text()


def _initialize(endpoint: str, **headers: str) -> httpx.Response:
    """One MCP ``initialize`` request, as a client (or a web page) might post it."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    return httpx.post(endpoint, json=body, headers={**accept, **headers}, timeout=5)


def _refused(answer: httpx.Response, status: int, fragment: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    body = answer.json()
    assert body["ok"] is False and fragment in body["error"], body


def test_http_transport_refuses_pages_of_other_origins_and_sites(
    relay: Relay, tmp_path: Path
) -> None:
    with http_server(base_url(relay), tmp_path / "mcp.log") as endpoint:
        port = endpoint.removeprefix("http://127.0.0.1:").partition("/")[0]
        for origin in (
            "http://localhost:3000",
            "http://127.0.0.1:3000",
            "http://[::1]:3000",
            "https://evil.example",
            "null",
        ):
            _refused(_initialize(endpoint, Origin=origin), 403, "web pages")
        for site in ("same-site", "cross-site"):
            _refused(_initialize(endpoint, **{"Sec-Fetch-Site": site}), 403, "Sec-Fetch-Site")
        _refused(_initialize(endpoint, Host="evil.example"), 421, "Host")
        _refused(_initialize(endpoint, Host=f"evil.example:{port}"), 421, "Host")
        # the names the relay serves, with this port or none; no Origin; a site of its own
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}"):
            assert _initialize(endpoint, Host=host).status_code == 200, host
        for site in ("same-origin", "none"):
            assert _initialize(endpoint, **{"Sec-Fetch-Site": site}).status_code == 200, site
        answer = run(lambda: http_feed(endpoint, {"Host": f"localhost:{port}"}))
        assert answer_of(answer)["messages"] == []


def test_http_transport_serves_the_relays_allowed_hosts(relay: Relay, tmp_path: Path) -> None:
    log = tmp_path / "mcp.log"
    with http_server(base_url(relay), log, RELAY_ALLOWED_HOSTS="my-laptop.local") as endpoint:
        port = endpoint.removeprefix("http://127.0.0.1:").partition("/")[0]
        assert _initialize(endpoint, Host=f"my-laptop.local:{port}").status_code == 200
        _refused(_initialize(endpoint, Host=f"other.local:{port}"), 421, "Host")
        _refused(_initialize(endpoint, Origin=f"http://my-laptop.local:{port}"), 403, "web pages")
