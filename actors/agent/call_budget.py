"""The Ticker's call budget with ``economy`` on: no more LLM calls than a fixed beat would make.

A beat of ``intervalMs`` would call the LLM once in each of its slots in which anything
arrived. The budget earns one call for each such slot, keeps at most :data:`CALL_BANK` for
later, and allows one ahead; each call spends one. A new beat (the agent turned on, a new
interval) starts counting slots again and keeps what was earned.
"""

from __future__ import annotations

from dataclasses import dataclass

CALL_BANK = 10.0
"""Calls the budget keeps for later at most."""


@dataclass(slots=True)
class CallBudget:
    """The calls a fixed beat would have made and the Ticker has not (``left``)."""

    origin: float = 0.0
    """When the beat began (monotonic seconds)."""
    slot: int = -1
    """The newest slot of the beat in which news arrived."""
    left: float = 1.0

    def earn(self, at: float, interval_s: float) -> None:
        """Earn the call the beat makes for news arriving at ``at``, once per slot."""
        slot = int((at - self.origin) // interval_s)
        if slot > self.slot:
            self.slot = slot
            self.left = min(CALL_BANK, self.left + 1)

    def new_beat(self, now: float) -> None:
        """Begin a beat at ``now``: its slots are counted from there."""
        self.origin = now
        self.slot = -1
