"""The log set-up: tracebacks without frame locals, and no configured secret in any line."""

from __future__ import annotations

import io
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
import structlog

from config.common.secrets import remember_secret
from config.logs import configure_logging
from tests.support.redaction_samples import assert_nowhere

KEY = "local-placeholder-key-in-logs"
"""A key in no vendor's format, remembered as configured: only the literal scrub finds it."""
OTHER = "never-configured-but-local"
"""A value that is only ever a local variable: the traceback must not show it."""


@pytest.fixture(params=["json", "console"])
def rendered(request: pytest.FixtureRequest) -> Iterator[io.StringIO]:
    """The lines :func:`configure_logging` writes in the format of the parameter."""
    out = io.StringIO()
    root = logging.getLogger()
    saved = root.handlers[:], root.level, logging.getLogger("pykka").level
    configure_logging(request.param, "debug", stream=out, cache=False)
    remember_secret(KEY)
    yield out
    root.handlers[:], level, pykka_level = saved
    root.setLevel(level)
    logging.getLogger("pykka").setLevel(pykka_level)


def _call_llm(api_key: str, hidden: str) -> None:
    headers = {"Authorization": f"Bearer {api_key}", "X-Other": hidden}
    msg = f"refused with {len(headers)} headers"
    raise RuntimeError(msg)


def _leak(api_key: str) -> None:
    msg = f"the server said: invalid key {api_key}"
    raise RuntimeError(msg)


def test_a_logged_traceback_shows_its_frames_but_no_locals(rendered: io.StringIO) -> None:
    try:
        _call_llm(KEY, OTHER)
    except RuntimeError:
        structlog.get_logger("relay").exception("boom")
    out = rendered.getvalue()
    assert "_call_llm" in out and "refused with 2 headers" in out
    assert_nowhere(OTHER, out)
    assert_nowhere(KEY, out)
    if out.startswith("{"):
        frames = orjson.loads(out)["exception"][0]["frames"]
        assert frames and all("locals" not in frame for frame in frames)


def test_a_standard_library_traceback_shows_no_locals(rendered: io.StringIO) -> None:
    try:
        _call_llm(KEY, OTHER)
    except RuntimeError:
        logging.getLogger("pykka").error("Unhandled exception in LLMCaller:", exc_info=True)
    out = rendered.getvalue()
    assert "_call_llm" in out and "Unhandled exception" in out
    assert_nowhere(OTHER, out)
    assert_nowhere(KEY, out)


def test_a_configured_key_in_an_exception_or_a_field_is_scrubbed(rendered: io.StringIO) -> None:
    log = structlog.get_logger("relay")
    try:
        _leak(KEY)
    except RuntimeError:
        log.exception("boom")
        logging.getLogger("pykka").error("Unhandled exception:", exc_info=True)
    log.warning("tick", errors=[f"model: HTTP 401: {KEY}"], detail={"error": f"no {KEY}"})
    out = rendered.getvalue()
    assert_nowhere(KEY, out)
    assert out.count("[redacted:api-key]") >= 4
    assert "the server said: invalid key" in out


@pytest.mark.parametrize("fmt", ["json", "console"])
def test_a_log_file_takes_every_line_private_and_rotated(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "logs" / "relay.log"
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        configure_logging(fmt, "info", log_file=str(path), max_bytes=400, backups=2, cache=False)
        remember_secret(KEY)
        log = structlog.get_logger("relay")
        for n in range(12):
            log.info("relay.tick", actor="ticker", n=n, note=f"key {KEY}")
        logging.getLogger("aiohttp.server").warning("a library's line")
        log.debug("below the level")
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers[:], level = saved
        root.setLevel(level)
    files = sorted(path.parent.iterdir())
    assert [f.name for f in files] == ["relay.log", "relay.log.1", "relay.log.2"]  # rotated
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    lines = [line for f in files for line in f.read_text().splitlines()]
    assert "a library's line" in path.read_text()
    assert not any("below the level" in line for line in lines)
    assert_nowhere(KEY, "\n".join(lines))
    if fmt == "json":
        events = [orjson.loads(line) for line in lines]
        assert {e["event"] for e in events} == {"relay.tick", "a library's line"}
        assert all("timestamp" in e and "level" in e for e in events)
    else:
        assert all("relay.tick" in line or "a library's line" in line for line in lines)
        assert not any("\x1b[" in line for line in lines)  # no colours in a file


@pytest.mark.parametrize("kind", ["link", "fifo", "hard link"])
def test_a_log_file_that_is_no_file_of_its_own_is_refused_and_left_alone(
    tmp_path: Path, kind: str
) -> None:
    """The file is opened without following a link, then checked to be a regular file of
    the relay's user with one name: what another user put there is not written nor chmodded."""
    target = tmp_path / "theirs.txt"
    target.write_text("theirs\n")
    target.chmod(0o644)
    path = tmp_path / "relay.log"
    if kind == "link":
        path.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        os.link(target, path)
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        with pytest.raises(OSError, match=r"relay\.log"):
            configure_logging("json", "info", log_file=str(path), cache=False)
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
    assert target.read_text() == "theirs\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
