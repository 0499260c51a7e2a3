"""The command line and the environment: the flags' parser, and the settings read from both
(flags win), each by its option (:data:`config.options.OPTIONS`)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

from config.env_file import with_env_file
from config.option_values import parse_value
from config.options import OPTIONS
from config.settings import (
    DEFAULT_BASE_URL,
    DEFAULT_STT_BASE_URL,
    MULTILINGUAL_LOCAL_MODEL,
    AgentSettings,
    AudioConfig,
    ConfigError,
    Settings,
    english,
    local_model_for,
    local_stt_installed,
    model_path,
    same_origin,
)


def build_parser() -> argparse.ArgumentParser:
    """The command line; each flag overrides its environment variable."""
    parser = argparse.ArgumentParser(
        description=(
            "sinain-relay: ingest /feed and /sense, ask an LLM what the user is doing, "
            "serve a hud line and a digest. Each flag overrides the environment variable "
            "named in brackets. The secrets OPENROUTER_API_KEY and RELAY_TOKEN are read from "
            "the environment only, so they never show in a process list."
        ),
        epilog="sinain-relay mcp [--http] [--url URL]: an MCP server for agents, a client of "
        "a running relay (sinain-relay mcp --help). sinain-relay openapi: prints the API's "
        "OpenAPI document, as GET /openapi.json serves it. sinain-relay doctor [FLAGS]: checks "
        "that what is configured works (the port, the data directory, the LLM, vision, speech, "
        "the capture sources), one line each; exit code 1 when a check failed. sinain-relay "
        "service print|install|uninstall|status: runs the relay at login (systemd or launchd). "
        "sinain-relay data-dir: where the state is kept.",
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
    """Read and validate every setting; flags win over the environment. Without
    ``STT_API_KEY``, the speech service is given the LLM key only when it has the LLM's origin
    (:func:`config.audio.settings.same_origin`): a key is never sent to a service it was not
    made for. With ``--env-file`` (``RELAY_ENV_FILE``), the key file's settings are read under
    the environment's (:func:`config.env_file.with_env_file`).

    Raises:
        ConfigError: the first invalid setting, named as the user wrote it.
    """
    args = vars(build_parser().parse_args(list(argv)))
    environ = _with_env_file(args.get("env_file"), environ)
    settings: dict[str, Any] = {}
    agent: dict[str, Any] = {}
    audio: dict[str, Any] = {}
    for option in OPTIONS:
        given = args.get(option.name) if option.flag is not None else None
        if given is not None:
            value = parse_value(option.parse, option.flag or option.env, given)
        elif environ.get(option.env, "").strip():
            value = parse_value(option.parse, option.env, environ[option.env])
        else:
            continue
        (agent if option.agent else audio if option.audio else settings)[option.attr] = value
    if "log_format" not in settings:
        # a log file is no terminal, whatever stderr is
        settings["log_format"] = "console" if isatty and "log_file" not in settings else "json"
    if not {"stt_api", "stt_base_url", "stt_api_key"} & audio.keys() and local_stt_installed():
        audio["stt_api"] = "local"  # no speech service named: this machine's own recogniser
    if audio.get("stt_api") == "local":
        _local_model(audio)
    elif "stt_api_key" not in audio and "api_key" in agent:
        # the LLM key goes to the LLM's own origin only, never to a speech service elsewhere
        speech = audio.get("stt_base_url", DEFAULT_STT_BASE_URL)
        if same_origin(speech, agent.get("base_url", DEFAULT_BASE_URL)):
            audio["stt_api_key"] = agent["api_key"]
    return Settings(
        **settings,
        demo=bool(args.get("demo")),
        agent=AgentSettings(**agent),
        audio=AudioConfig(**audio),
    )


def _local_model(audio: dict[str, Any]) -> None:
    """The local model for the language spoken: ``tiny.en`` for English, ``tiny`` for another
    unless ``STT_MODEL`` names one (a directory given by its path, made absolute).

    Raises:
        ConfigError: ``STT_MODEL`` is a path to no directory, or names an English-only model
            and another language is spoken.
    """
    language = audio.get("language", "en")
    model = audio.setdefault("stt_model", local_model_for(language))
    if (directory := model_path(model)) is not None:  # not a name faster-whisper fetches
        if not directory.is_dir():
            msg = (
                f"STT_MODEL={model} is no directory: name one that holds a model converted for "
                "CTranslate2, or a model faster-whisper fetches (tiny.en, base, small, ...)"
            )
            raise ConfigError(msg)
        audio["stt_model"] = model = str(directory)
    if model.lower().endswith(".en") and not english(language):
        msg = (
            f"STT_MODEL={model} understands English only, and AUDIO_LANGUAGE is {language!r}: "
            f"name a multilingual model ({MULTILINGUAL_LOCAL_MODEL}, base, small, ...) or set "
            "AUDIO_LANGUAGE=en"
        )
        raise ConfigError(msg)


def _with_env_file(flag: str | None, environ: Mapping[str, str]) -> Mapping[str, str]:
    """``environ`` with the settings of the key file the flag or ``RELAY_ENV_FILE`` names."""
    name, path = ("--env-file", flag) if flag is not None else ("RELAY_ENV_FILE", "")
    if flag is None:
        path = environ.get("RELAY_ENV_FILE", "").strip()
    if not path:
        return environ
    return with_env_file(parse_value("path", name, path), name, environ)
