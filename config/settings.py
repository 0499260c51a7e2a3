"""Settings from the environment and ``run.py``'s flags, validated once at start."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, get_args

from config.audio.settings import DEFAULT_PORTS as DEFAULT_PORTS  # noqa: PLC0414

# The audio feature's section, offered (an explicit re-export) to the option table and the
# command line: config's modules reach a feature's settings through the settings they make.
from config.audio.settings import DEFAULT_STT_BASE_URL as DEFAULT_STT_BASE_URL  # noqa: PLC0414
from config.audio.settings import LOCAL_STT_INSTALL as LOCAL_STT_INSTALL  # noqa: PLC0414
from config.audio.settings import MULTILINGUAL_LOCAL_MODEL as MULTILINGUAL_LOCAL_MODEL  # noqa: PLC0414
from config.audio.settings import STT_APIS as STT_APIS  # noqa: PLC0414
from config.audio.settings import AudioConfig as AudioConfig  # noqa: PLC0414
from config.audio.settings import english as english  # noqa: PLC0414
from config.audio.settings import local_model_for as local_model_for  # noqa: PLC0414
from config.audio.settings import local_stt_installed as local_stt_installed  # noqa: PLC0414
from config.audio.settings import model_path as model_path  # noqa: PLC0414
from config.audio.settings import same_origin as same_origin  # noqa: PLC0414
from config.local_llm import default_threads
from config.loopback import loopback_url

DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_MODEL = "google/gemini-2.5-flash-lite"
DEFAULT_VISION_MODEL = "google/gemini-2.5-flash"
MAX_IMAGES_LIMIT = 4
"""The most screen images one call may carry (``AGENT_VISION_MAX_IMAGES``)."""
MIN_RUNTIME_INTERVAL_MS = 5_000
"""``POST /agent/config`` raises a smaller ``intervalMs`` to this (the environment is not)."""
MIN_RUNTIME_MAX_AGE_MS = 10_000
"""``POST /agent/config`` raises a smaller ``maxAge`` to this."""
DEFAULT_DATA_DIR = ""
"""None given: the data home (:func:`config.data_home.data_dir`)."""
SYNC_MODES = ("full", "normal")
LOG_FORMATS = ("console", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")
AgentApi = Literal["openai", "local"]
"""How the agent asks its model (``AGENT_API``): ``openai``, an OpenAI-compatible chat-completions
server at ``AGENT_BASE_URL``; ``local``, a GGUF model on this machine, in a worker process of
the LLM caller (the ``local-llm`` extra; :mod:`config.local_llm`)."""
AGENT_APIS: tuple[AgentApi, ...] = get_args(AgentApi)
ResponseFormat = Literal["auto", "json_schema", "json_object", "off"]
"""What the agent's requests ask of the LLM (``AGENT_RESPONSE_FORMAT``)."""
RESPONSE_FORMATS: tuple[ResponseFormat, ...] = get_args(ResponseFormat)
"""``AGENT_RESPONSE_FORMAT``'s values (see :mod:`actors.agent.core.response_format`)."""
EscalationMode = Literal["off", "selective", "focus", "rich"]
"""When a tick's moment goes to Sinain's agent (``ESCALATION_MODE``,
:mod:`actors.escalation.decision`)."""
ESCALATION_MODES: tuple[EscalationMode, ...] = get_args(EscalationMode)
MIN_RUNTIME_ESCALATION_COOLDOWN_MS = 5_000
"""``POST /agent/config`` raises a smaller ``escalationCooldownMs`` to this."""


@dataclass(frozen=True, slots=True)
class EscalationPolicy:
    """The escalation settings a tick carries to the decision
    (:mod:`actors.escalation.decision`)."""

    mode: EscalationMode = "off"
    cooldown_ms: int = 30_000
    """The least time between two escalations."""
    stale_ms: int = 0
    """Above 0: escalate anyway once nothing was escalated for this long."""


class ConfigError(ValueError):
    """A setting is invalid; the message says which and why."""


