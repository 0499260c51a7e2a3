"""What a feature hands the HTTP shell: one object answering :class:`Feature`.

Each feature package (ingest, agent, escalation, audio, console, overlay, MCP) makes one, in
its ``feature.py``; the registry (:data:`transport.registry.FEATURES`) lists them, and the
shell loops over that list: the route table is every feature's routes in the registry's
order. The shell names no feature, and a feature reaches the shell only through what it
hands over here. The shell's own routes (the fault drill, the clients' reports, ``/health``,
``/metrics``, the document) are handed over the same way, by :mod:`transport.handlers.parts`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from transport.host.route import Route


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


@dataclass(frozen=True, slots=True)
class Parts:
    """A feature's parts, as a feature package states them: the one object it hands over."""

    name: str
    routes: tuple[Route, ...] = ()
