"""ListAnswers: answers are reused for the newest snapshot and the same query, within bounds."""

from __future__ import annotations

from collections.abc import Callable

from actors.core.records import FeedSnapshot
from transport.shell.state import ListAnswers


class Builds:
    """Builders that record which answers were built."""

    def __init__(self) -> None:
        self.built: list[bytes] = []

    def of(self, body: bytes) -> Callable[[], bytes]:
        def build() -> bytes:
            self.built.append(body)
            return body

        return build


def snapshot() -> FeedSnapshot:
    return FeedSnapshot(items=(), activity=0)


def test_the_same_snapshot_and_query_are_built_once() -> None:
    answers, builds, snap = ListAnswers(), Builds(), snapshot()
    assert answers.get(snap, 0, builds.of(b"a")) == b"a"
    assert answers.get(snap, 0, builds.of(b"b")) == b"a"
    assert builds.built == [b"a"]


def test_a_new_snapshot_or_another_query_is_a_miss_even_when_equal() -> None:
    answers, builds = ListAnswers(), Builds()
    first, second = snapshot(), snapshot()  # equal, but the second was published later
    assert first == second and first is not second
    answers.get(first, 0, builds.of(b"1"))
    answers.get(first, 5, builds.of(b"2"))
    answers.get(second, 0, builds.of(b"3"))
    assert builds.built == [b"1", b"2", b"3"]
    assert answers.get(second, 0, builds.of(b"never")) == b"3"


def test_a_newer_snapshot_drops_the_answers_of_the_older() -> None:
    answers, builds = ListAnswers(), Builds()
    first, second = snapshot(), snapshot()
    answers.get(first, 0, builds.of(b"old"))
    answers.get(second, 0, builds.of(b"new"))
    assert answers.get(first, 0, builds.of(b"rebuilt")) == b"rebuilt"  # nothing kept for it


def test_no_more_than_the_size_and_the_budget_are_kept() -> None:
    answers, builds, snap = ListAnswers(), Builds(), snapshot()
    for n in range(ListAnswers.SIZE + 1):
        answers.get(snap, n, builds.of(b"%d" % n))
    assert answers.get(snap, ListAnswers.SIZE, builds.of(b"x")) == b"x"  # the ninth was not kept
    assert answers.get(snap, 0, builds.of(b"never")) == b"0"

    big = b"[" + b" " * ListAnswers.BUDGET + b"]"  # a ring of megabyte screen events
    answers, builds = ListAnswers(), Builds()
    assert answers.get(snap, 0, builds.of(big)) == big
    assert answers.get(snap, 0, builds.of(big)) == big
    assert len(builds.built) == 2  # built for each request, never kept


def test_an_answer_built_while_a_newer_snapshot_was_seen_is_not_kept() -> None:
    answers, first, second = ListAnswers(), snapshot(), snapshot()
    assert answers.cached(first, 0) is None
    assert answers.cached(second, 0) is None  # another request saw a newer one meanwhile
    answers.keep(first, 0, b"older")
    assert answers.cached(second, 0) is None
    answers.keep(second, 0, b"newer")
    assert answers.cached(second, 0) == b"newer"
