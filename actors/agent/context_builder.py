"""ContextBuilder: turns snapshots of both buffers into a window and a prompt.

It owns no state of its own: each tick reads the rings the buffers last published (see
:mod:`actors.kernel.published`: committed data, read without a message, so a tick never queues in
a buffer's mailbox behind ingestion, nor waits for a buffer that hangs), decides whether
anything is new and whether the window says anything the last LLM call was not told (its
fingerprint), and hands the prompt on. The window the prompt is made from is what the
privacy matrix lets the model see (:mod:`actors.agent.core.disclosure`): the ``OPENROUTER`` column
for a model over HTTP, the ``LOCAL_LLM`` column for the relay's own; ``/agent/context``, which
agents read, shows the ``AGENT_GATEWAY`` column's.
"""

from __future__ import annotations

from dataclasses import replace

from actors.agent.core.change import Gist, gist, judge, settling_until
from actors.agent.core.disclosure import disclosed
from actors.agent.core.events import AgentEvent, ImageRefused, TickSkipped
from actors.agent.core.prompt import build_prompt, fingerprint
from actors.agent.core.ticks import LLMRequest, TickDone, TickRequest
from actors.agent.llm_caller import LLMCaller
from actors.core.records import FeedSnapshot, SenseSnapshot
from actors.core.screen_image import (
    NOTHING_SENT,
    ImageRefusal,
    ScreenImage,
    SentImages,
    pick_images,
)
from actors.core.window import TickWindow, build_context_window
from actors.kernel.base import ChildHandle, RelayActor, Reporter
from actors.kernel.clock import Clock
from actors.kernel.listeners import Listeners
from actors.kernel.published import Published
from config.agent.settings import AgentSettings
from config.privacy import DEFAULT_MATRIX, Column, Matrix


