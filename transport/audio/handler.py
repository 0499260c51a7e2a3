"""``POST /audio``: one utterance recorded on another device (a phone, a wearable), turned into
a transcript in the feed by the same transcriber, filters and path as captured audio."""

from __future__ import annotations

import asyncio
import math

from aiohttp import web

from actors.audio.core.stt_outcome import Outcome
from actors.audio.core.utterance import BYTES_PER_MS, Utterance
from actors.audio.core.wav import l16_pcm, parse_l16, read_wav
from actors.audio.transcriber import Transcriber
from actors.core.errors import ActorUnavailable, BadRequest
from actors.core.shapes import AudioSource
from transport.shell.answers import Transcribed
from transport.shell.guard import Refused, UnsupportedMediaType, json_response
from transport.shell.inputs import read_bytes
from transport.shell.state import ASK, PEERS

AUDIO_BODY_LIMIT = 1024 * 1024
"""The largest body: 30 s of 16 kHz mono 16-bit PCM is 960,000 bytes, a WAV's header more."""
MAX_AUDIO_MS = 30_000
"""The longest utterance a device may post."""
WAV_TYPES = ("audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave")
"""The media types of a WAV body."""
SOURCES: dict[str, AudioSource] = {"mic": "mic", "system": "system"}
ANSWER_GRACE_S = 10.0
"""Beyond the speech service's own timeout, how long the handler waits for the outcome."""
_WANTED = "send a 16 kHz mono 16-bit WAV (audio/wav) or audio/L16; rate=16000; channels=1"


class Saturated(Refused):
    """The transcriber takes no utterance now (HTTP 503, with ``Retry-After``)."""

    status = 503


class ServiceFailed(Refused):
    """The speech service failed or did not answer in time (HTTP 502)."""

    status = 502


async def post_audio(request: web.Request) -> web.Response:
    """``POST /audio?source=mic``: transcribe one utterance into the feed; answers the stored
    item's ``id`` and ``text``, or ``"text": ""`` and why nothing was stored (``paused``:
    the privacy controls pause capture, and the utterance is not transcribed)."""
    media = _media(request)  # another media type is refused before the body is read
    body = bytes(await read_bytes(request, AUDIO_BODY_LIMIT))
    if media not in WAV_TYPES:
        parse_l16(request.headers["Content-Type"])
    source = _source(request)
    pcm = read_wav(body) if media in WAV_TYPES else l16_pcm(body)
    if not pcm:
        raise BadRequest(f"the audio has no samples; {_WANTED}")
    duration_ms = len(pcm) // BYTES_PER_MS
    if duration_ms > MAX_AUDIO_MS:
        msg = f"the audio is {duration_ms / 1000:.1f} s long; at most {MAX_AUDIO_MS // 1000} s"
        raise BadRequest(msg)
    peers = request.app[PEERS]
    if peers.privacy.value.paused_at(peers.clock.now_ms()):  # sent nowhere, stored nowhere
        return json_response(Transcribed(ok=True, id=None, text="", dropped="paused"))
    utterance = Utterance(source, pcm, started_ms=peers.clock.now_ms() - duration_ms)
    outcome = await _outcome(request, utterance)
    item = outcome.item
    if item is not None:
        return json_response(Transcribed(ok=True, id=item.id, text=item.text))
    return json_response(Transcribed(ok=True, id=None, text="", dropped=outcome.reason))


async def _outcome(request: web.Request, utterance: Utterance) -> Outcome:
    """What the transcriber made of ``utterance``.

    Raises:
        Saturated: refused at once (every slot taken, the breaker open) or no key.
        ServiceFailed: the speech service (or the local recogniser) failed or timed out.
        ActorUnavailable: the transcriber or the feed is down.
    """
    peers = request.app[PEERS]
    pending = await request.app[ASK](peers.audio.stt, Transcriber.transcribe, utterance)
    wait_s = peers.audio_config.stt_timeout_ms / 1000 + ANSWER_GRACE_S
    try:
        outcome = await asyncio.wait_for(asyncio.wrap_future(pending), wait_s)
    except TimeoutError:
        raise ActorUnavailable(f"no transcript within {wait_s:g} s") from None
    if outcome.refused or outcome.reason == "no_key":
        retry = outcome.retry_after_s
        headers = {} if retry is None else {"Retry-After": str(max(1, math.ceil(retry)))}
        raise Saturated(_refusal_text(outcome), headers)
    if outcome.reason in ("timeout", "error"):
        failed = "local recogniser" if peers.audio_config.local else "speech service"
        raise ServiceFailed(f"the {failed} failed: {outcome.error or outcome.reason}")
    if outcome.reason == "undelivered":
        raise ActorUnavailable(f"the feed did not store the transcript: {outcome.error}")
    return outcome


def _refusal_text(outcome: Outcome) -> str:
    if outcome.reason == "busy":
        return "the transcriber is busy with as many utterances as it takes; try again"
    if outcome.reason == "breaker":
        return "the speech service keeps failing; the transcriber waits before asking again"
    return outcome.error or outcome.reason


def _source(request: web.Request) -> AudioSource:
    raw = request.query.get("source", "mic")
    source = SOURCES.get(raw)
    if source is None:
        raise BadRequest(f"source must be mic or system, got {raw[:40]!r}")
    return source


def _media(request: web.Request) -> str:
    """The body's media type, lower case: a WAV type or ``audio/l16`` (whose rate and
    channels are checked once the body is in, as a coding the relay does not read is a 415
    before them).

    Raises:
        UnsupportedMediaType: no ``Content-Type``, or one that is neither.
    """
    header = request.headers.get("Content-Type", "")
    media = header.partition(";")[0].strip().lower()
    if media in (*WAV_TYPES, "audio/l16"):
        return media
    shown = f"{media[:60]!r}" if media else "none"
    raise UnsupportedMediaType(f"Content-Type {shown} is not audio the relay reads; {_WANTED}")
