"""sinain-relay: settings -> supervision tree -> serve until SIGINT or SIGTERM.

``python3 run.py --help`` lists every flag; ``python3 run.py mcp`` runs the MCP server, a
client of a running relay (``python3 run.py mcp --help``); ``python3 run.py openapi`` prints the
OpenAPI document ``GET /openapi.json`` serves, without starting a relay; ``python3 run.py
doctor`` checks that what is configured works, a line each (exit code 1 when a check failed;
see :mod:`transport.doctor`; a started relay runs those that ask no service anything);
``python3 run.py data-dir`` prints where the state is kept. Exit codes: 0 after a
signal, 1 when the relay could not start (one ``relay.start_failed`` line says why: a port in
use, a data directory another relay holds, an actor that failed its start; for something
another process holds, a ``fix``), 2 for an invalid setting (or a host beyond loopback without
RELAY_TOKEN: see :func:`transport.exposure.exposure`) or a dependency not installed, 70 when
the root supervisor gave up (restart intensity exceeded), so that a service manager restarts
the process.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import NoReturn

try:
    import pykka
    import pykka.debug
    import structlog

    from actors.core.error_text import safe_text
    from actors.core.errors import InUse
    from actors.kernel.base import ChildExited
    from actors.kernel.clock import SystemClock
    from actors.kernel.file_modes import refusal as file_refusal
    from actors.kernel.malloc import TRIM_INTERVAL_S, limit_malloc_arenas, release_free_memory
    from actors.subtrees import settings_problem
    from actors.tree import start_relay
    from config.command_line import build_parser, load_settings, split_command
    from config.common.errors import ConfigError
    from config.data_home import data_dir, old_place_note
    from config.logs import configure_logging
    from config.options import OPTIONS
    from config.prices import PriceTable, load_prices
    from config.settings import Settings
    from transport.doctor.command import check_in_background
    from transport.exposure import exposure, refusal, warn_at_start
    from transport.frontend import HttpFrontend
except ModuleNotFoundError as missing:  # run from a checkout without its install
    module = (missing.name or "").partition(".")[0]
    if module in ("", "actors", "config", "transport"):
        raise  # ours are beside this file: one missing is a broken checkout, traceback and all
    sys.stderr.write(
        f"{os.path.basename(sys.argv[0])}: error: the relay's dependency {module!r} is not "
        f"installed: run python3 -m pip install -e . (in {Path(__file__).resolve().parent})\n"
    )
    raise SystemExit(2) from None  # EXIT_INVALID, as for an invalid setting

EXIT_START_FAILED = 1
EXIT_INVALID = 2
EXIT_ESCALATED = 70
DUPLICATE_SIGNAL_S = 0.1
"""``timeout`` and some supervisors signal the process and its group: one stop, not two."""

log = structlog.get_logger("relay")


def settings_or_exit(
    argv: Sequence[str], environ: Mapping[str, str], *, features: bool = True
) -> Settings:
    """:func:`load_settings` (with ``features``, what the features find wrong too: a source
    that cannot work), or one message on stderr and exit code 2."""
    try:
        settings = load_settings(argv, environ, isatty=sys.stderr.isatty())
    except ConfigError as exc:
        _exit_invalid(str(exc))
    problem = settings_problem(settings) if features else None
    if problem is not None:
        _exit_invalid(problem)
    return settings


def prices_or_exit(user_file: str) -> PriceTable:
    """:func:`load_prices`, or one message on stderr and exit code 2, as for any setting."""
    try:
        return load_prices(user_file)
    except ConfigError as exc:
        _exit_invalid(str(exc))


def logging_or_exit(settings: Settings) -> None:
    """:func:`configure_logging` as the settings say, or one message on stderr and exit
    code 2 for a log file the relay will not write: one in a directory through which another
    user could redirect it (:func:`actors.kernel.file_modes.refusal`), or one that is not a
    file of the relay's own (:func:`config.logs.open_private`)."""
    path = settings.log_file
    if path and (refused := file_refusal(path, "RELAY_LOG_FILE")) is not None:
        _exit_invalid(refused)
    try:
        configure_logging(settings.log_format, settings.log_level, log_file=path)
    except OSError as exc:
        _exit_invalid(f"RELAY_LOG_FILE={path} is refused: {exc.strerror or exc}")


def _exit_invalid(message: str) -> NoReturn:
    parser = build_parser()
    parser.exit(EXIT_INVALID, f"{parser.prog}: error: {message}\n")


def remedy(failure: RuntimeError) -> dict[str, str]:
    """What to do about a start refused for something another process holds, in the user's
    terms (the flag and the environment variable of the setting), as the log line's ``fix``."""
    if not isinstance(failure, InUse):
        return {}
    option = next(option for option in OPTIONS if option.attr == failure.setting)
    how = f"{option.flag} ({option.env})" if option.flag else option.env
    return {"fix": f"stop the other relay, or pass {how} with {failure.instead}"}


def _stop_on_signals(stop: threading.Event) -> None:
    """SIGINT or SIGTERM sets ``stop``; a second, different or later, exits at once."""
    first_signal: list[tuple[int, float]] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        now = time.monotonic()
        if first_signal:
            first, at = first_signal[0]
            if signum == first and now - at < DUPLICATE_SIGNAL_S:
                return  # one signal delivered twice (to the process and to its group)
            log.warning("relay.forced_exit", actor="root", signal=signal.Signals(signum).name)
            os._exit(128 + signum)
        first_signal.append((signum, now))
        log.info("relay.stopping", actor="root", signal=signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)


def _serve_until(stop: threading.Event) -> None:
    """Wait for ``stop``; meanwhile hand the allocator's free pages back now and then."""
    idle_s = 0.0
    while not stop.wait(timeout=1.0):
        idle_s += 1.0
        if idle_s >= TRIM_INTERVAL_S:
            idle_s = 0.0
            release_free_memory()


