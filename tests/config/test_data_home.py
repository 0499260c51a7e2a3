"""Where the state goes without ``--data-dir``: the platform's data home, or the old place
while it holds state; and an installed relay keeps nothing inside its environment."""

from __future__ import annotations

import os
import shutil
import signal
import site as sitelib
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from config import data_home
from tests.support.harness import ROOT, free_port, relay_env
from tests.support.run_relay import wait_healthy


def test_the_data_home_is_the_users_data_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(data_home, "OLD_PLACE", tmp_path / "checkout" / "data")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    if sys.platform == "linux":
        assert data_home.data_dir("") == str(tmp_path / "share" / "sinain-relay")
    assert data_home.data_dir("/given") == "/given"
    assert data_home.old_place_note("") is None


def test_state_in_the_old_place_is_used_and_the_move_is_said(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    old = tmp_path / "checkout" / "data"
    old.mkdir(parents=True)
    (old / "agent.db").write_bytes(b"")
    monkeypatch.setattr(data_home, "OLD_PLACE", old)
    assert data_home.data_dir("") == str(old)
    note = data_home.old_place_note("")
    assert note is not None and f"mv {old} {data_home.data_home()}" in note
    assert f"RELAY_DATA_DIR={old}" in note
    assert data_home.old_place_note(str(old)) is None  # chosen: nothing to say


@pytest.mark.slow
def test_an_installed_relay_keeps_its_state_in_the_home_and_none_in_its_environment(
    tmp_path: Path,
) -> None:
    """A plain (not editable) install into a new virtual environment, run with ``HOME`` in a
    temporary directory: its data directory is that home's, and the environment holds only
    the packages."""
    source = tmp_path / "source"  # pip builds in the tree it is given: a copy, not the checkout
    skipped = shutil.ignore_patterns(".*", "build", "*.egg-info", "__pycache__", "data", "tests")
    shutil.copytree(ROOT, source, ignore=skipped)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    (site,) = (env_dir / "lib").glob("python3*/site-packages")
    _share_dependencies(site)
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    built = subprocess.run(
        [*install, "--no-deps", str(source)],  # its build backend from the index, as a user's
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    home = tmp_path / "home"
    environ = {k: v for k, v in relay_env().items() if not k.startswith("XDG_")}
    environ |= {"HOME": str(home), "PYTHONPATH": ""}
    where = subprocess.run(
        [str(env_dir / "bin" / "sinain-relay"), "data-dir"],
        capture_output=True, text=True, env=environ, cwd=tmp_path, timeout=60, check=True,
    )  # fmt: skip
    expected = home / ".local" / "share" / "sinain-relay"
    if sys.platform == "darwin":
        expected = home / "Library" / "Application Support" / "sinain-relay"
    assert where.stdout.strip() == str(expected)
    port = free_port()
    relay = subprocess.Popen(
        [str(env_dir / "bin" / "sinain-relay"), "--port", str(port)],
        env=environ,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_healthy(port, relay)
    finally:
        relay.send_signal(signal.SIGINT)
        relay.wait(timeout=20)
    assert (expected / "agent.db").is_file() and (expected / "feed.db").is_file()
    assert {p.name for p in site.iterdir() if p.is_dir()} >= {"actors", "transport", "config"}
    found = subprocess.run(
        [str(python), "-c", "import actors, config, transport, pykka; print(actors.__file__)"],
        capture_output=True, text=True, env=environ, cwd=tmp_path, timeout=60, check=True,
    )  # fmt: skip
    assert found.stdout.startswith(str(site)), found.stdout  # its own copy, not the checkout
    assert not (site / "data").exists()
    assert not list(site.rglob("*.db")), "state inside the environment"
    assert os.path.dirname(str(expected)).startswith(str(home))


def _share_dependencies(site: Path) -> None:
    """The new environment's ``site-packages`` made to also find the packages this test runs
    with (the relay's dependencies), after its own: a ``.pth`` file naming their directories.
    Its own install of the relay comes first, and only its own: the directories' ``.pth``
    files (an editable install's among them) are not read.

    Not ``--system-site-packages``: that shares the base interpreter's packages, which are
    not these when the tests run in a virtual environment."""
    shared = [p for p in (*sitelib.getsitepackages(), sitelib.getusersitepackages()) if p]
    (site / "_test_shared_dependencies.pth").write_text("\n".join(shared) + "\n")
