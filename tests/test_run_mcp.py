"""``python run.py mcp`` beside the relay: the relay process never loads the MCP SDK, and the
subcommand says how to install it when it is missing."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from tests.support import harness
from tests.support.harness import ROOT

pytestmark = pytest.mark.slow

RELAY_WITHOUT_MCP = """
import sys
import run
from actors.kernel.clock import SystemClock
from actors.tree import start_relay
from config.settings import Settings
from transport.frontend import HttpFrontend

settings = Settings(port=0, data_dir=":memory:")
relay = start_relay(settings, SystemClock(), frontend=HttpFrontend(settings))
try:
    print("relay loaded:", [m for m in sys.modules if m.partition(".")[0] == "mcp"])
finally:
    relay.stop(timeout_s=10)
import transport.mcp.server  # what the mcp subcommand loads: the check sees it
print("mcp loaded:", "mcp.server.mcpserver" in sys.modules)
"""

WITHOUT_THE_SDK = """
import sys
sys.modules["mcp"] = None  # as if the extra were not installed
import run
sys.exit(run.main(["mcp"]))
"""


def python(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=30, check=False
    )


def test_importing_run_and_starting_a_relay_does_not_load_mcp() -> None:
    done = python("-c", RELAY_WITHOUT_MCP)
    assert done.returncode == 0, done.stderr
    assert "relay loaded: []" in done.stdout.splitlines()
    assert "mcp loaded: True" in done.stdout.splitlines()


def test_mcp_without_the_sdk_says_how_to_install_it() -> None:
    done = python("-c", WITHOUT_THE_SDK)
    assert done.returncode == 2
    assert "the MCP server's dependency 'mcp' is not installed" in done.stderr
    assert "pip install -e '.[mcp]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_mcp_help_names_its_flags() -> None:
    done = python("run.py", "mcp", "--help")
    assert done.returncode == 0
    for flag in ("--url", "--http", "--port"):
        assert flag in done.stdout


def test_mcp_http_on_a_taken_port_fails_with_one_line() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = python("run.py", "mcp", "--http", "--port", str(port))
    assert done.returncode == 1
    (line,) = [json.loads(line) for line in done.stderr.splitlines() if "start_failed" in line]
    assert line["event"] == "mcp.start_failed"
    assert line["error"].startswith(f"cannot listen on 127.0.0.1:{port}: ")


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (["--url", "127.0.0.1:18791"], {}, "--url must be an http:// or https:// URL"),
        (["--port", "70000"], {}, "--port must be from 0 to 65535"),
        ([], {"RELAY_PORT": "eighty"}, "RELAY_PORT"),
    ],
)
def test_mcp_refuses_an_invalid_flag_or_setting(
    args: list[str], env: dict[str, str], said: str
) -> None:
    done = subprocess.run(
        [sys.executable, "run.py", "mcp", *args],
        cwd=ROOT,
        env=harness.relay_env(**env),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert said in done.stderr
    assert "Traceback" not in done.stderr
