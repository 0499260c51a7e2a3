"""The error of a setting the relay cannot take (:class:`ConfigError`)."""

from __future__ import annotations


class ConfigError(ValueError):
    """A setting is invalid; the message says which and why."""
