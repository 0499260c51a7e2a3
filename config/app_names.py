"""The app-name table, and its normalisation: the names capture clients send, as people say them."""

from __future__ import annotations

APP_NAMES: dict[str, str] = {
    "idea": "IntelliJ IDEA",
    "code": "VS Code",
    "code - insiders": "VS Code Insiders",
    "webstorm": "WebStorm",
    "pycharm": "PyCharm",
    "datagrip": "DataGrip",
    "google chrome": "Chrome",
    "firefox": "Firefox",
    "safari": "Safari",
    "telegram lite": "Telegram",
    "telegram": "Telegram",
    "iterm2": "iTerm",
    "terminal": "Terminal",
    "finder": "Finder",
    "audio midi setup": "Audio MIDI Setup",
}
"""Capture clients' process names (lower case) mapped to the names the prompt shows."""


def normalize_app_name(app: str) -> str:
    """Return the display name of ``app``; unknown names pass through unchanged.

    The lookup ignores case and surrounding white space, so ``" Code "`` is ``"VS Code"``.
    """
    return APP_NAMES.get(app.strip().lower(), app)
