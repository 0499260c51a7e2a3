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


RECHECK_S = 60.0
"""While a check of a started relay fails, they all run again this often (each is a connect at
most), so that what ``/health.checks`` says of them clears once the trouble ends."""


def check_in_background(
    settings: Settings,
    publish: Callable[[tuple[Check, ...]], object] | None = None,
    *,
    stop: threading.Event | None = None,
    every_s: float = RECHECK_S,
) -> threading.Thread:
    """Run the checks on a daemon thread, as a started relay's (``checks(started=True)``),
    logging each (:func:`log_check`) and handing each round to ``publish`` (``/health``'s
    ``checks``). While one fails they run again every ``every_s`` seconds, until ``stop`` is
    set; a check is logged again only when its verdict changed."""
    halt = stop or threading.Event()

    def run() -> None:
        said: dict[str, str] = {}
        try:
            while True:
                done = tuple(checks(settings, started=True))
                for check in done:
                    if said.get(check.name) != check.verdict:
                        log_check(check)
                said = {check.name: check.verdict for check in done}
                if publish is not None:
                    publish(done)
                if exit_code(done) == 0 or halt.wait(every_s):
                    return
        except Exception:  # a bug in a check ends the checks, never the relay
            log.exception("doctor.failed", actor="root")

    thread = threading.Thread(target=run, name="doctor", daemon=True)
    thread.start()
    return thread
