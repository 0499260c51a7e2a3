"""The overlay stand-in (``tests/support/overlay.py``): real WebSockets on a real relay,
drained, closed cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.harness import Server, health, post_many, relay_env, relay_process
from tests.support.observe import wait_until
from tests.support.overlay import overlay_sockets

pytestmark = pytest.mark.slow


def overlays(relay: Server) -> object:
    return health(relay)[1].get("streams", {}).get("overlay")


def test_overlay_sockets_drain_what_the_relay_pushes_and_close_cleanly(tmp_path: Path) -> None:
    with relay_process(str(tmp_path / "data"), tmp_path / "relay.log", relay_env()) as relay:
        with overlay_sockets(relay, 2) as load:
            wait_until(lambda: overlays(relay) == 2, what="two overlay sockets open")
            post_many(relay, 10, 0)
            wait_until(lambda: len(load.received) == 2, what="both sockets read feed items")
        assert load.ended == []
        wait_until(lambda: overlays(relay) == 0, what="both sockets closed")


def test_a_refused_overlay_socket_stops_the_bench(tmp_path: Path) -> None:
    env = relay_env(RELAY_TOKEN="s3cret-token-for-the-bench-test")
    with relay_process(str(tmp_path / "data"), tmp_path / "relay.log", env) as relay:
        refused = pytest.raises(RuntimeError, match=r"overlay socket refused: b'HTTP/1\.1 401")
        with refused, overlay_sockets(relay, 1):
            pass
