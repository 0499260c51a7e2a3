"""Request headers a client can get wrong: every answer is JSON, a 4xx, and changes nothing.

``Content-Encoding`` (gzip and deflate are read, with the body limit on the decoded size;
any other is a 415), ``Content-Type`` (a body is read as JSON whatever it says; a body that
is not JSON under another type is a 415), ``Expect``, and what aiohttp's HTTP parser refuses
before any route runs (bad lengths, broken chunks, lines too long): JSON too. A client that
leaves mid-body gets no answer and leaves no 5xx behind.
"""

from __future__ import annotations

import gzip
import socket
import time
import zlib
from collections.abc import Callable, Iterator

import httpx
import orjson
import pytest

from actors.core.bodies import FEED_BODY_LIMIT, SENSE_BODY_LIMIT
from actors.tree import Relay
from tests.support.observe import LogSink, rendered_logs, wait_until
from tests.support.relay import assert_error as assert_json_error
from tests.support.relay import client_for
from tests.transport.raw_http import (
    RawAnswer,
    chunked,
    gzip_bomb,
    parse_answers,
    raw_exchange,
    raw_request,
)

FEED = orjson.dumps({"text": "hello"})
ACCEPTED = "gzip, deflate"


@pytest.fixture
def relay(make_relay: Callable[..., Relay]) -> Relay:
    """The agent off (no key): requests alone."""
    return make_relay()


@pytest.fixture
def client(relay: Relay) -> Iterator[httpx.Client]:
    """The shared ``client``, with a 10 s timeout."""
    with client_for(relay, timeout=10) as c:
        yield c


def assert_error(response: httpx.Response | RawAnswer, status: int, fragment: str) -> None:
    """:func:`tests.support.relay.assert_error`, for an answer read off a raw socket too."""
    if isinstance(response, httpx.Response):
        assert_json_error(response, status, fragment)
        return
    assert response.status == status, response
    assert response.is_json, response
    body = orjson.loads(response.body)
    assert body["ok"] is False
    assert fragment in body["error"], body


def feed_texts(client: httpx.Client) -> list[str]:
    return [m["text"] for m in client.get("/feed").json()["messages"]]


def assert_unchanged(client: httpx.Client, texts: list[str]) -> None:
    """Nothing was stored and the relay is healthy."""
    assert feed_texts(client) == texts
    assert client.get("/sense").json()["events"] == []
    assert client.get("/health").status_code == 200


def raw(relay: Relay, data: bytes, **kwargs: object) -> list[RawAnswer]:
    host, port = relay.address()
    return raw_exchange(host, port, data, **kwargs)  # type: ignore[arg-type]


def no_unhandled(logs: LogSink) -> bool:
    return not logs.named("http.unhandled") and not [
        e for e in logs.events if e.get("logger") == "aiohttp.server"
    ]


# -- Content-Encoding -------------------------------------------------------------------------


