"""What the access rules (``transport/shell/auth.py``) cost a request: a guarded route and each
of its checks, timed on an aiohttp mocked request with a capture client's headers, driven without an
event loop. docs/benchmarks.md says what each column holds.
"""

from __future__ import annotations

import argparse
from typing import Any

import orjson
from aiohttp import hdrs, web
from aiohttp.test_utils import make_mocked_request

from bench.figures import Table
from bench.runner import flags
from bench.stats import best_us
from tests.support.harness import drive
from transport.shell.auth import Access
from transport.shell.guard import guarded
from transport.shell.metrics import HttpStats, RouteStats

TOKEN = "0123456789abcdef" * 4
ORIGIN = "http://localhost:5173"
CLIENT_HEADERS = {
    "Host": "127.0.0.1:18791",
    "User-Agent": "python-httpx/0.28.1",
    "Accept": "*/*",
    "Accept-Encoding": "gzip, deflate",
    "Connection": "keep-alive",
    "Content-Type": "application/json",
    "Content-Length": "40",
}
OLD_CORS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Content-Type, Authorization, Last-Event-ID",
}
BEARER = {"Authorization": f"Bearer {TOKEN}"}
CASES: tuple[tuple[str, str, tuple[str, ...], dict[str, str]], ...] = (
    ("no token, no origins (default)", "", (), {}),
    ("token, header sent", TOKEN, (), BEARER),
    ("token + allowed origin", TOKEN, (ORIGIN,), {**BEARER, "Origin": ORIGIN}),
)
ANSWER = web.Response(body=b'{"ok":true,"id":1}', content_type="application/json")


class Arrived:
    """The transport of a connection that arrived at the relay's default address."""

    def get_extra_info(self, name: str, default: object = None) -> object:
        return ("127.0.0.1", 18791) if name == "sockname" else default


async def handler(_request: web.Request) -> web.StreamResponse:
    return ANSWER


def route(
    access: Access, stats: RouteStats, headers: dict[str, str], arrived: bool = True
) -> tuple[Any, web.Request]:
    """A guarded ``POST /feed`` around :func:`handler`, and a request for it (``arrived``: on a
    connection to the relay's default address)."""
    admit = access.gate("POST", "/feed")
    where: dict[str, Any] = {"transport": Arrived()} if arrived else {}
    request = make_mocked_request("POST", "/feed", headers=headers, **where)
    return guarded(handler, trace=False, access=access, admit=admit, stats=stats), request


OPTIONS = flags(number=(int, 200_000, "calls per run"))


def run(args: argparse.Namespace) -> int:
    number = args.number
    table = Table("case <34|host >6.3f|rules >7.3f|guard >7.3f|handler >8.3f|guard-handler >14.3f")
    print(table.line(*table.heads) + "  (us)")
    for name, token, origins, extra in CASES:
        access = Access(token, origins)
        stats = HttpStats().route("POST", "/feed")
        route_, request = route(access, stats, {**CLIENT_HEADERS, **extra})
        admit = access.gate("POST", "/feed")
        access.check_host(request)  # the first request on the address teaches it its port

        def host(access: Access = access, request: web.Request = request) -> None:
            if request.headers.get(hdrs.HOST) not in access.hosts:
                access.check_host(request)

        def rules(access: Access = access, request: web.Request = request) -> None:
            if request.headers.get(hdrs.HOST) not in access.hosts:
                access.check_host(request)
            admit(request, access.cors(request))  # noqa: B023 - used at once

        host_us, rules_us = best_us(host, number), best_us(rules, number)
        guard_us = best_us(lambda: drive(route_, request), number)  # noqa: B023 - used at once
        handler_us = best_us(lambda: drive(handler, request), number)  # noqa: B023
        table.row(name, host_us, rules_us, guard_us, handler_us, guard_us - handler_us)
    body, kind = {"ok": True, "id": 12345}, "application/json"
    old = best_us(
        lambda: web.Response(body=orjson.dumps(body), content_type=kind, headers=OLD_CORS), number
    )
    new = best_us(lambda: web.Response(body=orjson.dumps(body), content_type=kind), number)
    print(f"response with the old CORS headers {old:.3f} us, without {new:.3f} us")
    return 0