class ContextBuilder(RelayActor):
    """Builds the context window for ticks and for ``/agent/context``."""

    name = "context"

    def __init__(
        self,
        *,
        clock: Clock,
        feed: Published[FeedSnapshot],
        sense: Published[SenseSnapshot],
        llm: ChildHandle[LLMCaller],
        events: Listeners[AgentEvent] | None = None,
        sent_images: Published[SentImages] | None = None,
        report: Reporter | None = None,
        matrix: Matrix = DEFAULT_MATRIX,
    ) -> None:
        super().__init__(report=report)
        self._to_llm = {False: matrix.column("openrouter"), True: matrix.column("local_llm")}
        """What the model is shown, by whether it is the relay's own."""
        self._to_agents = matrix.column("agent_gateway")
        self._clock = clock
        self._feed = feed
        self._sense = sense
        self._sent = sent_images if sent_images is not None else Published(NOTHING_SENT)
        """The images recent calls sent (the LLM caller writes it)."""
        self._llm = llm
        self._events: Listeners[AgentEvent] = events or Listeners()

    def _snapshots(self) -> tuple[FeedSnapshot, SenseSnapshot]:
        return self._feed.value, self._sense.value

    def window(self, config: AgentSettings) -> TickWindow:
        """The window as it is now, as agents may see it, with the images a call would send
        (named, never carried: ``/agent/context``)."""
        feed, sense = self._snapshots()
        now_ms = self._clock.now_ms()
        window = build_context_window(
            feed.items, sense.events, now_ms=now_ms, max_age_ms=config.max_age_ms
        )
        column = self._to_llm[config.local]
        return self._with_images(disclosed(window, self._to_agents), sense, now_ms, config, column)

    def _with_images(
        self,
        window: TickWindow,
        sense: SenseSnapshot,
        now_ms: int,
        config: AgentSettings,
        column: Column,
    ) -> TickWindow:
        """``window`` with the screen images a call sends: of the events inside it, newest
        first, those whose image is fit to send (a refused one is logged and counted the first
        time a tick looks at it), picked by :func:`pick_images`; none unless the settings and
        the model's ``column`` of the privacy matrix (``full``) allow images."""
        if not config.sends_images or column.images != "full" or window.screen_count == 0:
            return window
        cutoff = now_ms - config.max_age_ms
        fit: list[ScreenImage] = []
        for event in reversed(sense.events):
            if event.received_at < cutoff:
                break
            image, first = event.image()
            if isinstance(image, ImageRefusal):
                if first:
                    self._refused(image)
            elif image is not None:
                fit.append(image)
        picked = pick_images(fit, config.vision_max_images, self._sent.value)
        return replace(window, images=picked) if picked else window

    def _refused(self, image: ImageRefusal) -> None:
        # Its size and why, never its bytes.
        self._log.info(
            "vision.image_refused", sense_id=image.event_id, reason=image.reason, chars=image.size
        )
        self._events.send(ImageRefused(image.reason))

    def run_tick(self, request: TickRequest) -> None:
        """Build the window; ask the LLM only when something new arrived, the window is not
        empty, and its fingerprint differs from the last call's."""
        feed, sense = self._snapshots()
        marks = (feed.activity, sense.activity)
        if marks == request.last_marks:
            self._events.send(TickSkipped("idle"))
            self._done(request, TickDone(request.tick_id, "idle", marks))
            return
        config = request.config
        now_ms = self._clock.now_ms()
        window = build_context_window(
            feed.items, sense.events, now_ms=now_ms, max_age_ms=config.max_age_ms
        )
        column = self._to_llm[config.local]
        window = self._with_images(disclosed(window, column), sense, now_ms, config, column)
        if window.is_empty:
            self._events.send(TickSkipped("empty"))
            self._done(request, TickDone(request.tick_id, "empty", marks))
            return
        window_print = fingerprint(window)
        if window_print == request.last_fingerprint:
            self._events.send(TickSkipped("unchanged"))
            done = TickDone(request.tick_id, "unchanged", marks, fingerprint=window_print)
            self._done(request, done)
            return
        window_gist = gist(window)
        why: dict[str, str] = {"reason": "new"}
        if config.economy:
            skip = self._judged(request, window, window_gist, now_ms, why)
            if skip is not None:
                self._done(request, skip)
                return
        llm_request = LLMRequest(
            tick_id=request.tick_id,
            config=config,
            prompt=build_prompt(window, now_ms=now_ms),
            window=window,
            marks=marks,
            reply_to=request.reply_to,
            fingerprint=window_print,
            gist=window_gist,
            why=why,
        )
        if not self._tell_peer(self._llm, LLMCaller.complete, llm_request):
            failed = TickDone(request.tick_id, "failed", detail={"error": "llm restarting"})
            self._done(request, failed)

    def _judged(
        self,
        request: TickRequest,
        window: TickWindow,
        window_gist: Gist,
        now_ms: int,
        why: dict[str, str],
    ) -> TickDone | None:
        """Whether the window changed enough to call now (``None``, with ``why`` filled in), or
        the tick that skips the call (``minor``, ``deferred``) and when to look again.

        Neither skip keeps the tick's marks: what arrived is judged again, with whatever
        comes next, against the window of the last call, so small changes add up.
        """
        change = judge(request.last_gist, window, window_gist)
        why["reason"] = change.reason
        if change.detail:
            why["change"] = change.detail
        if not change.strong:
            if change.reason == "minor" and request.stale_in_s <= 0 and request.calls_left >= 2:
                why["reason"] = "minor_stale"
                return None
            self._events.send(TickSkipped("minor"))
            recheck = (
                request.stale_in_s if change.reason == "minor" and request.stale_in_s > 0 else None
            )
            return TickDone(request.tick_id, "minor", None, dict(why), recheck_in_s=recheck)
        settle_ms = request.config.effective_debounce_ms
        if change.reason in ("app", "window") and settle_ms:
            until = settling_until(window, now_ms, settle_ms)
            if until is not None:
                self._events.send(TickSkipped("deferred"))
                detail = {**why, "waiting": "settling"}
                return TickDone(
                    request.tick_id, "deferred", None, detail, recheck_in_s=(until - now_ms) / 1000
                )
        if request.calls_left < 1:
            self._events.send(TickSkipped("deferred"))
            return TickDone(request.tick_id, "deferred", None, {**why, "waiting": "budget"})
        return None

    def _done(self, request: TickRequest, done: TickDone) -> None:
        self._reply(request.reply_to, done)