def raw_deflate(body: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(body) + compressor.flush()


@pytest.mark.parametrize(
    ("encoding", "wire"),
    [
        ("gzip", gzip.compress(FEED, mtime=0)),
        ("x-gzip", gzip.compress(FEED, mtime=0)),
        ("GZip", gzip.compress(FEED, mtime=0)),
        ("deflate", zlib.compress(FEED)),
        ("deflate", raw_deflate(FEED)),
        ("identity", FEED),
        ("gzip, identity", gzip.compress(FEED, mtime=0)),
        ("", FEED),
        (
            "gzip",
            gzip.compress(FEED[:5], mtime=0) + gzip.compress(FEED[5:], mtime=0),
        ),  # two gzip members
    ],
)
def test_a_gzip_or_deflate_body_is_read(client: httpx.Client, encoding: str, wire: bytes) -> None:
    answer = client.post("/feed", content=wire, headers={"Content-Encoding": encoding})
    assert answer.json() == {"ok": True, "id": 1}, answer.text
    assert feed_texts(client) == ["hello"]


def test_a_compressed_sense_event_and_config_are_read(client: httpx.Client) -> None:
    event = {"type": "text", "ts": 1, "ocr": "compressed " * 1000}
    body = gzip.compress(orjson.dumps(event))
    assert client.post("/sense", content=body, headers={"Content-Encoding": "gzip"}).json()["ok"]
    assert client.get("/sense").json()["events"][0]["ocr"] == event["ocr"]
    body = zlib.compress(b'{"intervalMs": 60000}')
    answer = client.post("/agent/config", content=body, headers={"Content-Encoding": "deflate"})
    assert answer.json()["config"]["intervalMs"] == 60000


def test_a_chunked_compressed_body_is_read(client: httpx.Client) -> None:
    wire = gzip.compress(FEED, mtime=0)

    def pieces() -> Iterator[bytes]:
        for i in range(0, len(wire), 3):
            yield wire[i : i + 3]

    answer = client.post("/feed", content=pieces(), headers={"Content-Encoding": "gzip"})
    assert answer.json() == {"ok": True, "id": 1}


@pytest.mark.parametrize(
    ("encoding", "wire", "fragment"),
    [
        ("gzip", FEED, "body is not valid gzip"),
        ("x-gzip", FEED, "body is not valid gzip"),
        ("deflate", FEED, "body is not valid deflate"),
        ("gzip", gzip.compress(FEED, mtime=0)[:-12], "body is not valid gzip"),  # cut short
        ("gzip", gzip.compress(FEED, mtime=0) + b"junk", "body is not valid gzip"),
        ("deflate", zlib.compress(FEED) + b"junk", "body is not valid deflate"),
        ("gzip", zlib.compress(FEED), "body is not valid gzip"),
        ("gzip", gzip.compress(b"{not json", mtime=0), "body is not valid JSON"),
        ("gzip", gzip.compress(b'{"text": "\xff"}', mtime=0), "UTF-8"),
        ("gzip", gzip.compress(b"", mtime=0), "body is empty"),
        ("gzip", b"", "body is empty"),
    ],
)
def test_a_body_that_is_not_what_its_encoding_says_is_a_400(
    client: httpx.Client, logs: LogSink, encoding: str, wire: bytes, fragment: str
) -> None:
    answer = client.post("/feed", content=wire, headers={"Content-Encoding": encoding})
    assert_error(answer, 400, fragment)
    assert_unchanged(client, [])
    assert no_unhandled(logs)


@pytest.mark.parametrize(
    "encoding",
    ["br", "zstd", "compress", "x-compress", "bogus", "gzip, gzip", "gzip, br", "deflate, gzip"],
)
@pytest.mark.parametrize("path", ["/feed", "/sense", "/agent/config"])
def test_an_encoding_the_relay_does_not_read_is_a_415_that_names_those_it_does(
    client: httpx.Client, logs: LogSink, encoding: str, path: str
) -> None:
    before = client.get("/agent/config").json()
    answer = client.post(path, content=FEED, headers={"Content-Encoding": encoding})
    assert_error(answer, 415, "gzip, deflate or identity")
    assert encoding in answer.json()["error"]
    assert answer.headers["Accept-Encoding"] == ACCEPTED
    assert_unchanged(client, [])
    assert client.get("/agent/config").json() == before
    assert no_unhandled(logs)


def test_a_small_gzip_bomb_is_a_413_without_inflating_it(client: httpx.Client) -> None:
    bomb = gzip_bomb(1024)  # 1 GiB of zeros in about 1 MB
    assert len(bomb) < SENSE_BODY_LIMIT
    started = time.perf_counter()
    answer = client.post("/sense", content=bomb, headers={"Content-Encoding": "gzip"})
    assert_error(answer, 413, f"larger than {SENSE_BODY_LIMIT} bytes")
    assert time.perf_counter() - started < 2.0  # inflating it all takes about a second
    assert_error(  # over the feed's limit before it is even inflated
        client.post("/feed", content=bomb, headers={"Content-Encoding": "gzip"}), 413, "larger"
    )
    assert_unchanged(client, [])


def test_the_limit_applies_to_the_decoded_body(client: httpx.Client) -> None:
    fits = orjson.dumps({"text": "x" * (FEED_BODY_LIMIT - 20)})
    over = orjson.dumps({"text": "x" * FEED_BODY_LIMIT})
    headers = {"Content-Encoding": "gzip"}
    assert client.post("/feed", content=gzip.compress(fits), headers=headers).status_code == 200
    assert_error(client.post("/feed", content=gzip.compress(over), headers=headers), 413, "larger")
    assert len(feed_texts(client)) == 1


# -- Content-Type --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "application/json",
        "application/json; charset=utf-8",
        "APPLICATION/JSON",
        "application/vnd.api+json",
        "text/plain",  # what a web page's fetch sends without a preflight
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "application/octet-stream",
        "",
    ],
)
def test_a_json_body_is_read_whatever_the_content_type(
    client: httpx.Client, content_type: str | None
) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    assert client.post("/feed", content=FEED, headers=headers).json() == {"ok": True, "id": 1}


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/x-www-form-urlencoded", b"text=hello&priority=high"),
        ("multipart/form-data; boundary=x", b'--x\r\nContent-Disposition: form-data; name="text"'),
        ("text/plain", b"hello"),
        ("text/plain; charset=utf-8", b'{"text": "cut'),
        ("application/octet-stream", b"\x00\x01\xff"),
        ("text/html", b"<p>hello</p>"),
    ],
)
def test_a_body_of_another_media_type_is_a_415_saying_json_is_expected(
    client: httpx.Client, content_type: str, body: bytes
) -> None:
    answer = client.post("/feed", content=body, headers={"Content-Type": content_type})
    assert_error(answer, 415, "expected a JSON body (Content-Type: application/json)")
    assert "expected 'true'" not in answer.json()["error"]
    assert_unchanged(client, [])


