"""Settings from the environment and ``run.py``'s flags, validated once at start.

Each setting is a field declared once, with its type, its bounds, its help and its variable
(``Meta(description=..., extra={"env": ...})``, see :mod:`config.common.setting_types`): the option
table (:mod:`config.options`), ``--help``, the configuration document's check and the decoding
of a value are made from the fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from msgspec import Meta

from config.agent.local_llm import complete_agent
from config.agent.settings import AgentSettings
from config.audio.settings import AudioConfig
from config.audio.stt_choice import complete_audio
from config.common.setting_types import (
    FilePath,
    Host,
    Hosts,
    Names,
    NonNegativeInt,
    Origins,
    Port,
    PositiveInt,
    PositiveNumber,
    Regex,
    Text,
    Token,
)
from config.privacy import PrivacySettings

DEFAULT_DATA_DIR = ""
"""None given: the data home (:func:`config.data_home.data_dir`)."""
SyncMode = Literal["full", "normal"]
LogFormat = Literal["console", "json"]
LogLevel = Literal["debug", "info", "warning", "error"]
HEADER_TIMEOUT_S = 10.0
"""How long a new connection has to send a whole request head, by default."""
BODY_TIMEOUT_S = 30.0
"""How long a request's body may take to arrive once its head has, by default."""
BODY_MEMORY_MB = 64
"""The request bodies all connections may hold at once, in MiB, by default: 32 screen events
of the 2 MiB limit."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything ``run.py`` needs to start the relay, in the order ``--help`` lists it: the
    relay's own settings, then the agent's, the audio feature's and the privacy matrix's
    sections."""

    host: Annotated[Host, Meta(description="address to listen on", extra={"env": "RELAY_HOST"})] = (
        "127.0.0.1"
    )
    port: Annotated[
        Port, Meta(description="TCP port to listen on", extra={"env": "RELAY_PORT"})
    ] = 18791
    data_dir: Annotated[
        Text,
        Meta(
            description="where state persists (default: the user's data directory, "
            "`sinain-relay data-dir` prints it); :memory: keeps it in memory only",
            extra={"env": "RELAY_DATA_DIR", "shown": "the data home"},
        ),
    ] = DEFAULT_DATA_DIR
    retention_days: Annotated[
        PositiveNumber,
        Meta(
            description="days to keep agent entries beyond the newest 50",
            extra={"env": "RELAY_RETENTION_DAYS"},
        ),
    ] = 7.0
    max_restarts: Annotated[
        PositiveInt,
        Meta(
            description="restarts a supervisor allows within the window before it escalates",
            extra={"env": "RELAY_MAX_RESTARTS"},
        ),
    ] = 10
    restart_window_s: Annotated[
        PositiveNumber,
        Meta(
            description="the window of RELAY_MAX_RESTARTS, in seconds",
            extra={"env": "RELAY_RESTART_WINDOW_S"},
        ),
    ] = 30.0
    faults: Annotated[
        bool,
        Meta(
            description="enable POST /debug/fault for fault drills", extra={"env": "RELAY_FAULTS"}
        ),
    ] = False
    allow_insecure: Annotated[
        bool,
        Meta(
            description="serve on a non-loopback address without RELAY_TOKEN (logged as a "
            "warning at every start)",
            extra={"env": "RELAY_ALLOW_INSECURE"},
        ),
    ] = False
    cors_origins: Annotated[
        Origins,
        Meta(
            description="comma-separated origins a browser may call the API from, e.g. "
            "http://localhost:5173",
            extra={"env": "RELAY_CORS_ORIGINS"},
        ),
    ] = ()
    """None besides same-origin."""
    allowed_hosts: Annotated[
        Hosts,
        Meta(
            description="comma-separated names requests may call the relay by (their Host) "
            "besides 127.0.0.1, localhost, [::1] and the address it listens on, e.g. "
            "my-laptop.local or tunnel.example:8443",
            extra={"env": "RELAY_ALLOWED_HOSTS"},
        ),
    ] = ()
    """``name`` with the relay's port or none, ``name:port`` with that port only; lower case,
    without a trailing dot."""
    redact: Annotated[
        bool,
        Meta(
            description="redact secrets (keys, tokens, passwords, card numbers, <private> text) "
            "before anything is stored or sent; off is logged as a warning",
            extra={"env": "RELAY_REDACT"},
        ),
    ] = True
    exclude_apps: Annotated[
        Names,
        Meta(
            description="comma-separated app names whose screen events are dropped at ingest",
            extra={"env": "RELAY_EXCLUDE_APPS"},
        ),
    ] = ()
    """Matched normalised, ignoring case."""
    exclude_titles: Annotated[
        Regex,
        Meta(
            description="a regular expression on window titles; matching screen events are "
            "dropped at ingest",
            extra={"env": "RELAY_EXCLUDE_TITLES"},
        ),
    ] = ""
    prices_file: Annotated[
        Text,
        Meta(
            description="a JSON file of per-model prices, extending the built-in table",
            extra={"env": "RELAY_PRICES"},
        ),
    ] = ""
    situation_file: Annotated[
        FilePath,
        Meta(
            description="write SITUATION.md for Sinain's OpenClaw plugin at this path after each "
            "successful tick, e.g. ~/.openclaw/workspace/SITUATION.md",
            extra={"env": "RELAY_SITUATION_FILE", "shown": "off"},
        ),
    ] = ""
    max_streams: Annotated[
        PositiveInt,
        Meta(
            description="concurrent /feed/stream, /agent/stream and /health/stream clients, "
            "overlay sockets and waiting long-polls; more get 503",
            extra={"env": "RELAY_MAX_STREAMS"},
        ),
    ] = 32
    header_timeout_s: Annotated[
        PositiveNumber,
        Meta(
            description="seconds a new connection has to send a whole request head (the request "
            "line and its headers); a slower one is closed",
            extra={"env": "RELAY_HEADER_TIMEOUT_S"},
        ),
    ] = HEADER_TIMEOUT_S
    body_timeout_s: Annotated[
        PositiveNumber,
        Meta(
            description="seconds a request's body may take to arrive once its head has (it must "
            "also keep to a minimum rate); a slower one is answered 408 and its connection closed",
            extra={"env": "RELAY_BODY_TIMEOUT_S"},
        ),
    ] = BODY_TIMEOUT_S
    keepalive_timeout_s: Annotated[
        PositiveNumber,
        Meta(
            description="seconds a connection may idle between two requests before it is closed "
            "(a stream or an overlay socket is never idle)",
            extra={"env": "RELAY_KEEPALIVE_TIMEOUT_S"},
        ),
    ] = 20.0
    max_connections: Annotated[
        NonNegativeInt,
        Meta(
            description="open client connections at most; one more takes the place of an idle "
            "one, or is answered 503 and closed when every connection is busy",
            extra={"env": "RELAY_MAX_CONNECTIONS", "shown": "ulimit -n less 64, at most 1024"},
        ),
    ] = 0
    """0: below the limit of open files
    (:func:`transport.shell.connections.max_connections_for`)."""
    body_memory_mb: Annotated[
        PositiveInt,
        Meta(
            description="MiB of request bodies all connections may hold at once, a share of it "
            "kept for small bodies; a body past it cuts the slowest still arriving, or is answered "
            "503 with Retry-After, its rest unread",
            extra={"env": "RELAY_BODY_MEMORY_MB"},
        ),
    ] = BODY_MEMORY_MB
    """See :class:`transport.shell.connections.BodyBudget`."""
    sync: Annotated[
        SyncMode,
        Meta(
            description="full: an acknowledged POST is fsynced; normal: faster, survives a crash "
            "of the relay but not a power cut",
            extra={"env": "RELAY_SYNC"},
        ),
    ] = "full"
    log_format: Annotated[
        LogFormat,
        Meta(
            description="console or json",
            extra={"env": "LOG_FORMAT", "shown": "console on a TTY, else json"},
        ),
    ] = "json"
    log_level: Annotated[
        LogLevel,
        Meta(description="debug, info, warning or error", extra={"env": "LOG_LEVEL"}),
    ] = "info"
    log_file: Annotated[
        FilePath,
        Meta(
            description="write the log to this file, rotated (10 MiB, 5 old files kept), instead "
            "of stdout",
            extra={"env": "RELAY_LOG_FILE", "shown": "stdout"},
        ),
    ] = ""
    """See :func:`config.logs.configure_logging`."""
    env_file: Annotated[
        FilePath,
        Meta(
            description="read settings from this KEY=VALUE file (mode 0600) under the "
            "environment's own",
            extra={"env": "RELAY_ENV_FILE", "shown": "none"},
        ),
    ] = ""
    """See :mod:`config.env_file`."""
    actor_timeout_ms: Annotated[
        PositiveInt,
        Meta(
            description="how long a request waits for an actor to begin it before answering 503, "
            "in ms (one the actor has begun is waited for, so a 503 means nothing was stored)",
            extra={"env": "RELAY_ACTOR_TIMEOUT_MS"},
        ),
    ] = 2_000
    token: Annotated[
        Token,
        Meta(
            description="the bearer token every endpoint but /health needs; needed to listen "
            "beyond loopback",
            extra={"env": "RELAY_TOKEN", "secret": True, "shown": "unset"},
        ),
    ] = ""
    demo: bool = False
    """``--demo``: the shipped stand-in LLM and a synthetic capture session (a first-run tour)."""
    agent: Annotated[AgentSettings, Meta(extra={"complete": complete_agent})] = field(
        default_factory=AgentSettings
    )
    """The agent's section; the command line completes what was given of it
    (:func:`config.agent.local_llm.complete_agent`)."""
    audio: Annotated[AudioConfig, Meta(extra={"complete": complete_audio})] = field(
        default_factory=AudioConfig
    )
    """The audio feature's section; the command line completes what was given of it
    (:func:`config.audio.stt_choice.complete_audio`)."""
    privacy: PrivacySettings = field(default_factory=PrivacySettings)
    """The privacy matrix as set (:func:`config.privacy.privacy_matrix` builds it)."""
