"""ListAnswers: list answers are reused for the same snapshot and query, never across."""

from __future__ import annotations

from collections.abc import Callable

from actors.records import FeedSnapshot
from transport.routes import ListAnswers


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
    answers.get(second, 0, builds.of(b"2"))
    answers.get(first, 5, builds.of(b"3"))
    assert builds.built == [b"1", b"2", b"3"]
    assert answers.get(second, 0, builds.of(b"never")) == b"2"


def test_the_oldest_entries_go_beyond_the_size() -> None:
    answers, builds, snap = ListAnswers(), Builds(), snapshot()
    for n in range(ListAnswers.SIZE + 1):
        answers.get(snap, n, builds.of(b"%d" % n))
    assert answers.get(snap, ListAnswers.SIZE, builds.of(b"never")) == b"%d" % ListAnswers.SIZE
    assert answers.get(snap, 0, builds.of(b"rebuilt")) == b"rebuilt"  # the oldest went
