"""The options of the relay: every setting, as the fields of
:class:`~config.settings.Settings` and its sections declare them (:mod:`config.option`).

``--help`` and the configuration document state each default from its field, so each is
written once. Reading a value: :func:`config.common.setting_types.decode`; reading the environment
and the flags: :mod:`config.command_line`.
"""

from __future__ import annotations

from config.option import Option, Section, options_of, sections_of
from config.settings import Settings

SECTIONS: tuple[Section, ...] = sections_of(Settings)
"""The settings themselves, then their sections (the agent's, the audio feature's)."""
OPTIONS: tuple[Option, ...] = tuple(o for section in SECTIONS for o in options_of(section))
"""Every setting, in the order ``--help`` lists them."""

SECRET_VARIABLES = frozenset(option.env for option in OPTIONS if option.secret)
"""The environment variables that hold a secret (the LLM key, the speech service's key,
``RELAY_TOKEN``): kept from the programs the relay starts."""
