"""LocalChat: the agent's own model, run on this machine by a worker process
(``AGENT_API=local``).

The LLM caller asks it as it would ask a server: :meth:`LocalChat.complete` takes the same
chat-completions body and gives the same :class:`~actors.agent.core.completion.Completion`, or
an :class:`~actors.core.errors.LLMLocalError`, so that a tick's retries, fallbacks and breaker
work as for any model. The worker (:mod:`actors.agent.llm_worker`) loads the model at the
first call, never at start: a relay with nothing to look at loads nothing. One that dies is
started again at the next call; one that does not answer within the call's timeout is killed
and replaced (a generation cannot be stopped halfway otherwise).

The relay makes one LocalChat and hands it to every incarnation of the LLM caller, so that a
restart of the caller does not load the model again; ``/health``, ``/metrics`` and the fault
drills read it from their own threads (:meth:`stats`, :meth:`drill`).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from actors.agent.core.completion import Completion, parse_chat_completion
from actors.core.errors import LLMLocalError, LLMTimeout
from actors.kernel.worker import (
    ModelWorker,
    WorkerError,
    WorkerHung,
    WorkerNotLoaded,
    WorkerState,
)
from config.options import SECRET_VARIABLES

LOAD_TIMEOUT_S: Final = 600.0
"""How long a model may take to load (a first use may put a gigabyte together, or fetch it)."""
SPEED_WINDOW: Final = 16
"""Recent answers the tokens-per-second figure is the median of."""
_WORKER: Final = "actors.agent.llm_worker"


@dataclass(frozen=True, slots=True)
class LocalLLMStats:
    """The local model as ``/health.agent.local`` shows it."""

    state: WorkerState
    model: str
    """``AGENT_MODEL``: a known model's name, or its file."""
    loaded: str | None
    """The model's own name, read from its file once loaded."""
    threads: int
    pid: int | None
    rss_mb: float | None
    tokens_per_second: float | None
    """Tokens written a second, the median of the recent answers."""
    restarts: int
    answered: int


class LocalChat:
    """The local model's worker, asked one request at a time."""

    def __init__(self, model: str, threads: int) -> None:
        self.model = model
        self.threads = threads
        self._worker = ModelWorker(
            _WORKER, (model, str(threads)), hidden=SECRET_VARIABLES, load_timeout_s=LOAD_TIMEOUT_S
        )
        self._lock = threading.Lock()
        self._answered = 0
        self._speeds: deque[float] = deque(maxlen=SPEED_WINDOW)

    def complete(
        self, body: dict[str, Any], timeout_s: float, hud: Callable[[str], None] | None = None
    ) -> Completion:
        """Answer the chat-completions ``body``, within ``timeout_s`` once the model is loaded
        (a first call waits for the load too). ``hud``, if given, is handed the answer's hud
        as soon as the model has written it, while it goes on with the digest.

        Raises:
            LLMLocalError: the model did not load, or its worker stopped or raised.
            LLMTimeout: no answer in time (the worker was replaced).
            LLMBadResponse: an answer that holds no text.
        """
        with self._lock:
            try:
                self._worker.start()
            except WorkerNotLoaded as exc:
                said = f" in {LOAD_TIMEOUT_S:g} s" if exc.late else f": {exc}"
                msg = f"the local model {self.model!r} did not load{said}"
                raise LLMLocalError(msg, loading=True, missing_extra=exc.missing_module) from None
            job_id = self._answered + 1

            def written(payload: tuple[int, str]) -> None:
                if hud is not None and payload[0] == job_id:
                    hud(payload[1])

            try:
                kind, payload = self._worker.ask((job_id, body), timeout_s, {"hud": written})
            except WorkerHung as exc:
                raise LLMTimeout(f"the local model {exc}") from None
            except WorkerError as exc:
                raise LLMLocalError(f"the local model {exc}") from None
            if kind != "answer":
                why = payload[1] if kind == "error" else f"an answer of kind {kind!r}"
                raise LLMLocalError(f"the local model could not answer: {why}")
            _job_id, raw, seconds = payload
            completion = parse_chat_completion(raw)
            self._answered += 1
            if seconds > 0 and completion.tokens_out:
                self._speeds.append(completion.tokens_out / seconds)
            return completion

    def warm(self) -> str:
        """Load the model now, if it is not loaded: its own name.

        Raises:
            LLMLocalError: it did not load.
        """
        with self._lock:
            try:
                return str(self._worker.start())
            except WorkerNotLoaded as exc:
                msg = f"the local model {self.model!r} did not load: {exc}"
                raise LLMLocalError(msg, loading=True, missing_extra=exc.missing_module) from None

    def stats(self) -> LocalLLMStats:
        """The worker now (any thread may ask)."""
        worker = self._worker
        speeds = sorted(self._speeds)
        speed = round(speeds[len(speeds) // 2], 1) if speeds else None
        loaded = worker.detail if isinstance(worker.detail, str) else None
        return LocalLLMStats(
            state=worker.state,
            model=self.model,
            loaded=loaded,
            threads=self.threads,
            pid=worker.pid,
            rss_mb=worker.rss_mb(),
            tokens_per_second=speed,
            restarts=worker.restarts,
            answered=self._answered,
        )

    def drill(self, kind: str, seconds: float) -> None:
        """A fault drill on the worker, if one runs: ``crash`` kills it; ``hang`` stops it for
        ``seconds`` (a call that waits past its timeout replaces it meanwhile)."""
        self._worker.drill(kind, seconds)

    def close(self) -> None:
        """End the worker (a call it works on fails)."""
        self._worker.stop()


class LocalModels:
    """The relay's local model: one :class:`LocalChat`, made at the first call for the model
    and threads the agent's settings name, and replaced (its worker ended) when those change.
    Any thread may read :meth:`current`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._chat: LocalChat | None = None

    def chat(self, model: str, threads: int) -> LocalChat:
        """The local model for ``model`` on ``threads`` threads."""
        with self._lock:
            chat = self._chat
            if chat is not None and (chat.model, chat.threads) == (model, threads):
                return chat
            fresh = self._chat = LocalChat(model, threads)
        if chat is not None:
            chat.close()
        return fresh

    def current(self) -> LocalChat | None:
        """The local model made last, if any."""
        return self._chat

    def close(self) -> None:
        """End its worker; a later call starts another."""
        with self._lock:
            chat, self._chat = self._chat, None
        if chat is not None:
            chat.close()
