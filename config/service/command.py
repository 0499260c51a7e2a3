"""``sinain-relay service print|install|uninstall|status``: the relay as a service of the
user's login (a systemd user unit, a launchd agent), its settings in a key file.

``install`` writes the relay's settings found in its environment (each option's variable,
:data:`config.options.OPTIONS`) to the key file, readable by the user alone, and never
replaces one without ``--force``; then the unit or agent, and asks the manager to start it.
``uninstall`` stops and removes the service, keeping the data, the logs and, without
``--purge``, the key file. ``status`` asks the manager, then ``GET /health`` at the address
the key file gives. Exit codes: 0; 1 when the manager refused; 2 for an invalid setting, a key
file others may read or an unknown platform; 3 from ``status`` when the relay is not
installed, not running or not answering.
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from actors.kernel.storage import MEMORY
from config.command_line import load_settings
from config.common.errors import ConfigError
from config.data_home import data_dir
from config.env_file import env_file_text, read_env_file, write_private
from config.options import OPTIONS
from config.service.files import (
    LABEL,
    PLATFORMS,
    SCRIPT,
    UNIT,
    Platform,
    ServiceLayout,
    relay_command,
    service_file_text,
    service_layout,
)
from config.service.manager import Launchd, Ran, ServiceManager, Systemd
from config.settings import Settings

PROG = "sinain-relay service"
RUN_PY = Path(__file__).resolve().parents[2] / "run.py"
EXIT_FAILED = 1
EXIT_INVALID = 2
EXIT_NOT_RUNNING = 3
HEALTH_TIMEOUT_S = 3.0
SERVICE_FILE_MODE = 0o644
_NOT_KEPT = frozenset({"RELAY_ENV_FILE"})
"""Settings the key file does not keep: it is the key file."""
_PATHS = frozenset({"RELAY_DATA_DIR", "RELAY_PRICES"} | {o.env for o in OPTIONS if o.path})
"""Settings that name a file or a directory: kept absolute (the service starts in the home)."""
LINGER = "loginctl enable-linger $USER keeps it running without a login session (and at boot)"


def build_service_parser() -> argparse.ArgumentParser:
    """The ``service`` command line: an action, ``--platform``, ``--force``, ``--purge``."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run sinain-relay at login: a systemd user unit (Linux) or a launchd "
        "agent (macOS), its settings and keys in a key file only you can read.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, text in (
        ("print", "show the unit or agent install would write, and the settings it would keep"),
        ("install", "write the key file (from this environment), the unit or agent; start it"),
        ("uninstall", "stop and remove the service; the data, logs and key file stay"),
        ("status", "installed? running? answering GET /health?"),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument(
            "--platform", choices=PLATFORMS, help="the service manager's platform (detected)"
        )
        if name == "install":
            action.add_argument("--force", action="store_true", help="rewrite an existing key file")
        if name == "uninstall":
            action.add_argument("--purge", action="store_true", help="remove the key file too")
    return parser


def detected_platform() -> Platform | None:
    """This machine's platform, or ``None`` where there is no service manager we know."""
    if sys.platform == "darwin":
        return "macos"
    return "linux" if sys.platform.startswith("linux") else None


def main(argv: Sequence[str]) -> int:
    """Run one ``service`` action; its exit code."""
    args = build_service_parser().parse_args(list(argv))
    platform: Platform | None = args.platform or detected_platform()
    if platform is None:
        _err(f"{PROG}: error: runs on Linux (systemd) and macOS (launchd); this is {sys.platform}")
        return EXIT_INVALID
    layout = service_layout(platform, Path.home(), os.environ)
    script = Path(sys.executable).parent / SCRIPT
    command = relay_command(
        os.path.abspath(sys.executable),
        str(RUN_PY),
        script_exists=script.is_file() and os.access(script, os.X_OK),
    )
    text = service_file_text(layout, command, os.environ.get("PATH", "/usr/bin:/bin"))
    if args.action == "print":
        return print_service(layout, text, service_settings(os.environ))
    manager: ServiceManager = Systemd() if platform == "linux" else Launchd(os.getuid())
    if args.action == "install":
        return install(layout, text, os.environ, manager, force=args.force)
    if args.action == "uninstall":
        return uninstall(layout, manager, purge=args.purge)
    return status(layout, manager)


