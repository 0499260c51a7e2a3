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
from dataclasses import MISSING, dataclass, fields
from typing import Any, get_type_hints

from msgspec import inspect as types

from config.setting_types import read_path

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
    """The field's type, with its bounds (:func:`config.setting_types.decode` reads it)."""
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
        return isinstance(_kind(self.annotation), types.BoolType)

    @property
    def path(self) -> bool:
        """A path, made absolute as it is read."""
        return _extra(self.annotation).get("read") is read_path

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
        kind = _kind(hints[field.name])
        if isinstance(kind, types.DataclassType):
            complete = _extra(hints[field.name]).get("complete")
            found.append(Section(field.name, kind.cls, complete))
    return tuple(found)


def options_of(section: Section) -> list[Option]:
    """The settings among ``section``'s fields (those whose ``Meta`` names a variable)."""
    hints = get_type_hints(section.owner, include_extras=True)
    found = []
    for field in fields(section.owner):
        info = types.type_info(hints[field.name])
        if not isinstance(info, types.Metadata) or "env" not in (extra := info.extra or {}):
            continue
        found.append(
            Option(
                name=extra.get("flag", field.name),
                env=extra["env"],
                annotation=hints[field.name],
                help=(info.extra_json_schema or {}).get("description", ""),
                owner=section.owner,
                attr=field.name,
                section=section.name,
                secret=extra.get("secret", False),
                default_text=extra.get("shown", ""),
            )
        )
    return found


def _kind(annotation: Any) -> types.Type:
    info = types.type_info(annotation)
    return info.type if isinstance(info, types.Metadata) else info


def _extra(annotation: Any) -> dict[str, Any]:
    info = types.type_info(annotation)
    return (info.extra or {}) if isinstance(info, types.Metadata) else {}
