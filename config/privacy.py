"""The privacy matrix: how much of each kind of data each destination gets, as Sinain reads
it from the same ``.env``.

A preset (``PRIVACY_MODE``) fills the matrix; a cell (``PRIVACY_<TYPE>_<DEST>``) set on its own
overrides the preset. The kinds (rows) are the screen's text (``OCR``), its images
(``IMAGES``), transcripts (``AUDIO``) and window titles (``TITLES``); the destinations
(columns) are what the relay stores (``LOCAL_BUFFER``), an LLM reached over HTTP
(``OPENROUTER``), the relay's own model (``LOCAL_LLM``), and the escalation slot and the MCP
tools (``AGENT_GATEWAY``). Each cell is a level: ``full``, ``redacted``, ``summary``,
``none`` (docs/privacy.md, "The privacy matrix", says what each means where).

With no ``PRIVACY_*`` variable set the matrix is the relay's own default
(:func:`default_matrix`), which is what the relay did before it had one. The matrix is built
once at start (:func:`privacy_matrix`); a destination reads its :class:`Column`, whose levels
are plain attributes, on every tick and every post.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, get_args

import msgspec
from msgspec import Meta, Struct

from config.common.errors import ConfigError
from config.common.setting_types import Reader

Level = Literal["full", "redacted", "summary", "none"]
"""How much of a kind a destination gets, most first."""
LEVELS: tuple[Level, ...] = get_args(Level)
SPEECH_SUMMARY = "(speech: {words} words)"
"""What ``summary`` keeps of a transcript: how many words it had, never which."""
Mode = Literal["off", "standard", "strict", "paranoid"]
"""``PRIVACY_MODE``'s presets, least private first."""
MODES: tuple[Mode, ...] = get_args(Mode)
SHOWN: dict[Level, bool] = {"full": True, "redacted": True, "summary": False, "none": False}
"""Whether a level shows a kind's text as stored: the relay's secret redaction is applied to
all text as it arrives, so ``full`` and ``redacted`` show the same while ``RELAY_REDACT`` is
on."""
Destination = Literal["local_buffer", "openrouter", "local_llm", "agent_gateway"]
DESTINATIONS: tuple[Destination, ...] = get_args(Destination)
Kind = Literal["ocr", "images", "audio", "titles"]
"""The matrix's rows: screen text, screen images, transcripts, window titles."""
KINDS: tuple[Kind, ...] = get_args(Kind)
DEFAULT_MODE = "default"
"""How the matrix's mode is shown when ``PRIVACY_MODE`` is unset: the relay's default."""


def _one_of(values: tuple[str, ...]) -> Reader:
    """A reader of one of ``values``, in any case; another value is refused, naming them."""

    def read(name: str, value: str) -> str:
        if value.lower() not in values:
            raise ConfigError(f"{name} must be one of {', '.join(values)}, got {value!r}")
        return value.lower()

    return read


CellLevel = Annotated[
    Literal["", "full", "redacted", "summary", "none"], Meta(extra={"read": _one_of(LEVELS)})
]
"""A cell as set: a level, or ``""`` (unset: the preset's)."""
PresetMode = Annotated[
    Literal["", "off", "standard", "strict", "paranoid"], Meta(extra={"read": _one_of(MODES)})
]
"""``PRIVACY_MODE`` as set: a preset, or ``""`` (unset: the relay's default)."""


