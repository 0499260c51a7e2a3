"""The options of the relay: one table of every setting, and reading them.

Each :class:`Option` names its environment variable, its flag, how a value is read and
what it means; its default is the field's own in :class:`~config.settings.Settings` or
:class:`~config.settings.AgentConfig`. ``--help`` and the configuration document state the
defaults from there, so each is written once.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from importlib import metadata
from pathlib import Path
from typing import Any

from config.settings import (
    LOG_FORMATS,
    LOG_LEVELS,
    RESPONSE_FORMATS,
    SYNC_MODES,
    AgentConfig,
    ConfigError,
    Settings,
    check_api_key,
)


@dataclass(frozen=True, slots=True)
class Option:
    """One setting: its environment variable, its flag, how it is parsed, what it means.

    Its default is the field's own in :class:`Settings` (or :class:`AgentConfig` for the
    agent's settings): ``--help`` and the configuration document show that value, so a
    default is written once.
    """

    name: str
    """The flag, ``--`` and the name with dashes; also the field, unless ``field`` says."""
    env: str
    parse: str
    """How a value is read (a key of :func:`_parse`)."""
    help: str
    agent: bool = False
    """The field is :class:`AgentConfig`'s, not :class:`Settings`'."""
    field: str = ""
    """The field's name when it differs from :attr:`name`."""
    secret: bool = False
    """Read from the environment only, never from a flag (a flag shows in a process list)."""
    default_text: str = ""
    """How ``--help`` states the default when the field's value does not say it well."""

    @property
    def attr(self) -> str:
        """The field of :class:`Settings` or :class:`AgentConfig` this option sets."""
        return self.field or self.name

    @property
    def flag(self) -> str | None:
        """``--<name>``, or ``None`` for a secret."""
        return None if self.secret else "--" + self.name.replace("_", "-")

    @property
    def default(self) -> Any:
        """The field's default."""
        owner = AgentConfig if self.agent else Settings
        return next(f.default for f in fields(owner) if f.name == self.attr)

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


