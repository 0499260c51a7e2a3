"""The audio feature's checks (``speech``, ``speech server``, ``source ...``): one second of
silence to the speech service for ``sinain-relay doctor``, built and sent as the transcriber
does; for a started relay, whether the service's host accepts a connection; and whether each
configured source can be captured, as far as can be told without capturing.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from actors.audio.core.sources import parse_source
from actors.audio.core.stt import SttConnectionError, stt_remedy
from actors.audio.core.stt import request_for as speech_request
from actors.audio.core.utterance import BYTES_PER_MS
from actors.audio.core.wav import WAV_HEADER_READ, wav_layout
from actors.audio.local_stt import LOAD_TIMEOUT_S as LOCAL_LOAD_TIMEOUT_S
from actors.audio.local_stt import LocalRecogniser
from actors.audio.speech_client import SpeechClient
from actors.common.check import Check, ms_since
from config.audio.settings import AudioConfig
from config.audio.stt_choice import LOCAL_STT_INSTALL
from config.common.secrets import shown_url
from config.settings import Settings
from transport.host.reach import CONNECT_TIMEOUT_S, unreachable

SILENCE_MS = 1_000


def audio_checks(settings: Settings, *, started: bool) -> Iterator[Check]:
    """The speech service's check (its probe for the command; its host's connection, or the
    local model's skip, for a started relay), then one per configured source."""
    if started:
        speech = speech_server_check(settings.audio)
        yield speech if speech is not None else speech_check(settings, load=False)
    else:
        yield speech_check(settings)
    yield from source_checks(settings.audio)


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


def probe_speech(audio: AudioConfig) -> Check:
    """One second of silence to the speech service, as the transcriber sends an utterance."""
    pcm = bytes(SILENCE_MS * BYTES_PER_MS)
    request = speech_request(
        audio.stt_api, audio.stt_base_url, audio.stt_model, audio.language, pcm
    )
    timeout_s = audio.stt_timeout_ms / 1000
    client: SpeechClient | LocalRecogniser
    if audio.local:  # the model loaded in a worker, as the transcriber's is
        client = LocalRecogniser(audio.stt_model, audio.language, name="doctor-stt")
        where = f"{audio.stt_model} on this machine (STT_API=local)"
    else:
        client = SpeechClient(audio.stt_api, audio.stt_api_key, connections=1, name="doctor-stt")
        where = f"{audio.stt_model} at {shown_url(audio.stt_base_url)} (STT_API={audio.stt_api})"
    began = time.monotonic()
    # a first use of a local model may fetch it: the recogniser bounds that wait itself
    wait_s = timeout_s + (LOCAL_LOAD_TIMEOUT_S if audio.local else 5)
    try:
        text = client.send(request, timeout_s).result(timeout=wait_s)
    except Exception as exc:  # any failure is the verdict; the doctor goes on to the next
        remedy = stt_remedy(exc, local=audio.local)
        return Check("speech", "FAIL", f"{where}: {exc}", remedy.advice if remedy else "")
    finally:
        client.close()
    heard = f"{text[:40]!r}" if text else "nothing"
    return Check(
        "speech", "ok", f"{where} answered in {ms_since(began)} ms (heard {heard} in silence)"
    )


def speech_server_check(audio: AudioConfig) -> Check | None:
    """``speech server``: whether ``STT_BASE_URL``'s host accepts a connection; ``None`` when
    no speech service is used (local recognition, or no key)."""
    if audio.local or not audio.can_transcribe:
        return None
    url = shown_url(audio.stt_base_url)
    why = unreachable(audio.stt_base_url, min(CONNECT_TIMEOUT_S, audio.stt_timeout_ms / 1000))
    if why is None:
        return Check("speech server", "ok", f"{url} accepts connections (nothing is sent)")
    remedy = stt_remedy(SttConnectionError(why))
    advice = remedy.advice if remedy else ""
    return Check("speech server", "FAIL", f"{url} is unreachable ({why})", advice)


def source_checks(audio: AudioConfig) -> list[Check]:
    """One check a configured capture source, or one ``skip`` when none is."""
    named = [
        (name, value.strip())
        for name, value in (
            ("AUDIO_SOURCE", audio.source),
            ("MIC_SOURCE", audio.mic_source),
            ("AUDIO_ALT_SOURCE", audio.alt_source),
        )
        if value.strip()
    ]
    if not named:
        return [Check("sources", "skip", "no AUDIO_SOURCE or MIC_SOURCE: nothing is captured")]
    return [source_check(name, value) for name, value in named]


def source_check(name: str, value: str) -> Check:
    """Whether one source can be captured, as far as can be told without capturing."""
    check = f"source {name}"
    plan = parse_source(value, name)  # checked when the settings were read
    if plan.kind == "command":
        program = plan.argv[0]
        if shutil.which(program) is None:
            return Check(check, "FAIL", f"{program} is not an executable on PATH", f"check {name}")
        return Check(check, "ok", f"{value}: {program} found (its output is known when it runs)")
    if plan.kind == "file":
        return _file_check(check, name, value, Path(plan.target).expanduser())
    if shutil.which("ffmpeg") is None:
        return Check(check, "FAIL", f"{value}: ffmpeg is not on PATH", "install ffmpeg")
    return Check(check, "ok", f"{value}: ffmpeg found (the device is known when capture starts)")


def _file_check(check: str, name: str, value: str, path: Path) -> Check:
    if not path.is_file():
        return Check(check, "FAIL", f"{path} does not exist or is not a file", f"check {name}")
    try:
        with path.open("rb") as file:
            head = file.read(WAV_HEADER_READ)
    except OSError as exc:
        return Check(check, "FAIL", f"{path} cannot be read ({exc.strerror})", f"check {name}")
    if wav_layout(head) is not None:
        return Check(check, "ok", f"{value}: a 16 kHz mono WAV, read by the relay itself")
    if shutil.which("ffmpeg") is None:
        return Check(
            check,
            "FAIL",
            f"{value} is not a 16 kHz mono 16-bit WAV, and ffmpeg is not on PATH to convert it",
            "install ffmpeg, or convert the file to a 16 kHz mono WAV",
        )
    return Check(check, "ok", f"{value}: readable, converted by ffmpeg")
