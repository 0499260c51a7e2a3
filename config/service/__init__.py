"""``sinain-relay service``: the relay as a service of the user's login, a systemd user unit
on Linux or a launchd agent on macOS, with its settings in a key file only the user reads.
The files' text (:mod:`~config.service.files`), the service managers
(:mod:`~config.service.manager`) and the command (:mod:`~config.service.command`)."""
