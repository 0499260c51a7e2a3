"""What clients post, each body declared once: a typed struct with its limits.

Decoding a body into its struct is its validation (msgspec, in C): a wrong type, a missing
field or a value out of range fails the decode, and :func:`decode`/:func:`convert` turn that
failure into a :class:`~actors.core.errors.BadRequest` that names the field
(:mod:`actors.core.body_errors`). The OpenAPI components of the request bodies are generated
from the same structs (:data:`REQUEST_TYPES`), so the document says what the decoder does.

A ``POST /sense`` event is kept exactly as the client sent it, extra fields included: it is
parsed once into a dict (orjson), which :func:`sense_input` checks against :class:`SenseInput`
and keeps as the event's payload.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, TypeVar

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from actors.common.forgetting import Span
from actors.core import records, shapes
from actors.core.body_errors import bad_body
from actors.core.control_bodies import EscalationReply, Fault, PrivacyUpdate
from actors.core.errors import BadRequest
from config.agent_settings import (
    ESCALATION_MODES,
    MAX_IMAGES_LIMIT,
    MIN_RUNTIME_ESCALATION_COOLDOWN_MS,
    MIN_RUNTIME_INTERVAL_MS,
    MIN_RUNTIME_MAX_AGE_MS,
    RESPONSE_FORMATS,
)
from config.common.setting_types import check_api_key
from config.setting_fields import MAX_RUNTIME_PERIOD_MS, about, period

FEED_BODY_LIMIT = 256 * 1024
"""Largest ``POST /feed`` body, in bytes (a long transcript batch fits many times over)."""
SENSE_BODY_LIMIT = 2 * 1024 * 1024
"""Largest ``POST /sense`` body, in bytes."""
CONFIG_BODY_LIMIT = 16 * 1024
"""Largest body of the small posts: ``/agent/config``, ``/profiling/sense``, ``/debug/fault``."""
MAX_PRIORITY_CHARS = 32
MAX_SOURCE_CHARS = 32
MAX_NESTING = 100
"""Levels of objects and arrays a sense event may nest (the capture client's nest 3). The
relay writes each event back out as JSON, which orjson does to 255 levels at most: a deeper
event is refused here rather than fail its batch's write."""
MAX_EXTRA_FIELDS = 64
"""Fields a process report's ``extra`` object may have at most (the capture client sends 11)."""
MAX_EXTRA_NAME_CHARS = 64
"""Characters of one ``extra`` field's name at most."""
MAX_TOKENS = 32_000
"""The most ``maxTokens`` ``POST /agent/config`` takes."""
NOT_BLANK = r"\S"
"""The pattern of a text that is not only whitespace."""
_SERVER_FIELDS = ("id", "receivedAt")
"""Fields the server sets on a stored event; dropped from what a client sends."""

Text = Annotated[
    str, Meta(extra_json_schema={"pattern": NOT_BLANK}, description="Not only whitespace.")
]
"""Not only whitespace: the document states the pattern, :func:`not_blank` checks it (with
``str.isspace``, the whitespace of Python's ``\\S``: no ``re`` search per post)."""
Number = int | float
"""A JSON number, kept as sent (``60`` is shown again as ``60``, not ``60.0``)."""
NotNegative = Annotated[int, Meta(ge=0)] | Annotated[float, Meta(ge=0)]
Whole = Annotated[float, Meta(multiple_of=1)]
"""A whole number, also when written with a fraction of zero (``6000.0``)."""
EpochMs = Annotated[Number, Meta(description="The client's clock, epoch milliseconds.")]
Image = Annotated[dict[str, Any], Meta(description="`data`: the image, base64.")]
Roi = Annotated[
    dict[str, Any],
    Meta(
        description="The region of the screen that changed: `data`, the picture, base64 (a "
        "JPEG or a PNG of at most 1 MiB is sent to the vision model, unless "
        "`AGENT_VISION_ENABLED=false`); `bbox` `[x, y, w, h]` and `thumb` as sent."
    ),
]


class FeedInput(Struct, frozen=True):
    """`priority` defaults to `normal` and `channel` to `stream` (`null` counts as absent).
    Other fields are ignored."""

    text: Text
    priority: Annotated[str, Meta(min_length=1, max_length=MAX_PRIORITY_CHARS)] | None = "normal"
    source: (
        Annotated[
            str,
            Meta(
                min_length=1,
                max_length=MAX_SOURCE_CHARS,
                description="Who or what the item comes from. `audio` marks a transcript: the "
                "agent hears it (so does text starting with `[🔊] `, `[🎙] ` or `[📝] `).",
            ),
        ]
        | None
    ) = None
    channel: (
        Annotated[
            shapes.Channel,
            Meta(
                description="Where the overlay shows it: `stream` (its feed, the default) or "
                "`agent` (its Agent tab, for advice to the user)."
            ),
        ]
        | None
    ) = None

    def __post_init__(self) -> None:
        not_blank("text", self.text)

    def record(self) -> records.FeedPost:
        """The message as the feed buffer takes it, ``null`` fields at their defaults."""
        return records.FeedPost(
            self.text, self.priority or "normal", self.source, self.channel or shapes.STREAM
        )


class SenseMeta(Struct, frozen=True, rename="camel"):
    """What the capture client says of the screen: its app, window and change."""

    app: str | None = None
    window_title: str | None = None
    ssim: float | None = None
    screen: Number | str | None = None


class Observation(Struct, frozen=True):
    """What the capture client says of the moment."""

    title: str | None = None
    subtitle: str | None = None
    narrative: str | None = None
    facts: list[str] | None = None
    concepts: list[str] | None = None


class SenseInput(Struct, frozen=True):
    __doc__ = (
        "A screen event as Sinain's capture client sends it. `null` counts as absent; other "
        "fields are kept as sent; `id` and `receivedAt` are the server's and are dropped. "
        f"Objects and arrays may nest {MAX_NESTING} levels deep at most (the body is the first)."
    )

    type: Annotated[str, Meta(min_length=1, examples=["text", "context"])]
    ts: EpochMs
    ocr: str | None = None
    meta: SenseMeta | None = None
    roi: Roi | None = None
    diff: Image | None = None
    observation: Observation | None = None


class ProcessReport(Struct, frozen=True, rename="camel"):
    """A client process's figures, as the capture client posts them every 60 s. `null` counts
    as absent; other fields are ignored."""

    rss_mb: Annotated[NotNegative, Meta(description="Resident memory, MB.")]
    uptime_s: Annotated[NotNegative, Meta(description="Seconds since start.")]
    ts: EpochMs
    extra: (
        Annotated[
            dict[Annotated[str, Meta(max_length=MAX_EXTRA_NAME_CHARS)], Number],
            Meta(max_length=MAX_EXTRA_FIELDS, description="The client's own counters, by name."),
        ]
        | None
    ) = None


_NOT_BLANK = "Not only whitespace."
_MaxAge = Annotated[Whole, period("max_age_ms", "Context window", MIN_RUNTIME_MAX_AGE_MS)]
"""``maxAge`` and ``maxAgeMs`` (the same setting under two names)."""


class AgentConfigUpdate(Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """Any subset of the fields. An unknown field or a wrong type rejects the whole body.
    Each field's title, unit and help are the console's settings form."""

    enabled: Annotated[bool, about("enabled", "Agent on")] | UnsetType = UNSET
    interval_ms: (
        Annotated[
            Whole, period("interval_ms", "Longest time between ticks", MIN_RUNTIME_INTERVAL_MS)
        ]
        | UnsetType
    ) = UNSET
    debounce_ms: Annotated[Whole, period("debounce_ms", "Wait after news")] | UnsetType = UNSET
    cooldown_ms: Annotated[Whole, period("cooldown_ms", "Least time between calls")] | UnsetType = (
        UNSET
    )
    model: Annotated[Text, about("model", "Model", note=_NOT_BLANK)] | UnsetType = UNSET
    fallback_models: (
        Annotated[list[Text], about("fallback_models", "Fallback models")] | UnsetType
    ) = UNSET
    max_age: _MaxAge | UnsetType = UNSET
    max_age_ms: _MaxAge | UnsetType = UNSET
    max_tokens: (
        Annotated[
            int, Meta(ge=1, le=MAX_TOKENS), about("max_tokens", "Longest answer", unit="tokens")
        ]
        | UnsetType
    ) = UNSET
    temperature: (
        Annotated[float, Meta(ge=0, le=2), about("temperature", "Temperature")] | UnsetType
    ) = UNSET
    push_to_feed: Annotated[bool, about("push_to_feed", "Hud lines to the feed")] | UnsetType = (
        UNSET
    )
    log_verbose: Annotated[bool, about("log_verbose", "Log every tick")] | UnsetType = UNSET
    economy: Annotated[bool, about("economy", "Economy")] | UnsetType = UNSET
    response_format: (
        Annotated[
            str,
            Meta(extra_json_schema={"enum": list(RESPONSE_FORMATS)}),
            about("response_format", "Response format"),
        ]
        | UnsetType
    ) = UNSET
    escalation_mode: (
        Annotated[
            str,
            Meta(extra_json_schema={"enum": list(ESCALATION_MODES)}),
            about("escalation_mode", "Escalation"),
        ]
        | UnsetType
    ) = UNSET
    escalation_cooldown_ms: (
        Annotated[
            Whole,
            period(
                "escalation_cooldown_ms",
                "Least time between escalations",
                MIN_RUNTIME_ESCALATION_COOLDOWN_MS,
            ),
        ]
        | UnsetType
    ) = UNSET
    escalation_stale_ms: (
        Annotated[Whole, period("escalation_stale_ms", "Escalate anyway after")] | UnsetType
    ) = UNSET
    vision_enabled: Annotated[bool, about("vision_enabled", "Send screen pictures")] | UnsetType = (
        UNSET
    )
    vision_model: (
        Annotated[Text, about("vision_model", "Vision model", note=_NOT_BLANK)] | UnsetType
    ) = UNSET
    vision_max_images: (
        Annotated[
            int,
            Meta(ge=0, le=MAX_IMAGES_LIMIT),
            about("vision_max_images", "Pictures per call", unit="pictures"),
        ]
        | UnsetType
    ) = UNSET
    openrouter_api_key: (
        Annotated[
            str,
            Meta(extra_json_schema={"pattern": r"^\s*[!-~]*\s*$"}),
            about(
                "api_key",
                "API key",
                note="Printable ASCII without spaces (spaces around it are dropped); empty "
                "removes the key. Never shown back.",
            ),
        ]
        | UnsetType
    ) = UNSET

    def __post_init__(self) -> None:
        # Raised here, msgspec reports it as the body's ValidationError.
        if self.model is not UNSET:
            not_blank("model", self.model)
        if self.vision_model is not UNSET:
            not_blank("visionModel", self.vision_model)
        if self.fallback_models is not UNSET:
            for n, model in enumerate(self.fallback_models):
                not_blank(f"fallbackModels[{n}]", model)
        if self.response_format is not UNSET and _format(self.response_format) is None:
            raise ValueError(f"responseFormat must be one of {', '.join(RESPONSE_FORMATS)}")
        if self.escalation_mode is not UNSET and (
            self.escalation_mode.strip().lower() not in ESCALATION_MODES
        ):
            raise ValueError(f"escalationMode must be one of {', '.join(ESCALATION_MODES)}")
        if self.openrouter_api_key is not UNSET:
            check_api_key("openrouterApiKey", self.openrouter_api_key.strip())

    def given(self) -> dict[str, Any]:
        """The fields the body gave, by their names on the wire."""
        return {
            wire: value
            for name, wire in zip(
                self.__struct_fields__, self.__struct_encode_fields__, strict=True
            )
            if (value := getattr(self, name)) is not UNSET
        }

    def changes(self) -> dict[str, Any]:
        """What the body changes, by :class:`~config.settings.AgentSettings` field: each period
        whole and within its bounds, each text without its surrounding spaces."""
        out: dict[str, Any] = {}
        for field, floor in _PERIODS:
            if (value := getattr(self, field)) is not UNSET:
                out["max_age_ms" if field == "max_age" else field] = _bounded(value, floor)
        for field in _AS_GIVEN.split():
            if (value := getattr(self, field)) is not UNSET:
                out[field] = value
        if self.temperature is not UNSET:
            out["temperature"] = float(self.temperature)
        if self.model is not UNSET:
            out["model"] = self.model.strip()
        if self.vision_model is not UNSET:
            out["vision_model"] = self.vision_model.strip()
        if self.fallback_models is not UNSET:
            out["fallback_models"] = tuple(m.strip() for m in self.fallback_models)
        if self.response_format is not UNSET:
            out["response_format"] = _format(self.response_format)
        if self.escalation_mode is not UNSET:
            out["escalation_mode"] = self.escalation_mode.strip().lower()
        if self.openrouter_api_key is not UNSET:
            out["api_key"] = self.openrouter_api_key.strip()
        return out

    def clamped(self) -> list[tuple[str, int | float, int]]:
        """Each period the body gave outside its bounds: its name on the wire, the value
        given and the value used (:meth:`changes` raises it to its floor or caps it at a
        day), so that whoever applies the body can say so."""
        wire = dict(zip(self.__struct_fields__, self.__struct_encode_fields__, strict=True))
        return [
            (wire[field], value, used)
            for field, floor in _PERIODS
            if (value := getattr(self, field)) is not UNSET
            and (used := _bounded(value, floor)) != value
        ]


_PERIODS = (
    ("interval_ms", MIN_RUNTIME_INTERVAL_MS),
    ("debounce_ms", 0),
    ("cooldown_ms", 0),
    ("max_age", MIN_RUNTIME_MAX_AGE_MS),
    ("max_age_ms", MIN_RUNTIME_MAX_AGE_MS),
    ("escalation_cooldown_ms", MIN_RUNTIME_ESCALATION_COOLDOWN_MS),
    ("escalation_stale_ms", 0),
)
"""The update's periods and the least each may be; a day is the most."""


def _bounded(value: float, floor: int) -> int:
    """A period as applied: whole, at least ``floor``, at most :data:`MAX_RUNTIME_PERIOD_MS`."""
    return min(max(int(value), floor), MAX_RUNTIME_PERIOD_MS)


_AS_GIVEN = "enabled max_tokens push_to_feed log_verbose economy vision_enabled vision_max_images"
"""The update's fields that :class:`~config.settings.AgentSettings` takes as they are."""


def not_blank(name: str, value: str) -> None:
    """Refuse a :data:`Text` that is only whitespace (or empty)."""
    if not value or value.isspace():
        raise ValueError(f"{name} must be a string that is not blank")


def _format(value: str) -> str | None:
    """The response format ``value`` names (any case, spaces around), or ``None``."""
    level = value.strip().lower()
    return level if level in RESPONSE_FORMATS else None


REQUEST_TYPES = (
    FeedInput,
    SenseInput,
    AgentConfigUpdate,
    Fault,
    ProcessReport,
    EscalationReply,
    Span,
    PrivacyUpdate,
)
"""The request bodies whose schemas are the OpenAPI components of the same names."""

T = TypeVar("T", bound=Struct)


@cache
def _decoder(kind: type[T]) -> msgspec.json.Decoder[T]:
    return msgspec.json.Decoder(kind)


def decode(body: bytes | bytearray, kind: type[T]) -> T:
    """``body`` (JSON bytes) decoded into ``kind``.

    Raises:
        BadRequest: the body is JSON but not a ``kind``, saying which field is wrong.
        msgspec.DecodeError: the body is not JSON (the caller says how; a field of a string
            that is not UTF-8 counts).
        RecursionError: it nests deeper than the decoder goes.
    """
    decoder: msgspec.json.Decoder[T] = _decoder(kind)
    try:
        return decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise bad_body(exc, kind) from None
    except UnicodeDecodeError:
        raise msgspec.DecodeError("a string is not valid UTF-8") from None


def convert(value: Any, kind: type[T]) -> T:
    """``value`` (parsed JSON) checked as a ``kind``.

    Raises:
        BadRequest: it is not a ``kind``, saying which field is wrong.
    """
    try:
        checked: T = msgspec.convert(value, type=kind)
    except msgspec.ValidationError as exc:
        raise bad_body(exc, kind) from None
    return checked


def sense_input(payload: Any) -> records.SensePost:
    """Check a ``POST /sense`` event (parsed JSON); return what the buffer stores.

    The payload is the client's object as sent, less the server's ``id`` and ``receivedAt``;
    ``ts`` is the number as sent.

    Raises:
        BadRequest: what is wrong, by field name, or that it nests too deep.
    """
    event = convert(payload, SenseInput)
    if _nests_deeper(payload, MAX_NESTING):
        raise BadRequest(f"body nests objects and arrays deeper than {MAX_NESTING} levels")
    if "id" in payload or "receivedAt" in payload:  # the server's fields
        payload = {k: v for k, v in payload.items() if k not in _SERVER_FIELDS}
    meta = event.meta
    ssim = meta.ssim if meta else None
    return records.SensePost(
        type=event.type,
        ts=payload["ts"],
        ocr=event.ocr or "",
        app=(meta.app if meta else None) or "",
        ssim=float(ssim) if ssim is not None else None,
        payload=payload,
    )


def _nests_deeper(body: dict[str, Any], limit: int) -> bool:
    """Whether ``body`` nests objects and arrays more than ``limit`` levels (itself: 1).

    Level by level, looking only at containers, so a capture client's event costs little.
    ``type() is`` rather than ``isinstance``: parsed JSON has exact dicts and lists.
    """
    level: list[Any] = [body]
    for _ in range(limit):
        deeper = []
        for node in level:
            for child in node.values() if type(node) is dict else node:
                if type(child) is dict or type(child) is list:
                    deeper.append(child)
        if not deeper:
            return False
        level = deeper
    return True