@pytest.mark.parametrize("content_type", [None, "", "application/json", "application/ld+json"])
def test_broken_json_labelled_json_or_unlabelled_is_a_400_that_says_where(
    client: httpx.Client, content_type: str | None
) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    answer = client.post("/feed", content=b'{"text": "cut', headers=headers)
    assert_error(answer, 400, "body is not valid JSON")


def test_a_feed_body_without_text_says_text_is_required(client: httpx.Client) -> None:
    assert_error(client.post("/feed", json={"priority": "high"}), 400, "text is required")
    assert_error(client.post("/feed", json={"text": None}), 400, "text is required")
    assert_error(client.post("/feed", json={"text": 3}), 400, "text must be a string")


# -- Expect ---------------------------------------------------------------------------------


def test_expect_100_continue_gets_the_interim_answer_then_the_answer(relay: Relay) -> None:
    head = raw_request(
        "POST", "/feed", [("Content-Length", str(len(FEED))), ("Expect", "100-continue")]
    )
    host, port = relay.address()
    answers = raw_exchange(host, port, head + FEED)
    assert [a.status for a in answers] == [100, 200]
    assert orjson.loads(answers[-1].body) == {"ok": True, "id": 1}


def test_an_expectation_the_relay_does_not_know_is_a_json_417(
    relay: Relay, client: httpx.Client
) -> None:
    answer = client.post("/feed", content=FEED, headers={"Expect": "something-else"})
    assert_error(answer, 417, "100-continue")
    assert_error(client.get("/health", headers={"Expect": "x"}), 417, "100-continue")
    assert_unchanged(client, [])


# -- what the HTTP parser refuses ---------------------------------------------------------


def _feed_request(headers: list[tuple[str, str]], body: bytes = FEED) -> bytes:
    return raw_request("POST", "/feed", headers, body)