def service_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """The relay's settings set in ``environ``, as the key file keeps them: in the table's
    order, a path made absolute (from the directory ``install`` runs in)."""
    found: dict[str, str] = {}
    for option in OPTIONS:
        value = environ.get(option.env, "").strip()
        if not value or option.env in _NOT_KEPT:
            continue
        if option.env in _PATHS and value != ":memory:":
            value = os.path.abspath(os.path.expanduser(value))
        found[option.env] = value
    return found


def print_service(layout: ServiceLayout, text: str, settings: Mapping[str, str]) -> int:
    """The unit or the property list on stdout (to pipe to a file); where it would go and
    the names of the settings the key file would keep on stderr, never their values."""
    sys.stdout.write(text)
    names = ", ".join(settings) or "none (the defaults)"
    _err(f"# {PROG} install would write this to {layout.service_file}")
    _err(f"# and keep these settings of this environment in {layout.key_file}: {names}")
    return 0


def _header(platform: Platform) -> str:
    return (
        "sinain-relay's settings for its service, one NAME=value a line (docs/service.md).\n"
        f"Written by `{PROG} install` from its environment. Keep it private: chmod 600.\n"
        f"After a change: {restart_hint(platform)}\n"
    )


def restart_hint(platform: Platform) -> str:
    """The command that restarts the service with its key file read again."""
    if platform == "linux":
        return f"systemctl --user restart {UNIT}"
    return f"launchctl kickstart -k gui/$(id -u)/{LABEL}"


def install(
    layout: ServiceLayout,
    text: str,
    environ: Mapping[str, str],
    manager: ServiceManager,
    *,
    force: bool,
) -> int:
    """Write the key file (unless one is kept), the unit or agent, and start it."""
    settings = service_settings(environ)
    kept = layout.key_file.exists() and not force
    try:  # an invalid setting, or a key file others may read, fails here, not at login
        if kept:
            load_settings([], read_env_file(str(layout.key_file), "the key file"), isatty=False)
        else:
            load_settings([], settings, isatty=False)
            write_private(layout.key_file, env_file_text(settings, _header(layout.platform)))
    except ConfigError as exc:
        _err(f"{PROG} install: error: {exc}")
        return EXIT_INVALID
    replaced = layout.service_file.exists()
    layout.service_file.parent.mkdir(parents=True, exist_ok=True)
    layout.service_file.write_text(text, encoding="utf-8")
    layout.service_file.chmod(SERVICE_FILE_MODE)
    if layout.log_file is not None and not layout.log_file.parent.is_dir():
        layout.log_file.parent.mkdir(mode=0o700, parents=True)
    _say(f"wrote {layout.service_file}")
    if kept:
        _say(f"kept {layout.key_file} as it is (--force rewrites it from this environment)")
    else:
        _say(f"wrote {layout.key_file} (mode 0600): {', '.join(settings) or 'no settings'}")
        if "OPENROUTER_API_KEY" not in settings:
            _say("  no OPENROUTER_API_KEY: the agent stays off until you add it there")
    done = manager.start(layout.service_file, replaced=replaced)
    _show(done)
    if not all(ran.ok for ran in done):
        _err(f"{PROG} install: error: the service manager refused (the files stay; see above)")
        return EXIT_FAILED
    _say(f"started; {PROG} status tells whether it answers")
    _say(f"logs: {logs_hint(layout)}")
    if layout.platform == "linux":
        _say(LINGER)
    return 0


