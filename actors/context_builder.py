"""ContextBuilder: turns snapshots of both buffers into a window and a prompt.

It owns no state of its own: each tick reads the rings the buffers last published (see
:mod:`actors.published`: committed data, read without a message, so a tick never queues in
a buffer's mailbox behind ingestion, nor waits for a buffer that hangs), decides whether
anything is new, and hands the prompt on.
"""

from __future__ import annotations

from actors.base import ChildHandle, RelayActor, Reporter
from actors.clock import Clock
from actors.prompt import build_prompt
from actors.published import Published
from actors.records import FeedSnapshot, SenseSnapshot
from actors.ticks import LLMRequest, TickDone, TickRequest
from actors.window import ContextWindow, build_context_window


class ContextBuilder(RelayActor):
    """Builds the context window for ticks and for ``/agent/context``."""

    name = "context"

    def __init__(
        self,
        *,
        clock: Clock,
        feed: Published[FeedSnapshot],
        sense: Published[SenseSnapshot],
        llm: ChildHandle,
        digest: ChildHandle,
        ticker: ChildHandle,
        report: Reporter | None = None,
    ) -> None:
        super().__init__(report=report)
        self._clock = clock
        self._feed = feed
        self._sense = sense
        self._llm = llm
        self._digest = digest
        self._ticker = ticker

    def _snapshots(self) -> tuple[FeedSnapshot, SenseSnapshot]:
        return self._feed.value, self._sense.value

    def window(self, max_age_ms: int) -> ContextWindow:
        """The window as it is now (``/agent/context``)."""
        feed, sense = self._snapshots()
        return build_context_window(
            feed.items, sense.events, now_ms=self._clock.now_ms(), max_age_ms=max_age_ms
        )

    def run_tick(self, request: TickRequest) -> None:
        """Build the window; ask the LLM only when something new arrived and it is not empty."""
        feed, sense = self._snapshots()
        marks = (feed.activity, sense.activity)
        if marks == request.last_marks:
            self._tell_peer(self._digest, "record_idle_skip")
            self._done(TickDone(request.tick_id, "idle", marks))
            return
        config = request.config
        window = build_context_window(
            feed.items, sense.events, now_ms=self._clock.now_ms(), max_age_ms=config.max_age_ms
        )
        if window.is_empty:
            self._tell_peer(self._digest, "record_empty_skip")
            self._done(TickDone(request.tick_id, "empty", marks))
            return
        llm_request = LLMRequest(
            tick_id=request.tick_id,
            config=config,
            prompt=build_prompt(window),
            window=window,
            marks=marks,
        )
        if not self._tell_peer(self._llm, "complete", llm_request):
            self._done(TickDone(request.tick_id, "failed", detail={"error": "llm restarting"}))

    def _done(self, done: TickDone) -> None:
        self._tell_peer(self._ticker, "tick_done", done)
