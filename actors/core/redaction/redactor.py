"""The configured redactor: redaction as ``RELAY_REDACT`` says, and what it replaced, by kind,
since start."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from actors.core.redaction.payload import redact_payload, tested, unique
from actors.core.redaction.rules import KINDS, rules_for
from actors.core.redaction.text import Counts, apply_rules


class Redactor:
    """Redaction as configured (``RELAY_REDACT``), with its counts by kind since start.

    Shared by the buffers, which call it on their own threads, and read by metrics from any
    thread: the counts are kept under a lock (taken only when something was redacted).
    """

    def __init__(self, *, enabled: bool = True) -> None:
        self._enabled = enabled
        self._lock = threading.Lock()
        self._counts: Counts = dict.fromkeys(KINDS, 0)

    @property
    def enabled(self) -> bool:
        """False with ``RELAY_REDACT=off``: everything is kept as it came."""
        return self._enabled

    def counts(self) -> Counts:
        """Secrets replaced since start, by kind (every kind of
        :data:`~.rules.KINDS`, zeros too)."""
        with self._lock:
            return dict(self._counts)

    def texts(self, texts: Sequence[str]) -> Sequence[str]:
        """Each of ``texts`` redacted; ``texts`` itself when nothing was (one test for all)."""
        if not self._enabled or not texts:
            return texts
        rules = rules_for(tested(texts))
        if not rules:
            return texts
        counts: Counts = {}
        redacted = [apply_rules(text, rules, counts) for text in texts]
        self._add(counts)
        return redacted if counts else texts

    def names(self, names: Sequence[str]) -> list[str]:
        """Each of ``names`` (of fields, of counters) redacted as :meth:`texts`, a name that
        redacts to one already given getting ``#2`` (``#3``...) after it."""
        out: dict[str, None] = {}
        for name in self.texts(names):
            out[unique(out, name)] = None
        return list(out)

    def payload(self, payload: dict[str, Any]) -> dict[str, Any]:
        """:func:`~.payload.redact_payload`, counted; ``payload`` itself
        when off or nothing was found."""
        if not self._enabled:
            return payload
        redacted, counts = redact_payload(payload)
        self._add(counts)
        return redacted

    def _add(self, counts: Counts) -> None:
        if counts:
            with self._lock:
                for kind, n in counts.items():
                    self._counts[kind] += n
