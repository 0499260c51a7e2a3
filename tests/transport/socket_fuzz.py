"""What the overlay sends on its WebSocket, fuzzed from the document's ``x-messages``: ours.

Schemathesis speaks HTTP only. :func:`socket_frames` is the corpus: each field of each
inbound message set to each ``fieldValues`` entry or left out, the nasty bodies, binary,
oversize and unknown messages. :class:`SocketFuzzer` sends them and checks what each did.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from tests.transport.odd_requests import CORPUS, NASTY_BODIES, Sender
from tests.transport.openapi_contract import Contract, pointer
from tests.transport.overlay_client import BINARY, TEXT, Closed, Feed, OverlayClient, Raw
from transport.overlay.messages import COMMAND_NOTICES, MAX_MESSAGE_BYTES, CommandAction

SOCKET_PATH = "/"
INBOUND = pointer("paths", SOCKET_PATH, "get", "responses", "101", "x-messages", "overlayToRelay")
"""Where the document lists what the overlay may send, by ``type``."""
FIGURES = ("rssMb", "uptimeS", "ts")
"""What a ``profiling`` message reports, shown as sent in ``/health.profiling.overlay``."""
Frame = tuple[int, bytes]
"""One message to the overlay socket: its opcode and its data."""


def socket_frames(contract: Contract) -> list[Frame]:
    """The fixed corpus, the same every run, in JSON as a client may write it (huge numbers
    and lone surrogates included)."""
    examples: dict[str, dict[str, Any]] = CORPUS["inbound"]
    values, padding = (*CORPUS["fieldValues"], "x" * 5000), "x" * MAX_MESSAGE_BYTES
    messages = [{**examples["message"], "text": padding}, {**examples["pong"], "pad": padding}]
    for kind, example in examples.items():
        schema = contract.resolve(contract.at(INBOUND)[kind])
        for name in sorted(set(schema.get("properties", {})) | set(example)):
            messages += [{**example, name: value} for value in values]
            messages.append({k: v for k, v in example.items() if k != name})
    texts = [json.dumps(m).encode("utf-8", "surrogatepass") for m in messages]
    binary = [(BINARY, json.dumps(example).encode()) for example in examples.values()]
    unknown = [json.dumps(m).encode() for m in CORPUS["unknownInbound"]]
    return [(TEXT, data) for data in (*NASTY_BODIES, *texts, *unknown)] + binary


class SocketFuzzer:
    """Sends frames to one overlay socket and checks what each did.

    After each frame, a ``command`` probe: its answer must come (the socket is open and read
    in order), preceded by one more notice only when the frame was a valid ``command``. What
    the relay holds must change only as the document says: a valid ``message`` stores one
    feed item, a valid ``profiling`` becomes ``/health.profiling.overlay``, anything else
    changes nothing; ``/health`` stays 200. The verdict is the schema's (``x-messages``) on
    the frame as the relay parses it.
    """

    def __init__(self, sender: Sender, host: str, port: int) -> None:
        self.sender, self.contract, self.address = sender, sender.contract, (host, port)
        self.last: tuple[int, Any, int] = (0, None, 200)  # the feed read from its start
        self.last = self._state()
        """What the relay held after the last frame (:meth:`_state`)."""
        self.ws = self._open()

    def _open(self) -> OverlayClient:
        ws = OverlayClient(*self.address, SOCKET_PATH, headers=self.sender.auth)
        assert ws.refusal is None, f"the overlay socket was refused: {ws.refusal}"
        return ws

    def close(self) -> None:
        self.ws.close()

    def verdict(self, opcode: int, data: bytes) -> tuple[str | None, Any]:
        """The inbound type the relay must act on (``None``: it must ignore the frame), and
        the message as the relay parses it."""
        parsed = opcode == TEXT and len(data) <= MAX_MESSAGE_BYTES  # else ignored unread
        try:
            value = orjson.loads(data) if parsed else None
        except orjson.JSONDecodeError:  # no JSON: ignored
            value = None
        kind = value.get("type") if isinstance(value, dict) else None
        if not isinstance(kind, str) or kind not in self.contract.at(INBOUND):
            return None, value
        valid = self.contract.validator(INBOUND + pointer(kind)).is_valid(value)
        return (kind if valid else None), value

    def send(self, frame: Frame) -> None:
        acted, value = self.verdict(*frame)
        feed, profiling, _ = self.last  # only these frames change it
        problems = self._exchange(frame, acted, value)
        self.last = feed_after, profiling_after, health = self._state()
        if feed_after != feed + (acted == "message"):
            problems.append(f"the feed's newest went from {feed} to {feed_after}")
        shown = profiling_after and [profiling_after[k] for k in FIGURES]
        if acted == "profiling" and shown != [value[k] for k in FIGURES]:
            problems.append(f"a valid profiling is not shown: {profiling_after}")
        if acted != "profiling" and profiling_after != profiling:
            problems.append("/health.profiling.overlay changed")
        problems += [f"/health answered {health}"] if health != 200 else []
        what = f"WS {SOCKET_PATH} opcode={frame[0]} {frame[1][:300]!r}"
        self.sender.problems += [f"{p} for {what}" for p in problems]

    def _state(self) -> tuple[int, Any, int]:
        """The newest feed id, ``/health.profiling.overlay`` and the status of ``/health``."""
        get, auth = self.sender.client.get, self.sender.auth
        health = get("/health", headers=auth)
        newer = get("/feed", params={"after": self.last[0]}, headers=auth).json()["messages"]
        newest = newer[-1]["id"] if newer else self.last[0]
        return newest, health.json()["profiling"]["overlay"], health.status_code

    def _exchange(self, frame: Frame, acted: str | None, value: Any) -> list[str]:
        """Send ``frame`` and a probe; what went wrong (the socket reopened if it closed)."""
        action = value.get("action") if acted == "command" else None
        probe: CommandAction = "toggle_screen" if action != "toggle_screen" else "toggle_audio"
        notices: list[str] = []
        try:
            self.ws.send_frame(*frame)
            self.ws.send({"type": "command", "action": probe})
            while True:
                shown = self.ws.read()
                if isinstance(shown, Raw):
                    return [f"the overlay could not parse {shown.text[:200]!r}: {shown.error}"]
                if isinstance(shown, Feed) and shown.text in COMMAND_NOTICES.values():
                    if shown.text == COMMAND_NOTICES[probe]:
                        break
                    notices.append(shown.text)
        except (Closed, OSError) as exc:
            self.ws.close()
            self.ws = self._open()
            return [f"the socket did not stay open ({exc})"]
        expected = [COMMAND_NOTICES[action]] if action else []
        return [] if notices == expected else [f"notices {notices}, expected {expected}"]
