"""How a tick ended, as the Ticker keeps it for the console: the reason a person reads, the
figures of a call, and a bounded number kept across the Ticker's incarnations."""

from __future__ import annotations

from actors.agent.core.ticks import TickDone
from actors.agent.ticker_cells import TICKS_KEPT, ConfigCell
from config.agent.settings import AgentSettings


def test_each_end_says_why_in_one_word_and_what_a_call_cost() -> None:
    cell = ConfigCell(AgentSettings())
    cell.note(TickDone(1, "idle"), 1_000)
    cell.note(TickDone(2, "deferred", detail={"reason": "app", "waiting": "settling"}), 2_000)
    called = {"reason": "new", "model": "m/a", "latencyMs": 812, "tokensIn": 600, "tokensOut": 90}
    cell.note(TickDone(3, "ok", detail={**called, "hudWithheld": "echo"}), 3_000)
    cell.note(TickDone(4, "failed", detail={"error": "no answer within 15000 ms"}), 4_000)
    idle, deferred, ok, failed = cell.ticks
    assert (idle.reason, deferred.reason, ok.reason) == ("idle", "settling", "echo")
    assert (ok.model, ok.latency_ms, ok.tokens_in, ok.tokens_out) == ("m/a", 812, 600, 90)
    assert failed.error == "no answer within 15000 ms" and failed.tokens_in is None
    assert [n.ts for n in cell.ticks] == [1_000, 2_000, 3_000, 4_000]
    assert [n.id for n in cell.ticks_after(2)] == [3, 4]


def test_the_newest_ticks_are_kept_numbered_on_whatever_the_ticker_counts() -> None:
    cell = ConfigCell(AgentSettings())
    for n in range(TICKS_KEPT + 5):
        cell.note(TickDone(1, "idle"), n)  # a restarted Ticker counts its ticks from 1 again
    assert len(cell.ticks) == TICKS_KEPT
    assert cell.ticks[0].id == 6 and cell.ticks[-1].id == TICKS_KEPT + 5
