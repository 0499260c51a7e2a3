"""The relay's exceptions. ``transport`` maps them to HTTP statuses in one place; a start
refused because another process holds what it needs is an :class:`InUse`. The refusals only
HTTP makes (401, 403, 413, 421) are the transport's own (``transport.shell.auth``,
``transport.shell.guard``).

The few the kernel raises itself (:class:`RelayError`, :class:`BadRequest`,
:class:`ActorUnavailable`, :class:`InUse`) are defined in :mod:`actors.kernel.errors`, which
imports nothing above the kernel, and offered here with the others.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from actors.core.screen_image import without_image_data
from actors.kernel.errors import ActorUnavailable, BadRequest, InUse, RelayError
from config.common.secrets import scrub

__all__ = [
    "ActorUnavailable",
    "BadRequest",
    "FeatureUnavailable",
    "InUse",
    "LLMBadResponse",
    "LLMConnectionError",
    "LLMError",
    "LLMHTTPError",
    "LLMTimeout",
    "LLMUnexpectedError",
    "RelayError",
    "is_retryable",
    "retry_after_s",
]


class FeatureUnavailable(RelayError):
    """This relay cannot serve what the request asks for now: its build lacks it, or it would
    take too long (HTTP 503; the message says why and what to do)."""


class LLMError(RelayError):
    """The LLM call failed; nothing of the tick is stored."""


class LLMTimeout(LLMError):
    """The request took longer than ``AGENT_TIMEOUT_MS``."""


class LLMHTTPError(LLMError):
    """The endpoint answered with a non-2xx status."""

    def __init__(self, status: int, body: str, retry_after: str | None = None) -> None:
        # A configured secret first, then image data: a base64 run must not swallow half a key.
        super().__init__(f"HTTP {status}: {without_image_data(scrub(body))[:200]}")
        self.status = status
        self.body = body
        """The answer's body (what a refusal of ``response_format`` is told by)."""
        self.retry_after = retry_after
        """The ``Retry-After`` header, if the server sent one."""


class LLMConnectionError(LLMError):
    """The endpoint could not be reached."""


class LLMBadResponse(LLMError):
    """The body is not a chat completion with text content."""


class LLMLocalError(LLMError):
    """The local model (``AGENT_API=local``) gave no answer: its file did not load, its worker
    stopped or hung, or it raised on the request. The message says which."""

    def __init__(self, message: str, *, loading: bool = False, missing_extra: bool = False) -> None:
        super().__init__(message)
        self.loading = loading
        """The model did not load (the file, or the name given, is to blame)."""
        self.missing_extra = missing_extra
        """llama-cpp-python is not installed."""


class LLMUnexpectedError(LLMError):
    """The call failed for a reason none of the others names (a header httpx could not
    encode, a bug): the tick fails and the caller lives on. Its message is already safe to
    show (:func:`actors.core.error_text.safe_error_text`)."""


def retry_after_s(header: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), if any."""
    if not header:
        return None
    try:
        return max(float(header), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


def is_retryable(error: LLMError) -> bool:
    """429, 5xx and connection errors are worth another try on the same model."""
    if isinstance(error, LLMConnectionError):
        return True
    return isinstance(error, LLMHTTPError) and (error.status == 429 or error.status >= 500)