OPTIONS: tuple[Option, ...] = (
    Option("host", "RELAY_HOST", "host", "address to listen on"),
    Option("port", "RELAY_PORT", "port", "TCP port to listen on"),
    Option(
        "data_dir",
        "RELAY_DATA_DIR",
        "text",
        "where state persists; :memory: keeps it in memory only",
        default_text="data/ beside run.py",
    ),
    Option(
        "retention_days",
        "RELAY_RETENTION_DAYS",
        "positive_number",
        "days to keep agent entries beyond the newest 50",
    ),
    Option(
        "max_restarts",
        "RELAY_MAX_RESTARTS",
        "positive_int",
        "restarts a supervisor allows within the window before it escalates",
    ),
    Option(
        "restart_window_s",
        "RELAY_RESTART_WINDOW_S",
        "positive_number",
        "the window of RELAY_MAX_RESTARTS, in seconds",
    ),
    Option("faults", "RELAY_FAULTS", "bool", "enable POST /debug/fault for fault drills"),
    Option(
        "allow_insecure",
        "RELAY_ALLOW_INSECURE",
        "bool",
        "serve on a non-loopback address without RELAY_TOKEN (logged as a warning at every start)",
    ),
    Option(
        "cors_origins",
        "RELAY_CORS_ORIGINS",
        "origin_list",
        "comma-separated origins a browser may call the API from, e.g. http://localhost:5173",
    ),
    Option(
        "allowed_hosts",
        "RELAY_ALLOWED_HOSTS",
        "host_list",
        "comma-separated names requests may call the relay by (their Host) besides 127.0.0.1, "
        "localhost, [::1] and the address it listens on, e.g. my-laptop.local or "
        "tunnel.example:8443",
    ),
    Option(
        "redact",
        "RELAY_REDACT",
        "bool",
        "redact secrets (keys, tokens, passwords, card numbers, <private> text) before "
        "anything is stored or sent; off is logged as a warning",
    ),
    Option(
        "exclude_apps",
        "RELAY_EXCLUDE_APPS",
        "model_list",
        "comma-separated app names whose screen events are dropped at ingest",
    ),
    Option(
        "exclude_titles",
        "RELAY_EXCLUDE_TITLES",
        "regex",
        "a regular expression on window titles; matching screen events are dropped at ingest",
    ),
    Option(
        "prices_file",
        "RELAY_PRICES",
        "text",
        "a JSON file of per-model prices, extending the built-in table",
    ),
    Option(
        "situation_file",
        "RELAY_SITUATION_FILE",
        "path",
        "write SITUATION.md for Sinain's OpenClaw plugin at this path after each successful "
        "tick, e.g. ~/.openclaw/workspace/SITUATION.md",
        default_text="off",
    ),
    Option(
        "max_streams",
        "RELAY_MAX_STREAMS",
        "positive_int",
        "concurrent /feed/stream and /agent/stream clients and overlay sockets; more get 503",
    ),
    Option(
        "header_timeout_s",
        "RELAY_HEADER_TIMEOUT_S",
        "positive_number",
        "seconds a new connection has to send a whole request head (the request line and its "
        "headers); a slower one is closed",
    ),
    Option(
        "body_timeout_s",
        "RELAY_BODY_TIMEOUT_S",
        "positive_number",
        "seconds a request's body may take to arrive once its head has; a slower one is "
        "answered 408 and its connection closed",
    ),
    Option(
        "keepalive_timeout_s",
        "RELAY_KEEPALIVE_TIMEOUT_S",
        "positive_number",
        "seconds a connection may idle between two requests before it is closed (a stream "
        "or an overlay socket is never idle)",
    ),
    Option(
        "max_connections",
        "RELAY_MAX_CONNECTIONS",
        "non_negative_int",
        "open client connections at most; one more takes the place of an idle one, or is "
        "answered 503 and closed when every connection is busy",
        default_text="ulimit -n less 64, at most 1024",
    ),
    Option(
        "sync",
        "RELAY_SYNC",
        "sync",
        "full: an acknowledged POST is fsynced; normal: faster, survives a crash of the "
        "relay but not a power cut",
    ),
    Option(
        "log_format",
        "LOG_FORMAT",
        "log_format",
        "console or json",
        default_text="console on a TTY, else json",
    ),
    Option("log_level", "LOG_LEVEL", "log_level", "debug, info, warning or error"),
    Option(
        "actor_timeout_ms",
        "RELAY_ACTOR_TIMEOUT_MS",
        "positive_int",
        "how long a request waits for an actor before answering 503, in ms",
    ),
    Option(
        "token",
        "RELAY_TOKEN",
        "token",
        "the bearer token every endpoint but /health needs; needed to listen beyond loopback",
        secret=True,
        default_text="unset",
    ),
    Option(
        "openrouter_api_key",
        "OPENROUTER_API_KEY",
        "api_key",
        "the LLM key; without it the agent is off",
        agent=True,
        field="api_key",
        secret=True,
        default_text="unset",
    ),
    Option(
        "agent_enabled", "AGENT_ENABLED", "bool", "run the agent loop", agent=True, field="enabled"
    ),
    Option("base_url", "AGENT_BASE_URL", "url", "OpenAI-compatible API root", agent=True),
    Option("model", "AGENT_MODEL", "text", "model to ask", agent=True),
    Option(
        "fallback_models",
        "AGENT_FALLBACK_MODELS",
        "model_list",
        "comma-separated models tried in order when the model fails",
        agent=True,
    ),
    Option(
        "interval_ms",
        "AGENT_INTERVAL_MS",
        "positive_int",
        "the longest time between two ticks while anything is new, in ms",
        agent=True,
    ),
    Option(
        "debounce_ms",
        "AGENT_DEBOUNCE_MS",
        "non_negative_int",
        "a tick looks at new feed and sense items this long after the first one no tick has "
        "seen (the first after a quiet spell: after 1 s; with AGENT_ECONOMY=false: this long "
        "after the last), in ms; capped at the interval",
        agent=True,
    ),
    Option(
        "cooldown_ms",
        "AGENT_COOLDOWN_MS",
        "non_negative_int",
        "the least time between two LLM calls, in ms",
        agent=True,
    ),
    Option("max_age_ms", "AGENT_MAX_AGE_MS", "positive_int", "context window in ms", agent=True),
    Option(
        "max_tokens", "AGENT_MAX_TOKENS", "positive_int", "max_tokens of each request", agent=True
    ),
    Option(
        "temperature",
        "AGENT_TEMPERATURE",
        "temperature",
        "sampling temperature, 0 to 2",
        agent=True,
    ),
    Option(
        "timeout_ms",
        "AGENT_TIMEOUT_MS",
        "positive_int",
        "bound on one LLM request, end to end, in ms",
        agent=True,
    ),
    Option(
        "push_to_feed",
        "AGENT_PUSH_TO_FEED",
        "bool",
        "push each new hud line to /feed",
        agent=True,
    ),
    Option(
        "log_verbose",
        "AGENT_LOG_VERBOSE",
        "bool",
        "log every tick, idle ones too",
        agent=True,
    ),
    Option(
        "economy",
        "AGENT_ECONOMY",
        "bool",
        "call the LLM only when the window changed meaningfully, and never more often than a "
        "fixed beat of the interval would; false: on every new window",
        agent=True,
    ),
    Option(
        "response_format",
        "AGENT_RESPONSE_FORMAT",
        "response_format",
        "what each request asks for: auto tries json_schema, then json_object, then nothing, "
        "stepping down when the server refuses and remembering what answered; json_schema, "
        "json_object or off sends that level only",
        agent=True,
    ),
)
"""Every setting, in the order ``--help`` lists them."""


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
    try:
        re.compile(value)
    except re.error as exc:
        raise ConfigError(f"{name} is not a valid regular expression: {exc}") from None
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


