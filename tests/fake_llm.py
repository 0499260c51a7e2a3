"""Moved: the fake LLM ships as ``transport.fake_llm``; kept while tests import it."""

from transport.fake_llm import MODES, FakeLLM, SeenRequest

__all__ = ["MODES", "FakeLLM", "SeenRequest"]
