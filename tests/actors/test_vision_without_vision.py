"""A server without vision (a local text model): the screen's images must not cost the HUD.
Real actors over HTTP, the real fake LLM on loopback (mode ``no_vision``: HTTP 400 to a
request carrying images, as a server that reads no images answers), a real JPEG thumbnail."""

from __future__ import annotations

import base64
from collections.abc import Callable

from actors.tree import Relay
from tests.support.actor_calls import tick
from tests.support.day_session import screens
from tests.support.observe import LogSink
from tests.support.posts import jpeg, recorded, screen_event
from tests.support.relay import client_for, relay_settings
from transport.agent.fake_llm import FakeLLM


def test_a_server_that_refuses_images_still_gets_a_text_call_and_the_hud_goes_on(
    make_relay: Callable[..., Relay], logs: LogSink
) -> None:
    with FakeLLM(mode="no_vision") as fake:
        relay = make_relay(relay_settings(fake))
        picture = base64.b64encode(screens()["Terminal"]).decode("ascii")
        body = recorded()[1]
        outcomes = []
        with client_for(relay) as client:
            for n in range(2):  # the picture, then a new text beside it (still in the window)
                shown = {**body, "ocr": f"{body['ocr']}\n$ pytest -q  # run {n}"}
                if n == 0:
                    shown["roi"] = {**body["roi"], "data": picture}
                assert client.post("/sense", json=shown).status_code == 200
                outcomes.append(tick(relay, logs))
            last = client.get("/agent/last").json()
        assert fake.requests[0].images, "the first request carried the picture"
    assert outcomes == ["ok", "ok"]
    assert last["result"]["hud"] == fake.hud


def test_llama_cpp_pythons_500_to_content_parts_is_a_refusal_of_images(
    make_relay: Callable[..., Relay], logs: LogSink
) -> None:
    """llama-cpp-python's server answers ``json_schema`` with a 500 naming ``response_format``,
    and any list of content parts with a 500 that names nothing (``can only concatenate str
    (not "list") to str``): the format steps down with the images, then the images go."""
    with FakeLLM(mode="no_parts_500") as fake:
        relay = make_relay(relay_settings(fake))
        with client_for(relay) as client:
            assert client.post("/sense", json=screen_event("a chart", jpeg(1))).status_code == 200
            assert tick(relay, logs) == "ok"
            (row,) = client.get("/health").json()["agent"]["responseFormats"]
        asked = [
            (r.body.get("response_format", {}).get("type"), bool(r.images)) for r in fake.requests
        ]
    assert asked == [("json_schema", True), ("json_object", True), ("json_object", False)]
    assert (row["level"], row["images"]) == ("json_object", False)
    assert logs.named("tick")[-1]["imagesDropped"] == 1
