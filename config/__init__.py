"""Settings from the environment and the command line, the app-name table, logging set-up.

Nothing here exits the process: a caller decides what an invalid setting means. Import what
you need from the module that defines it (``config.settings``, ``config.agent.settings``,
``config.common.errors``, ``config.command_line``, ``config.logs``, ``config.app_names``): this
package imports nothing, so that reading one setting's module loads no other.
"""
