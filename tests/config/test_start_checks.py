"""Settings that cannot work stop the start at once, with exit 2 and what to do: a ``file:``
source that is not there, a ``command:`` program not on ``PATH``, the docs' placeholder key."""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from config.common.errors import ConfigError
from config.common.setting_types import check_api_key
from tests.support.harness import relay_env
from tests.support.run_relay import run_to_end

START_S = 10.0
"""The longest a refused start may take (it is a check, not a wait)."""


def start(tmp_path: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    return run_to_end([], relay_env(RELAY_DATA_DIR=str(tmp_path / "data"), **settings), START_S)


def test_a_missing_file_source_stops_the_start_at_once(tmp_path: Path) -> None:
    began = time.monotonic()
    refused = start(tmp_path, AUDIO_SOURCE=f"file:{tmp_path / 'meeting.wav'}")
    assert refused.returncode == 2
    assert f"AUDIO_SOURCE: file:{tmp_path / 'meeting.wav'}" in refused.stderr
    assert "does not exist" in refused.stderr and "give a file" in refused.stderr
    assert not (tmp_path / "data").exists()  # nothing started, nothing created
    assert time.monotonic() - began < START_S


@pytest.mark.slow
def test_a_program_not_on_path_stops_it(tmp_path: Path) -> None:
    missing = start(tmp_path, AUDIO_SOURCE="command:no-such-recorder --raw")
    assert missing.returncode == 2
    assert "AUDIO_SOURCE: command:no-such-recorder is not a program on PATH" in missing.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_stops_it(tmp_path: Path) -> None:
    locked = tmp_path / "locked.wav"
    locked.write_bytes(b"RIFF")
    locked.chmod(0)
    refused = start(tmp_path, MIC_SOURCE=f"file:{locked}")
    assert refused.returncode == 2
    assert "cannot be read" in refused.stderr


@pytest.mark.parametrize("placeholder", ["sk-or-...", "sk-or-v1-...", "<your-key>"])
def test_the_docs_placeholder_key_is_refused(placeholder: str) -> None:
    with pytest.raises(ConfigError, match="OPENROUTER_API_KEY is a placeholder"):
        check_api_key("OPENROUTER_API_KEY", placeholder)
    assert check_api_key("OPENROUTER_API_KEY", "sk-or-v1-0123abcd") == "sk-or-v1-0123abcd"


@pytest.mark.slow
def test_a_relay_given_the_placeholder_does_not_start(tmp_path: Path) -> None:
    refused = start(tmp_path, OPENROUTER_API_KEY="sk-or-...")
    assert refused.returncode == 2
    assert "OPENROUTER_API_KEY is a placeholder" in refused.stderr


# -- the log file --------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_log_file_that_is_a_link_is_refused_and_what_it_points_at_is_left_alone(
    tmp_path: Path,
) -> None:
    shared = tmp_path / "logs"
    shared.mkdir()
    shared.chmod(0o1777)  # a shared log directory: anyone may add an entry, the sticky bit on
    theirs = tmp_path / "theirs.txt"
    theirs.write_text("someone else's file\n")
    theirs.chmod(0o644)
    (shared / "relay.log").symlink_to(theirs)  # planted before the relay starts

    refused = start(tmp_path, RELAY_LOG_FILE=str(shared / "relay.log"))

    assert refused.returncode == 2
    assert "RELAY_LOG_FILE" in refused.stderr and "symbolic link" in refused.stderr
    assert theirs.read_text() == "someone else's file\n"
    assert stat.S_IMODE(theirs.stat().st_mode) == 0o644
    assert not (tmp_path / "data").exists()  # nothing started


@pytest.mark.slow
@pytest.mark.parametrize("mode", [0o777, 0o757])
def test_a_log_directory_others_may_write_is_refused(tmp_path: Path, mode: int) -> None:
    shared = tmp_path / "logs"
    shared.mkdir()
    shared.chmod(mode)  # no sticky bit: anyone may rename relay.log away and put a link there

    refused = start(tmp_path, RELAY_LOG_FILE=str(shared / "relay.log"))

    assert refused.returncode == 2
    assert "RELAY_LOG_FILE" in refused.stderr
    assert f"chmod go-w {shared}" in refused.stderr
    assert not (shared / "relay.log").exists()
