"""Error texts fit to leave the process: ``/health``'s ``lastError``, a tick's errors, the
reason a supervisor logs for a child's death.

An exception's message may quote what was being handled: a request's ``Authorization``
header, a body a server echoed back with the key it refused, a prompt. :func:`safe_text`
passes a text through the redactor (:func:`actors.core.redaction.text.redact`, whatever
``RELAY_REDACT`` says: that setting is about the user's data, and an error text is ours) and
then takes out the secrets the relay was configured with
(:func:`config.common.secrets.scrub`), which the redactor does not know by their look (a
local server's placeholder key). A server that could not read a screen image may quote it
back: its data is taken out first (:func:`~actors.core.screen_image.without_image_data`).

The kernel knows nothing of these: :func:`safe_text` is the scrubber the composition root
hands it (:func:`actors.kernel.scrubber.use_scrubber`).
"""

from __future__ import annotations

from actors.core.redaction.text import redact
from actors.core.screen_image import without_image_data
from actors.kernel.scrubber import described
from config.common.secrets import scrub


def safe_text(text: str) -> str:
    """``text`` without image data and the configured secrets, and with every secret the
    redactor finds replaced by its marker."""
    return redact(without_image_data(scrub(text)))[0]


def safe_error_text(exc: BaseException) -> str:
    """``Type: message`` of ``exc`` (``Type`` alone without a message), made safe by
    :func:`safe_text`. Never ``repr(exc)``: a ``UnicodeEncodeError``'s repr holds the whole
    text it could not encode."""
    return safe_text(described(exc))
