"""What a failure of an outside call points at, in the user's terms: the setting to look at
and what to do about it. The LLM path (:mod:`actors.agent.core.llm_remedy`) and the speech
service (:func:`actors.audio.core.stt.stt_remedy`) each say which, for their own settings."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Remedy:
    """The setting a failure points at, and one clause on what to do (naming it)."""

    setting: str
    advice: str
