"""Which setting an LLM failure names, and runs of one error said once."""

from __future__ import annotations

import pytest

from actors.agent.core.llm_remedy import llm_remedy, model_setting, said_once
from actors.core.errors import (
    LLMBadResponse,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    LLMTimeout,
    LLMUnexpectedError,
)
from config.agent.settings import AgentSettings

CONFIG = AgentSettings(model="a/text", vision_model="a/eyes", fallback_models=("b/spare",))


@pytest.mark.parametrize(
    ("error", "setting"),
    [
        (LLMConnectionError("ConnectError: refused"), "AGENT_BASE_URL"),
        (LLMTimeout("no answer within 300 ms"), "AGENT_TIMEOUT_MS"),
        (LLMBadResponse("not JSON"), "AGENT_BASE_URL"),
        (LLMHTTPError(401, "no auth"), "OPENROUTER_API_KEY"),
        (LLMHTTPError(403, "forbidden"), "OPENROUTER_API_KEY"),
        (LLMHTTPError(429, "slow down"), "AGENT_INTERVAL_MS"),
        (LLMHTTPError(404, "no such model: a/text"), "AGENT_MODEL"),
        (LLMHTTPError(404, "404: Not Found"), "AGENT_BASE_URL"),
        (LLMHTTPError(400, "a/text is not a valid model ID"), "AGENT_MODEL"),
        (LLMHTTPError(400, "response_format json_schema unsupported"), "AGENT_RESPONSE_FORMAT"),
        (LLMHTTPError(502, "bad gateway"), "AGENT_BASE_URL"),
    ],
)
def test_each_kind_of_failure_names_its_setting(error: LLMError, setting: str) -> None:
    remedy = llm_remedy(error, model="a/text", config=CONFIG)
    assert remedy is not None
    assert remedy.setting == setting
    assert setting in remedy.advice


def test_a_bug_names_no_setting() -> None:
    assert llm_remedy(LLMUnexpectedError("KeyError: x")) is None


def test_an_unknown_model_names_the_setting_that_named_it() -> None:
    assert model_setting("a/text", CONFIG) == "AGENT_MODEL"
    assert model_setting("a/eyes", CONFIG) == "AGENT_VISION_MODEL"
    assert model_setting("b/spare", CONFIG) == "AGENT_FALLBACK_MODELS"
    remedy = llm_remedy(LLMHTTPError(404, "no such model: a/eyes"), model="a/eyes", config=CONFIG)
    assert remedy is not None
    assert remedy.setting == "AGENT_VISION_MODEL"


def test_runs_of_one_error_are_said_once_with_a_count() -> None:
    assert said_once(["a", "a", "a", "b", "a"]) == ["a (3 times)", "b", "a"]
    assert said_once([]) == []
