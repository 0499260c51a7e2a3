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

A configured URL (the LLM's and the speech service's base URLs) may carry credentials of
its own. Wherever the relay logs, prints or serves one, it shows :func:`shown_url` of it,
and :func:`url_secrets` are remembered like the keys, for an error text that quotes the URL.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping, MutableMapping
from typing import Any
from urllib.parse import unquote_plus, urlsplit, urlunsplit

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
    """The redactor's marker (``actors.core.redaction.rules.marker``; a test checks they agree)."""
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


SECRET_QUERY_WORDS = (
    "key", "token", "secret", "pass", "pwd", "auth", "sig", "credential", "session",
)  # fmt: skip
"""A URL's query parameter whose name holds one of these, in any case (``api_key``,
``access_token``, ``X-Amz-Signature``, ``password``), has a secret value."""
UNREADABLE_URL = "(an unreadable URL)"
"""What :func:`shown_url` shows of a text it cannot read as a URL."""


def _parameters(query: str) -> list[tuple[str, str | None]]:
    """``query``'s parameters as written, each as ``(name, value)`` (``None``: no ``=``)."""
    if not query:
        return []
    pairs: list[tuple[str, str | None]] = []
    for part in query.split("&"):
        name, equals, value = part.partition("=")
        pairs.append((name, value if equals else None))
    return pairs


def _secret_parameter(name: str) -> bool:
    lowered = unquote_plus(name).lower()
    return any(word in lowered for word in SECRET_QUERY_WORDS)


def _shown_parameter(name: str, value: str | None) -> str:
    if value is None:
        return name
    return f"{name}={_marker('token') if _secret_parameter(name) else value}"


def shown_url(url: str) -> str:
    """``url`` as the relay logs, prints and serves it: without its credentials.

    The user information (``user:password@``, or a user name alone, which some services
    read as the key) is shown as ``[redacted:password]@``; the value of a query parameter
    whose name looks secret (:data:`SECRET_QUERY_WORDS`) as ``[redacted:token]``; the
    fragment (which no request sends) not at all. The scheme, host, port, path and the other
    parameters stay as written.
    """
    try:
        parts = urlsplit(url)
    except ValueError:  # an IPv6 host without its closing bracket
        return UNREADABLE_URL
    _user, at, host = parts.netloc.rpartition("@")
    netloc = f"{_marker('password')}@{host}" if at else host
    query = "&".join(_shown_parameter(n, v) for n, v in _parameters(parts.query))
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def url_secrets(url: str) -> list[tuple[str, str]]:
    """The credentials in ``url`` that :func:`shown_url` hides, each with its kind, as
    :func:`remember_secret` takes them, as written and decoded: the password of the user
    information and the secret parameters' values. (A user name is not among them: a name
    like ``admin`` would be taken out of every text.)"""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [
        (value, "token") for n, value in _parameters(parts.query) if value and _secret_parameter(n)
    ]
    if parts.password:
        found.append((parts.password, "password"))
    forms = [(form, kind) for text, kind in found for form in (text, unquote_plus(text))]
    return list(dict.fromkeys(forms))
