"""The route table agrees with the access rules, which cannot import it (the table names the
handlers, and the handlers' guard applies the rules)."""

from __future__ import annotations

from transport.auth import OPEN_ROUTES, PAGE_ROUTES, STREAM_PATHS
from transport.registry import ROUTE_TABLE


def test_the_routes_that_need_no_token_are_the_open_ones() -> None:
    public = {(r.method, r.path) for r in ROUTE_TABLE if r.public}
    assert public == OPEN_ROUTES | (PAGE_ROUTES - {("GET", "/")})  # "/" upgraded: the token


def test_the_routes_that_take_the_token_as_a_parameter_are_the_streams_and_sockets() -> None:
    assert {r.path for r in ROUTE_TABLE if r.stream or r.socket} == STREAM_PATHS
