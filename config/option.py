"""One setting of the relay, as its field declares it (:data:`config.options.OPTIONS` lists
them all): its environment variable, its flag, its type, what it means, whose field it sets.

A field is a setting when its ``Meta`` names a variable. What a field's ``Meta(extra=...)``
may say:

- ``env``: the environment variable (a field without one is no setting: ``demo``);
- ``flag``: the flag's name, ``_`` for ``-``, when it is not the field's (``agent_enabled``);
- ``secret``: read from the environment only, never from a flag (a flag shows in a process
  list);
- ``shown``: how ``--help`` states the default when the field's value does not say it well;
- ``complete`` (on a section's field, such as ``Settings.audio``): a function the command
  line calls with what was given of the section (by field, changed in place) and the sections
  made before it, to fill in what follows from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields, is_dataclass
from typing import Annotated, Any, get_args, get_origin, get_type_hints

from msgspec import Meta

from config.common.setting_types import bare, read_path

Complete = Callable[[dict[str, Any], Mapping[str, Any]], None]
"""A section's completion (``Meta(extra={"complete": ...})``), as the command line calls it."""


@dataclass(frozen=True, slots=True)
class Option:
    """One setting: its environment variable, its flag, its type, what it means.

    Its default is the field's own: ``--help`` and the configuration document show that
    value, so a default is written once.
    """

    name: str
    """The flag, ``--`` and the name with dashes."""
    env: str
    annotation: Any
    """The field's type, with its bounds (:func:`config.common.setting_types.decode` reads it)."""
    help: str
    owner: type
    """The dataclass whose field this option sets."""
    attr: str
    """That field."""
    section: str = ""
    """The field of the settings that holds :attr:`owner` (``agent``, ``audio``); ``""``:
    the settings themselves."""
    secret: bool = False
    default_text: str = ""

    @property
    def flag(self) -> str | None:
        """``--<name>``, or ``None`` for a secret."""
        return None if self.secret else "--" + self.name.replace("_", "-")

    @property
    def boolean(self) -> bool:
        """A true-or-false setting: its flag alone means true."""
        return bare(self.annotation) is bool

    @property
    def path(self) -> bool:
        """A path, made absolute as it is read."""
        return _metadata(self.annotation).extra.get("read") is read_path

    def value_in(self, settings: Any) -> Any:
        """This option's value in ``settings``."""
        holder = getattr(settings, self.section) if self.section else settings
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


@dataclass(frozen=True, slots=True)
class Section:
    """A dataclass of settings: the settings themselves (``name`` empty) or one of their
    fields (``agent``, ``audio``), and its completion, if any."""

    name: str
    owner: type
    complete: Complete | None = None


def sections_of(settings: type) -> tuple[Section, ...]:
    """``settings`` itself, then each of its fields that is a dataclass, in field order."""
    hints = get_type_hints(settings, include_extras=True)
    found = [Section("", settings)]
    for field in fields(settings):
        owner = bare(hints[field.name])
        if is_dataclass(owner) and isinstance(owner, type):
            complete = _metadata(hints[field.name]).extra.get("complete")
            found.append(Section(field.name, owner, complete))
    return tuple(found)


def options_of(section: Section) -> list[Option]:
    """The settings among ``section``'s fields (those whose ``Meta`` names a variable)."""
    hints = get_type_hints(section.owner, include_extras=True)
    found = []
    for field in fields(section.owner):
        meta = _metadata(hints[field.name])
        if "env" not in meta.extra:
            continue
        found.append(
            Option(
                name=meta.extra.get("flag", field.name),
                env=meta.extra["env"],
                annotation=hints[field.name],
                help=meta.description or "",
                owner=section.owner,
                attr=field.name,
                section=section.name,
                secret=meta.extra.get("secret", False),
                default_text=meta.extra.get("shown", ""),
            )
        )
    return found


@dataclass(frozen=True, slots=True)
class _Metadata:
    description: str | None
    extra: dict[str, Any]


def _metadata(annotation: Any) -> _Metadata:
    """What the ``Meta`` of an annotation (and of the types it is made of) say, merged: the
    description and the extra metadata, the outermost winning."""
    description: str | None = None
    extra: dict[str, Any] = {}
    if get_origin(annotation) is Annotated:
        for meta in get_args(annotation)[1:]:
            if isinstance(meta, Meta):
                description = meta.description or description
                extra |= meta.extra or {}
    return _Metadata(description, extra)
