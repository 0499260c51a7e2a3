"""The kinds of value a setting takes, as msgspec types, and :func:`decode`, which reads the
text given for a setting (its variable or its flag) as a value of its field's type.

A field of the settings is declared once: ``Annotated[<type>, Meta(description=<help>,
extra={"env": <variable>})]`` with its default, where ``<type>`` is a builtin (``bool``, a
``Literal``) or one of the types below, which carry their bounds (``Meta(ge=1)``) and, where
the text needs more than msgspec reads, a reader of their own (``extra={"read": ...}``).
msgspec checks the bounds and the literals; a refusal names the setting as the user wrote
it and says what it takes, from those same bounds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

import msgspec
import re2
from msgspec import Meta
from msgspec import inspect as types

from config.common.errors import ConfigError
from config.common.secrets import shown_url
from config.common.unicode_regex import UnicodeBoundary, compile_python

Reader = Callable[[str, str], Any]
"""Reads a setting's text (stripped) into what its type holds, given the setting's name;
raises :class:`ConfigError` for text of the wrong form."""

_DIGITS = re.compile(r"[0-9]+")
"""ASCII digits only: ``str.isdigit`` accepts "²", which ``int`` then refuses."""
_BOOLEANS = {"1": True, "true": True, "yes": True, "on": True}
_BOOLEANS |= {"0": False, "false": False, "no": False, "off": False}


def check_api_key(name: str, key: str) -> str:
    """``key`` if every character is printable ASCII, ``!`` to ``~``: an HTTP header carries
    nothing else, and no key has a space. A quote or a space pasted with it would otherwise
    fail every request; a placeholder copied from the docs would fail every request too.

    Raises:
        ConfigError: naming ``name``, the first bad character's position and what it is,
            never the key; or saying it is a placeholder.
    """
    for position, char in enumerate(key, start=1):
        if not "!" <= char <= "~":
            msg = (
                f"{name} holds {_character_kind(char)} at position {position} of {len(key)}; "
                "a key or token is printable ASCII without spaces "
                "(was a quote or a space copied with it?)"
            )
            raise ConfigError(msg)
    if "..." in key or (key.startswith("<") and key.endswith(">")):  # sk-or-..., <your-key>
        msg = (
            f"{name} is a placeholder (it holds '...' or is '<...>'), not a key: put the key "
            "itself (an OpenRouter key comes from https://openrouter.ai/keys)"
        )
        raise ConfigError(msg)
    return key


def _character_kind(char: str) -> str:
    code = f"U+{ord(char):04X}"
    if char == " ":
        return f"a space ({code})"
    if char < " " or char == "\x7f":
        return f"a control character ({code})"
    if char.isspace():
        return f"a non-ASCII space ({code})"
    return f"a non-ASCII character ({code})"


def _not_empty(name: str, value: str) -> str:
    if not value:
        raise ConfigError(f"{name} must not be empty")
    return value


def _host(name: str, value: str) -> str:
    if any(c.isspace() for c in _not_empty(name, value)):
        raise ConfigError(f"{name} is not a host name or address: {value!r}")
    return value


def _url(name: str, value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ConfigError(f"{name} must be an http:// or https:// URL, got {shown_url(value)!r}")
    return value.rstrip("/")


def read_path(name: str, value: str) -> str:
    """``value`` with ``~`` expanded, made absolute now (a later ``chdir`` changes nothing)."""
    return str(Path(_not_empty(name, value)).expanduser().absolute())


def _regex(name: str, value: str) -> str:
    """``value``, a regular expression in RE2's syntax: it is searched in text a client sends,
    and RE2 reads any text in one pass (a backtracking pattern could take minutes)."""
    try:
        compile_python(value)
    except UnicodeBoundary as exc:
        raise ConfigError(f"{name}: {exc}: {value!r}") from None
    except re2.error:
        raise ConfigError(
            f"{name} is not a valid regular expression (RE2 syntax, as Python's re without "
            f"look-around or back-references): {value!r}"
        ) from None
    return value


def _names(_name: str, value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


def _origins(name: str, value: str) -> tuple[str, ...]:
    origins = tuple(o.rstrip("/") for o in _names(name, value))
    for origin in origins:
        if origin not in ("*", "null") and not re.fullmatch(r"https?://[^/\s]+", origin):
            raise ConfigError(
                f"{name} must list origins like http://localhost:5173 (scheme and host, "
                f"no path; or null for file:// pages), got {origin!r}"
            )
    return origins


_HOST = re.compile(r"(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?")
"""A ``Host`` as a browser sends it: a name (letters, digits, ``-``, ``_``, dots; IDNs in
their ``xn--`` form), an IPv4 address or an IPv6 one in brackets, and a port or none."""


def _hosts(name: str, value: str) -> tuple[str, ...]:
    """``RELAY_ALLOWED_HOSTS``: each entry lower case, without a trailing dot."""
    hosts = []
    for entry in (h.lower() for h in _names(name, value)):
        port = entry.rpartition("]")[2].partition(":")[2]
        if not _HOST.fullmatch(entry) or (port and not 0 < int(port) < 65536):
            raise ConfigError(
                f"{name} must list host names or addresses, each with a port or none "
                f"(my-laptop.local, 192.168.1.20:18791, [fd00::1]; no scheme, path or *), "
                f"got {entry!r}"
            )
        stem, colon, port = entry.rpartition(":") if port else (entry, "", "")
        hosts.append(stem.rstrip(".") + colon + port)
    return tuple(hosts)


def _api_key(name: str, value: str) -> str:
    return check_api_key(name, _not_empty(name, value))


def _token(name: str, value: str) -> str:
    """A bearer token (empty: none), held to the rule of an API key: a client can send only
    printable ASCII in its header, so any other token would refuse every request."""
    return check_api_key(name, value) if value else ""


Port = Annotated[int, Meta(ge=1, le=65535, extra={"noun": "a port number"})]
PositiveInt = Annotated[int, Meta(ge=1)]
NonNegativeInt = Annotated[int, Meta(ge=0)]
PositiveNumber = Annotated[float, Meta(gt=0)]
Text = Annotated[str, Meta(min_length=1)]
"""Any text but none (an empty value counts as unset; an empty flag is refused)."""
Host = Annotated[str, Meta(extra={"read": _host})]
Url = Annotated[str, Meta(extra={"read": _url})]
"""An ``http://`` or ``https://`` URL, without a trailing ``/``."""
FilePath = Annotated[str, Meta(extra={"read": read_path})]
"""A path, ``~`` expanded and made absolute as the relay starts."""
Regex = Annotated[str, Meta(extra={"read": _regex})]
Names = Annotated[tuple[str, ...], Meta(extra={"read": _names})]
"""Comma-separated names, each without its surrounding spaces."""
Origins = Annotated[tuple[str, ...], Meta(extra={"read": _origins})]
Hosts = Annotated[tuple[str, ...], Meta(extra={"read": _hosts})]
ApiKey = Annotated[str, Meta(extra={"read": _api_key})]
Token = Annotated[str, Meta(extra={"read": _token})]


