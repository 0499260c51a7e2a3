"""``sinain-relay doctor``: every check, one line each, and an exit code; and the same checks
once at start-up, on a thread of their own, as log lines.

The command reads the settings as the relay does (the same flags and environment); it prints
``ok``, ``FAIL``, ``warn`` or ``skip`` per check and exits 1 when one failed, else 0. At
start-up the relay logs one ``doctor.check`` line per check (info when ok or skipped, a
warning with the ``remedy`` otherwise), after it has started: nothing waits for them.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator

import structlog

from config.settings import LOCAL_STT_INSTALL, Settings
from transport.doctor.checks import Check, agent_skip, chat_verdict, exit_code, vision_skip
from transport.doctor.local import data_dir_check, mcp_check, port_check, source_checks
from transport.doctor.probes import pixel, probe_chat, probe_speech

log = structlog.get_logger("relay")


def checks(settings: Settings, *, started: bool = False) -> Iterator[Check]:
    """Every check, in order, each as soon as it is done. ``started``: the relay's own, after
    it has started: not the port, which it holds, and no local speech model loaded by the
    doctor (:func:`speech_check`)."""
    if not started:
        yield port_check(settings)
    yield data_dir_check(settings)
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
    yield speech_check(settings, load=not started)
    yield from source_checks(settings.audio)
    yield mcp_check()


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
    fields = {"check": check.name, "verdict": check.verdict, "found": check.found}
    if check.verdict in ("ok", "skip"):
        log.info("doctor.check", actor="root", **fields)
    else:
        log.warning("doctor.check", actor="root", **fields, remedy=check.remedy)


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
