"""The command line and the environment: the flags' parser, and the settings read from both
(flags win), each by its option (:data:`config.options.OPTIONS`) and decoded by its field's
type (:func:`config.common.setting_types.decode`)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

from config.common.setting_types import decode, read_path
from config.env_file import with_env_file
from config.options import OPTIONS, SECTIONS
from config.privacy import privacy_matrix
from config.settings import Settings

COMMANDS = (
    ("doctor [FLAGS]", "check that what is configured works, a line each"),
    ("data-dir [FLAGS]", "print where the relay keeps its state"),
    ("service ACTION", "run the relay at login: print, install, uninstall, status"),
    ("mcp [--http] [--url URL]", "an MCP server for agents, a client of a running relay"),
    ("openapi", "print the OpenAPI document GET /openapi.json serves"),
)
"""The commands besides running the relay: each one's synopsis and what it does, as the
help lists them (the entry point runs them: ``run.command``)."""
COMMAND_NAMES = frozenset(synopsis.split()[0] for synopsis, _ in COMMANDS)
_SYNOPSIS_WIDTH = max(len(synopsis) for synopsis, _ in COMMANDS) + 2
_NO_VALUE_FLAGS = ("-h", "--help", "--version", "--demo")


def build_parser() -> argparse.ArgumentParser:
    """The command line; each flag overrides its environment variable. The help names the
    commands first, then the flags."""
    commands = "\n".join(f"  {synopsis:<{_SYNOPSIS_WIDTH}}{text}" for synopsis, text in COMMANDS)
    parser = argparse.ArgumentParser(
        usage="%(prog)s [COMMAND] [FLAGS]",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            f"commands (none: run the relay):\n{commands}\n\n"
            "doctor and data-dir take the relay's flags, before or after the command; mcp\n"
            "--help and service --help show those commands' own.\n\n"
            "sinain-relay: ingests /feed and /sense, asks an LLM what the user is doing, serves\n"
            "a hud line and a digest. Each flag overrides the environment variable named in\n"
            "brackets. The secrets OPENROUTER_API_KEY and RELAY_TOKEN are read from the\n"
            "environment only, so they never show in a process list."
        ),
    )
    parser.add_argument("--version", action="version", version=f"sinain-relay {version()}")
    for option in OPTIONS:
        if option.flag is None:
            continue
        help_text = f"{option.help} (default {option.default_shown()}) [{option.env}]"
        if option.boolean:  # --faults alone means true
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


def split_command(args: Sequence[str]) -> tuple[str, list[str]]:
    """The command ``args`` name (``""``: none, run the relay) and the arguments it gets:
    the others, in order. The relay's flags may come before the command
    (``--env-file F doctor``) as after it; a flag's value is never taken for a command."""
    takes = _flag_values()
    at = 0
    while at < len(args) and args[at].startswith("-") and args[at] not in ("-", "--"):
        flag, with_value, _ = args[at].partition("=")
        after = args[at + 1] if at + 1 < len(args) else None
        kind = "" if with_value else takes.get(_spelled_out(flag, takes), "")
        if kind == "value" or (kind == "optional" and after is not None and _a_value(after)):
            at += 1
        at += 1
    if at < len(args) and args[at] in COMMAND_NAMES:
        return args[at], [*args[:at], *args[at + 1 :]]
    return "", list(args)


def _flag_values() -> dict[str, str]:
    """Each flag of the relay's and what follows it: ``value``, ``optional`` (a boolean
    setting's flag) or ``""`` (none)."""
    takes = dict.fromkeys(_NO_VALUE_FLAGS, "")
    for option in OPTIONS:
        if option.flag is not None:
            takes[option.flag] = "optional" if option.boolean else "value"
    return takes


def _spelled_out(flag: str, flags: Mapping[str, str]) -> str:
    """``flag`` whole: a prefix of one flag alone stands for it, as the parser reads it."""
    if flag in flags or not flag.startswith("--"):
        return flag
    matches = [whole for whole in flags if whole.startswith(flag)]
    return matches[0] if len(matches) == 1 else flag


def _a_value(word: str) -> bool:
    """Whether ``word`` after a boolean setting's flag is its value: not a flag, nor a
    command (``--faults doctor`` is the command with the flag alone)."""
    return not word.startswith("-") and word not in COMMAND_NAMES


def version() -> str:
    """The installed package's version."""
    try:
        return metadata.version("sinain-relay")
    except metadata.PackageNotFoundError:
        return "unknown"


def load_settings(argv: Sequence[str], environ: Mapping[str, str], *, isatty: bool) -> Settings:
    """Read and validate every setting; flags win over the environment. A section's
    completion then fills in what follows from what was given (the audio feature's: which
    recogniser, and whether the speech service may have the LLM key; see
    :mod:`config.option`); the privacy matrix is built once to refuse a contradiction. With
    ``--env-file`` (``RELAY_ENV_FILE``), the key file's settings
    are read under the environment's (:func:`config.env_file.with_env_file`).

    Raises:
        ConfigError: the first invalid setting, named as the user wrote it.
    """
    args = vars(build_parser().parse_args(list(argv)))
    environ = _with_env_file(args.get("env_file"), environ)
    given: dict[str, dict[str, Any]] = {section.name: {} for section in SECTIONS}
    for option in OPTIONS:
        flagged = args.get(option.name) if option.flag is not None else None
        if flagged is not None:
            value = decode(option.annotation, option.flag or option.env, flagged)
        elif environ.get(option.env, "").strip():
            value = decode(option.annotation, option.env, environ[option.env])
        else:
            continue
        given[option.section][option.attr] = value
    settings = given[""]
    if "log_format" not in settings:
        # a log file is no terminal, whatever stderr is
        settings["log_format"] = "console" if isatty and "log_file" not in settings else "json"
    made: dict[str, Any] = {}
    for section in SECTIONS[1:]:
        if section.complete is not None:
            section.complete(given[section.name], made)
        made[section.name] = section.owner(**given[section.name])
    made_settings = Settings(**settings, **made, demo=bool(args.get("demo")))
    privacy_matrix(made_settings.privacy, redact=made_settings.redact)  # refuses contradictions
    return made_settings


def _with_env_file(flag: str | None, environ: Mapping[str, str]) -> Mapping[str, str]:
    """``environ`` with the settings of the key file the flag or ``RELAY_ENV_FILE`` names."""
    name, path = ("--env-file", flag) if flag is not None else ("RELAY_ENV_FILE", "")
    if flag is None:
        path = environ.get("RELAY_ENV_FILE", "").strip()
    if not path:
        return environ
    return with_env_file(read_path(name, path), name, environ)
