"""The secrets this process was configured with, and :func:`scrub`, which takes them out of text.

The LLM key and ``RELAY_TOKEN`` are remembered when the relay starts, and a key set with
``POST /agent/config`` when it is set (:func:`remember_secret`). :func:`scrub` replaces each
of them, wherever it stands in a text, by the redaction marker of its kind
(``[redacted:api-key]``, ``[redacted:token]``): error texts that quote a request (an
``Authorization`` header in an exception's message, a server that echoes the key it refused)
then show the marker, whatever the key looks like. A local server's placeholder key matches no
vendor's pattern, so the redactor alone would not find it.

Also found: the secret as ``repr`` or JSON escape it (a backslash or a quote in it is
doubled), and the start of one that ends a text (at least :data:`MIN_PIECE` characters): a
message cut to its first characters may stop inside the key. A secret shorter than
:data:`MIN_SECRET` is not looked for: no text could be read with every ``x`` taken out of it.

The list is the process's, as the log set-up is (:mod:`config.logs` scrubs every line with
it); it keeps the :data:`KEPT` most recent secrets, an old key included (an error may quote
the request made just before it changed).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping, MutableMapping
from typing import Any

MIN_SECRET = 4
"""Shorter secrets are not looked for."""
MIN_PIECE = 8
"""The shortest start of a secret that is taken out of the end of a text."""
KEPT = 16
"""How many secrets are remembered (the oldest is forgotten first)."""

_lock = threading.Lock()
_kinds: dict[str, str] = {}
"""The remembered secrets and their kinds, the oldest first (changed under the lock)."""
_forms: tuple[tuple[str, str], ...] = ()
"""``(form, marker)`` of every form of every remembered secret, the longest first (a secret
inside another is replaced after it); replaced whole, so readers take it without the lock."""
_gate: re.Pattern[str] | None = None
"""Finds the first :data:`MIN_PIECE` characters of any form (a shorter form whole): a text
it finds nothing in has no secret, which one search tells (most texts)."""


def _marker(kind: str) -> str:
    """The redactor's marker (``actors.core.redaction_rules.marker``; a test checks they agree)."""
    return f"[redacted:{kind}]"


def _forms_of(secret: str) -> list[str]:
    """The secret as it is, and as ``repr`` and JSON write it (distinct ones only)."""
    return list(dict.fromkeys([secret, repr(secret)[1:-1], json.dumps(secret)[1:-1]]))


def remember_secret(value: str, kind: str = "api-key") -> None:
    """Remember ``value`` as a secret of ``kind`` (a kind of the redactor's markers)."""
    global _forms, _gate  # noqa: PLW0603 - the process's list, replaced whole
    if len(value) < MIN_SECRET:
        return
    with _lock:
        _kinds.pop(value, None)
        _kinds[value] = kind
        while len(_kinds) > KEPT:
            del _kinds[next(iter(_kinds))]
        forms = {form: _marker(k) for secret, k in _kinds.items() for form in _forms_of(secret)}
        ordered = tuple(sorted(forms.items(), key=lambda item: -len(item[0])))
        heads = dict.fromkeys(re.escape(form[:MIN_PIECE]) for form, _ in ordered)
        _gate = re.compile("|".join(heads))
        _forms = ordered


def scrub(text: str) -> str:
    """``text`` without any remembered secret (see the module); ``text`` itself if it has none."""
    gate = _gate
    if gate is None or gate.search(text) is None:
        return text
    for form, marker in _forms:
        if form in text:
            text = text.replace(form, marker)
        if len(form) > MIN_PIECE:
            text = _cut_end(text, form, marker)
    return text


def _cut_end(text: str, form: str, marker: str) -> str:
    """``text`` with a start of ``form`` (``MIN_PIECE`` characters or more) that ends it
    replaced by ``marker``."""
    head = form[:MIN_PIECE]
    at = text.find(head, max(len(text) - len(form) + 1, 0))
    while at != -1:
        if form.startswith(text[at:]):
            return text[:at] + marker
        at = text.find(head, at + 1)
    return text


def scrub_value(value: Any) -> Any:
    """``value`` with every string in it scrubbed, in dicts, lists and tuples at any depth."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        return {k: scrub_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(scrub_value(v) for v in value)
    return value


def scrub_event(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    """A structlog processor: every string of the event scrubbed (after the exception was
    rendered, so its text too)."""
    if _gate is None:
        return event
    for key, value in event.items():
        event[key] = scrub_value(value)
    return event
