"""Group commit: answers wait for the commit, bursts share one, a failed commit is loud."""

from __future__ import annotations

import concurrent.futures
import gc
import queue
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, cast

import pytest

from actors.core.errors import ActorUnavailable
from actors.kernel.base import Call, ChildHandle
from actors.kernel.clock import FakeClock
from actors.kernel.durable import MAX_BATCH, DurableActor
from actors.kernel.published import Published
from actors.kernel.storage import Store
from actors.kernel.supervisor import ChildSpec, Supervisor, abandon
from tests.support.observe import wait_until


class Ledger(DurableActor):
    """A minimal durable actor: one table, and a count of the commits it made."""

    name = "ledger"

    def __init__(
        self,
        *,
        store: Store,
        commits: list[int],
        published: Published[tuple[int, ...]] | None = None,
        threads: list[threading.Thread] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(store=store, **kwargs)
        self._commits = commits
        self._threads = threads if threads is not None else []
        self._published = published or Published(())
        self._rows: list[int] = []

    def restore(self, db: sqlite3.Connection) -> None:
        self._threads.append(threading.current_thread())
        db.execute("CREATE TABLE IF NOT EXISTS ledger (n INTEGER)")
        db.set_trace_callback(lambda sql: self._commits.append(1) if sql == "COMMIT" else None)
        self._rows = [row[0] for row in db.execute("SELECT n FROM ledger ORDER BY n")]

    def committed(self) -> None:
        self._published.publish(tuple(self._rows))

    def add(self, n: int) -> int:
        self._write("INSERT INTO ledger (n) VALUES (?)", (n,))
        self._rows.append(n)
        return n

    def block(self, entered: threading.Event, release: threading.Event) -> None:
        entered.set()
        release.wait(10)

    def break_disk(self) -> None:
        assert self._db is not None
        self._db.close()  # the next statement, the commit, fails as a dead disk would


@pytest.fixture
def store(tmp_path: Any) -> Store:
    return Store(path=str(tmp_path / "ledger.db"))


def committed(store: Store) -> list[int]:
    db = sqlite3.connect(store.path)
    try:
        return [row[0] for row in db.execute("SELECT n FROM ledger ORDER BY n")]
    except sqlite3.OperationalError:
        return []
    finally:
        db.close()


def call(ref: Any, method: str, *args: Any) -> concurrent.futures.Future[Any]:
    reply: concurrent.futures.Future[Any] = concurrent.futures.Future()
    ref.tell(Call(method, args, {}, reply))
    return reply


def test_the_answer_waits_for_the_commit_that_holds_the_write(store: Store) -> None:
    ref = Ledger.start(store=store, commits=[])
    first_in, first_out = threading.Event(), threading.Event()
    second_in, second_out = threading.Event(), threading.Event()
    ref.proxy().block.defer(first_in, first_out)
    reply = call(ref, "add", 1)
    ref.proxy().block.defer(second_in, second_out)  # the flush queues behind this

    first_out.set()
    assert second_in.wait(5)  # the write ran; its commit waits behind the second block
    assert not reply.done()
    assert committed(store) == []

    second_out.set()
    assert reply.result(timeout=5) == 1
    assert committed(store) == [1]


def test_an_abandoned_actor_fails_its_held_answers_and_never_commits_them(store: Store) -> None:
    # A caller waits past its timeout for a write the actor has begun; when the supervisor
    # gives up on the actor as hung, the caller gets its 503 then, and the write is not stored.
    threads: list[threading.Thread] = []
    ref = Ledger.start(store=store, commits=[], threads=threads)
    first_in, first_out = threading.Event(), threading.Event()
    second_in, second_out = threading.Event(), threading.Event()
    ref.proxy().block.defer(first_in, first_out)
    reply = call(ref, "add", 1)
    ref.proxy().block.defer(second_in, second_out)  # the flush queues behind this

    first_out.set()
    assert second_in.wait(5)  # the write ran; its answer waits for the commit
    abandon(ref)
    with pytest.raises(ActorUnavailable, match="hung before its commit"):
        reply.result(timeout=5)
    second_out.set()
    threads[0].join(5)
    assert not threads[0].is_alive()
    assert committed(store) == []


def test_an_abandoned_actor_that_comes_back_lets_go_of_the_database_at_once(
    store: Store, request: pytest.FixtureRequest
) -> None:
    # Abandoned with its transaction open, it held SQLite's write lock after its thread
    # ended, until the garbage collector found it: its successor's writes failed meanwhile.
    gc.disable()  # a collection at the right moment would hide that
    request.addfinalizer(gc.enable)
    threads: list[threading.Thread] = []
    ref = Ledger.start(store=store, commits=[], threads=threads)
    first_in, first_out = threading.Event(), threading.Event()
    second_in, second_out = threading.Event(), threading.Event()
    ref.proxy().block.defer(first_in, first_out)
    call(ref, "add", 1)
    ref.proxy().block.defer(second_in, second_out)
    first_out.set()
    assert second_in.wait(5)  # the write's transaction is open
    abandon(ref)
    second_out.set()  # the hung call returns; the incarnation handles nothing more
    threads[0].join(5)
    assert not threads[0].is_alive()
    successor = Ledger.start(store=store, commits=[])
    try:
        assert successor.proxy().add(2).get(timeout=5) == 2
    finally:
        successor.stop()
    assert committed(store) == [2]


def test_only_committed_state_is_published_and_before_the_answer(store: Store) -> None:
    first = Ledger.start(store=store, commits=[])
    first.proxy().add(7).get(timeout=5)
    first.stop()
    published: Published[tuple[int, ...]] = Published((-1,))
    ref = Ledger.start(store=store, commits=[], published=published)
    ref.proxy().ping().get(timeout=5)
    assert published.value == (7,)  # what it restored
    first_in, first_out = threading.Event(), threading.Event()
    second_in, second_out = threading.Event(), threading.Event()
    ref.proxy().block.defer(first_in, first_out)
    reply = call(ref, "add", 8)
    seen: list[tuple[int, ...]] = []
    reply.add_done_callback(lambda _: seen.append(published.value))
    ref.proxy().block.defer(second_in, second_out)  # the flush queues behind this

    first_out.set()
    assert second_in.wait(5)  # the write ran; its commit waits
    assert published.value == (7,)
    second_out.set()
    assert reply.result(timeout=5) == 8
    assert seen == [(7, 8)]  # published before the answer went out


def test_a_burst_of_writes_shares_one_commit(store: Store) -> None:
    commits: list[int] = []
    ref = Ledger.start(store=store, commits=commits)
    entered, release = threading.Event(), threading.Event()
    ref.proxy().block.defer(entered, release)
    assert entered.wait(5)
    replies = [call(ref, "add", n) for n in range(100)]
    release.set()
    assert [r.result(timeout=5) for r in replies] == list(range(100))
    assert len(commits) == 1
    assert committed(store) == list(range(100))


def test_a_burst_larger_than_the_batch_commits_in_several(store: Store) -> None:
    commits: list[int] = []
    ref = Ledger.start(store=store, commits=commits)
    entered, release = threading.Event(), threading.Event()
    ref.proxy().block.defer(entered, release)
    assert entered.wait(5)
    replies = [call(ref, "add", n) for n in range(MAX_BATCH + 10)]
    release.set()
    for r in replies:
        r.result(timeout=5)
    assert len(commits) == 2


def test_a_full_batch_commits_after_the_call_that_filled_it_not_inside_it(store: Store) -> None:
    """The state published at a commit includes everything the answered calls wrote."""
    published: Published[tuple[int, ...]] = Published(())
    ref = Ledger.start(store=store, commits=[], published=published)
    entered, release = threading.Event(), threading.Event()
    ref.proxy().block.defer(entered, release)
    assert entered.wait(5)
    replies = [call(ref, "add", n) for n in range(MAX_BATCH + 10)]
    seen: dict[int, tuple[int, ...]] = {}

    def note(n: int) -> Callable[[concurrent.futures.Future[Any]], None]:
        def record(_reply: concurrent.futures.Future[Any]) -> None:
            seen.setdefault(n, published.value)  # in the actor's thread, as it answers

        return record

    for n, reply in enumerate(replies):
        reply.add_done_callback(note(n))
    release.set()
    for reply in replies:
        reply.result(timeout=5)
    assert all(n in seen[n] for n in range(MAX_BATCH + 10))
    ref.stop()


def test_a_failed_commit_fails_the_held_answers_and_the_actor_restarts(
    store: Store, clock: FakeClock
) -> None:
    handle: ChildHandle[Ledger] = ChildHandle("ledger")
    published: Published[tuple[int, ...]] = Published(())
    spec = ChildSpec(
        "ledger",
        lambda report: Ledger.start(store=store, commits=[], published=published, report=report),
        handle,
    )
    Supervisor.start(name="test", children=[spec], clock=clock).proxy().ping().get(timeout=5)
    entered, release = threading.Event(), threading.Event()
    handle.tell(Ledger.block, entered, release)
    assert entered.wait(5)
    reply = handle.ask(Ledger.add, 1)
    handle.tell(Ledger.break_disk)  # runs before the flush queued by the write
    release.set()

    with pytest.raises(ActorUnavailable, match="could not store"):
        reply.result(timeout=5)
    wait_until(lambda: handle.restarts == 1 and handle.alive, what="restart")
    assert committed(store) == []
    assert published.value == ()  # the failed write was never visible
    assert handle.ask(Ledger.add, 2).result(timeout=5) == 2
    assert committed(store) == [2]
    assert list(published.value) == [2]  # (a list: mypy narrowed the value above)


def test_a_normal_stop_commits_what_is_pending(store: Store) -> None:
    ref = Ledger.start(store=store, commits=[])
    entered, release = threading.Event(), threading.Event()
    ref.proxy().block.defer(entered, release)
    assert entered.wait(5)
    reply = call(ref, "add", 5)
    stopping = threading.Thread(target=ref.stop)  # queued before the write's flush
    stopping.start()
    inbox = cast("queue.Queue[Any]", ref.actor_inbox)
    wait_until(lambda: inbox.qsize() >= 2, what="the stop to be queued")
    release.set()
    stopping.join(5)
    assert reply.result(timeout=5) == 5
    assert committed(store) == [5]
