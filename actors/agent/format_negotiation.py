"""The LLM caller's negotiation of the response format and of images with a server.

Each request asks for structured output at the level :mod:`actors.agent.core.response_format`
picks, with the window's images unless the model refused images lately. A server that refuses
the level (its error names the format) is asked again at once one level down, and one that may
refuse the images at once without them, all within the request's time: a refusal is no retry,
fallback or failure of the tick. What answered is remembered per model and base URL in a cell
that outlives the caller's incarnations (``/health`` reads it), so the next request starts
where this one ended.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple

from actors.agent.core.completion import Completion
from actors.agent.core.response_format import (
    BLIND_FOR_S,
    FormatLevels,
    Level,
    first_level,
    is_refusal,
    may_refuse_images,
    step_down,
)
from actors.agent.core.ticks import LLMAttempt, LLMRequest
from actors.core.errors import LLMHTTPError
from actors.core.screen_image import ScreenImage
from actors.kernel.clock import Clock
from actors.kernel.published import Published

Call = Callable[[LLMRequest, str, float], Completion]
"""One request to ``model`` within ``timeout_s``, at the level and with the images the
request's config and window carry."""


class Negotiated(NamedTuple):
    """What :func:`negotiated` got: the answer, its level, the images it carried, the levels
    the server refused first, and whether it refused the images."""

    completion: Completion
    level: Level
    images: tuple[ScreenImage, ...]
    refused: tuple[Level, ...]
    images_refused: bool


def negotiated(
    request: LLMRequest,
    model: str,
    timeout_s: float,
    refusals: list[LLMAttempt],
    *,
    call: Call,
    clock: Clock,
    formats: Published[FormatLevels],
    log: Any,
) -> Negotiated:
    """One request at the level the setting and ``formats`` pick, with the window's images
    unless the model refused images lately; within ``timeout_s`` in all, a refusal of the
    level (:func:`is_refusal`) is asked again at once one level down (with the images
    again), and one that may refuse the images (:func:`may_refuse_images`) at once without
    them. Any other error answer is raised. Returns the answer, its level and the images
    it carried (:class:`Negotiated`); each refused request is added to ``refusals``, so that
    every request is counted.

    Raises:
        LLMError: what the last request raised, a refusal at the lowest level included.
    """
    config = request.config
    setting, base_url = config.response_format, config.base_url
    known, began = formats.value, clock.monotonic()
    level = first_level(setting, known.get(model, base_url))
    wanted = request.window.images if known.sees(model, base_url, began) else ()
    images, refused_at = wanted, None
    refused_levels: list[Level] = []
    while True:
        sent = clock.monotonic()
        left = timeout_s - (sent - began)
        asked = replace(
            request,
            config=replace(config, response_format=level),
            window=replace(request.window, images=images),
        )
        try:
            completion = call(asked, model, left)
        except LLMHTTPError as exc:
            refused_request = LLMAttempt(model, clock.monotonic() - sent, ok=False, refused=True)
            if images and may_refuse_images(exc.status, exc.body, model=model):
                log.info(
                    "llm.images_refused", tick_id=request.tick_id, model=model, level=level,
                    status=exc.status,
                )  # fmt: skip
                images, refused_at = (), level
                refusals.append(refused_request)
                continue
            refused = is_refusal(exc.status, exc.body, model=model)
            lower = step_down(setting, level) if refused else None
            if lower is None:
                raise
            log.info(
                "llm.response_format_refused", tick_id=request.tick_id, model=model,
                level=level, next=lower, status=exc.status,
            )  # fmt: skip
            refused_levels.append(level)
            refusals.append(refused_request)
            level, images = lower, wanted
            continue
        break
    blind = refused_at == level and not images
    _remember(formats, clock, log, (model, base_url), level, blind=blind, saw=bool(images))
    return Negotiated(completion, level, images, tuple(refused_levels), blind)


def _remember(
    formats: Published[FormatLevels],
    clock: Clock,
    log: Any,
    server: tuple[str, str],
    level: Level,
    *,
    blind: bool,
    saw: bool,
) -> None:
    """Remember what answered ``server`` (a model and its base URL): its level, and whether
    the model takes images (``blind``: a request with images failed where the same one
    without answered, so not for a while; ``saw``: it answered one with images)."""
    model, base_url = server
    known = formats.value
    updated = known
    if known.get(model, base_url) != level:
        updated = updated.with_level(model, base_url, level)
    if saw and server in known.blind:
        updated = updated.with_sight(model, base_url, None)
    if blind:
        until = clock.monotonic() + BLIND_FOR_S
        updated = updated.with_sight(model, base_url, until)
        log.warning("llm.images_off", model=model, for_s=BLIND_FOR_S)
    if updated is not known:
        formats.publish(updated)