def run_mcp(args: Sequence[str]) -> int:
    """``sinain-relay mcp``: the MCP server, a client of a running relay (its own process; the
    relay never imports ``mcp``). Exit code 2 when the ``mcp`` extra is not installed."""
    try:
        from transport.mcp.server import main as mcp_main  # noqa: PLC0415
    except ModuleNotFoundError as missing:
        module = (missing.name or "").partition(".")[0]
        if module in ("", "actors", "config", "transport"):
            raise
        sys.stderr.write(
            f"{os.path.basename(sys.argv[0])} mcp: error: the MCP server's dependency "
            f"{module!r} is not installed: run python3 -m pip install -e '.[mcp]' "
            f"(in {Path(__file__).resolve().parent})\n"
        )
        return EXIT_INVALID
    return mcp_main(args)


def print_openapi() -> int:
    """``sinain-relay openapi``: the OpenAPI document ``GET /openapi.json`` serves, made from
    the same route table, printed indented to stdout; no relay starts, no setting is read."""
    from transport.openapi import openapi_document  # noqa: PLC0415

    sys.stdout.write(json.dumps(openapi_document(), indent=2, ensure_ascii=False) + "\n")
    return 0


def print_data_dir(args: Sequence[str]) -> int:
    """``sinain-relay data-dir [flags]``: the data directory a relay started with the same
    flags and environment would use (:mod:`config.data_home`); nothing is created."""
    settings = settings_or_exit(args, os.environ)
    sys.stdout.write(data_dir(settings.data_dir) + "\n")
    return 0


def command(args: Sequence[str]) -> int | None:
    """The exit code of the command ``args`` names (the first word that is no flag's value:
    :func:`config.command_line.split_command`), none starting a relay; ``None``: no command.
    ``mcp`` runs the MCP server (:func:`run_mcp`), ``openapi`` prints the API's description
    (:func:`print_openapi`), ``data-dir`` where the state is kept (:func:`print_data_dir`),
    ``doctor`` checks the settings (:func:`transport.doctor.command.doctor`), ``service``
    runs the relay at login (:mod:`config.service.command`)."""
    name, rest = split_command(args)  # the relay's flags may come first: --env-file F doctor
    if name == "mcp":
        return run_mcp(rest)
    if name == "openapi":
        if rest:
            _exit_invalid(f"openapi reads no setting, so it takes no flags: {' '.join(rest)}")
        return print_openapi()
    if name == "data-dir":
        return print_data_dir(rest)
    if name == "doctor":
        from transport.doctor.command import doctor  # noqa: PLC0415

        return doctor(settings_or_exit(rest, os.environ, features=False))  # its own lines
    if name == "service":  # install, print, uninstall, status
        from config.service.command import main as service_main  # noqa: PLC0415

        return service_main(rest)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the relay until SIGINT or SIGTERM; a second signal exits at once.

    With ``--demo``: the stand-in LLM and the shipped capture session (:func:`prepare_demo`).
    An argument that names a command, first or after the relay's flags, runs it instead
    (:func:`command`).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if (ran := command(args)) is not None:
        return ran
    settings = settings_or_exit(args, os.environ)
    prices = prices_or_exit(settings.prices_file)
    verdict = exposure(settings.host, token=settings.token, allow_insecure=settings.allow_insecure)
    if verdict == "refused":
        _exit_invalid(refusal(settings.host))
    logging_or_exit(settings)
    if (note := old_place_note(settings.data_dir)) is not None:
        log.warning("storage.old_data_dir", actor="root", fix=note)
    warn_at_start(
        verdict, host=settings.host, token=settings.token, cors_origins=settings.cors_origins
    )
    signal.signal(signal.SIGUSR1, pykka.debug.log_thread_tracebacks)
    limit_malloc_arenas()

    stop = threading.Event()
    exit_code = [0]
    _stop_on_signals(stop)

    def on_escalate(_exited: ChildExited) -> None:
        exit_code[0] = EXIT_ESCALATED
        stop.set()

    # the demo's stand-in LLM and temporary directory outlive the relay: undone last
    with contextlib.ExitStack() as demo:
        if settings.demo:  # the demo's modules are loaded only for it
            from transport.demo import prepare_demo, start_demo_replay  # noqa: PLC0415
            from transport.registry import FEATURES  # noqa: PLC0415

            settings = prepare_demo(settings, FEATURES, args, os.environ, demo)
        try:
            frontend = HttpFrontend(settings)
            relay = start_relay(
                settings,
                SystemClock(),
                frontend=frontend,
                on_escalate=on_escalate,
                prices=prices,
            )
        except RuntimeError as exc:  # StartFailed, DataDirInUse, PortInUse: a line each
            log.error("relay.start_failed", actor="root", error=safe_text(str(exc)), **remedy(exc))
            return EXIT_START_FAILED
        host, port = relay.address()
        url = f"http://{host}:{port}"
        log.info(
            "relay.started",
            actor="root",
            url=url,
            pid=os.getpid(),
            data_dir=relay.storage.directory,
            try_it=f"curl -s {url}/health",
        )
        # the checks that ask nothing, logged and in /health; nothing waits for them
        checked = threading.Event()
        check_in_background(settings, frontend.checks.publish, stop=checked)
        replay = start_demo_replay(host, port, settings.token) if settings.demo else None
        _serve_until(stop)
        checked.set()  # no check runs again while the relay stops
        if replay is not None:
            replay.stop()
        relay.stop()
    log.info("relay.stopped", actor="root", exit_code=exit_code[0])
    return exit_code[0]


if __name__ == "__main__":
    sys.exit(main())
