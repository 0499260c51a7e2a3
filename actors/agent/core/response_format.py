"""Asking the LLM for structured output, and stepping down when a server refuses it.

A chat-completions request may carry ``response_format``; servers differ in what they take:

* ``json_schema`` (structured outputs): the answer must match :data:`ANSWER_SCHEMA`
  (OpenAI, OpenRouter, vLLM, llama.cpp's server, Ollama);
* ``json_object``: any JSON object, with the schema beside it as ``schema`` for the servers
  that read it (llama-cpp-python's server turns it into a grammar its output must follow);
  there the two strings are also bounded in length (:func:`bounded_schema`), so that a
  small model's long digest cannot run past ``max_tokens`` and leave the object unclosed;
* nothing: the prompt alone asks for JSON.

With ``AGENT_RESPONSE_FORMAT=auto`` the relay tries them in that order. A server that
refuses a level (:func:`is_refusal`) is asked again at once one level down; the level that
answered is remembered per model and base URL (:class:`FormatLevels`). A named level is sent
as it is, and a refusal of it is an ordinary failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args

import msgspec
from msgspec import Meta

from config.agent.settings import RESPONSE_FORMATS
from config.common.secrets import shown_url

Level = Literal["json_schema", "json_object", "off"]
"""What a request asks for: structured output, a JSON object, or nothing."""
LEVELS: tuple[Level, ...] = get_args(Level)
"""The levels, most wanted first: a refusal steps one down."""
assert ("auto", *LEVELS) == RESPONSE_FORMATS, "the setting names the levels"
SCHEMA_NAME = "hud_and_digest"


class HudAndDigest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    # The answer the prompt asks for. No docstring: it would be the schema's description,
    # sent with every request.

    hud: Annotated[str, Meta(description="At most 15 words: what the user does now.")]
    digest: Annotated[str, Meta(description="3 to 5 sentences on the situation.")]


def _schema_of(struct: type[msgspec.Struct]) -> dict[str, Any]:
    """``struct``'s JSON schema, inline (no ``$ref``) and without a title."""
    _, components = msgspec.json.schema_components([struct])
    schema: dict[str, Any] = components[struct.__name__]
    return {key: value for key, value in schema.items() if key != "title"}


ANSWER_SCHEMA = _schema_of(HudAndDigest)
"""The answer the prompt asks for, as a JSON schema (strict: both fields, nothing else)."""

HUD_MAX_CHARS = 100
"""The longest hud the bounded schema allows: fifteen words and some."""
CHARS_PER_TOKEN = 3.0
"""Characters the bounds count a token as carrying: fewer than English prose's four, for code,
OCR text and other scripts."""
MIN_BOUNDED_TOKENS = 100
"""Below this ``max_tokens`` the bounds stay those of this many: a shorter digest would say
nothing, and such an answer may be cut off as before."""
_HUD_OFF = r' <>*#`"\\\n'
"""What no hud character is: a space (between words only), markup, a quote, a backslash."""
_HUD_WORD = rf"([^I{_HUD_OFF}][^{_HUD_OFF}]{{0,39}}|I[A-Za-z0-9/._-][^{_HUD_OFF}]{{0,38}})"
HUD_PATTERN = f"^{_HUD_WORD.replace('[^I', '[^a-zI', 1)}( {_HUD_WORD}){{1,14}}$"
"""The hud's shape in the bounded schema: 2 to 15 words of at most 40 characters, one space
between them, no markup character (``<>*#`` and the backtick) and no quote or backslash; its
first letter is not lower case, and no word is ``I`` or starts with ``I`` and a mark
(``I'm``, ``I,``): a model speaking as the user, or as itself. A server that makes a grammar
of the schema (llama.cpp's) can then write no hud the gate would withhold for its shape;
every other server ignores it."""
_ENVELOPE_CHARS = 40
"""The answer's JSON around its two strings, with room for the spaces a model adds."""


def bounded_schema(max_tokens: int) -> dict[str, Any]:
    """:data:`ANSWER_SCHEMA` with the hud at most :data:`HUD_MAX_CHARS` characters, of the
    shape :data:`HUD_PATTERN`, and the digest at most what ``max_tokens`` leaves, at
    :data:`CHARS_PER_TOKEN`.

    Only for ``json_object``: strict structured outputs refuse keywords they do not support,
    and a refusal there would cost the level.
    """
    budget = int(max(max_tokens, MIN_BOUNDED_TOKENS) * CHARS_PER_TOKEN) - _ENVELOPE_CHARS
    hud = min(HUD_MAX_CHARS, budget // 3)
    properties = ANSWER_SCHEMA["properties"]
    return {
        **ANSWER_SCHEMA,
        "properties": {
            "hud": {**properties["hud"], "maxLength": hud, "pattern": HUD_PATTERN},
            "digest": {**properties["digest"], "maxLength": budget - hud},
        },
    }


def first_level(setting: str, remembered: Level | None) -> Level:
    """The level of a tick's first request: the named one, else the remembered, else the top."""
    for level in LEVELS:
        if setting == level:
            return level
    return remembered or LEVELS[0]


def step_down(setting: str, level: Level) -> Level | None:
    """The level to ask next after ``level`` was refused, or ``None``: only ``auto`` steps
    down, and ``off`` has nothing below it."""
    if setting != "auto" or level == "off":
        return None
    return LEVELS[LEVELS.index(level) + 1]


def body_field(level: str, *, max_tokens: int) -> dict[str, Any] | None:
    """The request's ``response_format`` at ``level``, or ``None`` (``off``: send none)."""
    if level == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": ANSWER_SCHEMA},
        }
    if level == "json_object":
        return {"type": "json_object", "schema": bounded_schema(max_tokens)}
    return None


