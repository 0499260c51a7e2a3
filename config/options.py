"""The options of the relay: one table of every setting.

Each :class:`Option` names its environment variable, its flag, how a value is read and
what it means; its default is the field's own in :class:`~config.settings.Settings` or
:class:`~config.settings.AgentSettings`. ``--help`` and the configuration document state the
defaults from there, so each is written once. Reading a value: :mod:`config.option_values`;
reading the environment and the flags: :mod:`config.command_line`.
"""

from __future__ import annotations

from config.option import Option

OPTIONS: tuple[Option, ...] = (
    Option("host", "RELAY_HOST", "host", "address to listen on"),
    Option("port", "RELAY_PORT", "port", "TCP port to listen on"),
    Option(
        "data_dir",
        "RELAY_DATA_DIR",
        "text",
        "where state persists (default: the user's data directory, `sinain-relay data-dir` "
        "prints it); :memory: keeps it in memory only",
        default_text="the data home",
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
        "concurrent /feed/stream, /agent/stream and /health/stream clients, overlay sockets and "
        "waiting long-polls; more get 503",
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
        "seconds a request's body may take to arrive once its head has (it must also keep to "
        "a minimum rate); a slower one is answered 408 and its connection closed",
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
        "body_memory_mb",
        "RELAY_BODY_MEMORY_MB",
        "positive_int",
        "MiB of request bodies all connections may hold at once, a share of it kept for small "
        "bodies; a body past it cuts the slowest still arriving, or is answered 503 with "
        "Retry-After, its rest unread",
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
        "log_file",
        "RELAY_LOG_FILE",
        "path",
        "write the log to this file, rotated (10 MiB, 5 old files kept), instead of stdout",
        default_text="stdout",
    ),
    Option(
        "env_file",
        "RELAY_ENV_FILE",
        "path",
        "read settings from this KEY=VALUE file (mode 0600) under the environment's own",
        default_text="none",
    ),
    Option(
        "actor_timeout_ms",
        "RELAY_ACTOR_TIMEOUT_MS",
        "positive_int",
        "how long a request waits for an actor to begin it before answering 503, in ms (one "
        "the actor has begun is waited for, so a 503 means nothing was stored)",
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
    Option(
        "agent_api",
        "AGENT_API",
        "agent_api",
        "how the agent asks its model: openai (an OpenAI-compatible server at AGENT_BASE_URL) or "
        "local (a GGUF model on this machine, the local-llm extra); unset: local when the extra is "
        "installed and neither OPENROUTER_API_KEY nor AGENT_BASE_URL is set",
        agent=True,
        field="api",
    ),
    Option("base_url", "AGENT_BASE_URL", "url", "OpenAI-compatible API root", agent=True),
    Option(
        "model",
        "AGENT_MODEL",
        "text",
        "model to ask; with AGENT_API=local a .gguf file, a directory holding one, or a known "
        "model's name (default qwen2.5-coder-1.5b-instruct)",
        agent=True,
    ),
    Option(
        "agent_local_threads",
        "AGENT_LOCAL_THREADS",
        "positive_int",
        "threads the local model computes with (AGENT_API=local)",
        agent=True,
        field="local_threads",
        default_text="every core but one",
    ),
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
    Option(
        "escalation_mode",
        "ESCALATION_MODE",
        "escalation_mode",
        "when a tick's moment goes to the escalation slot Sinain's agents poll: off; selective "
        "(errors, questions, code issues, app churn score 3 or more); focus or rich (any "
        "changed digest)",
        agent=True,
    ),
    Option(
        "escalation_cooldown_ms",
        "ESCALATION_COOLDOWN_MS",
        "non_negative_int",
        "the least time between two escalations, in ms (5000 at least over HTTP)",
        agent=True,
    ),
    Option(
        "escalation_stale_ms",
        "ESCALATION_STALE_MS",
        "non_negative_int",
        "above 0: escalate anyway once nothing was escalated for this long, in ms",
        agent=True,
    ),
    Option(
        "vision_enabled",
        "AGENT_VISION_ENABLED",
        "bool",
        "send the newest screen images (the capture client's roi.data) with each call; "
        "false: no image leaves the machine",
        agent=True,
    ),
    Option(
        "vision_model",
        "AGENT_VISION_MODEL",
        "text",
        "the model a call with images asks first, before the model and its fallbacks",
        agent=True,
    ),
    Option(
        "vision_max_images",
        "AGENT_VISION_MAX_IMAGES",
        "image_count",
        "the most screen images one call carries, 0 to 4: the newest distinct ones not sent "
        "by a recent call",
        agent=True,
    ),
    *(
        Option(name, env, parse, text, audio=True, field=attr, secret=name == "stt_api_key")
        for name, attr, env, parse, text in (
            (
                "audio_source",
                "source",
                "AUDIO_SOURCE",
                "text",
                "what the user hears (system "
                "audio): command:ARGV, avfoundation:DEVICE, pulse:DEVICE, alsa:DEVICE or file:PATH",
            ),
            (
                "mic_source",
                "mic_source",
                "MIC_SOURCE",
                "text",
                "what the user says (the microphone), in the same forms",
            ),
            (
                "audio_alt_source",
                "alt_source",
                "AUDIO_ALT_SOURCE",
                "text",
                "the system source the overlay's switch_device swaps to and back from",
            ),
            ("audio_language", "language", "AUDIO_LANGUAGE", "text", "the language spoken"),
            (
                "stt_api",
                "stt_api",
                "STT_API",
                "stt_api",
                "how speech becomes text: chat (input_audio in a chat completion), openai "
                "(/audio/transcriptions) or local (this machine, the local-stt extra)",
            ),
            ("stt_base_url", "stt_base_url", "STT_BASE_URL", "text", "the speech service"),
            ("stt_model", "stt_model", "STT_MODEL", "text", "the speech model"),
            (
                "stt_api_key",
                "stt_api_key",
                "STT_API_KEY",
                "api_key",
                "the speech service's key; unset: OPENROUTER_API_KEY if STT_BASE_URL has "
                "AGENT_BASE_URL's origin, else none",
            ),
            (
                "stt_timeout_ms",
                "stt_timeout_ms",
                "STT_TIMEOUT_MS",
                "positive_int",
                "bound on one transcription request, in ms",
            ),
            (
                "stt_max_in_flight",
                "stt_max_in_flight",
                "STT_MAX_IN_FLIGHT",
                "positive_int",
                "utterances transcribed at once at most; one more is dropped and counted",
            ),
            (
                "audio_preroll_ms",
                "preroll_ms",
                "AUDIO_PREROLL_MS",
                "non_negative_int",
                "audio kept before an utterance's first speech frame, in ms",
            ),
            (
                "audio_vad_hangover_ms",
                "hangover_ms",
                "AUDIO_VAD_HANGOVER_MS",
                "positive_int",
                "silence that ends an utterance, in ms",
            ),
            (
                "audio_min_segment_ms",
                "min_utterance_ms",
                "AUDIO_MIN_SEGMENT_MS",
                "positive_int",
                "shorter utterances are dropped, in ms",
            ),
            (
                "audio_max_segment_ms",
                "max_utterance_ms",
                "AUDIO_MAX_SEGMENT_MS",
                "positive_int",
                "longer speech is cut into utterances this long, in ms",
            ),
            (
                "audio_vad_speech_factor",
                "speech_factor",
                "AUDIO_VAD_SPEECH_FACTOR",
                "positive_number",
                "a frame is speech at this many times the noise floor",
            ),
            (
                "audio_vad_threshold",
                "system_threshold",
                "AUDIO_VAD_THRESHOLD",
                "positive_number",
                "the least RMS (of full scale) of a system-audio speech frame",
            ),
            (
                "mic_vad_threshold",
                "mic_threshold",
                "MIC_VAD_THRESHOLD",
                "positive_number",
                "the least RMS (of full scale) of a microphone speech frame",
            ),
        )
    ),
)
"""Every setting, in the order ``--help`` lists them."""

SECRET_VARIABLES = frozenset(option.env for option in OPTIONS if option.secret)
"""The environment variables that hold a secret (the LLM key, the speech service's key,
``RELAY_TOKEN``): kept from the programs the relay starts."""
