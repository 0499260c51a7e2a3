"""Settings from the environment and the command line, the app-name table, logging set-up.

Nothing here exits the process: a caller decides what an invalid setting means.
"""

from config.app_names import APP_NAMES, normalize_app_name
from config.command_line import build_parser, load_settings
from config.logs import configure_logging
from config.settings import AgentConfig, ConfigError, Settings

__all__ = [
    "APP_NAMES",
    "AgentConfig",
    "ConfigError",
    "Settings",
    "build_parser",
    "configure_logging",
    "load_settings",
    "normalize_app_name",
]
