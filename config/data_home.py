"""Where the relay keeps its state when no ``--data-dir`` (``RELAY_DATA_DIR``) says.

The data home is the platform's directory for a user's application data
(``~/.local/share/sinain-relay`` on Linux, or under ``$XDG_DATA_HOME``;
``~/Library/Application Support/sinain-relay`` on macOS), as ``platformdirs`` names it: never
inside the checkout or the environment the relay is installed into, so an upgrade, a new
checkout or a new virtual environment finds the same data. A relay of an earlier version kept
it in ``data/`` beside ``run.py``; while that directory holds state and no data directory is
set, the relay keeps using it and says how to move it (:func:`old_place_note`).
"""

from __future__ import annotations

from pathlib import Path

import platformdirs

APP_NAME = "sinain-relay"
OLD_PLACE = Path(__file__).resolve().parent.parent / "data"
"""``data/`` beside ``run.py``, where relays before the data home kept their state."""
STATE_FILES = ("feed.db", "sense.db", "agent.db")
"""What makes a directory hold a relay's state."""


def data_home() -> Path:
    """The platform's data directory for the relay (not created here)."""
    return platformdirs.user_data_path(APP_NAME, appauthor=False)


def holds_state(directory: Path) -> bool:
    """Whether ``directory`` holds a relay's databases."""
    return any((directory / name).is_file() for name in STATE_FILES)


def data_dir(given: str) -> str:
    """The data directory to use: ``given`` when set; else the old place while it holds
    state; else the data home."""
    if given:
        return given
    if holds_state(OLD_PLACE):
        return str(OLD_PLACE)
    return str(data_home())


def old_place_note(given: str) -> str | None:
    """How to move the state out of the old place, when :func:`data_dir` chose it; else
    ``None``."""
    if given or not holds_state(OLD_PLACE):
        return None
    home = data_home()
    return (
        f"the state is still in {OLD_PLACE}, inside the checkout: stop the relay, then "
        f"mkdir -p {home.parent} && mv {OLD_PLACE} {home} (or keep it there with "
        f"RELAY_DATA_DIR={OLD_PLACE})"
    )
