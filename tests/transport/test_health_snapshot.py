"""``/health`` is a short-lived snapshot that concurrent requests share."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from transport.routes import HEALTH_MAX_AGE_S, HealthSnapshot


class Sweeps:
    """A sweep that counts its runs and finishes when the test says so."""

    def __init__(self) -> None:
        self.runs = 0
        self.release: asyncio.Event | None = None

    async def __call__(self, _request: Any) -> tuple[int, bytes]:
        self.runs += 1
        if self.release is not None:
            await self.release.wait()
        return 200, f"sweep {self.runs}".encode()


def test_concurrent_requests_share_one_sweep_until_the_snapshot_ages() -> None:
    sweeps = Sweeps()
    now = [0.0]
    snapshot = HealthSnapshot(sweeps, now=lambda: now[0])

    async def go() -> list[Any]:
        sweeps.release = asyncio.Event()
        waiting = [asyncio.ensure_future(snapshot.get(None)) for _ in range(20)]  # type: ignore[arg-type]
        await asyncio.sleep(0)
        sweeps.release.set()
        first = await asyncio.gather(*waiting)
        sweeps.release = None
        now[0] += HEALTH_MAX_AGE_S / 2
        cached = await snapshot.get(None)  # type: ignore[arg-type]
        now[0] += HEALTH_MAX_AGE_S
        fresh = await snapshot.get(None)  # type: ignore[arg-type]
        return [first, cached, fresh]

    first, cached, fresh = asyncio.run(go())
    assert first == [(200, b"sweep 1")] * 20
    assert cached == (200, b"sweep 1")
    assert fresh == (200, b"sweep 2")
    assert sweeps.runs == 2


def test_a_failed_sweep_is_not_cached() -> None:
    runs = []

    async def failing(_request: Any) -> tuple[int, bytes]:
        runs.append(1)
        msg = "boom"
        raise RuntimeError(msg)

    snapshot = HealthSnapshot(failing, now=lambda: 0.0)

    async def go() -> None:
        for _ in range(2):
            with pytest.raises(RuntimeError):
                await snapshot.get(None)  # type: ignore[arg-type]

    asyncio.run(go())
    assert len(runs) == 2
