"""The relay's actors, their supervisor, and the pure functions they are shells around."""

import sys

# httpx imports its optional command-line client at import time, which imports click and
# pygments whenever they are installed (pytest brings pygments, Flask brings click): megabytes
# resident that the relay never uses. A None in sys.modules makes that one import fail at
# once, and httpx then behaves as it does without them. This package is imported before
# anything of ours imports httpx.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None blocks an import

from actors.context_builder import ContextBuilder
from actors.core.errors import (
    ActorUnavailable,
    BadRequest,
    LLMBadResponse,
    LLMError,
    LLMHTTPError,
    LLMTimeout,
    PayloadTooLarge,
    RelayError,
)
from actors.digest_store import DigestStore
from actors.feed_buffer import FeedBuffer
from actors.kernel.base import Call, ChildExited, ChildHandle, RelayActor
from actors.kernel.clock import Clock, FakeClock, SystemClock
from actors.kernel.supervisor import Backoff, ChildSpec, Intensity, Supervisor
from actors.llm_caller import LLMCaller
from actors.sense_buffer import SenseBuffer
from actors.situation_writer import SituationWriter
from actors.ticker import Ticker

__all__ = [
    "ActorUnavailable",
    "Backoff",
    "BadRequest",
    "Call",
    "ChildExited",
    "ChildHandle",
    "ChildSpec",
    "Clock",
    "ContextBuilder",
    "DigestStore",
    "FakeClock",
    "FeedBuffer",
    "Intensity",
    "LLMBadResponse",
    "LLMCaller",
    "LLMError",
    "LLMHTTPError",
    "LLMTimeout",
    "PayloadTooLarge",
    "RelayActor",
    "RelayError",
    "SenseBuffer",
    "SituationWriter",
    "Supervisor",
    "SystemClock",
    "Ticker",
]
