"""``sinain-relay doctor``: every check, one line each, and an exit code; and, at start-up, the
checks that ask no service anything, on a thread of their own, as log lines.

The command reads the settings as the relay does (the same flags and environment); it prints
``ok``, ``FAIL``, ``warn`` or ``skip`` per check and exits 1 when one failed, else 0. It sends
one tiny request to the model, the vision model and the speech service: the user asked for it.

A started relay sends nothing of the kind: it logs one ``doctor.check`` line per check (info
when ok or skipped, a warning with the ``remedy`` otherwise), after it has started, and
nothing waits for them. In place of the probes it checks that the services' hosts accept a
connection (:mod:`transport.host.reach`); the ``llm`` and ``vision`` verdicts come with the
first call the agent makes for a tick with news.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator

import structlog

from actors.common.check import Check, exit_code
from config.settings import Settings
from transport.doctor.local import data_dir_check, port_check
from transport.registry import FEATURES

log = structlog.get_logger("relay")


def checks(settings: Settings, *, started: bool = False) -> Iterator[Check]:
    """Every check, in order, each as soon as it is done. ``started``: the relay's own, after
    it has started: not the port, which it holds, and no request to any model or speech
    service (a start has no news to send): their hosts are checked for a connection instead,
    and no local speech model is loaded. The features' checks follow the relay's own, each
    feature's in the registry's order (:data:`transport.registry.FEATURES`)."""
    if not started:
        yield port_check(settings)
    yield data_dir_check(settings)
    for feature in FEATURES:
        yield from feature.checks(settings, started=started)


def doctor(settings: Settings, write: Callable[[str], object] = sys.stdout.write) -> int:
    """Run every check, print a line each, and return the exit code (1 when one failed)."""
    done: list[Check] = []
    for check in checks(settings):
        write(check.line() + "\n")
        done.append(check)
    return exit_code(done)


def log_check(check: Check) -> None:
    """One ``doctor.check`` line: info when ok or skipped, a warning naming the remedy else."""
    if check.worrying:
        log.warning("doctor.check", actor="root", **check.log_fields())
    else:
        log.info("doctor.check", actor="root", **check.log_fields())


def check_in_background(settings: Settings) -> threading.Thread:
    """Run the checks once on a daemon thread, logging each (:func:`log_check`), as a
    started relay's (``checks(started=True)``)."""

    def run() -> None:
        try:
            for check in checks(settings, started=True):
                log_check(check)
        except Exception:  # a bug in a check ends the checks, never the relay
            log.exception("doctor.failed", actor="root")

    thread = threading.Thread(target=run, name="doctor", daemon=True)
    thread.start()
    return thread
