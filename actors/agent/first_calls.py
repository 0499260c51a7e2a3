"""The first call to each model is its check.

The relay sends no request at start, so the first time a tick asks a model first (the text
model, or the vision model with the screen's images) at a base URL, how that call ended
(answered, or failed once its retries were spent) is what ``sinain-relay doctor`` would have
said of it: the LLM caller logs it as the same ``doctor.check`` line (``llm`` or ``vision``, with
the same remedies). Which models were judged is kept in a cell that outlives the caller's
incarnations, so a restart does not judge them again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from actors.agent.core.response_format import Level
from actors.agent.core.ticks import LLMRequest
from actors.agent.core.verdicts import (
    ChatProbe,
    call_check,
    call_verdict,
    unknown_model,
    with_served,
)
from actors.common.check import Check, unreachable_reason
from actors.core.errors import LLMConnectionError, LLMError
from actors.kernel.published import Published

Judged = frozenset[tuple[str, str]]
"""The models, each with its base URL, whose first call was logged as a check."""
NOTHING_JUDGED: Judged = frozenset()


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """How a tick's request to one model ended, as its check reads it."""

    seconds: float
    level: Level | None = None
    """The response-format level that answered; ``None`` when it failed."""
    refused: tuple[Level, ...] = ()
    """The levels the server refused first."""
    images_refused: bool = False
    """It answered only once asked again without the screen's images."""
    error: LLMError | None = None


def first_call_check(
    judged: Published[Judged],
    request: LLMRequest,
    model: str,
    outcome: CallOutcome,
    served: Callable[[], tuple[str, ...]],
) -> Check | None:
    """The check of ``request``'s call to ``model`` when it is the first to judge (and then it
    is marked judged in ``judged``); ``None`` for any other call. ``served`` lists what the
    server offers, asked only when a server on this machine refused the default model's name."""
    config = request.config
    name = call_check(config, model, images=bool(request.window.images))
    key = (model, config.base_url)
    if name is None or key in judged.value:
        return None
    judged.publish(judged.value | {key})
    error = outcome.error
    why = unreachable_reason(error) if isinstance(error, LLMConnectionError) else ""
    probe = ChatProbe(
        model, round(outcome.seconds * 1000), outcome.level, outcome.refused, error, why
    )
    check = call_verdict(name, probe, config, images_refused=outcome.images_refused)
    if unknown_model(error, model, config):
        check = with_served(check, served())
    return check