class ConfigUpdate(Protocol):
    """A decoded ``POST /agent/config`` body: the fields it sets, by ``AgentSettings`` name."""

    def changes(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """The agent's runtime configuration; ``POST /agent/config`` makes a new one."""

    enabled: bool = True
    api: AgentApi = "openai"
    api_key: str = ""
    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    interval_ms: int = 30_000
    """The longest time between two ticks while anything is new."""
    debounce_ms: int = 3_000
    """A tick looks at new items this long after the first one no tick has seen (with the
    economy off: after the last one); capped at the interval."""
    cooldown_ms: int = 0
    """The least time between the starts of two LLM calls."""
    max_age_ms: int = 120_000
    max_tokens: int = 200
    temperature: float = 0.3
    timeout_ms: int = 15_000
    push_to_feed: bool = True
    log_verbose: bool = False
    economy: bool = True
    """Call the LLM only when the window changed meaningfully, and never more often than a
    fixed beat of ``interval_ms`` would; ``False``: call on every new window."""
    fallback_models: tuple[str, ...] = ()
    """Tried in order when ``model`` fails or times out."""
    response_format: ResponseFormat = "auto"
    """What the request asks for (``RESPONSE_FORMATS``): ``auto`` tries ``json_schema``,
    then ``json_object``, then nothing, stepping down when a server refuses; a named level
    is sent as it is."""
    escalation_mode: EscalationMode = "off"
    """When a tick's moment goes to the escalation slot (:mod:`actors.escalation.decision`)."""
    escalation_cooldown_ms: int = 30_000
    escalation_stale_ms: int = 0
    vision_enabled: bool = True
    """Send the newest screen images with a call (:mod:`actors.agent.core.screen_image`)."""
    vision_model: str = DEFAULT_VISION_MODEL
    """The model a call with images asks first."""
    vision_max_images: int = 1
    """The most images one call carries (0 sends none)."""
    local_threads: int = field(default_factory=default_threads)
    """The threads the local model computes with (``AGENT_API=local``)."""

    @property
    def local(self) -> bool:
        """The model runs on this machine (no server, no key)."""
        return self.api == "local"

    @property
    def escalation(self) -> EscalationPolicy:
        """The escalation settings, as a tick carries them."""
        return EscalationPolicy(
            self.escalation_mode, self.escalation_cooldown_ms, self.escalation_stale_ms
        )

    @property
    def models(self) -> tuple[str, ...]:
        """``model`` then the fallbacks, without repeats (a local model has none: one model
        is loaded at a time)."""
        if self.local:
            return (self.model,)
        return tuple(dict.fromkeys((self.model, *self.fallback_models)))

    @property
    def sends_images(self) -> bool:
        """Whether a call may carry screen images (not to a local model: it reads text)."""
        return self.vision_enabled and self.vision_max_images > 0 and not self.local

    def models_for(self, *, images: bool) -> tuple[str, ...]:
        """The models a call asks in turn: with images, ``vision_model`` first, then
        :attr:`models` (given the same images); without, :attr:`models`."""
        if not images:
            return self.models
        return tuple(dict.fromkeys((self.vision_model, *self.models)))

    def tick_budget_ms(self, *, images: bool = False) -> int:
        """How long one tick may take, retries and fallbacks included: one timeout a model."""
        return self.timeout_ms * len(self.models_for(images=images))

    @property
    def effective_debounce_ms(self) -> int:
        """The debounce, capped at the interval."""
        return min(self.debounce_ms, self.interval_ms)

    @property
    def reachable(self) -> bool:
        """The agent has a model to ask: a local one, a key, or a server on this machine
        (which needs none)."""
        return self.local or bool(self.api_key) or loopback_url(self.base_url)

    @property
    def active(self) -> bool:
        """Ticks call the LLM only when the agent is enabled and has a model to ask."""
        return self.enabled and self.reachable

    def updated(self, update: ConfigUpdate) -> AgentSettings:
        """Return this config with a ``POST /agent/config`` body applied.

        The body was checked as it was decoded (``actors.core.bodies.AgentConfigUpdate`` says
        what each field takes); ``intervalMs`` is raised to :data:`MIN_RUNTIME_INTERVAL_MS`
        and ``maxAge`` to :data:`MIN_RUNTIME_MAX_AGE_MS` at least, by its ``changes()``.
        """
        return replace(self, **update.changes())


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


HEADER_TIMEOUT_S = 10.0
"""How long a new connection has to send a whole request head, by default."""
BODY_TIMEOUT_S = 30.0
"""How long a request's body may take to arrive once its head has, by default."""
BODY_MEMORY_MB = 64
"""The request bodies all connections may hold at once, in MiB, by default: 32 screen events
of the 2 MiB limit."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything ``run.py`` needs to start the relay."""

    host: str = "127.0.0.1"
    port: int = 18791
    token: str = ""
    """When set, ``POST /agent/config`` needs ``Authorization: Bearer <token>``."""
    log_format: str = "json"
    log_level: str = "info"
    actor_timeout_ms: int = 2_000
    """How long an HTTP handler waits for an actor before it answers 503."""
    data_dir: str = DEFAULT_DATA_DIR
    """Where the database lives; ``:memory:`` keeps everything in memory only."""
    retention_days: float = 7.0
    """How long agent entries beyond the newest 50 are kept."""
    sync: str = "full"
    """``full``: a 200 means fsynced; ``normal``: survives a relay crash, not a power cut."""
    max_restarts: int = 10
    """Restarts a supervisor allows within ``restart_window_s`` before it escalates."""
    restart_window_s: float = 30.0
    faults: bool = False
    """``RELAY_FAULTS=1``: the ``/debug/fault`` endpoint exists (fault drills)."""
    allow_insecure: bool = False
    """``RELAY_ALLOW_INSECURE=1``: serve on a non-loopback address without a token (warned)."""
    cors_origins: tuple[str, ...] = ()
    """Origins a browser may call from (``RELAY_CORS_ORIGINS``); none besides same-origin."""
    allowed_hosts: tuple[str, ...] = ()
    """``Host`` names served besides the loopback ones and the address a request arrived at
    (``RELAY_ALLOWED_HOSTS``): ``name`` with the relay's port or none, ``name:port`` with that
    port only; lower case, without a trailing dot."""
    redact: bool = True
    """``RELAY_REDACT=off`` stores and sends secrets as they came (warned at every start)."""
    exclude_apps: tuple[str, ...] = ()
    """Sense events of these apps (normalised, case-insensitive) are dropped at ingest."""
    exclude_titles: str = ""
    """A regular expression: sense events whose window title matches are dropped at ingest."""
    prices_file: str = ""
    """A JSON file of per-model prices that extends the built-in table (``RELAY_PRICES``)."""
    max_streams: int = 32
    """Concurrent streams, overlay sockets and waiting long-polls; more are answered 503."""
    header_timeout_s: float = HEADER_TIMEOUT_S
    """How long a new connection has to send a whole request head; then it is closed."""
    body_timeout_s: float = BODY_TIMEOUT_S
    """How long a request's body may take to arrive once its head has; then it is a 408."""
    keepalive_timeout_s: float = 20.0
    """How long a connection may idle between two requests; then it is closed."""
    body_memory_mb: int = BODY_MEMORY_MB
    """The request bodies all connections may hold at once, in MiB; a body past it cuts the
    slowest still arriving, or is answered 503 with ``Retry-After``
    (:class:`transport.connections.BodyBudget`)."""
    max_connections: int = 0
    """Open client connections at most (one more takes an idle one's place, or is answered
    503 when all are busy); 0: below the limit of open files
    (:func:`transport.connections.max_connections_for`)."""
    log_file: str = ""
    """Where the log goes, rotated (:func:`config.logs.configure_logging`); empty: stdout."""
    env_file: str = ""
    """The key file the settings were read from under the environment
    (:mod:`config.env_file`); empty: none."""
    situation_file: str = ""
    """Where SITUATION.md is written after each successful tick (an absolute path, ``~``
    expanded); empty: not written."""
    demo: bool = False
    """``--demo``: the shipped stand-in LLM and a synthetic capture session (a first-run tour)."""
    agent: AgentSettings = AgentSettings()
    audio: AudioConfig = field(default_factory=AudioConfig)
