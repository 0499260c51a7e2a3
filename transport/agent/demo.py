"""The agent's part of ``python3 run.py --demo``: the stand-in LLM (:mod:`transport.agent.fake_llm`
in its ``summarise`` mode) started, and the agent pointed at it."""

from __future__ import annotations

import contextlib
from dataclasses import replace

import structlog

from config.settings import Settings

log = structlog.get_logger("relay")

DEMO_API_KEY = "demo-stand-in"
"""The placeholder key of ``--demo``: the stand-in LLM asks for none."""


def agent_demo(settings: Settings, cleanup: contextlib.ExitStack) -> Settings:
    """Start the stand-in LLM and point the agent at it; ``cleanup`` stops it, after the
    relay has stopped."""
    from transport.agent.fake_llm import STAND_IN_MODEL, FakeLLM  # noqa: PLC0415 - the demo's only

    llm = FakeLLM(mode="summarise").start()
    cleanup.callback(llm.stop)
    agent = replace(
        settings.agent,
        base_url=llm.base_url,
        api_key=DEMO_API_KEY,
        model=STAND_IN_MODEL,
        fallback_models=(),
    )
    log.warning(
        "demo.stand_in_llm",
        actor="root",
        llm=llm.base_url,
        model=STAND_IN_MODEL,
        note="demo mode: the LLM is a stand-in that summarises the prompt heuristically "
        "(no model, no key, no network); huds and digests show the relay's plumbing, "
        "not a model's judgement",
    )
    return replace(settings, agent=agent)