_ABOUT_THE_CALLER = frozenset({401, 402, 403, 408, 409, 429})
"""Error statuses about the key, the bill, a permission, the time, a conflict or the rate:
never a refusal of what the request asks, whatever their text says."""
_FORMAT_WORDS = (
    "response_format",
    "response format",
    "json_schema",
    "json schema",
    "json_object",
    "structured output",
    "grammar",
)
"""What an error answer that refuses the request's ``response_format`` names."""
_IMAGE_WORDS = (
    "image",
    "vision",
    "multimodal",
    "multi-modal",
    "modalit",
    "content part",
    "must be a string",
)
"""What an error answer that refuses the request's images names: them, vision, multimodal
input or modalities, or the content parts they come in (a message's content that "must be a
string")."""
_LENGTH_WORDS = (
    "context length",
    "context size",
    "context window",
    "maximum context",
    "maximum number of tokens",
    "too many tokens",
    "too long",
)
"""What an error answer about the prompt's length names (it may count the images' tokens,
and is about the length all the same)."""


def _error_text(status: int, body: str, model: str) -> str | None:
    """``body`` lower-cased, with ``model``'s own name taken out (a name may say ``vision``),
    or ``None`` when the answer can refuse nothing the request asks: an error status about the
    caller, or a text about the prompt's length."""
    if status in _ABOUT_THE_CALLER or not 400 <= status < 600:
        return None
    text = body.lower()
    if model:
        text = text.replace(model.lower(), " ")
    if any(word in text for word in _LENGTH_WORDS):
        return None
    return text


def is_refusal(status: int, body: str, *, model: str = "") -> bool:
    """Whether an error answer refuses the request's ``response_format``.

    A refusal names the format: ``response_format``, ``json_schema``, ``json_object``,
    structured output or a grammar (llama-cpp-python's server answers ``json_schema`` with a
    500 naming ``response_format``, llama.cpp's a grammar it cannot parse with a 500). Any
    other error answer is an ordinary failure of the model, a 400 for a model name the
    server does not know or for a prompt too long included: asking the same model at a lower
    level would fail the same way. Never one of 401, 402, 403, 408, 409 or 429, nor an answer
    about the prompt's length; ``model``'s own name in the text counts for nothing.
    """
    text = _error_text(status, body, model)
    return text is not None and any(word in text for word in _FORMAT_WORDS)


BLIND_FOR_S = 600.0
"""How long a model that refused a request's images is asked without them before images are
tried again (a refusal may have been a passing fault)."""


def may_refuse_images(status: int, body: str, *, model: str = "") -> bool:
    """Whether an error answer to a request with images may be a refusal of the images, to be
    told by asking again at once without them.

    Servers say it every way, and one is a refusal when:

    * it names images (:data:`_IMAGE_WORDS`), whatever its status: OpenAI's 400 (``image_url``
      only for some models), OpenRouter's 404 (no endpoint that supports image input),
      llama.cpp's 500 (image input not supported);
    * or it is a 500, whose text may name nothing: llama-cpp-python's server answers any
      list of content parts with ``can only concatenate str (not "list") to str``.

    Never one naming the ``response_format`` (the level steps down first), one whose status
    is about the caller, one about the prompt's length (as for :func:`is_refusal`), nor any
    other:
    a 4xx for a model that does not exist or a request it finds invalid would fail the same
    way without images, and 502, 503 or 504 tell of a busy or unreachable server, retried as
    such. ``model``'s own name in the text counts for nothing.
    """
    text = _error_text(status, body, model)
    if text is None or any(word in text for word in _FORMAT_WORDS):
        return False
    return status == 500 or any(word in text for word in _IMAGE_WORDS)


@dataclass(frozen=True, slots=True)
class FormatLevels:
    """What each (model, base URL) takes: the level that last answered, and whether it refused
    images (until when, monotonic seconds). An immutable value, replaced whole when one
    changes."""

    levels: Mapping[tuple[str, str], Level]
    blind: Mapping[tuple[str, str], float] = field(default_factory=dict)

    def get(self, model: str, base_url: str) -> Level | None:
        """The remembered level of ``model`` at ``base_url``, if one answered."""
        return self.levels.get((model, base_url))

    def with_level(self, model: str, base_url: str, level: Level) -> FormatLevels:
        """A copy that remembers ``level`` for ``model`` at ``base_url``."""
        return FormatLevels({**self.levels, (model, base_url): level}, self.blind)

    def sees(self, model: str, base_url: str, now: float) -> bool:
        """Whether a request to ``model`` at ``base_url`` may carry images (it did not refuse
        them within :data:`BLIND_FOR_S`)."""
        return self.blind.get((model, base_url), 0.0) <= now

    def with_sight(self, model: str, base_url: str, blind_until: float | None) -> FormatLevels:
        """A copy that remembers ``model`` at ``base_url`` refusing images until
        ``blind_until``, or (``None``) taking them."""
        blind = {k: v for k, v in self.blind.items() if k != (model, base_url)}
        if blind_until is not None:
            blind[model, base_url] = blind_until
        return FormatLevels(self.levels, blind)

    def to_json(self) -> list[dict[str, Any]]:
        """``/health.agent.responseFormats``: one row a model and base URL, sorted; ``images``
        is ``false`` for one that refused images."""
        rows: list[dict[str, Any]] = []
        for (model, url), level in sorted(self.levels.items()):
            row: dict[str, Any] = {"model": model, "baseUrl": shown_url(url), "level": level}
            if (model, url) in self.blind:
                row["images"] = False
            rows.append(row)
        return rows


NO_LEVELS = FormatLevels({})
