"""The aiohttp application: its routes, each behind its guard, and its shared objects.

Handlers only validate, ask actors and render (:mod:`transport.handlers`); the guard maps
errors to statuses in one place (:mod:`transport.shell.guard`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import structlog
from aiohttp import web

from actors.core.bodies import SENSE_BODY_LIMIT
from actors.ingest.feed_buffer import FeedBuffer
from actors.ingest.sense_buffer import SenseBuffer
from transport.host.feature import SERVED
from transport.host.route import Handler
from transport.openapi import openapi_json
from transport.overlay.presence import Presence
from transport.overlay.socket import OVERLAYS, OverlayLimits, Overlays
from transport.registry import FEATURES, ROUTE_TABLE
from transport.server.aiohttp_compat import AnyTarget
from transport.shell.auth import ANY_METHOD, Access
from transport.shell.batching import Batcher
from transport.shell.bridge import Asker
from transport.shell.connections import Connections, max_connections_for
from transport.shell.guard import expecting, guarded, no_route, refuse_expectation
from transport.shell.metrics import UNMATCHED, HttpStats
from transport.shell.profiling import ClientReports
from transport.shell.state import (
    ACCESS,
    ASK,
    CLIENT_FIGURES,
    CONNECTIONS,
    FEED_ANSWERS,
    FEED_POSTS,
    HTTP_STATS,
    OPENAPI,
    PEERS,
    POLICY,
    ROUTES,
    SENSE_ANSWERS,
    SENSE_POSTS,
    STREAMS,
    ListAnswers,
    Peers,
    Policy,
    streams_of,
)
from transport.streams.limits import StreamLimits

log = structlog.get_logger("relay")


def build_app(
    peers: Peers,
    policy: Policy,
    *,
    stream_limits: StreamLimits | None = None,
    overlay_limits: OverlayLimits | None = None,
    connections: Connections | None = None,
) -> web.Application:
    """The aiohttp application with every route of the API, the streams and the overlay's
    WebSocket.

    ``stream_limits``: the streams' keepalive, timeouts and bounds; ``overlay_limits``: the
    overlay's heartbeat and quiet spell. By default the constants of :mod:`transport.streams.fanout`
    and :mod:`transport.overlay.socket` as they are when the app is built. ``connections``: the
    server's count of open connections, which ``GET /metrics`` shows (the transport's; by
    default one no server counts in).
    """
    # Bodies are decoded by read_json, which bounds the decoded size; aiohttp would inflate
    # them first, and answer a coding it cannot decode in plain text before any route runs.
    app = web.Application(
        client_max_size=SENSE_BODY_LIMIT + 1, handler_args={"auto_decompress": False}
    )
    app[PEERS] = peers
    app[POLICY] = policy
    app[CONNECTIONS] = connections or Connections(max_connections_for(None))
    app[ASK] = ask = Asker(peers.timeout_s)
    limits = stream_limits or StreamLimits.current()
    streams = streams_of(peers, ask, limits, policy.max_streams)
    app[STREAMS] = streams
    app.on_startup.append(streams.on_startup)
    app.on_shutdown.append(streams.on_shutdown)  # before the server waits for its handlers
    app.on_cleanup.append(streams.on_cleanup)
    app[FEED_POSTS] = feed_posts = Batcher(peers.feed, FeedBuffer.append_many, peers.timeout_s)
    app[SENSE_POSTS] = Batcher(peers.sense, SenseBuffer.append_many, peers.timeout_s)
    app[FEED_ANSWERS] = ListAnswers()
    app[SENSE_ANSWERS] = ListAnswers()
    access = Access(policy.token, policy.cors_origins, policy.allowed_hosts)
    app[ACCESS] = access
    app[OPENAPI] = openapi_json
    app[SERVED] = FEATURES
    app[CLIENT_FIGURES] = figures = ClientReports(policy.redactor)
    overlay_bounds = overlay_limits or OverlayLimits.current()
    switches = [s for f in FEATURES if (s := f.switches(peers, ask)) is not None]
    audio = switches[0] if switches else None  # one feature captures audio
    presence = Presence(
        peers.feed_view,
        peers.sense_view,
        peers.clock,
        overlay_bounds.quiet_spell_s,
        muted=lambda: audio is not None and audio.paused,
        privacy=peers.privacy,
    )
    overlays = Overlays(
        streams=streams,
        presence=presence,
        limits=overlay_bounds,
        clock=peers.clock,
        figures=figures,
        feed_posts=feed_posts,
        audio=audio,
    )
    app[OVERLAYS] = overlays
    app.on_startup.append(overlays.on_startup)
    app.on_cleanup.append(overlays.on_cleanup)
    app[HTTP_STATS] = HttpStats(sum(policy.exclusions.counts().values()))
    _add_routes(app, policy)
    return app


def _add_routes(app: web.Application, policy: Policy) -> None:
    """Each route of the table behind its guard, then the catch-all for what none takes
    (a preflight, a 405 or a 404)."""
    access, http_stats = app[ACCESS], app[HTTP_STATS]

    def guard(method: str, path: str, stats_path: str) -> Callable[[Handler], Handler]:
        return functools.partial(
            guarded,
            trace=policy.trace_requests,
            access=access,
            admit=access.gate(method, path),
            stats=http_stats.route(method, stats_path),
        )

    allowed: dict[str, set[str]] = {}
    for route in ROUTE_TABLE:
        if route.drill and not policy.faults:
            continue
        method, path = route.method, route.path
        guarding = guard(method, path, path)
        handler = guarding(route.handler)
        expect = expecting(guarding(refuse_expectation), access)
        if method == "GET":
            app.router.add_get(path, handler, expect_handler=expect)  # and HEAD
        else:
            app.router.add_route(method, path, handler, expect_handler=expect)
        allowed.setdefault(path, {"OPTIONS"}).update(
            {method, "HEAD"} if method == "GET" else {method}
        )
    app[ROUTES] = allowed
    guarding = guard(ANY_METHOD, "", UNMATCHED)
    anywhere = AnyTarget("/{path:.*}")
    app.router.register_resource(anywhere)  # last: only what no route took
    expect = expecting(guarding(refuse_expectation), access)
    anywhere.add_route("*", guarding(no_route), expect_handler=expect)
