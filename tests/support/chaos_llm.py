"""The chaos drills' LLM drill: :class:`LLMDrill` walks the fake LLM's fault modes, each
under a model name of its own, while the load of :mod:`tests.support.chaos` runs, and reads
what each mode met from the relay's own counters."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections import Counter

import httpx

from tests.support.chaos import REQUEST_TIMEOUT_S
from transport.agent.fake_llm import MODES

LLM_FAULTS = tuple(m for m in MODES if m != "ok")
SLOW_DELAY_S = 1.0

_REQUESTS = re.compile(r'relay_llm_requests_total\{model="drill/([^"]+)",outcome="(\w+)"\} (\S+)')


class LLMDrill(threading.Thread):
    """Gives each mode of the fake LLM a model of its own (``drill/<mode>``), then points the
    relay at each fault mode's model in turn until one request to it ended (or ``visit_s``),
    and at ``drill/ok``'s until one was answered. A fault mode's model faults one request a
    visit and answers the next ones: however late the drill sees that request end (the load
    makes it late), the relay's next tick succeeds, so three failures in a row never open the
    circuit breaker and leave the modes after it unvisited. From ``start_at`` until
    ``until``, ``rounds`` times at most. The relay's own counters
    (``relay_llm_requests_total`` by model) say what each mode met.
    """

    def __init__(
        self,
        llm_url: str,
        relay_url: str,
        start_at: float,
        until: float,
        *,
        visit_s: float = 10.0,
        rounds: float = float("inf"),
    ) -> None:
        super().__init__(name="llm-drill", daemon=True)
        self.llm_url, self.relay_url = llm_url, relay_url
        self.start_at, self.until = start_at, until
        self.visit_s, self.rounds, self.stop = visit_s, rounds, threading.Event()
        self.modes: Counter[str] = Counter()
        """Modes set (answered 200)."""
        self.visits: Counter[str] = Counter()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with httpx.Client(timeout=REQUEST_TIMEOUT_S) as client:
                for mode in MODES:
                    body = {"mode": mode, "model": f"drill/{mode}", "delay_s": SLOW_DELAY_S}
                    if client.post(f"{self.llm_url}/_mode", json=body).status_code == 200:
                        self.modes[mode] += 1
                self.stop.wait(max(0.0, self.start_at - time.monotonic()))
                done = 0
                while done < self.rounds and not self._over():
                    for mode in LLM_FAULTS:
                        self._visit(client, mode, ("ok", "error"))
                        self._visit(client, "ok", ("ok",))
                    done += 1
        except BaseException as exc:  # reported by the caller, never lost with the thread
            self.error = exc

    def _over(self) -> bool:
        return self.stop.is_set() or time.monotonic() >= self.until

    def requests(self, client: httpx.Client) -> Counter[tuple[str, str]] | None:
        """The relay's requests to the drill's models by (mode, outcome); None: no answer."""
        try:
            text = client.get(f"{self.relay_url}/metrics").text
        except httpx.HTTPError:
            return None
        return Counter({(m, o): int(float(n)) for m, o, n in _REQUESTS.findall(text)})

    def _visit(self, client: httpx.Client, mode: str, outcomes: tuple[str, ...]) -> None:
        if self._over():
            return
        before = self.requests(client)
        with contextlib.suppress(httpx.HTTPError):
            if mode != "ok":  # one request of this visit faults
                armed = {"mode": mode, "model": f"drill/{mode}", "times": 1}
                client.post(f"{self.llm_url}/_mode", json=armed)
            drill = {"model": f"drill/{mode}", "visionModel": f"drill/{mode}"}  # images or not
            client.post(f"{self.relay_url}/agent/config", json=drill)
        self.visits[mode] += 1
        deadline = min(time.monotonic() + self.visit_s, self.until)
        while time.monotonic() < deadline and not self.stop.wait(0.05):
            now = self.requests(client)
            before = before if before is not None else now
            if now and before is not None and sum(now[mode, o] - before[mode, o] for o in outcomes):
                return

    def print(self, requests: Counter[tuple[str, str]] | None) -> None:
        """Visits and the relay's requests per mode (``requests``: :meth:`requests`)."""
        print("\nLLM drill (each fault mode's model until a request ended, then ok's until one")
        print("was answered; requests as the relay counted them, retries included)")
        print(f"  {'mode':18} {'visits':>7} {'answered':>9} {'failed':>7}")
        for mode in (*LLM_FAULTS, "ok"):
            got = requests or Counter()
            print(
                f"  {mode:18} {self.visits[mode]:7d} {got[mode, 'ok']:9d} {got[mode, 'error']:7d}"
            )
        if self.error is not None:
            print(f"  the LLM drill died: {self.error!r}")
