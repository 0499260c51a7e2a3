"""The browser the console's tests drive: the system's Chromium, through Playwright.

``python -m tests.support.browser`` makes sure one is there before the suite runs (the README's
test command runs it): it finds Chromium, or installs Debian's package where it can (as root,
or with a ``sudo`` that asks no password), with a font for the feed's emoji marks. Playwright
cannot download its own browser on every machine, so the tests launch this one by path
(:func:`chromium_path`). Without it the browser tests are skipped, saying why, except in CI
(``CI`` set), where they fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PACKAGES = ("chromium", "fonts-noto-color-emoji")
MISSING = (
    "no Chromium found: install it (Debian, Ubuntu: apt-get install chromium) or set "
    "CHROMIUM to its path"
)


def chromium_path() -> str | None:
    """``CHROMIUM`` if set, else the first of :data:`NAMES` on the ``PATH``."""
    given = os.environ.get("CHROMIUM")
    if given:
        return given
    return next((found for name in NAMES if (found := shutil.which(name))), None)


def _installer() -> list[str] | None:
    """How to run ``apt-get`` here: as root, or through a ``sudo`` that asks nothing."""
    if shutil.which("apt-get") is None:
        return None
    if os.geteuid() == 0:
        return []
    sudo = shutil.which("sudo")
    if sudo and subprocess.run([sudo, "-n", "true"], check=False, capture_output=True).returncode:
        return None
    return [sudo, "-n"] if sudo else None


def ensure() -> int:
    """Find Chromium, or install it; say what happened on stderr. Always 0: the tests say
    what they lack."""
    found = chromium_path()
    if found:
        sys.stderr.write(f"browser tests: Chromium at {found}\n")
        return 0
    prefix = _installer()
    if prefix is None:
        sys.stderr.write(f"browser tests: {MISSING}\n")
        return 0
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    sys.stderr.write("browser tests: installing Chromium with apt-get\n")
    subprocess.run([*prefix, "apt-get", "update", "-qq"], env=env, check=False)
    subprocess.run([*prefix, "apt-get", "install", "-y", "-qq", *PACKAGES], env=env, check=False)
    sys.stderr.write(f"browser tests: Chromium at {chromium_path() or 'nowhere: ' + MISSING}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(ensure())