def decode(annotation: Any, name: str, raw: str) -> Any:
    """``raw``, the text given for the setting ``name`` (its variable or its flag), read as
    a value of ``annotation`` (a field's type), surrounding spaces dropped.

    Raises:
        ConfigError: the text is not such a value; the message names ``name`` and says what
            the setting takes.
    """
    info = types.type_info(annotation)
    kind = info.type if isinstance(info, types.Metadata) else info
    extra = (info.extra or {}) if isinstance(info, types.Metadata) else {}
    text = raw.strip()
    read: Reader | None = extra.get("read")
    value: Any = read(name, text) if read is not None else _builtin(kind, text)
    try:
        return msgspec.convert(value, annotation)
    except msgspec.ValidationError:
        if isinstance(kind, types.StrType) and not text:
            raise ConfigError(f"{name} must not be empty") from None
        raise ConfigError(f"{name} must be {expected(annotation)}, got {text!r}") from None


def _builtin(kind: types.Type, text: str) -> Any:
    """``text`` as the builtin value msgspec checks for ``kind``: a whole number of ASCII
    digits, a finite number, a boolean's word, a literal in lower case, comma-separated
    names; the text itself when it is none of those (msgspec then refuses it)."""
    if isinstance(kind, types.IntType):
        return int(text) if _DIGITS.fullmatch(text) else text
    if isinstance(kind, types.FloatType):
        try:
            number = float(text)
        except ValueError:
            return text
        return number if math.isfinite(number) else text
    if isinstance(kind, types.BoolType):
        return _BOOLEANS.get(text.lower(), text)
    if isinstance(kind, types.LiteralType):
        return text.lower()
    if isinstance(kind, types.VarTupleType):
        return _names("", text)
    return text


def expected(annotation: Any) -> str:
    """What a value of ``annotation`` must be, in words, from its bounds: "a positive whole
    number", "a number from 0 to 2", "one of console, json" (in the order declared)."""
    info = types.type_info(annotation)
    kind = info.type if isinstance(info, types.Metadata) else info
    extra = (info.extra or {}) if isinstance(info, types.Metadata) else {}
    if isinstance(kind, types.BoolType):
        return "true or false"
    if isinstance(kind, types.LiteralType):
        return "one of " + ", ".join(str(value) for value in get_args(bare(annotation)))
    if isinstance(kind, types.IntType | types.FloatType):
        whole = isinstance(kind, types.IntType)
        noun = str(extra.get("noun", "a whole number" if whole else "a number"))
        low, high = kind.ge, kind.le
        if low is not None and high is not None:
            return f"{noun} from {_figure(low)} to {_figure(high)}"
        if low == 0:
            return f"{noun} of 0 or more"
        if (low is not None and low > 0) or kind.gt == 0:
            return "a positive whole number" if whole else "a positive number"
        return noun
    return "text"


def bare(annotation: Any) -> Any:
    """``annotation`` without its ``Annotated`` layers."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def _figure(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
