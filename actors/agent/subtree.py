"""The agent's children that need nothing of the root's wiring but a few of its parts: the
SITUATION.md writer's outbox and child spec.

The writer runs only with ``RELAY_SITUATION_FILE``: without it there is no outbox, the
digest store posts nothing and the agent's supervisor has no writer child. With it, the path
is said once at start, with a warning for each way another local user could replace the file
(:func:`~actors.agent.situation_writer.warn_if_replaceable`).
"""

from __future__ import annotations

from typing import Any

import pykka
import structlog

from actors.agent.core.events import AgentEvent
from actors.agent.situation_writer import SituationOutbox, SituationWriter, warn_if_replaceable
from actors.agent.situation_writer import situation_outbox as new_outbox
from actors.kernel.base import ChildHandle, Reporter
from actors.kernel.listeners import Listeners
from actors.kernel.supervisor import ChildSpec

log = structlog.get_logger("relay")


def situation_outbox(path: str, writer: ChildHandle[SituationWriter]) -> SituationOutbox | None:
    """The SITUATION.md writer's outbox, or None without a ``path``; a warning for each way
    another local user could replace the file."""
    if not path:
        return None
    log.info("situation.file", actor="root", path=path)
    warn_if_replaceable(path)
    return new_outbox(writer)


def situation_children(
    path: str,
    outbox: SituationOutbox | None,
    writer: ChildHandle[SituationWriter],
    events: Listeners[AgentEvent],
) -> tuple[ChildSpec, ...]:
    """The SITUATION.md writer's child spec, or nothing without its outbox."""
    if outbox is None:
        return ()

    def situation(report: Reporter) -> pykka.ActorRef[Any]:
        return SituationWriter.start(path=path, outbox=outbox, events=events, report=report)

    # No ping deadline: a write stuck on a dead disk holds only this actor, and the outbox
    # keeps just the newest situation meanwhile (see actors.agent.situation_writer).
    return (ChildSpec("situation", situation, writer, shutdown_timeout_s=1.0),)
