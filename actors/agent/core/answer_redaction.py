"""The model's words made safe to keep: a tick's hud and digest without secrets, and a count
of what was taken out of them.

A vision model reads the screen's pixels, which redaction cannot reach (the OCR beside them is
redacted as it arrives, the picture is sent as it is): a key on screen comes back as text in
the model's answer. The LLM caller redacts that answer as soon as it has read it
(:func:`redacted_answer`), before it is stored, pushed to the feed, logged, escalated or
written to SITUATION.md, so every later reader gets the redacted text and none has to redact
it again.

Two passes, as for error texts (:mod:`actors.core.error_text`):

1. the secrets the relay was configured with (:func:`config.common.secrets.scrub`), always: they are
   the relay's own, and a local server's placeholder key has no shape the patterns know;
2. the redactor's patterns (:func:`actors.core.redaction.text.redact`), unless ``RELAY_REDACT`` is
   off: that setting is about the user's data, and with it off the screen's text is kept as it
   came too, so the model's summary of it is.

What both passes replaced is counted by kind (the kind of a configured secret is its marker's:
``api-key``, ``token``), apart from the buffers' counts of what clients sent.
"""

from __future__ import annotations

from dataclasses import replace

from actors.agent.core.completion import Analysis
from actors.core.redaction.rules import KINDS, marker
from actors.core.redaction.text import Counts, redact
from config.common.secrets import scrub


def _add(counts: Counts, kind: str, n: int) -> None:
    if n > 0:
        counts[kind] = counts.get(kind, 0) + n


def safe_words(text: str, counts: Counts, *, patterns: bool = True) -> str:
    """``text`` without the configured secrets and, with ``patterns``, without any secret the
    redactor finds; what was replaced is added to ``counts`` by kind. A marker the text held
    already (a model repeating the redacted prompt) is not counted."""
    scrubbed = scrub(text)
    if scrubbed != text:
        for kind in KINDS:
            _add(counts, kind, scrubbed.count(marker(kind)) - text.count(marker(kind)))
    if not patterns:
        return scrubbed
    redacted, found = redact(scrubbed)
    for kind, n in found.items():
        _add(counts, kind, n)
    return redacted


def redacted_answer(analysis: Analysis, *, patterns: bool = True) -> tuple[Analysis, Counts]:
    """``analysis`` with its hud and digest made safe by :func:`safe_words`, and what was
    replaced in both, by kind (empty, and ``analysis`` itself, when nothing was)."""
    counts: Counts = {}
    hud = safe_words(analysis.hud, counts, patterns=patterns)
    digest = safe_words(analysis.digest, counts, patterns=patterns)
    if not counts:
        return analysis, counts
    return replace(analysis, hud=hud, digest=digest), counts