LENGTH = str(len(FEED))
PARSER_REFUSALS = {
    "two lengths": _feed_request([("Content-Length", LENGTH), ("Content-Length", LENGTH)]),
    "two different lengths": _feed_request([("Content-Length", LENGTH), ("Content-Length", "3")]),
    "length not a number": _feed_request([("Content-Length", "abc")]),
    "negative length": _feed_request([("Content-Length", "-1")]),
    "length with a sign": _feed_request([("Content-Length", "+" + LENGTH)]),
    "length list": _feed_request([("Content-Length", f"{LENGTH}, {LENGTH}")]),
    "length overflow": _feed_request([("Content-Length", "9" * 30)]),
    "length and chunked": _feed_request(
        [("Content-Length", LENGTH), ("Transfer-Encoding", "chunked")], chunked(FEED)
    ),
    "transfer-encoding gzip": _feed_request([("Transfer-Encoding", "gzip")]),
    "bad chunk size": _feed_request([("Transfer-Encoding", "chunked")], b"zz\r\n" + FEED),
    "header too long": _feed_request([("X-Long", "a" * 9000), ("Content-Length", LENGTH)]),
    "too many headers": _feed_request([(f"X-{n}", "v") for n in range(200)]),
    "header without colon": b"POST /feed HTTP/1.1\r\nHost relay\r\n\r\n",
    "NUL in a header": b"GET /health HTTP/1.1\r\nHost: a\x00b\r\n\r\n",
    "no Host": raw_request("GET", "/health", host=None),
    "bare LF": b"GET /health HTTP/1.1\nHost: relay\n\n",
    "garbage": b"GARBAGE\r\n\r\n",
    "bad method": b"G@T /health HTTP/1.1\r\nHost: relay\r\n\r\n",
    "TLS hello": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(40),
    "request target *": raw_request("GET", "*"),
}


@pytest.mark.parametrize("name", sorted(PARSER_REFUSALS))
def test_what_the_http_parser_refuses_is_a_json_400(
    relay: Relay, client: httpx.Client, logs: LogSink, name: str
) -> None:
    (answer,) = raw(relay, PARSER_REFUSALS[name])
    assert_error(answer, 400, "malformed HTTP request")
    assert_unchanged(client, [])
    assert [e["level"] for e in logs.named("http.malformed")] in (["info"], ["debug"])
    assert not [e for e in logs.events if e.get("logger") == "aiohttp.server"]


def test_the_parser_refusals_do_not_echo_what_was_sent(relay: Relay) -> None:
    secret = "Bearer s3cret\x00"
    (answer,) = raw(relay, _feed_request([("Authorization", secret)]))
    assert_error(answer, 400, "malformed HTTP request")
    assert b"s3cret" not in answer.body


def test_request_targets_that_are_no_path(relay: Relay, client: httpx.Client) -> None:
    (options,) = raw(relay, raw_request("OPTIONS", "*"))  # the whole server's OPTIONS
    assert options.status == 204
    assert options.body == b""
    (star,) = raw(relay, raw_request("GET", "*"))
    assert_error(star, 400, "malformed HTTP request: the request target is not a valid URL")
    # CONNECT's target is no path at all: aiohttp's router answers it with its own plain-text
    # 404 before any resource is asked (documented in the OpenAPI description).
    (connect,) = raw(relay, raw_request("CONNECT", "example.com:443"))
    assert connect.status == 404
    assert_unchanged(client, [])


def test_a_broken_chunk_after_the_headers_stores_nothing_and_is_no_500(
    relay: Relay, client: httpx.Client, logs: LogSink
) -> None:
    """aiohttp's parser queues its 400 behind the request being read, whose body then never
    ends: the client waits (here 0.3 s) and leaves; the request ends as a 400."""
    host, port = relay.address()
    head = _feed_request([("Transfer-Encoding", "chunked")], b"")
    with socket.create_connection((host, port), timeout=0.3) as conn:
        conn.sendall(head + b'5\r\n{"tex\r\n')
        time.sleep(0.2)  # the handler is reading the body by now
        conn.sendall(b"zz\r\n")
        data = b""
        try:
            while chunk := conn.recv(65536):
                data += chunk
        except TimeoutError:
            pass
    assert all(a.is_json and 400 <= a.status < 500 for a in parse_answers(data))
    wait_until(lambda: logs.named("http.request"), what="the request to end")
    assert logs.named("http.request")[0]["status"] == 400
    assert_unchanged(client, [])
    assert no_unhandled(logs)


