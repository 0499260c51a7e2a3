"""``/health``'s struct is made from the features served: the relay's fields around each
feature's sections, in the registry's order."""

from __future__ import annotations

from actors.core.shapes import Shape
from transport.handlers.health_answers import health_shape
from transport.host.feature import HealthSection, Parts, Reading
from transport.registry import ROUTE_TABLE
from transport.shell.bridge import Asker
from transport.shell.state import Peers


async def _seven(peers: Peers, ask: Asker, *, private: bool) -> Reading:
    return Reading(7)


def _served_health() -> type[Shape]:
    (route,) = [r for r in ROUTE_TABLE if r.path == "/health"]
    shape: type[Shape] = route.answers["200"].type
    return shape


def test_the_served_health_is_the_relays_fields_around_the_features_sections() -> None:
    assert _served_health().__struct_fields__ == (
        "ok",
        "error",
        "epoch",
        "messages",
        "sense_events",
        "agent",
        "audio",
        "privacy",
        "actors",
        "checks",
        "storage",
        "streams",
        "profiling",
    )


def test_a_features_section_joins_health_after_the_relays_head() -> None:
    feature = Parts("extra", health=(HealthSection("extra_count", int, _seven),))
    shape = health_shape((feature,))
    assert shape.__struct_fields__[3] == "extra_count"
    assert shape.__name__ == "Health"
    assert shape.__doc__ == _served_health().__doc__
