"""The route table agrees with the access rules, which cannot import it (the table names the
handlers, and the handlers' guard applies the rules)."""

from __future__ import annotations

import orjson

from transport.openapi import openapi_json
from transport.registry import ROUTE_TABLE
from transport.shell.auth import OPEN_ROUTES, PAGE_ROUTES, STREAM_PATHS


def test_the_routes_that_need_no_token_are_the_open_ones() -> None:
    public = {(r.method, r.path) for r in ROUTE_TABLE if r.public}
    assert public == OPEN_ROUTES | (PAGE_ROUTES - {("GET", "/")})  # "/" upgraded: the token


def test_the_routes_that_take_the_token_as_a_parameter_are_the_streams_and_sockets() -> None:
    assert {r.path for r in ROUTE_TABLE if r.stream or r.socket} == STREAM_PATHS


def test_a_parameter_the_relay_refuses_a_request_without_is_documented_as_required() -> None:
    document = orjson.loads(openapi_json())
    (action,) = document["paths"]["/overlay/command"]["post"]["parameters"]
    assert (action["name"], action["required"]) == ("action", True)
    others = [
        param
        for path in document["paths"].values()
        for operation in path.values()
        for param in operation.get("parameters", [])
        if param.get("required") and param["name"] != "action"
    ]
    assert others == []  # every other parameter may be left out
