"""The bodies of the two control posts: a fault drill (``POST /debug/fault``) and Sinain's
agent answering an escalation (``POST /escalation/respond``); decoded as every body is
(:mod:`actors.core.bodies`)."""

from __future__ import annotations

from typing import Annotated, Final, Literal, get_args

from msgspec import UNSET, Meta, Struct, UnsetType

MAX_HANG_S = 3600
"""The longest hang a fault drill may ask for, in seconds."""
FaultActor = Literal[
    "feed", "sense", "context", "llm", "digest", "ticker", "http",
    "stt", "stt_worker", "capture_system", "capture_mic", "llm_worker",
]  # fmt: skip
"""The actors a fault drill (``POST /debug/fault``) may crash or hang; a capture only where its
source is configured; ``stt_worker``, the local recogniser's worker process, with
``STT_API=local``; ``llm_worker``, the local model's worker process (``AGENT_API=local``), once
a call has started it."""
FAULT_ACTORS: Final[tuple[str, ...]] = get_args(FaultActor)


class Fault(Struct, frozen=True):
    """A fault drill: the actor, and what it does at its next message."""

    actor: FaultActor
    kind: Literal["crash", "hang"]
    seconds: (
        Annotated[float, Meta(gt=0, le=MAX_HANG_S, description="Required for a hang.")] | UnsetType
    ) = UNSET

    def __post_init__(self) -> None:
        if self.kind == "hang" and self.seconds is UNSET:
            raise ValueError(f"seconds is required for a hang: above 0 and at most {MAX_HANG_S}")


ESCALATION_BODY_LIMIT = 64 * 1024
"""Largest ``POST /escalation/respond`` body, in bytes (as Sinain's)."""


class EscalationReply(Struct, frozen=True):
    """An answer of Sinain's agent to the pending escalation; other fields are ignored."""

    id: Annotated[str, Meta(min_length=1, description="The escalation's id.")]
    response: Annotated[
        str, Meta(pattern=r"\S", description="The answer, shown on the HUD; not blank.")
    ]
