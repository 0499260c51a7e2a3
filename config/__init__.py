"""Settings from the environment and the command line, the app-name table, logging set-up."""

from config.app_names import APP_NAMES, normalize_app_name
from config.logs import configure_logging
from config.settings import (
    AgentConfig,
    ConfigError,
    Settings,
    build_parser,
    load_settings,
    settings_or_exit,
)

__all__ = [
    "APP_NAMES",
    "AgentConfig",
    "ConfigError",
    "Settings",
    "build_parser",
    "configure_logging",
    "load_settings",
    "normalize_app_name",
    "settings_or_exit",
]