class Row(Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """One kind's levels, by destination."""

    local_buffer: Level
    openrouter: Level
    local_llm: Level
    agent_gateway: Level


class Matrix(Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """Every kind's row: ``{"ocr": {"localBuffer": "redacted", "openrouter": ...}, ...}``."""

    ocr: Row
    images: Row
    audio: Row
    titles: Row

    def column(self, destination: Destination) -> Column:
        """What ``destination`` gets of each kind."""
        return Column(
            ocr=getattr(self.ocr, destination),
            images=getattr(self.images, destination),
            audio=getattr(self.audio, destination),
            titles=getattr(self.titles, destination),
        )


@dataclass(frozen=True, slots=True)
class Column:
    """One destination's levels, by kind: what a path that carries data there reads."""

    ocr: Level
    images: Level
    audio: Level
    titles: Level


def _row(local_buffer: Level, local_llm: Level, openrouter: Level, agent_gateway: Level) -> Row:
    """A row in Sinain's order of destinations."""
    return Row(local_buffer, openrouter, local_llm, agent_gateway)


_ALL_FULL = _row("full", "full", "full", "full")
PRESETS: dict[Mode, Matrix] = {
    "off": Matrix(ocr=_ALL_FULL, images=_ALL_FULL, audio=_ALL_FULL, titles=_ALL_FULL),
    "standard": Matrix(
        ocr=_row("redacted", "redacted", "redacted", "redacted"),
        images=_row("full", "none", "none", "none"),
        audio=_row("full", "redacted", "redacted", "redacted"),
        titles=_row("full", "summary", "summary", "none"),
    ),
    "strict": Matrix(
        ocr=_row("redacted", "summary", "summary", "none"),
        images=_row("none", "none", "none", "none"),
        audio=_row("redacted", "summary", "summary", "none"),
        titles=_row("summary", "summary", "none", "none"),
    ),
    "paranoid": Matrix(
        ocr=_row("redacted", "none", "none", "none"),
        images=_row("none", "none", "none", "none"),
        audio=_row("redacted", "none", "none", "none"),
        titles=_row("none", "none", "none", "none"),
    ),
}
"""Sinain's presets, cell for cell, each row written in Sinain's order of destinations: local
buffer, local LLM, OpenRouter, agent gateway."""


def default_matrix(*, redact: bool) -> Matrix:
    """The matrix with no ``PRIVACY_*`` set: what the relay did before it had one. Text is
    stored and sent with the relay's secret redaction (``RELAY_REDACT``; ``full`` with it
    off); images are stored as sent and go to a vision model over HTTP
    (``AGENT_VISION_ENABLED`` decides whether at all), never to the relay's own model (it
    reads text) nor to agents (the escalation slot and ``/agent/context`` name an image,
    never carry it)."""
    text: Level = "redacted" if redact else "full"
    text_row = Row(text, text, text, text)
    return Matrix(
        ocr=text_row,
        images=Row(local_buffer="full", openrouter="full", local_llm="none", agent_gateway="none"),
        audio=text_row,
        titles=text_row,
    )


DEFAULT_MATRIX = default_matrix(redact=True)
"""The matrix of a relay with no ``PRIVACY_*`` set and redaction on: what an actor started
without one (in a test) follows."""
TO_AGENTS = DEFAULT_MATRIX.column("agent_gateway")
"""What agents get by default."""
STORED = DEFAULT_MATRIX.column("local_buffer")
"""What the buffers store by default."""


def _cell(env: str, what: str) -> Meta:
    """A cell's field: its variable (``PRIVACY_OCR_LOCAL_BUFFER``), its flag, its help (what
    it governs, and the levels it takes), and its default shown as the preset's."""
    return Meta(
        description=f"{what}: {', '.join(LEVELS)}",
        extra={"env": env, "flag": env.lower(), "shown": "the preset's"},
    )


@dataclass(frozen=True, slots=True)
class PrivacySettings:
    """The privacy matrix as set: a preset and the cells set on their own (``""``: unset)."""

    mode: Annotated[
        PresetMode,
        Meta(
            description="a preset of the privacy matrix: off, standard, strict or paranoid, as "
            "Sinain reads it; unset: the relay's default (secrets redacted, images to a vision "
            "model over HTTP)",
            extra={"env": "PRIVACY_MODE", "flag": "privacy_mode", "shown": "unset"},
        ),
    ] = ""
    ocr_local_buffer: Annotated[
        CellLevel, _cell("PRIVACY_OCR_LOCAL_BUFFER", "screen text (OCR) stored")
    ] = ""
    ocr_openrouter: Annotated[
        CellLevel, _cell("PRIVACY_OCR_OPENROUTER", "screen text (OCR) to an LLM over HTTP")
    ] = ""
    ocr_local_llm: Annotated[
        CellLevel, _cell("PRIVACY_OCR_LOCAL_LLM", "screen text (OCR) to the relay's own model")
    ] = ""
    ocr_agent_gateway: Annotated[
        CellLevel, _cell("PRIVACY_OCR_AGENT_GATEWAY", "screen text (OCR) to agents")
    ] = ""
    images_local_buffer: Annotated[
        CellLevel, _cell("PRIVACY_IMAGES_LOCAL_BUFFER", "screen images stored")
    ] = ""
    images_openrouter: Annotated[
        CellLevel, _cell("PRIVACY_IMAGES_OPENROUTER", "screen images to an LLM over HTTP")
    ] = ""
    images_local_llm: Annotated[
        CellLevel, _cell("PRIVACY_IMAGES_LOCAL_LLM", "screen images to the relay's own model")
    ] = ""
    images_agent_gateway: Annotated[
        CellLevel, _cell("PRIVACY_IMAGES_AGENT_GATEWAY", "screen images to agents")
    ] = ""
    audio_local_buffer: Annotated[
        CellLevel, _cell("PRIVACY_AUDIO_LOCAL_BUFFER", "transcripts stored")
    ] = ""
    audio_openrouter: Annotated[
        CellLevel, _cell("PRIVACY_AUDIO_OPENROUTER", "transcripts to an LLM over HTTP")
    ] = ""
    audio_local_llm: Annotated[
        CellLevel, _cell("PRIVACY_AUDIO_LOCAL_LLM", "transcripts to the relay's own model")
    ] = ""
    audio_agent_gateway: Annotated[
        CellLevel, _cell("PRIVACY_AUDIO_AGENT_GATEWAY", "transcripts to agents")
    ] = ""
    titles_local_buffer: Annotated[
        CellLevel, _cell("PRIVACY_TITLES_LOCAL_BUFFER", "window titles stored")
    ] = ""
    titles_openrouter: Annotated[
        CellLevel, _cell("PRIVACY_TITLES_OPENROUTER", "window titles to an LLM over HTTP")
    ] = ""
    titles_local_llm: Annotated[
        CellLevel, _cell("PRIVACY_TITLES_LOCAL_LLM", "window titles to the relay's own model")
    ] = ""
    titles_agent_gateway: Annotated[
        CellLevel, _cell("PRIVACY_TITLES_AGENT_GATEWAY", "window titles to agents")
    ] = ""

    def cells(self) -> dict[tuple[Kind, Destination], Level]:
        """The cells set on their own, by kind and destination (``("ocr", "openrouter")``)."""
        set_cells: dict[tuple[Kind, Destination], Level] = {}
        for kind in KINDS:
            for destination in DESTINATIONS:
                level = getattr(self, f"{kind}_{destination}")
                if level:
                    set_cells[kind, destination] = level
        return set_cells


def privacy_matrix(privacy: PrivacySettings, *, redact: bool) -> Matrix:
    """The matrix ``privacy`` sets: its preset (none: :func:`default_matrix`), then its cells.

    Raises:
        ConfigError: a cell is ``redacted`` while ``RELAY_REDACT`` is off, which would
            promise a redaction the relay does not make; the message names both.
    """
    base = PRESETS[privacy.mode] if privacy.mode else default_matrix(redact=redact)
    rows: dict[Kind, dict[str, Level]] = {
        kind: msgspec.structs.asdict(getattr(base, kind)) for kind in KINDS
    }
    cells = privacy.cells()
    for (kind, destination), level in cells.items():
        rows[kind][destination] = level
    if not redact:
        _check_redaction(rows, cells, privacy.mode)
    return Matrix(**{kind: Row(**row) for kind, row in rows.items()})


def _check_redaction(
    rows: dict[Kind, dict[str, Level]], cells: dict[tuple[Kind, Destination], Level], mode: str
) -> None:
    """Refuse a ``redacted`` cell while ``RELAY_REDACT`` is off."""
    for kind, row in rows.items():
        for destination, level in row.items():
            if level == "redacted":
                given = "itself" if (kind, destination) in cells else f"PRIVACY_MODE={mode}"
                msg = (
                    f"{variable(kind, destination)} is redacted (set by {given}) while "
                    "RELAY_REDACT is off: turn RELAY_REDACT on, or set that cell to full"
                )
                raise ConfigError(msg)


def variable(kind: str, destination: str) -> str:
    """A cell's environment variable: ``PRIVACY_OCR_OPENROUTER``."""
    return f"PRIVACY_{kind.upper()}_{destination.upper()}"