def uninstall(layout: ServiceLayout, manager: ServiceManager, *, purge: bool) -> int:
    """Stop and remove the service; the data and the logs stay, the key file unless
    ``purge``."""
    done: list[Ran] = []
    if layout.service_file.exists():
        done += manager.stop()  # a failure (not loaded) does not keep the file
        layout.service_file.unlink()
        done += manager.forget()
        _show(done)
        _say(f"removed {layout.service_file}")
    else:
        _say(f"not installed: no {layout.service_file}")
    kept = _kept_data(_settings_in(layout.key_file).data_dir)
    if purge and layout.key_file.exists():
        layout.key_file.unlink()
        _say(f"removed {layout.key_file}")
        if not any(layout.key_file.parent.iterdir()):
            layout.key_file.parent.rmdir()
    elif layout.key_file.exists():
        _say(f"kept {layout.key_file} (--purge removes it)")
    _say(kept)
    if layout.log_file is not None:
        _say(f"kept the logs in {layout.log_file.parent}")
    return 0


def _kept_data(given: str) -> str:
    """What ``uninstall`` says of the data: the directory it kept (the data home when the key
    file names none), never an empty path."""
    if given == MEMORY:
        return f"the relay kept no data (RELAY_DATA_DIR={MEMORY})"
    return f"kept the relay's data in {Path(data_dir(given)).expanduser()}"


def status(layout: ServiceLayout, manager: ServiceManager) -> int:
    """Installed, running (the manager says), answering ``GET /health``: one line each."""
    installed = layout.service_file.is_file()
    _say(f"service file: {layout.service_file} ({'' if installed else 'not '}installed)")
    _say(f"key file: {_key_file_state(layout.key_file)}")
    running, words = manager.state() if installed else (False, "not installed")
    _say(f"running: {'yes' if running else 'no'} ({words})")
    url = health_url(_settings_in(layout.key_file))
    answer = probe(url)
    _say(f"GET {url}: {answer}")
    _say(f"logs: {logs_hint(layout)}")
    if layout.platform == "linux":
        _say(LINGER)
    healthy = answer == "200 OK"
    return 0 if installed and running and healthy else EXIT_NOT_RUNNING


def _key_file_state(path: Path) -> str:
    if not path.exists():
        return f"{path} (missing)"
    try:
        settings = read_env_file(str(path), "the key file")
    except ConfigError as exc:
        return str(exc)
    return f"{path} (private; {', '.join(settings) or 'no settings'})"


def _settings_in(key_file: Path) -> Settings:
    """The settings the service starts with: its key file's (the defaults where it has none
    or cannot be read)."""
    try:
        values = read_env_file(str(key_file), "the key file") if key_file.exists() else {}
        return load_settings([], values, isatty=False)
    except ConfigError:
        return Settings()


def health_url(settings: Settings) -> str:
    """``/health`` at the address the relay listens on (loopback for a wildcard address)."""
    wildcards = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}  # noqa: S104
    host = wildcards.get(settings.host, settings.host)
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{settings.port}/health"


def probe(url: str, timeout_s: float = HEALTH_TIMEOUT_S) -> str:
    """How ``GET url`` was answered (``200 OK``), or why it was not; no proxy is asked."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout_s) as answer:
            return f"{answer.status} {answer.reason}"
    except urllib.error.HTTPError as exc:
        return f"{exc.code} {exc.reason}"
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"no answer ({reason})"


def logs_hint(layout: ServiceLayout) -> str:
    """Where the service's log is read."""
    if layout.log_file is None:
        return f"journalctl --user -u {UNIT} -f"
    return f"tail -f {layout.log_file} (before logging starts: {layout.error_file})"


def _show(done: Sequence[Ran]) -> None:
    for ran in done:
        _say(f"  {'ran' if ran.ok else 'failed'}: {ran.shown()}")


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")


def _err(line: str) -> None:
    sys.stderr.write(line + "\n")
