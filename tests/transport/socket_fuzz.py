"""What the overlay sends on its WebSocket, fuzzed from the document's ``x-messages``: ours.

Schemathesis speaks HTTP only. :func:`socket_frames` is the corpus: each field of each
inbound message set to each ``fieldValues`` entry or left out, the nasty bodies, binary,
oversize and unknown messages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from tests.transport.odd_requests import CORPUS, NASTY_BODIES, Sender
from tests.transport.openapi_contract import Contract, Json, pointer
from tests.transport.overlay_client import BINARY, TEXT, Closed, Feed, OverlayClient, Raw
from transport.overlay.messages import COMMAND_NOTICES, MAX_MESSAGE_BYTES, CommandAction

SOCKET_PATH = "/"
INBOUND = pointer("paths", SOCKET_PATH, "get", "responses", "101", "x-messages", "overlayToRelay")
"""Where the document lists what the overlay may send, by ``type``."""
INBOUND_EXAMPLES: dict[str, dict[str, Json]] = CORPUS["inbound"]
FIELD_VALUES: tuple[Json, ...] = (*CORPUS["fieldValues"], "x" * 5000)
NOTICES = frozenset(COMMAND_NOTICES.values())


@dataclass(frozen=True, slots=True)
class Frame:
    """One message to the overlay socket."""

    data: bytes
    opcode: int = TEXT

    def describe(self) -> str:
        return f"WS {SOCKET_PATH} opcode={self.opcode} {self.data[:300]!r}"


def socket_frames(contract: Contract) -> list[Frame]:
    """The fixed corpus, the same every run."""
    frames = [Frame(body) for body in NASTY_BODIES]
    for kind, example in INBOUND_EXAMPLES.items():
        schema, _ = contract.resolve(contract.at(INBOUND)[kind], INBOUND)
        for name in sorted(set(schema.get("properties", {})) | set(example)):
            frames += [Frame(_dump({**example, name: value})) for value in FIELD_VALUES]
            frames.append(Frame(_dump({k: v for k, v in example.items() if k != name})))
        frames.append(Frame(_dump(example), BINARY))
    padding = "x" * MAX_MESSAGE_BYTES
    return [
        *frames,
        Frame(_dump({**INBOUND_EXAMPLES["message"], "text": padding})),
        Frame(_dump({**INBOUND_EXAMPLES["pong"], "pad": padding})),
        Frame(_dump({"type": "spawn_command", "text": "x"})),
        Frame(_dump({"type": "app_focus", "app": "Code"})),
    ]


def _dump(value: Json) -> bytes:
    """``value`` as JSON, huge numbers and lone surrogates included (as a client may send)."""
    return json.dumps(value).encode("utf-8", "surrogatepass")


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
        self.sender = sender
        self.contract = sender.contract
        self.host, self.port = host, port
        self.inbound: Mapping[str, Any] = self.contract.at(INBOUND)
        self.newest = 0
        """The newest feed id seen."""
        self.last = self._state()
        """What the relay held after the last frame."""
        self.ws = self._open()

    def _open(self) -> OverlayClient:
        ws = OverlayClient(self.host, self.port, SOCKET_PATH, headers=self.sender.auth)
        assert ws.refusal is None, f"the overlay socket was refused: {ws.refusal}"
        return ws

    def __enter__(self) -> SocketFuzzer:
        return self

    def __exit__(self, *_: object) -> None:
        self.ws.close()

    def verdict(self, frame: Frame) -> tuple[str | None, Json]:
        """The inbound type the relay must act on (``None``: it must ignore the frame), and
        the message as the relay parses it."""
        if frame.opcode != TEXT or len(frame.data) > MAX_MESSAGE_BYTES:
            return None, None
        try:
            value = orjson.loads(frame.data)
        except orjson.JSONDecodeError:
            return None, None
        kind = value.get("type") if isinstance(value, dict) else None
        if not isinstance(kind, str) or kind not in self.inbound:
            return None, value
        valid = self.contract.validator(INBOUND + pointer(kind)).is_valid(value)
        return (kind if valid else None), value

    def send(self, frame: Frame) -> None:
        acted, value = self.verdict(frame)
        feed_before, profiling_before, _ = self.last  # only these frames change it
        problems = self._exchange(frame, acted, value)
        self.last = feed_after, profiling_after, health = self._state()
        if acted == "message" and feed_after != feed_before + 1:
            problems.append(f"a valid message was not stored (newest {feed_after})")
        if acted == "profiling":
            shown = profiling_after and [profiling_after[k] for k in ("rssMb", "uptimeS", "ts")]
            if shown != [value[k] for k in ("rssMb", "uptimeS", "ts")]:
                problems.append(f"a valid profiling is not shown: {profiling_after}")
        if acted != "message" and feed_after != feed_before:
            problems.append("the feed changed")
        if acted != "profiling" and profiling_after != profiling_before:
            problems.append("/health.profiling.overlay changed")
        if health != 200:
            problems.append(f"/health answered {health}")
        self.sender.sent += 1
        self.sender.problems += [f"{p} for {frame.describe()}" for p in problems]

    def _state(self) -> tuple[int, Json, int]:
        """The newest feed id, ``/health.profiling.overlay`` and the status of ``/health``."""
        get, auth = self.sender.client.get, self.sender.auth
        health = get("/health", headers=auth)
        newer = get("/feed", params={"after": self.newest}, headers=auth).json()["messages"]
        self.newest = newer[-1]["id"] if newer else self.newest
        return self.newest, health.json()["profiling"]["overlay"], health.status_code

    def _exchange(self, frame: Frame, acted: str | None, value: Json) -> list[str]:
        """Send ``frame`` and a probe; what went wrong (the socket reopened if it closed)."""
        action = value.get("action") if acted == "command" else None
        probe: CommandAction = "toggle_screen" if action != "toggle_screen" else "toggle_audio"
        notices: list[str] = []
        try:
            self.ws.send_frame(frame.opcode, frame.data)
            self.ws.send({"type": "command", "action": probe})
            while True:
                shown = self.ws.read()
                if isinstance(shown, Raw):
                    return [f"the overlay could not parse {shown.text[:200]!r}: {shown.error}"]
                if isinstance(shown, Feed) and shown.text in NOTICES:
                    if shown.text == COMMAND_NOTICES[probe]:
                        break
                    notices.append(shown.text)
        except (Closed, OSError) as exc:
            self.ws.close()
            self.ws = self._open()
            return [f"the socket did not stay open ({exc})"]
        expected = [COMMAND_NOTICES[action]] if action else []
        return [] if notices == expected else [f"notices {notices}, expected {expected}"]
