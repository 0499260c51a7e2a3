"""What each field of ``POST /agent/config`` is called and means, for a person: a title, its
unit and its help, in the API description (``/openapi.json``) the console builds its settings
form from.

The help is the setting's own (its ``AGENT_*`` variable's, declared once on
:class:`~config.agent.settings.AgentSettings`), followed by what the body does with a value
out of bounds; the title and unit are said here, once.
"""

from __future__ import annotations

from types import MappingProxyType

from msgspec import Meta

from config.agent.settings import AgentSettings
from config.option import Section, options_of

MAX_RUNTIME_PERIOD_MS = 24 * 3_600_000
"""``POST /agent/config`` caps each period (interval, debounce, cooldown, maximum age) at a day."""
_HELP = MappingProxyType({o.attr: o for o in options_of(Section("agent", AgentSettings))})
"""The agent's settings by field: their variable and help."""


def about(attr: str, title: str, *, unit: str = "", note: str = "") -> Meta:
    """The ``Meta`` of the body field that sets ``AgentSettings.<attr>``: ``title``, and a
    description made of the setting's help and ``note``; ``unit`` (``ms``) and the setting's
    variable as ``x-unit`` and ``x-env``."""
    option = _HELP[attr]
    text = option.help
    first = text.split(" ", 1)[0]
    sentence = (first if "_" in first else first[:1].upper() + first[1:]) + text[len(first) :] + "."
    extra = {"x-env": option.env} | ({"x-unit": unit} if unit else {})
    described = " ".join(part for part in (sentence, note) if part)
    return Meta(title=title, description=described, extra_json_schema=extra)


def period(attr: str, title: str, floor: int = 0) -> Meta:
    """:func:`about` a period in milliseconds, raised to ``floor`` and capped at a day."""
    note = (
        f"Raised to {floor} at least, capped at a day."
        if floor
        else f"Clamped to 0..{MAX_RUNTIME_PERIOD_MS}."
    )
    return about(attr, title, unit="ms", note=note)
