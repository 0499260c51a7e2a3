"""What the access rules (``transport/auth.py``) cost a request, in microseconds.

Run from the repository root::

    python -m bench.bench_auth [--number 200000]

Each figure is the best of 5 ``timeit`` runs, per call, on a request made with aiohttp's
``make_mocked_request`` carrying a capture client's headers. ``guard`` runs a whole guarded
route (:func:`transport.guard.guarded`) around a handler that answers a prebuilt
response, driven without an event loop (the coroutine finishes at its first ``send``);
``handler`` is that handler alone, so ``guard - handler`` is the guard's whole cost (the
metrics' count included).
``host`` is the ``Host`` check alone (the set look-up the guard makes), ``rules`` the access
part only: that look-up, :meth:`Access.cors` and the route's gate. ``response``
builds the JSON answer of ``POST /feed`` with and without three CORS headers
(``Access-Control-Allow-Origin: *`` and the rest) on every answer. It asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import orjson
from aiohttp import hdrs, web
from aiohttp.test_utils import make_mocked_request

from bench.harness import best_us, drive
from transport.auth import Access, Admit
from transport.guard import guarded as _guarded
from transport.metrics import HttpStats

TOKEN = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
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
CASES: tuple[tuple[str, str, tuple[str, ...], dict[str, str]], ...] = (
    ("no token, no origins (default)", "", (), {}),
    ("token, header sent", TOKEN, (), {"Authorization": f"Bearer {TOKEN}"}),
    (
        "token + allowed origin",
        TOKEN,
        (ORIGIN,),
        {"Authorization": f"Bearer {TOKEN}", "Origin": ORIGIN},
    ),
)


class Arrived:
    """The transport of a connection that arrived at the relay's default address."""

    def get_extra_info(self, name: str, default: object = None) -> object:
        return ("127.0.0.1", 18791) if name == "sockname" else default


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200_000, help="calls per run")
    number = parser.parse_args(argv).number
    answer = web.Response(body=b'{"ok":true,"id":1}', content_type="application/json")

    async def handler(_request: web.Request) -> web.StreamResponse:
        return answer

    print(
        f"{'case':34} {'host':>6} {'rules':>7} {'guard':>7} {'handler':>8} "
        f"{'guard-handler':>14}  (us)"
    )
    for name, token, origins, extra in CASES:
        access = Access(token, origins)
        admit = access.gate("POST", "/feed")
        stats = HttpStats().route("POST", "/feed")
        guarded = _guarded(handler, trace=False, access=access, admit=admit, stats=stats)
        request = make_mocked_request(
            "POST", "/feed", headers={**CLIENT_HEADERS, **extra}, transport=Arrived()
        )
        access.check_host(request)  # the first request on the address teaches it its port

        def host(access: Access = access, request: web.Request = request) -> None:
            if request.headers.get(hdrs.HOST) not in access.hosts:
                access.check_host(request)

        def rules(
            access: Access = access, admit: Admit = admit, request: web.Request = request
        ) -> None:
            if request.headers.get(hdrs.HOST) not in access.hosts:
                access.check_host(request)
            admit(request, access.cors(request))

        host_us = best_us(host, number)
        rules_us = best_us(rules, number)
        guard_us = best_us(lambda: drive(guarded, request), number)  # noqa: B023 - used at once
        handler_us = best_us(lambda: drive(handler, request), number)  # noqa: B023
        print(
            f"{name:34} {host_us:6.3f} {rules_us:7.3f} {guard_us:7.3f} {handler_us:8.3f} "
            f"{guard_us - handler_us:14.3f}"
        )

    body = {"ok": True, "id": 12345}
    before = best_us(
        lambda: web.Response(
            body=orjson.dumps(body), content_type="application/json", headers=OLD_CORS
        ),
        number,
    )
    after = best_us(
        lambda: web.Response(body=orjson.dumps(body), content_type="application/json"), number
    )
    print(f"response with the old CORS headers {before:.3f} us, without {after:.3f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
