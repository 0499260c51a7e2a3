"""The bodies of the control posts: a fault drill (``POST /debug/fault``), Sinain's agent
answering an escalation (``POST /escalation/respond``) and a change of the privacy controls
(``POST /privacy``); decoded as every body is (:mod:`actors.core.bodies`)."""

from __future__ import annotations

from typing import Annotated, Final, Literal, get_args

from msgspec import UNSET, Meta, Struct, UnsetType

from config.common.errors import ConfigError
from config.common.setting_types import PositiveNumber, Regex, decode

MAX_HANG_S = 3600
"""The longest hang a fault drill may ask for, in seconds."""
FaultActor = Literal[
    "privacy", "feed", "sense", "context", "llm", "digest", "ticker", "situation", "http",
    "stt", "stt_worker", "capture_system", "capture_mic", "llm_worker",
]  # fmt: skip
"""The actors a fault drill (``POST /debug/fault``) may crash or hang; the SITUATION.md writer
only with ``RELAY_SITUATION_FILE``, a capture only where its source is configured;
``stt_worker``, the local recogniser's worker process, with ``STT_API=local``; ``llm_worker``,
the local model's worker process (``AGENT_API=local``), once a call has started it."""
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


PRIVACY_BODY_LIMIT = 64 * 1024
"""Largest ``POST /privacy`` body, in bytes."""
MAX_PAUSE_MINUTES = 7 * 24 * 60
"""The longest timed pause, in minutes (a week); a longer one is a pause until resumed."""


class PrivacyUpdate(Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """Any subset of the privacy controls. An unknown field, a wrong type or a title pattern
    that ``RELAY_EXCLUDE_TITLES`` would refuse rejects the whole body, and nothing changes."""

    paused: (
        Annotated[bool, Meta(description="`true`: pause until resumed; `false`: resume.")]
        | UnsetType
    ) = UNSET
    pause_minutes: (
        Annotated[
            float,
            Meta(
                gt=0,
                le=MAX_PAUSE_MINUTES,
                description="Pause for this many minutes from now, whatever `paused` says; "
                "the pause then ends by itself.",
            ),
        ]
        | UnsetType
    ) = UNSET
    exclude_apps: (
        Annotated[
            list[Annotated[str, Meta(max_length=200)]],
            Meta(max_length=200, description="Replaces `RELAY_EXCLUDE_APPS`' list."),
        ]
        | UnsetType
    ) = UNSET
    exclude_titles: (
        Annotated[
            list[Annotated[str, Meta(max_length=1000, extra_json_schema={"format": "regex"})]],
            Meta(
                max_length=50,
                description="Replaces `RELAY_EXCLUDE_TITLES`: a title that any of these "
                "expressions finds is excluded (each in `RELAY_EXCLUDE_TITLES`' syntax).",
            ),
        ]
        | UnsetType
    ) = UNSET
    retention_days: (
        Annotated[PositiveNumber, Meta(description="Replaces `RELAY_RETENTION_DAYS`.")] | UnsetType
    ) = UNSET

    def __post_init__(self) -> None:
        for pattern in self.exclude_titles or ():
            try:
                decode(Regex, "excludeTitles", pattern)
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
