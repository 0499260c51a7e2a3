"""The agent's verdicts, pure: what a probe of the model found, as a
:class:`~actors.common.check.Check` naming the setting to fix.

The ``sinain-relay doctor`` command gives them for its probes; a running relay gives the
``llm`` and ``vision`` verdicts for the first call that asks each model (the LLM caller),
since its start sends nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from actors.agent.core.llm_remedy import llm_remedy
from actors.agent.core.response_format import may_refuse_images
from actors.common.check import Check
from actors.core.errors import (
    LLMBadResponse,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    LLMTimeout,
)
from config.agent.local_llm import LOCAL_LLM_INSTALL
from config.agent.settings import DEFAULT_MODEL, AgentSettings
from config.common.loopback import loopback_url
from config.common.secrets import shown_url

NO_IMAGES_REMEDY = (
    "check AGENT_VISION_MODEL (it does not take images: name one that does, or "
    "set AGENT_VISION_ENABLED=false)"
)
"""What to do about a vision model that refuses the screen's images."""


@dataclass(frozen=True, slots=True)
class ChatProbe:
    """What one tiny chat-completions request (stepping down the response format as the
    relay does) found."""

    model: str
    latency_ms: int
    level: str | None
    """The response-format level that answered; ``None`` when none did."""
    refused: tuple[str, ...] = ()
    """The levels the server refused first, most wanted first."""
    error: LLMError | None = None
    """The last request's failure, when none answered."""
    unreachable: str = ""
    """Why the server could not be reached (``connection refused`` ...), for a connection error."""


def chat_verdict(
    name: str, probe: ChatProbe, config: AgentSettings, *, images: bool = False
) -> Check:
    """The verdict of an ``llm`` (or, with ``images``, ``vision``) probe."""
    url = shown_url(config.base_url)
    if probe.error is None:
        answered = f"{probe.model} {_where(config)} answered in {probe.latency_ms} ms"
        if not probe.refused:
            return Check(name, "ok", f"{answered} (response format {probe.level})")
        return Check(
            name,
            "warn",
            f"{answered} at response format {probe.level}, after the server refused "
            f"{', '.join(probe.refused)}",
            f"AGENT_RESPONSE_FORMAT=auto steps down by itself (one refused request after each "
            f"start); AGENT_RESPONSE_FORMAT={probe.level} asks at {probe.level} at once",
        )
    return _chat_failure(name, probe, config, url, probe.error, images=images)


def _where(config: AgentSettings) -> str:
    """Where the model runs, as a verdict says it."""
    return (
        "on this machine (AGENT_API=local)" if config.local else f"at {shown_url(config.base_url)}"
    )


def _chat_failure(
    name: str, probe: ChatProbe, config: AgentSettings, url: str, error: LLMError, *, images: bool
) -> Check:
    if isinstance(error, LLMConnectionError):
        why = probe.unreachable or str(error)
        found = f"{url} is unreachable ({why})"
    elif isinstance(error, LLMHTTPError):
        found = f"{probe.model} at {url} answered {error}"
    else:
        found = f"{probe.model} {_where(config)}: {error}"
    if (
        images
        and isinstance(error, LLMHTTPError)
        and may_refuse_images(error.status, error.body, model=probe.model)
    ):
        return Check(name, "FAIL", found, NO_IMAGES_REMEDY)
    if isinstance(error, LLMBadResponse) and "no text" in str(error):
        return Check(
            name,
            "warn",
            found,
            "the model answered with no text within the doctor's few tokens (a model that "
            "reasons first needs room: check AGENT_MAX_TOKENS)",
        )
    remedy = llm_remedy(error, model=probe.model, config=config)
    return Check(name, "FAIL", found, remedy.advice if remedy else "")


def _whole_server(error: LLMError | None) -> bool:
    """Whether ``error`` is about the server or the key, not the model: any model would fail."""
    if isinstance(error, LLMConnectionError | LLMTimeout):
        return True
    return isinstance(error, LLMHTTPError) and error.status in (401, 402, 403)


def agent_skip(config: AgentSettings) -> Check | None:
    """``skip llm`` when the agent makes no calls (disabled, or no key); else ``None``."""
    if not config.enabled:
        return Check("llm", "skip", "AGENT_ENABLED is off: the agent makes no calls")
    if not config.reachable:
        return Check(
            "llm",
            "skip",
            "no OPENROUTER_API_KEY (and no local model, nor a server on this machine): the agent "
            "makes no calls",
            f"{LOCAL_LLM_INSTALL} to think on this machine",
        )
    return None


def vision_skip(config: AgentSettings, text: ChatProbe | None = None) -> Check | None:
    """``skip vision`` unless calls carry images to a model other than the text model, and
    the ``text`` probe did not already find the server unreachable or the key refused."""
    if not config.active:
        return Check("vision", "skip", "the agent makes no calls")
    if text is not None and _whole_server(text.error):
        return Check("vision", "skip", "not asked while the llm check fails for the server")
    if not config.sends_images:
        return Check("vision", "skip", "AGENT_VISION_ENABLED is off (or no images a call)")
    if config.vision_model == config.model:
        return Check("vision", "skip", f"the text model {config.model} also reads the images")
    return None


def call_check(config: AgentSettings, model: str, *, images: bool) -> str | None:
    """The check a call to ``model`` answers for, the first time a relay asks it: ``vision``
    for the vision model asked first with the screen's images (when it is not the text
    model), ``llm`` for the text model asked first; ``None`` for a fallback."""
    if model != config.models_for(images=images)[0]:
        return None
    if images and model != config.model:
        return "vision"
    return "llm" if model == config.model else None


def call_verdict(
    name: str, probe: ChatProbe, config: AgentSettings, *, images_refused: bool = False
) -> Check:
    """The verdict of a relay's first call to a model, as the doctor gives its probe's;
    ``images_refused``: it answered only once asked again without the screen's images."""
    if images_refused and probe.error is None:
        found = (
            f"{probe.model} at {shown_url(config.base_url)} answered only without the "
            "screen's images"
        )
        return Check(name, "FAIL", found, NO_IMAGES_REMEDY)
    return chat_verdict(name, probe, config, images=name == "vision")


def unknown_model(error: LLMError | None, model: str, config: AgentSettings) -> bool:
    """Whether ``error`` is a server on this machine refusing the default cloud model's name:
    a local server was named without naming one of its models (its listing helps)."""
    if not isinstance(error, LLMHTTPError) or error.status not in (400, 404):
        return False
    if config.local or model != DEFAULT_MODEL or not loopback_url(config.base_url):
        return False
    remedy = llm_remedy(error, model=model, config=config)
    return remedy is not None and remedy.setting == "AGENT_MODEL"


def with_served(check: Check, served: tuple[str, ...]) -> Check:
    """``check`` with the models the server lists added to its remedy, when it lists any."""
    if not served:
        return check
    listed = ", ".join(served)
    return replace(check, remedy=f"{check.remedy}: the server lists {listed}")
