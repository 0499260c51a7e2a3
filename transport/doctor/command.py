"""``sinain-relay doctor``: every check, one line each, and an exit code; and, at start-up, the
checks that ask no service anything, on a thread of their own, as log lines.

The command reads the settings as the relay does (the same flags and environment); it prints
``ok``, ``FAIL``, ``warn`` or ``skip`` per check and exits 1 when one failed, else 0. It sends
one tiny request to the model, the vision model and the speech service: the user asked for it.

A started relay sends nothing of the kind: it logs one ``doctor.check`` line per check (info
when ok or skipped, a warning with the ``remedy`` otherwise), after it has started, and
nothing waits for them. In place of the probes it checks that the services' hosts accept a
connection (:mod:`transport.doctor.reach`); the ``llm`` and ``vision`` verdicts come with the
first call the agent makes for a tick with news.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator

import structlog

from actors.agent.core.verdicts import Check, agent_skip, chat_verdict, exit_code, vision_skip
from config.settings import Settings
from transport.doctor.local import data_dir_check, mcp_check, port_check, source_checks
from transport.doctor.probes import pixel, probe_chat, probe_speech
from transport.doctor.reach import llm_server_check, speech_server_check
from transport.features import LOCAL_STT_INSTALL

log = structlog.get_logger("relay")


def checks(settings: Settings, *, started: bool = False) -> Iterator[Check]:
    """Every check, in order, each as soon as it is done. ``started``: the relay's own, after
    it has started: not the port, which it holds, and no request to any model or speech
    service (a start has no news to send): their hosts are checked for a connection instead,
    and no local speech model is loaded (:func:`speech_check`)."""
    if not started:
        yield port_check(settings)
    yield data_dir_check(settings)
    if started:
        yield from _unasked(settings)
    else:
        yield from _asked(settings)
    yield from source_checks(settings.audio)
    yield mcp_check()


def _asked(settings: Settings) -> Iterator[Check]:
    """The command's probes: one tiny request each to the model, the vision model and the
    speech service."""
    config = settings.agent
    skipped = agent_skip(config)
    if skipped is None:
        text = probe_chat(config, config.model)
        yield chat_verdict("llm", text, config)
        skipped = vision_skip(config, text)
    else:
        yield skipped
        skipped = vision_skip(config)
    if skipped is not None:
        yield skipped
    else:
        probe = probe_chat(config, config.vision_model, (pixel(),))
        yield chat_verdict("vision", probe, config, images=True)
    yield speech_check(settings)


def _unasked(settings: Settings) -> Iterator[Check]:
    """A started relay's checks of its services, none of which sends a request."""
    config = settings.agent
    skipped = agent_skip(config)
    yield llm_server_check(config) if skipped is None else skipped
    speech = speech_server_check(settings.audio)
    yield speech if speech is not None else speech_check(settings, load=False)


def speech_check(settings: Settings, *, load: bool = True) -> Check:
    """The speech probe, or ``skip`` when the speech service has no key. ``load=False``: a
    local model is not loaded in a worker of the doctor's own; the relay's transcriber loads
    its own at start when a source is captured (and logs how that went), else at the first
    utterance ``POST /audio`` brings."""
    audio = settings.audio
    if audio.local and not load:
        when = (
            "by the transcriber at start (audio.local_stt_ready or audio.local_stt_failed)"
            if audio.capturing
            else "at the first utterance (nothing is captured)"
        )
        return Check(
            "speech",
            "skip",
            f"{audio.stt_model} on this machine (STT_API=local): loaded {when}",
            "sinain-relay doctor loads it and decodes a second of silence",
        )
    if not audio.can_transcribe:
        return Check(
            "speech",
            "skip",
            "no STT_API_KEY (OPENROUTER_API_KEY serves only a speech service at "
            "AGENT_BASE_URL's origin) and no local recogniser: speech is not transcribed",
            f"{LOCAL_STT_INSTALL} to recognise speech on this machine",
        )
    return probe_speech(audio)


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