_HELPERS: dict[str, Callable[[str, str], Any]] = {
    "response_format": _parse_response_format,
    "origin_list": _parse_origins,
    "host_list": _parse_hosts,
    "regex": _parse_regex,
    "path": _parse_path,
    "api_key": _parse_api_key,
    "token": _parse_token,
}
"""The kinds read by a function of their own, given the option's name and the value."""


def _parse(kind: str, name: str, raw: str) -> Any:
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
            raise ConfigError(f"{name} must be an http:// or https:// URL, got {raw!r}")
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


def build_parser() -> argparse.ArgumentParser:
    """The command line; each flag overrides its environment variable."""
    parser = argparse.ArgumentParser(
        description=(
            "sinain-relay: ingest /feed and /sense, ask an LLM what the user is doing, "
            "serve a hud line and a digest. Each flag overrides the environment variable "
            "named in brackets. The secrets OPENROUTER_API_KEY and RELAY_TOKEN are read from "
            "the environment only, so they never show in a process list."
        ),
    )
    parser.add_argument("--version", action="version", version=f"sinain-relay {version()}")
    for option in OPTIONS:
        if option.flag is None:
            continue
        help_text = f"{option.help} (default {option.default_shown()}) [{option.env}]"
        if option.parse == "bool":  # --faults alone means true
            parser.add_argument(
                option.flag,
                dest=option.name,
                metavar="BOOL",
                nargs="?",
                const="true",
                help=help_text,
            )
        else:
            parser.add_argument(option.flag, dest=option.name, metavar=option.env, help=help_text)
    parser.add_argument(
        "--demo",
        action="store_true",
        help="a first-run tour: a stand-in LLM that summarises heuristically (no key, no "
        "network) and a synthetic capture session, with state in a temporary directory",
    )
    return parser


def version() -> str:
    """The installed package's version."""
    try:
        return metadata.version("sinain-relay")
    except metadata.PackageNotFoundError:
        return "unknown"


def load_settings(argv: Sequence[str], environ: Mapping[str, str], *, isatty: bool) -> Settings:
    """Read and validate every setting; flags win over the environment.

    Raises:
        ConfigError: the first invalid setting, named as the user wrote it.
    """
    args = vars(build_parser().parse_args(list(argv)))
    settings: dict[str, Any] = {}
    agent: dict[str, Any] = {}
    for option in OPTIONS:
        given = args.get(option.name) if option.flag is not None else None
        if given is not None:
            value = _parse(option.parse, option.flag or option.env, given)
        elif environ.get(option.env, "").strip():
            value = _parse(option.parse, option.env, environ[option.env])
        else:
            continue
        (agent if option.agent else settings)[option.attr] = value
    if "log_format" not in settings:
        settings["log_format"] = "console" if isatty else "json"
    return Settings(**settings, demo=bool(args.get("demo")), agent=AgentConfig(**agent))
