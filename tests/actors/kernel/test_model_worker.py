"""The model worker's process: started at the first request, and a worker that ended by
itself counted as a restart however its owner finds out."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from actors.kernel.worker import ModelWorker
from tests.support.observe import wait_until

ECHO = "tests.support.echo_worker"


@pytest.fixture
def worker() -> Iterator[ModelWorker]:
    worker = ModelWorker(ECHO, (), hidden=(), load_timeout_s=30)
    yield worker
    worker.stop()


def test_a_request_starts_the_worker_and_gets_its_answer(worker: ModelWorker) -> None:
    assert (worker.pid, worker.state) == (None, "idle")
    assert worker.ask("hello", hang_s=30) == ("echo", "hello")
    assert worker.pid is not None and worker.state == "ready" and worker.restarts == 0


def test_a_worker_killed_while_idle_is_counted_when_the_next_request_replaces_it(
    worker: ModelWorker,
) -> None:
    """Killed between two requests and gone before the next (the drill's ``crash``, the
    out-of-memory killer): the next request starts another and counts the one that died, as it
    would had it found the worker dying while it waited for the answer."""
    worker.ask("first", hang_s=30)
    first = worker.pid
    worker.drill("crash", 0)
    wait_until(lambda: worker.pid is None, 10, "the killed worker to be gone")
    assert worker.ask("second", hang_s=30) == ("echo", "second")
    assert worker.pid not in (None, first) and worker.restarts == 1


def test_a_worker_killed_while_idle_shows_as_idle_and_counted_before_any_request(
    worker: ModelWorker,
) -> None:
    """What ``/health`` shows of it meanwhile: no worker runs, and the one that died counts."""
    worker.ask("first", hang_s=30)
    worker.drill("crash", 0)
    wait_until(lambda: worker.pid is None, 10, "the killed worker to be gone")
    assert (worker.state, worker.restarts) == ("idle", 1)
    worker.ask("second", hang_s=30)
    assert (worker.state, worker.restarts) == ("ready", 1)  # counted once


def test_a_worker_stopped_by_its_owner_is_no_restart(worker: ModelWorker) -> None:
    worker.ask("first", hang_s=30)
    worker.stop()
    assert worker.ask("second", hang_s=30) == ("echo", "second")
    assert worker.restarts == 0
