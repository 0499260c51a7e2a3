"""The HTTP transport as the tree's frontend, assembled where both are known.

``actors`` knows no HTTP: its composition root is handed a
:class:`~actors.subtrees.Frontend` and calls it at three points. The entry point (``run.py``,
and the tests) makes this one from the settings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pykka

from actors.common.check import Check
from actors.core.exclusion import Exclusions
from actors.kernel.base import ChildHandle, Reporter
from actors.kernel.published import Published
from actors.subtrees import Wiring
from config.privacy import DEFAULT_MODE
from config.settings import Settings
from transport.http_transport import HttpTransport, check_port
from transport.shell.connections import MIB, ConnectionLimits
from transport.shell.state import Peers, Policy


class HttpFrontend:
    """The HTTP transport of a relay with these settings: the port checked before any actor
    starts, then the actor that serves the tree's handles and cells."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self.checks: Published[tuple[Check, ...]] = Published(())
        """The started relay's checks as they last ran: the entry point publishes them
        (:func:`~transport.doctor.command.check_in_background`), ``/health.checks`` reads them."""

    def check(self) -> None:
        """Raise if the address cannot be bound.

        Raises:
            CannotServe: the address cannot be bound (``PortInUse`` for a port in use).
        """
        check_port(self._settings.host, self._settings.port)

    def starter(self, wiring: Wiring) -> Callable[[Reporter], pykka.ActorRef[Any]]:
        """How to start an incarnation of :class:`HttpTransport`: each is given the same
        peers and policy (the policy's counters outlive a restart)."""
        s = self._settings
        hs = wiring.handles
        peers = Peers(
            feed=hs.feed,
            sense=hs.sense,
            feed_view=wiring.feed_view,
            sense_view=wiring.sense_view,
            agent_view=wiring.agent_view,
            digest=hs.digest,
            context=hs.context,
            ticker=hs.ticker,
            actors=wiring.actors,
            timeout_s=s.actor_timeout_ms / 1000,
            storage=wiring.storage,
            clock=wiring.clock,
            formats=wiring.formats,
            audio=hs.audio,
            audio_views=wiring.audio_views,
            audio_config=s.audio,
            local_models=wiring.local_models,
            checks=self.checks,
            privacy=wiring.privacy,
            privacy_store=hs.privacy,
            matrix=wiring.matrix,
            privacy_mode=s.privacy.mode or DEFAULT_MODE,
        )
        policy = Policy(
            token=s.token,
            faults=s.faults,
            max_streams=s.max_streams,
            trace_requests=s.log_level == "debug",
            cors_origins=s.cors_origins,
            allowed_hosts=s.allowed_hosts,
            exclusions=Exclusions(),
            redactor=wiring.redactor,
        )
        limits = ConnectionLimits(
            header_timeout_s=s.header_timeout_s,
            body_timeout_s=s.body_timeout_s,
            keepalive_timeout_s=s.keepalive_timeout_s,
            max_connections=s.max_connections,
            body_memory_bytes=s.body_memory_mb * MIB,
        )

        def http(report: Reporter) -> pykka.ActorRef[Any]:
            return HttpTransport.start(
                host=s.host, port=s.port, peers=peers, policy=policy, limits=limits, report=report
            )

        return http

    def address(self, handle: ChildHandle[Any], timeout_s: float) -> tuple[str, int]:
        """Where the running transport listens (the port bound, with port 0)."""
        http: ChildHandle[HttpTransport] = handle
        return http.ask(HttpTransport.address).result(timeout=timeout_s)
