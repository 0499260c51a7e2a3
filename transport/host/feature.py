"""What a feature hands the HTTP shell: one object answering :class:`Feature`.

Each feature package (ingest, agent, escalation, audio, console, overlay, MCP) makes one, in
its ``feature.py``; the registry (:data:`transport.registry.FEATURES`) lists them, and the
shell loops over that list: the route table is every feature's routes in the registry's
order, ``GET /health`` holds every feature's sections, ``GET /metrics`` shows every
feature's metric families, and ``sinain-relay doctor`` (and a started relay) runs every
feature's checks, in the same order; the overlay works the switches a feature makes, the
fault drill says which setting starts an actor it does not find, and ``--demo`` starts each
feature's stand-in. The shell names no feature,
and a feature reaches the shell only through what it hands over here. The shell's
own routes (the fault drill, the clients' reports, ``/health``, ``/metrics``, the document)
are handed over the same way, by :mod:`transport.handlers.parts`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from aiohttp import web

from actors.common.check import Check
from config.settings import Settings
from transport.host.route import Route
from transport.host.switches import Switches

if TYPE_CHECKING:  # prometheus-client is imported at the first scrape, the app's state later
    from prometheus_client.metrics_core import Metric

    from transport.shell.bridge import Asker
    from transport.shell.state import Peers


class Checks(Protocol):
    """A feature's checks of what is configured for it, each a line of ``sinain-relay doctor``
    (``started``: a started relay's, which ask no service anything)."""

    def __call__(self, settings: Settings, *, started: bool) -> Iterable[Check]: ...


class Demo(Protocol):
    """What a feature starts for ``--demo``: a stand-in for the service it asks, and the
    settings pointed at it; ``cleanup`` undoes what it started once the relay has stopped."""

    def __call__(self, settings: Settings, cleanup: contextlib.ExitStack) -> Settings: ...


class Families(Protocol):
    """A feature's metric families at one scrape of ``GET /metrics``: from what its actors
    last published (read on the event loop, no message), or asked of them (each answer
    bounded by the actor timeout; one that does not come in time leaves its families out)."""

    async def __call__(self, peers: Peers, ask: Asker) -> Iterable[Metric]: ...


class SwitchesFor(Protocol):
    """The overlay's audio switches a feature works for one app (``None``: it has none)."""

    def __call__(self, peers: Peers, ask: Asker) -> Switches | None: ...


@dataclass(frozen=True, slots=True)
class Reading:
    """A section of ``GET /health`` as one request reads it."""

    value: Any
    """Of the section's ``shape``."""
    unanswered: tuple[str, ...] = ()
    """Why each actor that did not answer in time is missing: ``/health`` is then a 503
    whose ``error`` says so."""


class ReadSection(Protocol):
    """A section's reading for one request: asked of the feature's actors once the request
    arrived, or read from what they last published. ``private``: the caller may see what
    says what the user did (it holds the token, or none is set)."""

    async def __call__(self, peers: Peers, ask: Asker, *, private: bool) -> Reading: ...


@dataclass(frozen=True, slots=True)
class HealthSection:
    """One field of ``GET /health`` a feature answers for."""

    name: str
    """The field's Python name (``camelCase`` in the JSON)."""
    shape: Any
    """Its type, as msgspec encodes it and the document describes it."""
    read: ReadSection


def no_switches(peers: Peers, ask: Asker) -> None:
    """The switches of a feature that captures no audio."""


async def no_families(peers: Peers, ask: Asker) -> Iterable[Metric]:  # noqa: ARG001
    """The families of a feature whose figures are shown elsewhere."""
    return ()


def no_demo(settings: Settings, cleanup: contextlib.ExitStack) -> Settings:  # noqa: ARG001
    """The demo of a feature that asks no service: the settings as they are."""
    return settings


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
    def health(self) -> tuple[HealthSection, ...]:
        """Its fields of ``GET /health``, in the order the answer gives them."""
        ...

    @property
    def families(self) -> Families:
        """Its metric families, in the order ``/metrics`` gives them."""
        ...

    @property
    def checks(self) -> Checks:
        """Its checks, in the order the doctor prints them."""
        ...

    @property
    def switches(self) -> SwitchesFor:
        """The overlay's audio switches, when the feature works them."""
        ...

    @property
    def demo(self) -> Demo:
        """What it starts for ``--demo``."""
        ...

    @property
    def set_by(self) -> tuple[tuple[str, str], ...]:
        """Its actors that run only when a setting is set, each with that setting: a fault
        drill on one that is not running says which setting starts it."""
        ...


@dataclass(frozen=True, slots=True)
class Parts:
    """A feature's parts, as a feature package states them: the one object it hands over."""

    name: str
    routes: tuple[Route, ...] = ()
    health: tuple[HealthSection, ...] = ()
    families: Families = no_families
    checks: Checks = no_checks
    switches: SwitchesFor = no_switches
    set_by: tuple[tuple[str, str], ...] = ()
    demo: Demo = no_demo


SERVED: web.AppKey[tuple[Feature, ...]] = web.AppKey("served")
"""The features the app serves (:data:`transport.registry.FEATURES`), as the app holds them."""
