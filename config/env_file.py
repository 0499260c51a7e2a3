"""The key file: the relay's settings as ``KEY=VALUE`` lines, readable by its owner alone.

``--env-file PATH`` (``RELAY_ENV_FILE``) reads one at start; ``sinain-relay service install``
writes one for the service (systemd reads it with ``EnvironmentFile=``, launchd cannot, so
the agent passes ``--env-file``). One format for both readers: blank lines, ``#`` and ``;``
comments, ``NAME=value`` with the value bare, in single quotes (verbatim) or in double quotes
(``\\"``, ``\\\\``, ``\\$`` and ``\\```` escaped), as systemd reads it. A bare value keeps a
backslash's next character, so :func:`env_file_text` quotes any value with one.

A file that its group or others may read or write is refused (it holds keys): the message
gives the ``chmod``. No message quotes a line of the file, which may hold a key.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from config.common.errors import ConfigError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BARE = re.compile(r"[A-Za-z0-9_./:@,+=%^-]*")
"""A value written without quotes: nothing a reader could take for an escape or a quote."""
_DOUBLE_ESCAPED = '"\\$`'
"""What a backslash escapes inside double quotes."""
PRIVATE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700


def read_env_file(path: str, name: str = "RELAY_ENV_FILE") -> dict[str, str]:
    """The settings in the key file at ``path``, by variable.

    Raises:
        ConfigError: naming ``name`` (the flag or variable that gave the path): the file is
            missing or unreadable, its group or others may read it (with the ``chmod`` that
            fixes it), or a line is neither a comment nor ``NAME=value`` (by its number).
    """
    try:
        with open(path, encoding="utf-8") as file:
            check_private(path, os.fstat(file.fileno()), name)
            text = file.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise ConfigError(f"{name}: cannot read {path}: {reason}") from None
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        key, equals, raw = stripped.partition("=")
        value = _value(raw.strip()) if equals else None
        if not _NAME.fullmatch(key.strip()) or value is None:
            msg = (
                f"{name}: line {number} of {path} is not NAME=value (a value in quotes must "
                "end with its quote on the same line)"
            )
            raise ConfigError(msg)
        values[key.strip()] = value
    return values


def check_private(path: str, status: os.stat_result, name: str) -> None:
    """Refuse a key file its group or others may use, or another user owns.

    Raises:
        ConfigError: naming ``name`` and the remedy.
    """
    mode = stat.S_IMODE(status.st_mode)
    if mode & 0o077:
        msg = (
            f"{name}: {path} holds keys but its mode is {mode:04o} (others may read it): "
            f"run chmod 600 {path}"
        )
        raise ConfigError(msg)
    if hasattr(os, "getuid") and status.st_uid != os.getuid():
        raise ConfigError(f"{name}: {path} holds keys but belongs to another user")


def _value(raw: str) -> str | None:
    """A value as written after ``=``: quoted or bare; ``None`` for an unclosed quote."""
    if raw.startswith("'"):
        end = raw.find("'", 1)
        return raw[1:end] if end == len(raw) - 1 else None
    if raw.startswith('"'):
        return _double_quoted(raw)
    return re.sub(r"\\(.)", r"\1", raw)


def _double_quoted(raw: str) -> str | None:
    out: list[str] = []
    at = 1
    while at < len(raw):
        char = raw[at]
        if char == '"':
            return "".join(out) if at == len(raw) - 1 else None
        if char == "\\" and at + 1 < len(raw) and raw[at + 1] in _DOUBLE_ESCAPED:
            at += 1
            char = raw[at]
        out.append(char)
        at += 1
    return None


def env_file_text(values: Mapping[str, str], header: str = "") -> str:
    """``values`` as a key file (``header`` first, as ``#`` comments) that
    :func:`read_env_file` and systemd's ``EnvironmentFile=`` both read back as they are.

    Raises:
        ConfigError: a name that is no variable name, or a value with a line end.
    """
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for key, value in values.items():
        if not _NAME.fullmatch(key) or "\n" in value or "\r" in value:
            raise ConfigError(f"{key} cannot be written to a key file (a line end in it?)")
        lines.append(f"{key}={_quoted(value)}")
    return "\n".join(lines) + "\n"


def _quoted(value: str) -> str:
    if _BARE.fullmatch(value):
        return value
    if "'" not in value:
        return f"'{value}'"
    escaped = "".join(f"\\{c}" if c in _DOUBLE_ESCAPED + "\\" else c for c in value)
    return f'"{escaped}"'


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner alone (0600); its directory, when
    missing, is made for the owner alone (0700). An existing file is replaced whole."""
    if not path.parent.is_dir():
        path.parent.mkdir(mode=PRIVATE_DIR_MODE, parents=True)
        path.parent.chmod(PRIVATE_DIR_MODE)  # whatever the umask
    partial = path.with_name(f".{path.name}.partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_MODE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        os.fchmod(file.fileno(), PRIVATE_MODE)  # an old partial file kept its mode
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    partial.replace(path)


def with_env_file(path: str, name: str, environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with the key file's settings added under it: a variable set (not empty)
    in the real environment wins, as a flag wins over a variable."""
    merged = read_env_file(path, name)
    merged.update({key: value for key, value in environ.items() if value.strip()})
    return merged
