"""The request bodies all connections hold at once (``RELAY_BODY_MEMORY_MB``): a reserve for
small bodies, a minimum rate for bodies still arriving, and the slowest body cut for a new one
when the budget is full; the budget itself first, then on the real server with real sockets."""

from __future__ import annotations

import select
import socket
from collections.abc import Callable, Iterator
from dataclasses import replace

import orjson
import pytest

from actors.core.bodies import SENSE_BODY_LIMIT
from actors.tree import Relay
from tests.support.observe import wait_until
from tests.support.relay import client_for, relay_settings, scrape, value
from tests.transport.raw_http import raw_request
from tests.transport.shell.test_connections import CLOSED_WITHIN_S, ask, closed_by_relay
from transport.shell import connections
from transport.shell.connections import SMALL_BODY_BYTES, BodyBudget, BodyHold

MIB = 1024 * 1024


# -- the budget -----------------------------------------------------------------------------


class Clock:
    """A monotonic clock moved by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def arriving(budget: BodyBudget, size: int, received: int = 0) -> tuple[BodyHold, list[str]]:
    """A body of ``size`` bytes charged and arriving, ``received`` of it read; the list says
    whether it was cut."""
    hold, cuts = BodyHold(), list[str]()
    assert budget.take(hold, size)
    budget.arriving(hold, lambda: cuts.append("cut"))
    hold.received = received
    return hold, cuts


def test_large_bodies_leave_the_reserve_to_small_ones() -> None:
    budget = BodyBudget(8 * MIB)
    assert budget.reserve == MIB
    whole = [BodyHold() for _ in range(7)]
    for hold in whole:  # bodies read whole, being handled: nothing to cut
        assert budget.take(hold, MIB)
    assert not budget.take(BodyHold(), MIB)  # a large body: into the reserve, refused
    assert budget.refused == 1
    small = [BodyHold() for _ in range(MIB // SMALL_BODY_BYTES)]
    for hold in small:
        assert budget.take(hold, SMALL_BODY_BYTES)
    assert budget.held == 8 * MIB
    assert not budget.take(BodyHold(), 1)  # the reserve is full too
    for hold in [*whole, *small]:
        budget.give_back(hold)
    assert budget.held == 0


def test_one_body_alone_always_passes_even_chunk_by_chunk() -> None:
    budget = BodyBudget(MIB)
    hold = BodyHold()
    for _ in range(3):
        assert budget.take(hold, MIB)  # its own earlier chunks do not count against it
    assert hold.held == budget.held == 3 * MIB
    assert not budget.take(BodyHold(), 1)
    budget.give_back(hold)
    assert budget.held == hold.held == 0


def test_at_the_budget_the_slowest_arriving_body_is_cut_for_a_new_one() -> None:
    clock = Clock()
    budget = BodyBudget(8 * MIB, clock=clock)
    fast, fast_cuts = arriving(budget, 2 * MIB)
    slow, slow_cuts = arriving(budget, 2 * MIB)
    whole = BodyHold()
    assert budget.take(whole, 3 * MIB)  # read whole: never cut
    clock.now += 2
    fast.received, slow.received = 600_000, 300
    newcomer = BodyHold()
    assert budget.take(newcomer, MIB)  # 8 MiB with it, past the 7 MiB large bodies may use
    assert (slow_cuts, fast_cuts) == (["cut"], [])
    assert slow.cut_for_another
    assert slow.held == 0
    assert budget.held == 6 * MIB
    assert budget.cut == 1
    budget.give_back(slow)  # the guard gives back what is left of it: nothing
    assert budget.held == 6 * MIB


def test_arriving_bodies_are_not_cut_when_cutting_them_all_would_not_make_room() -> None:
    budget = BodyBudget(8 * MIB)
    _, cuts = arriving(budget, MIB)
    assert budget.take(BodyHold(), 6 * MIB)  # read whole
    assert not budget.take(BodyHold(), 2 * MIB)  # would need 2 MiB: 1 MiB could be cut
    assert cuts == []
    assert budget.refused == 1
    assert budget.cut == 0


def test_a_body_that_has_arrived_is_no_longer_cut() -> None:
    budget = BodyBudget(4 * MIB)
    hold, cuts = arriving(budget, 3 * MIB)
    budget.arrived(hold)
    assert not budget.take(BodyHold(), 2 * MIB)
    assert cuts == []


# -- on the server --------------------------------------------------------------------------

BUDGET_MB = 1
"""The body memory budget of the tests below that set one (``RELAY_BODY_MEMORY_MB``)."""
BIG = orjson.dumps(
    {"type": "text", "ts": 1, "ocr": "big", "meta": {"app": "x"}, "notes": "n" * 700_000}
)
"""A screen event of about 700 KiB: two are past the budget, one is within it."""
STALLED = 34
"""Stalled 2 MiB posts: more than the default budget's 32."""


