"""What the Ticker says of the agent's runtime configuration in its log.

At start, whether the agent will call an LLM, and which (or why not: the one line a user reads
to learn why no hud comes); after a ``POST /agent/config``, the settings that were clamped to
their limits and what changed, never the key itself. A debounce longer than the interval is
capped at it, and said so, whichever way it came.
"""

from __future__ import annotations

from typing import Any

from actors.agent.core.config_update import AgentConfigUpdate
from actors.core.errors import BadRequest
from config.agent.local_llm import LOCAL_LLM_INSTALL, runtime_model_refusal
from config.agent.settings import AgentSettings
from config.common.secrets import remember_secret, shown_url


def announce(log: Any, config: AgentSettings) -> None:
    """Say at start whether the agent calls the LLM, on this machine or where, or why not."""
    warn_if_debounce_capped(log, config, "AGENT_DEBOUNCE_MS")
    if not config.enabled:
        log.info("agent.off", reason="AGENT_ENABLED is false")
    elif config.local:
        log.info(
            "agent.local",
            model=config.model,
            threads=config.local_threads,
            debounce_ms=config.effective_debounce_ms,
            interval_ms=config.interval_ms,
            said="the agent thinks on this machine: nothing is sent off it",
        )
    elif not config.reachable:
        log.warning(
            "agent.off",
            reason="no OPENROUTER_API_KEY: set it in the environment (or, with RELAY_TOKEN "
            f"set, send openrouterApiKey to POST /agent/config), or {LOCAL_LLM_INSTALL} to "
            "think on this machine; python3 run.py --demo shows the agent with a stand-in LLM",
        )
    else:
        log.info(
            "agent.on",
            model=config.model,
            debounce_ms=config.effective_debounce_ms,
            interval_ms=config.interval_ms,
            cooldown_ms=config.cooldown_ms,
            base_url=shown_url(config.base_url),
        )


def updated(old: AgentSettings, update: AgentConfigUpdate) -> AgentSettings:
    """``old`` with ``update`` applied, its key remembered as a secret (never in an error
    text or a log line).

    Raises:
        BadRequest: it names a file as the local model (only a known model's name may be
            given over HTTP).
    """
    new = old.updated(update)
    if new.local and (refusal := runtime_model_refusal(old.model, new.model)):
        raise BadRequest(refusal)
    remember_secret(new.api_key)
    return new


def tell_update(log: Any, update: AgentConfigUpdate, new: AgentSettings) -> None:
    """Log an applied update: each setting clamped to its limit, a capped debounce, and the
    fields that changed (the key only as whether it did)."""
    changes = update.given()
    for setting, given, used in update.clamped():
        log.warning("agent.config_clamped", setting=setting, given=given, used=used)
    if {"debounceMs", "intervalMs"} & changes.keys():
        warn_if_debounce_capped(log, new, "debounceMs")
    changed = sorted(k for k in changes if k != "openrouterApiKey")
    log.info(
        "agent.config_changed",
        fields=changed,
        key_changed="openrouterApiKey" in changes,
        active=new.active,
    )


def warn_if_debounce_capped(log: Any, config: AgentSettings, setting: str) -> None:
    """Say so when the debounce is longer than the interval: it is capped at it."""
    if config.debounce_ms > config.interval_ms:
        log.warning(
            "agent.config_clamped",
            setting=setting,
            given=config.debounce_ms,
            used=config.effective_debounce_ms,
        )
