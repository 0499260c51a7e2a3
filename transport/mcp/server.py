"""``sinain-relay mcp``: an MCP server for any agent, a client of the relay's HTTP API in a
process of its own, on the official MCP SDK.

The tools carry Sinain's names (``sinain_context``, ``sinain_notify``, ``sinain_health``,
``sinain_get_escalation``, ``sinain_respond``), so prompts written for Sinain's own MCP server
work unchanged; ``sinain_search`` and ``sinain_feed`` go beyond it. Each answers the relay's
JSON pretty-printed as text, as Sinain's does. A relay that cannot be reached, an error status
or a refusal is a tool error of one line; the server keeps serving.

It speaks stdio by default; ``--http`` serves Streamable HTTP on loopback
(:mod:`transport.mcp.http_server`). The relay process never imports this module: ``run.py`` imports
it for the ``mcp`` subcommand only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from types import MethodType
from typing import Annotated, Any, Literal

import anyio
import orjson
import structlog
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from config.common.errors import ConfigError
from config.logs import configure_logging
from transport.mcp.http_server import DEFAULT_PORT, HOST, listen, serve_http
from transport.mcp.relay import RelayCallFailed, RelayClient, default_address

log = structlog.get_logger("mcp")

INSTRUCTIONS = (
    "sinain-relay watches what the user sees and hears. sinain_context tells what the user is "
    "doing now; sinain_get_escalation shows a moment the relay chose for your attention, "
    "answered with sinain_respond; sinain_notify puts a line on the user's HUD."
)

_QUIET = ("mcp", "uvicorn")
"""Libraries whose lines below warning are left out unless at debug: they repeat ours (each
failed call, the server's start and stop)."""
_Reader = Callable[[], Awaitable[str]]


def _read_only(title: str) -> ToolAnnotations:
    return ToolAnnotations(title=title, read_only_hint=True, open_world_hint=False)


def _writes(title: str) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=False,
        destructive_hint=False,
        idempotent_hint=False,
        open_world_hint=False,
    )


def pretty(answer: Any) -> str:
    """The relay's answer as agents read it: JSON, indented by two, UTF-8 as it is."""
    return orjson.dumps(answer, option=orjson.OPT_INDENT_2).decode()


async def _logged(tool: str, call: _Reader) -> str:
    """Run one tool call: one ``mcp.tool`` line with its outcome; a failed relay call becomes
    a tool error with its one line."""
    started = time.perf_counter()
    outcome, error = "ok", None
    try:
        return await call()
    except RelayCallFailed as exc:
        outcome, error = "error", str(exc)
        raise ToolError(error) from None
    finally:
        ms = round((time.perf_counter() - started) * 1000, 1)
        log.info("mcp.tool", tool=tool, outcome=outcome, ms=ms, error=error)


class SinainTools:
    """The tools, each a call (or two) to the relay; their docstrings are what agents read."""

    def __init__(self, relay: RelayClient) -> None:
        self._relay = relay

    async def sinain_context(self) -> str:
        """The user's current situation: the latest digest (a paragraph on what is on screen
        and what was said) and the context window the next tick reads (screen OCR, audio
        transcripts, app history)."""

        async def call() -> str:
            digest, context = await asyncio.gather(
                self._relay.get("/agent/digest"), self._relay.get("/agent/context")
            )
            return f"## Digest\n{pretty(digest)}\n\n## Context window\n{pretty(context)}"

        return await _logged("sinain_context", call)

    async def sinain_notify(
        self,
        text: Annotated[str, Field(min_length=1, description="The line to show on the HUD.")],
        priority: Literal["normal", "high", "urgent"] = "normal",
    ) -> str:
        """Show a line on the user's HUD, on the overlay's Agent tab. For proactive notices;
        replies to the user belong in the conversation."""
        body = {"text": text, "priority": priority, "source": "mcp", "channel": "agent"}
        return await _logged("sinain_notify", lambda: _text(self._relay.post("/feed", body)))

    async def sinain_health(self) -> str:
        """The relay's health: counts, the agent's state and counters, each actor."""
        return await _logged("sinain_health", lambda: _text(self._relay.get("/health")))

    async def sinain_get_escalation(self) -> str:
        """The pending escalation, if any: a moment the relay chose for the agent's attention,
        with its id, message and score. Reading does not consume it."""
        pending = self._relay.get("/escalation/pending")
        return await _logged("sinain_get_escalation", lambda: _text(pending))

    async def sinain_respond(
        self,
        id: Annotated[str, Field(min_length=1, description="The pending escalation's id.")],
        response: Annotated[str, Field(min_length=1, description="What the HUD shows the user.")],
    ) -> str:
        """Answer the pending escalation by its id; the response shows on the user's HUD."""
        answered = self._relay.post("/escalation/respond", {"id": id, "response": response})
        return await _logged("sinain_respond", lambda: _text(answered))

    async def sinain_search(
        self,
        q: Annotated[str, Field(min_length=1, description="Words to find in digests and huds.")],
        since: Annotated[int | None, Field(description="Epoch ms, inclusive.")] = None,
        until: Annotated[int | None, Field(description="Epoch ms, exclusive.")] = None,
        limit: Annotated[int | None, Field(ge=1, description="At most this many entries.")] = None,
    ) -> str:
        """Search the retained history of digests and huds by words, newest first, optionally
        within a time range (since, until: epoch ms)."""
        params = _present(q=q, since=since, until=until, limit=limit)
        found = self._relay.get("/agent/history", params)
        return await _logged("sinain_search", lambda: _text(found))

    async def sinain_feed(
        self,
        after: Annotated[int, Field(ge=0, description="Items after this id (0: the newest).")] = 0,
    ) -> str:
        """Recent feed items (transcripts, messages, the agent's hud lines), oldest first: the
        newest 100 after the id given."""
        items = self._relay.get("/feed", {"after": after})
        return await _logged("sinain_feed", lambda: _text(items))


