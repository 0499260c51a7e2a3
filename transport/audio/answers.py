"""``/health.audio``: the captures and the transcriber as answers, typed structs like those of
:mod:`transport.shell.answers` (closed, camelCase; the document's components are generated from
them). They are made from what the audio actors last published (``CaptureStatus``,
``TranscriberStats``) by :func:`transport.audio.health.audio_health`, never by asking an
actor.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import UNSET, Meta, UnsetType

from actors.audio.core.capture_records import CaptureState
from actors.audio.core.stt_outcome import SttState, WorkerState
from actors.core.shapes import Shape
from config.audio.settings import SttApi

_PRIVATE = "`null` for a caller without the token, when one is set."


class CaptureHealth(Shape, frozen=True, kw_only=True):
    """One configured source's capture, as it last published itself (at each change, and
    every second while it captures)."""

    state: Annotated[
        CaptureState,
        Meta(
            description="`starting` (no audio yet from this run), `running`, `backoff` "
            "(waiting to restart its program), `paused` (the overlay turned it off), `failed` "
            "(gave up after runs without audio: the overlay's `toggle_audio` retries), "
            "`stopped` (a file's end)."
        ),
    ]
    kind: Annotated[
        str, Meta(description="The source value's form: `command`, `pulse`, `file` ...")
    ]
    restarts: Annotated[int, Meta(description="Its program restarted, since the relay started.")]
    last_exit: Annotated[
        int | None,
        Meta(description="The last run's exit code (negative: the signal that ended it)."),
    ]
    last_stderr: Annotated[
        str | None,
        Meta(
            description="The last line its program wrote to stderr, or why it could not start "
            "(a device's name may be in it). " + _PRIVATE
        ),
    ]
    captured_s: Annotated[float, Meta(description="Seconds of audio read since the start.")]
    speech_share: Annotated[
        float, Meta(ge=0, le=1, description="Of the audio read, the share in utterances.")
    ]
    utterances: Annotated[int, Meta(description="Utterances handed to the transcriber.")]
    alt: Annotated[bool, Meta(description="The alternative (`AUDIO_ALT_SOURCE`) is captured.")]


class AudioSources(Shape, frozen=True, kw_only=True):
    """The captures of the configured sources: a source that is not configured
    (`AUDIO_SOURCE`, `MIC_SOURCE` empty) is absent."""

    system: CaptureHealth | UnsetType = UNSET
    mic: CaptureHealth | UnsetType = UNSET


class LocalHealth(Shape, frozen=True, kw_only=True):
    """The local recogniser's worker process (`STT_API=local`)."""

    state: Annotated[
        WorkerState,
        Meta(
            description="`idle` while no model is loaded (before the first utterance, or "
            "the load at start when a source is captured), `loading`, "
            "`ready`, `decoding`, `failed` (the model did not load; the next utterance tries "
            "again)."
        ),
    ]
    model: str
    rss_mb: Annotated[float | None, Meta(description="The worker's resident memory (Linux).")]
    real_time_factor: Annotated[
        float | None,
        Meta(description="Decoding time over audio time, the median of recent utterances."),
    ]
    restarts: Annotated[int, Meta(description="Workers replaced after a crash or a hang.")]
    decoded: int


class TranscriberHealth(Shape, frozen=True, kw_only=True):
    """The transcriber: the one actor that asks the speech service."""

    state: Annotated[
        SttState,
        Meta(
            description="`no_key` (no speech service key: nothing is sent), else its "
            "breaker's: `ok`, `degraded` (failing, not yet open), `open` (utterances refused "
            "while it cools off), `probing` (one request out to try again)."
        ),
    ]
    api: SttApi
    model: str
    in_flight: int
    max_in_flight: Annotated[int, Meta(description="`STT_MAX_IN_FLIGHT`.")]
    outcomes: Annotated[
        dict[str, int],
        Meta(
            description="Utterances by outcome since the relay started: `stored`, `no_key`, "
            "`busy`, `breaker`, `timeout`, `error`, `empty`, a filter's reason (`short`, "
            "`invented` ...), `undelivered`."
        ),
    ]
    latency_p50_ms: Annotated[
        int | None, Meta(description="The median latency of the recent requests.")
    ]
    consecutive_failures: int
    last_error: Annotated[str | None, Meta(description="The latest failure. " + _PRIVATE)]
    local: LocalHealth | UnsetType = UNSET


class AudioHealth(Shape, frozen=True):
    """The audio path: what each configured source captures and how the speech service
    answers. A capture that failed does not make `/health` a 503."""

    sources: AudioSources
    transcriber: TranscriberHealth
