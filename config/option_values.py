"""How a setting's text is read: :func:`parse_value` reads the text given for a setting (its
variable or flag) as a value of the option's kind, checked, or raises a
:class:`~config.settings.ConfigError` that names the setting as the user wrote it."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import re2

from config.secrets import shown_url
from config.settings import (
    AGENT_APIS,
    ESCALATION_MODES,
    LOG_FORMATS,
    LOG_LEVELS,
    MAX_IMAGES_LIMIT,
    RESPONSE_FORMATS,
    STT_APIS,
    SYNC_MODES,
    ConfigError,
    check_api_key,
)
from config.unicode_regex import UnicodeBoundary, compile_python

_DIGITS = re.compile(r"[0-9]+")
"""ASCII digits only: ``str.isdigit`` accepts "²", which ``int`` then refuses."""


def _parse_origins(name: str, value: str) -> tuple[str, ...]:
    origins = tuple(o.strip().rstrip("/") for o in value.split(",") if o.strip())
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


def _parse_hosts(name: str, value: str) -> tuple[str, ...]:
    """``RELAY_ALLOWED_HOSTS``: each entry lower case, without a trailing dot."""
    hosts = []
    for entry in (h.strip().lower() for h in value.split(",") if h.strip()):
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


def _parse_regex(name: str, value: str) -> str:
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


def _parse_api_key(name: str, value: str) -> str:
    if not value:
        raise ConfigError(f"{name} must not be empty")
    return check_api_key(name, value)


def _parse_token(name: str, value: str) -> str:
    """A bearer token (empty: none), held to the rule of an API key: a client can send only
    printable ASCII in its header, so any other token would refuse every request."""
    return check_api_key(name, value) if value else ""


def _parse_path(name: str, value: str) -> str:
    """``value`` with ``~`` expanded, made absolute now (a later ``chdir`` changes nothing)."""
    if not value:
        raise ConfigError(f"{name} must not be empty")
    return str(Path(value).expanduser().absolute())


def _parse_response_format(name: str, value: str) -> str:
    if value.lower() not in RESPONSE_FORMATS:
        raise ConfigError(f"{name} must be one of {', '.join(RESPONSE_FORMATS)}, got {value!r}")
    return value.lower()


def _parse_escalation_mode(name: str, value: str) -> str:
    if value.lower() not in ESCALATION_MODES:
        raise ConfigError(f"{name} must be one of {', '.join(ESCALATION_MODES)}, got {value!r}")
    return value.lower()


def _parse_agent_api(name: str, value: str) -> str:
    if value.lower() not in AGENT_APIS:
        raise ConfigError(f"{name} must be one of {', '.join(AGENT_APIS)}, got {value!r}")
    return value.lower()


def _parse_stt_api(name: str, value: str) -> str:
    if value.lower() not in STT_APIS:
        raise ConfigError(f"{name} must be one of {', '.join(STT_APIS)}, got {value!r}")
    return value.lower()


def _parse_image_count(name: str, value: str) -> int:
    if not _DIGITS.fullmatch(value) or int(value) > MAX_IMAGES_LIMIT:
        raise ConfigError(
            f"{name} must be a whole number from 0 to {MAX_IMAGES_LIMIT}, got {value!r}"
        )
    return int(value)


_HELPERS: dict[str, Callable[[str, str], Any]] = {
    "image_count": _parse_image_count,
    "response_format": _parse_response_format,
    "stt_api": _parse_stt_api,
    "agent_api": _parse_agent_api,
    "escalation_mode": _parse_escalation_mode,
    "origin_list": _parse_origins,
    "host_list": _parse_hosts,
    "regex": _parse_regex,
    "path": _parse_path,
    "api_key": _parse_api_key,
    "token": _parse_token,
}
"""The kinds read by a function of their own, given the option's name and the value."""


def parse_value(kind: str, name: str, raw: str) -> Any:
    value = raw.strip()
    helper = _HELPERS.get(kind)
    if helper is not None:
        return helper(name, value)
    if kind in ("text", "host"):
        if not value:
            raise ConfigError(f"{name} must not be empty")
        if kind == "host" and any(c.isspace() for c in value):
            raise ConfigError(f"{name} is not a host name or address: {raw!r}")
        return value
    if kind == "port":
        if not _DIGITS.fullmatch(value) or not 0 < int(value) < 65536:
            raise ConfigError(f"{name} must be a port number from 1 to 65535, got {raw!r}")
        return int(value)
    if kind == "positive_int":
        if not _DIGITS.fullmatch(value) or int(value) <= 0:
            raise ConfigError(f"{name} must be a positive whole number, got {raw!r}")
        return int(value)
    if kind == "non_negative_int":
        if not _DIGITS.fullmatch(value):
            raise ConfigError(f"{name} must be a whole number of 0 or more, got {raw!r}")
        return int(value)
    if kind == "model_list":
        return tuple(m.strip() for m in value.split(",") if m.strip())
    if kind == "positive_number":
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not math.isfinite(number) or number <= 0:
            raise ConfigError(f"{name} must be a positive number, got {raw!r}")
        return number
    if kind == "sync":
        if value.lower() not in SYNC_MODES:
            raise ConfigError(f"{name} must be one of {', '.join(SYNC_MODES)}, got {raw!r}")
        return value.lower()
    if kind == "bool":
        lowered = value.lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"{name} must be true or false, got {raw!r}")
    if kind == "temperature":
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not 0 <= number <= 2:
            raise ConfigError(f"{name} must be a number from 0 to 2, got {raw!r}")
        return number
    if kind == "url":
        if not value.startswith(("http://", "https://")):
            raise ConfigError(f"{name} must be an http:// or https:// URL, got {shown_url(raw)!r}")
        return value.rstrip("/")
    if kind == "log_format":
        if value.lower() not in LOG_FORMATS:
            raise ConfigError(f"{name} must be one of {', '.join(LOG_FORMATS)}, got {raw!r}")
        return value.lower()
    if kind == "log_level":
        if value.lower() not in LOG_LEVELS:
            raise ConfigError(f"{name} must be one of {', '.join(LOG_LEVELS)}, got {raw!r}")
        return value.lower()
    raise AssertionError(kind)