_ANNOTATED: tuple[tuple[Callable[..., Awaitable[str]], ToolAnnotations], ...] = (
    (SinainTools.sinain_context, _read_only("Get current context")),
    (SinainTools.sinain_notify, _writes("Notify on the HUD")),
    (SinainTools.sinain_health, _read_only("Check health")),
    (SinainTools.sinain_get_escalation, _read_only("Get pending escalation")),
    (SinainTools.sinain_respond, _writes("Respond to escalation")),
    (SinainTools.sinain_search, _read_only("Search history")),
    (SinainTools.sinain_feed, _read_only("Read the feed")),
)


def build_server(relay: RelayClient) -> MCPServer:
    """The MCP server and its seven tools (:class:`SinainTools`), named after their methods."""
    server: MCPServer = MCPServer(
        "sinain-relay", instructions=INSTRUCTIONS, version=_version(), log_level="WARNING"
    )
    tools = SinainTools(relay)
    for method, hints in _ANNOTATED:
        bound = MethodType(method, tools)
        server.add_tool(bound, description=inspect.getdoc(method), annotations=hints)
    return server


async def _text(answer: Awaitable[Any]) -> str:
    return pretty(await answer)


def _present(**params: str | int | None) -> dict[str, str | int]:
    return {name: value for name, value in params.items() if value is not None}


def _version() -> str:
    from config.command_line import version  # noqa: PLC0415  (the package's metadata, once)

    return version()


def build_parser() -> argparse.ArgumentParser:
    """``sinain-relay mcp``'s command line."""
    parser = argparse.ArgumentParser(
        prog="sinain-relay mcp",
        description=(
            "An MCP server for any agent (Claude Desktop, Claude Code, Cursor), a client of a "
            "running relay's HTTP API. It speaks stdio unless --http is given. RELAY_TOKEN in "
            "the environment is sent to the relay, and guards --http."
        ),
    )
    parser.add_argument(
        "--url",
        help="the relay's address (default: from RELAY_HOST and RELAY_PORT, http://127.0.0.1:18791)",
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="serve Streamable HTTP at http://127.0.0.1:PORT/mcp (loopback only) instead of stdio",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"the loopback port for --http (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--log-level", default="info", choices=("debug", "info", "warning", "error")
    )
    return parser


def main(argv: Sequence[str], environ: Mapping[str, str] = os.environ) -> int:
    """Serve until stdin closes (stdio) or a signal (``--http``): exit code 0; 1 when the
    ``--http`` port cannot be had, 2 for an invalid flag or setting. Logs go to stderr: on
    stdio, stdout is the protocol's."""
    parser = build_parser()
    args = parser.parse_args(list(argv))
    try:
        address = default_address(environ)
    except ConfigError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    if args.url:
        if not args.url.startswith(("http://", "https://")):
            parser.exit(2, f"{parser.prog}: error: --url must be an http:// or https:// URL\n")
        address = replace(address, url=args.url)
    if not 0 <= args.port < 65536:
        parser.exit(2, f"{parser.prog}: error: --port must be from 0 to 65535\n")
    log_format = "console" if sys.stderr.isatty() else "json"
    configure_logging(log_format, args.log_level, stream=sys.stderr)
    quiet = logging.DEBUG if args.log_level == "debug" else logging.WARNING
    for library in _QUIET:
        logging.getLogger(library).setLevel(max(quiet, logging.getLogger().level))
    try:
        sock = listen(args.port) if args.http else None
    except OSError as exc:
        log.error("mcp.start_failed", error=f"cannot listen on {HOST}:{args.port}: {exc.strerror}")
        return 1

    async def serve() -> None:
        relay = RelayClient(address)
        server = build_server(relay)
        log.info("mcp.starting", relay=relay.url, transport="http" if args.http else "stdio")
        try:
            if sock is not None:
                await serve_http(
                    server, sock, token=address.token, allowed_hosts=address.allowed_hosts
                )
            else:
                await server.run_stdio_async()
        finally:
            await relay.aclose()

    # SIGTERM stops as Ctrl-C does (uvicorn, which handles both while it serves, raises the
    # signal again once it has shut down: it lands here too)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(serve)
    log.info("mcp.stopped")
    return 0
