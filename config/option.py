"""One setting of the relay: its environment variable, its flag, how a value is read, what
it means, and whose field it sets (:data:`config.options.OPTIONS` lists them all)."""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Any

from config.settings import AgentSettings, AudioConfig, Settings


@dataclass(frozen=True, slots=True)
class Option:
    """One setting: its environment variable, its flag, how it is parsed, what it means.

    Its default is the field's own in :class:`Settings` (or :class:`AgentSettings` for the
    agent's settings): ``--help`` and the configuration document show that value, so a
    default is written once.
    """

    name: str
    """The flag, ``--`` and the name with dashes; also the field, unless ``field`` says."""
    env: str
    parse: str
    """How a value is read (a kind of :func:`config.option_values.parse_value`)."""
    help: str
    agent: bool = False
    """The field is :class:`AgentSettings`'s, not :class:`Settings`'."""
    audio: bool = False
    """The field is :class:`~config.audio.settings.AudioConfig`'s, not :class:`Settings`'."""
    field: str = ""
    """The field's name when it differs from :attr:`name`."""
    secret: bool = False
    """Read from the environment only, never from a flag (a flag shows in a process list)."""
    default_text: str = ""
    """How ``--help`` states the default when the field's value does not say it well."""

    @property
    def attr(self) -> str:
        """The field of :class:`Settings` or :class:`AgentSettings` this option sets."""
        return self.field or self.name

    @property
    def flag(self) -> str | None:
        """``--<name>``, or ``None`` for a secret."""
        return None if self.secret else "--" + self.name.replace("_", "-")

    @property
    def owner(self) -> type[Settings | AgentSettings | AudioConfig]:
        """The dataclass whose field this option sets."""
        return AgentSettings if self.agent else AudioConfig if self.audio else Settings

    def value_in(self, settings: Settings) -> Any:
        """This option's value in ``settings``."""
        holder = settings.agent if self.agent else settings.audio if self.audio else settings
        return getattr(holder, self.attr)

    @property
    def default(self) -> Any:
        """The field's default (made by its factory, for one that depends on the machine)."""
        field = next(f for f in fields(self.owner) if f.name == self.attr)
        return field.default if field.default_factory is MISSING else field.default_factory()

    def default_shown(self) -> str:
        """The default as ``--help`` and the configuration document state it."""
        if self.default_text:
            return self.default_text
        value = self.default
        if isinstance(value, bool):
            return "true" if value else "false"
        if value in ("", ()):
            return "none"
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)
