"""The transcriber's requests in flight, and the messages their ends send back to it.

A request's answer arrives on the speech client's event loop, its expiry on the clock's
timer, a delivery's end on the delivery thread, the local model's load on the recogniser's
thread: each is handed to the actor as one of these messages (:func:`tell`), so that its
state is touched on its own thread only.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
from dataclasses import dataclass, field
from typing import Any

import pykka

from actors.audio.core.stt_outcome import Outcome
from actors.audio.core.utterance import Utterance
from actors.kernel.clock import Cancel


@dataclass(slots=True)
class Job:
    """One request out (state of this actor's thread only)."""

    utterance: Utterance
    reply: concurrent.futures.Future[Outcome] | None
    started: float
    call: concurrent.futures.Future[str] | None = None
    expiry: Cancel | None = None


@dataclass(frozen=True, slots=True)
class Heard:
    """A request ended (from the event loop's thread)."""

    job: int
    text: str | None
    error: BaseException | None


@dataclass(frozen=True, slots=True)
class Expired:
    """A request's time is up (from the clock's timer)."""

    job: int


@dataclass(frozen=True, slots=True)
class Delivered:
    """The feed took a transcript, or did not (from the delivery thread)."""

    utterance: Utterance
    reply: concurrent.futures.Future[Outcome] | None
    latency_ms: int
    text: str
    outcome: Outcome = field(compare=False)


@dataclass(frozen=True, slots=True)
class Warmed:
    """The local model's load at start ended (from the recogniser's thread)."""

    error: BaseException | None
    """Why it did not load; ``None`` once it is loaded."""


def tell(ref: pykka.ActorRef[Any], message: object) -> bool:
    """``ref.tell(message)``; False if the actor has stopped."""
    try:
        ref.tell(message)
    except pykka.ActorDeadError:
        return False
    return True


def resolve(reply: concurrent.futures.Future[Outcome], outcome: Outcome) -> None:
    """Answer a caller once; a caller that gave up (cancelled) is skipped."""
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        if not reply.done():
            reply.set_result(outcome)
