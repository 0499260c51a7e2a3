"""What a feature hands the HTTP shell: one object answering :class:`Feature`.

Each feature package (ingest, agent, escalation, audio, console, overlay, MCP) makes one, in
its ``feature.py``; the registry (:data:`transport.registry.FEATURES`) lists them, and the
shell loops over that list: the route table is every feature's routes in the registry's
order, ``GET /metrics`` shows every feature's metric families, and ``sinain-relay doctor``
(and a started relay) runs every feature's checks, in the same order. The shell names no
feature, and a feature reaches the shell only through what it hands over here. The shell's
own routes (the fault drill, the clients' reports, ``/health``, ``/metrics``, the document)
are handed over the same way, by :mod:`transport.handlers.parts`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from aiohttp import web

from actors.common.check import Check
from config.settings import Settings
from transport.host.route import Route

if TYPE_CHECKING:  # prometheus-client is imported at the first scrape, the app's state later
    from prometheus_client.metrics_core import Metric

    from transport.state import Peers


class Checks(Protocol):
    """A feature's checks of what is configured for it, each a line of ``sinain-relay doctor``
    (``started``: a started relay's, which ask no service anything)."""

    def __call__(self, settings: Settings, *, started: bool) -> Iterable[Check]: ...


class Families(Protocol):
    """A feature's metric families at one scrape of ``GET /metrics``, from what its actors
    last published (read on the event loop, no message)."""

    def __call__(self, peers: Peers) -> Iterable[Metric]: ...


def no_families(peers: Peers) -> Iterator[Metric]:  # noqa: ARG001
    """The families of a feature whose figures are shown elsewhere."""
    return iter(())


def no_checks(settings: Settings, *, started: bool) -> Iterator[Check]:  # noqa: ARG001
    """The checks of a feature that has nothing of its own to check."""
    return iter(())


class Feature(Protocol):
    """One feature, as the shell sees it."""

    @property
    def name(self) -> str:
        """Its short name, for logs and for a reader of the registry."""
        ...

    @property
    def routes(self) -> tuple[Route, ...]:
        """Its routes, in the order the route table and the document list them."""
        ...

    @property
    def families(self) -> Families:
        """Its metric families, in the order ``/metrics`` gives them."""
        ...

    @property
    def checks(self) -> Checks:
        """Its checks, in the order the doctor prints them."""
        ...


@dataclass(frozen=True, slots=True)
class Parts:
    """A feature's parts, as a feature package states them: the one object it hands over."""

    name: str
    routes: tuple[Route, ...] = ()
    families: Families = no_families
    checks: Checks = no_checks


SERVED: web.AppKey[tuple[Feature, ...]] = web.AppKey("served")
"""The features the app serves (:data:`transport.registry.FEATURES`), as the app holds them."""