@pytest.mark.parametrize("then", ["close", "reset", "half-close"])
def test_a_client_that_leaves_mid_body_leaves_nothing_behind(
    relay: Relay, client: httpx.Client, logs: LogSink, then: str
) -> None:
    data = _feed_request([("Content-Length", "100")], FEED)  # 100 announced, 14 sent
    answers = raw(relay, data, then=then, timeout_s=0.5)
    assert all(a.status < 500 and a.is_json for a in answers)
    wait_until(lambda: logs.named("http.request"), what="the request to end")
    (line,) = logs.named("http.request")
    assert line["status"] == 400
    assert "connection closed" in line["error"]
    assert_unchanged(client, [])
    assert no_unhandled(logs)
    metrics = client.get("/metrics").text
    assert 'status="5' not in metrics


def test_a_content_length_shorter_than_the_body_is_a_json_400(
    relay: Relay, client: httpx.Client
) -> None:
    # '{"tex' is the body; the rest, in the same packet, is no request: aiohttp's parser
    # refuses the packet, the request before it included.
    data = _feed_request([("Content-Length", "5")]) + b"\r\n\r\n"
    answers = raw(relay, data, answers=2, timeout_s=0.5)
    assert answers
    for answer in answers:
        assert_error(answer, 400, "")
    assert_unchanged(client, [])


# -- bytes that are not UTF-8 ---------------------------------------------------------------

NOT_UTF8 = "\xff\xfe"
"""Two bytes no UTF-8 text has (``raw_request`` writes each character as one byte)."""
HEADER_BYTES: dict[str, tuple[bytes, int]] = {
    "Origin": (
        _feed_request([("Origin", f"http://app{NOT_UTF8}.test"), ("Content-Length", LENGTH)]),
        400,
    ),
    "Content-Type of a body that is not JSON": (
        _feed_request(
            [("Content-Type", f"text/{NOT_UTF8}plain"), ("Content-Length", "5")], b"hello"
        ),
        400,
    ),
    "Content-Type of a JSON body": (
        _feed_request([("Content-Type", f"{NOT_UTF8}/json"), ("Content-Length", LENGTH)]),
        200,
    ),
    "Content-Encoding": (
        _feed_request([("Content-Encoding", NOT_UTF8), ("Content-Length", LENGTH)]),
        415,
    ),
    "Expect": (_feed_request([("Expect", NOT_UTF8), ("Content-Length", LENGTH)]), 417),
    "Authorization": (
        _feed_request([("Authorization", f"Bearer {NOT_UTF8}"), ("Content-Length", LENGTH)]),
        200,
    ),
    "Host": (raw_request("GET", "/health", [("Host", NOT_UTF8)], host=None), 421),
    "User-Agent": (raw_request("GET", "/health", [("User-Agent", NOT_UTF8)]), 200),
    "Last-Event-ID": (raw_request("GET", "/agent/stream", [("Last-Event-ID", NOT_UTF8)]), 400),
}
"""A request with bytes that are not UTF-8 in one header, and the status it is due."""


@pytest.mark.parametrize("name", list(HEADER_BYTES))
def test_a_header_that_is_not_utf8_gets_a_json_answer_and_one_log_line(
    relay: Relay, client: httpx.Client, capfd: pytest.CaptureFixture[str], name: str
) -> None:
    data, status = HEADER_BYTES[name]
    with rendered_logs() as log:
        (answer,) = raw(relay, data)
        if status >= 400:
            wait_until(log.getvalue, what="the request's log line")
        lines = [orjson.loads(line) for line in log.getvalue().splitlines()]
    assert answer.status == status, answer
    assert answer.is_json, answer
    assert orjson.loads(answer.body)["ok"] is (status == 200)
    assert [line["event"] for line in lines] == (["http.request"] if status >= 400 else [])
    assert all(line.get("status") == status for line in lines), lines
    assert capfd.readouterr().err == ""
    if status >= 400:
        assert_unchanged(client, [])


def test_header_bytes_that_are_not_utf8_are_a_400_that_says_which_header(relay: Relay) -> None:
    (origin,) = raw(relay, HEADER_BYTES["Origin"][0])
    assert_error(origin, 400, "Origin")
    (media,) = raw(relay, HEADER_BYTES["Content-Type of a body that is not JSON"][0])
    assert_error(media, 400, "Content-Type")