@pytest.fixture(autouse=True)
def patient(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bodies that stall here are not cut for their rate, however slow the machine, unless a
    test says so."""
    monkeypatch.setattr(connections, "BODY_RATE_GRACE_S", 60.0)


def budgeted(make_relay: Callable[..., Relay]) -> Relay:
    return make_relay(replace(relay_settings(), body_memory_mb=BUDGET_MB))


def begun(relay: Relay, size: int = len(BIG), sent: bytes = BIG[:1000]) -> socket.socket:
    """A connection that has sent the head of a ``size``-byte post and the first bytes of its
    body (of ``BIG`` by default), and no more."""
    conn = socket.create_connection(relay.address(), timeout=CLOSED_WITHIN_S)
    conn.sendall(raw_request("POST", "/sense", [("Content-Length", str(size))]) + sent)
    return conn


def answered(conns: list[socket.socket], at_least: int) -> list[socket.socket]:
    """The connections the relay has answered (or closed), once there are ``at_least``."""

    def readable() -> list[socket.socket]:
        ready, _, _ = select.select(conns, [], [], 0.05)
        return ready if len(ready) >= at_least else []

    found: list[socket.socket] = wait_until(readable, what=f"{at_least} answered connections")
    return found


@pytest.fixture
def stalled(make_relay: Callable[..., Relay]) -> Iterator[tuple[Relay, list[socket.socket]]]:
    """A relay with its default budget, and :data:`STALLED` connections that each sent a
    ``POST /sense`` head with a 2 MiB ``Content-Length`` and a few bytes of the body."""
    relay = make_relay()
    conns = [begun(relay, SENSE_BODY_LIMIT, b'{"type": "text"') for _ in range(STALLED)]
    try:
        yield relay, conns
    finally:
        for conn in conns:
            conn.close()


def test_stalled_large_bodies_leave_room_for_a_small_post(
    stalled: tuple[Relay, list[socket.socket]],
) -> None:
    relay, conns = stalled
    # Two answered: the large bodies' share of the budget is full (the rest wait).
    answered(conns, 2)
    with client_for(relay, timeout=5) as client:
        posted = client.post("/feed", json={"text": "still heard"})
        assert posted.status_code == 200, posted.text
        assert [m["text"] for m in client.get("/feed").json()["messages"]] == ["still heard"]


def test_at_the_budget_the_slowest_body_is_cut_for_a_new_one(
    make_relay: Callable[..., Relay],
) -> None:
    relay = budgeted(make_relay)
    first, second = begun(relay), begun(relay)
    with first, second:
        (cut,) = answered([first, second], 1)  # the later cut the earlier (or was refused)
        held = second if cut is first else first
        with client_for(relay) as client:
            assert client.post("/sense", content=BIG).status_code == 200
            answer = ask(held, b"")  # the slowest, cut for the new one
            assert answer.status == 503, answer
            assert int(answer.headers["retry-after"]) >= 1
            assert "slowest" in orjson.loads(answer.body)["error"]
            assert [e["ocr"] for e in client.get("/sense").json()["events"]] == ["big"]
            samples = scrape(client)
    assert value(samples, "relay_http_bodies_cut_total", reason="slowest") == 2


def test_a_body_that_comes_below_the_minimum_rate_is_a_408_and_gives_its_memory_back(
    make_relay: Callable[..., Relay], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connections, "BODY_RATE_GRACE_S", 0.2)
    relay = budgeted(make_relay)  # and a body timeout of 30 s
    with begun(relay) as trickling:
        answer = ask(trickling, b"")  # within the socket's timeout, not the 30 s
    assert answer.status == 408, answer
    assert "bytes a second" in orjson.loads(answer.body)["error"]
    with client_for(relay) as client:
        assert client.post("/sense", content=BIG).status_code == 200
        samples = scrape(client)
    assert value(samples, "relay_http_bodies_cut_total", reason="too_slow") == 1
    assert value(samples, "relay_http_body_bytes") == 0


def test_bodies_past_the_memory_budget_are_a_503_with_retry_after_and_store_nothing(
    make_relay: Callable[..., Relay],
) -> None:
    relay = budgeted(make_relay)
    first, second = begun(relay), begun(relay)
    with first, second:
        # One of the two is answered at once, its body unread; the other waits for its.
        (refused,) = answered([first, second], 1)
        taken = second if refused is first else first
        answer = ask(refused, b"")
        assert answer.status == 503, answer
        assert answer.headers["connection"] == "close"
        assert int(answer.headers["retry-after"]) >= 1
        assert "memory" in orjson.loads(answer.body)["error"]
        refused.sendall(BIG[1000:])  # read and dropped, then the relay closes the connection
        assert closed_by_relay(refused) == b""
        assert ask(taken, BIG[1000:]).status == 200  # the other goes on and is stored
    with client_for(relay) as client:
        assert [e["ocr"] for e in client.get("/sense").json()["events"]] == ["big"]
        assert client.post("/sense", content=BIG).status_code == 200  # its memory given back
        assert client.get("/health").status_code == 200


def test_a_client_that_leaves_mid_body_gives_its_memory_back(
    make_relay: Callable[..., Relay],
) -> None:
    relay = budgeted(make_relay)
    first, second = begun(relay), begun(relay)
    with first, second:
        (refused,) = answered([first, second], 1)
        assert ask(refused, BIG[1000:]).status == 503
        assert closed_by_relay(refused) == b""
    # The one that was being read left mid-body, without its answer.
    with client_for(relay) as client:
        wait_until(lambda: client.post("/sense", content=BIG).status_code == 200)
        assert [e["ocr"] for e in client.get("/sense").json()["events"]] == ["big"]
