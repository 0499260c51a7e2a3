"""The privacy feature, as the HTTP shell takes it: the person in control of what the relay
captures and keeps, at runtime."""

from __future__ import annotations

from actors.core.control_bodies import MAX_PAUSE_MINUTES, PRIVACY_BODY_LIMIT, PrivacyUpdate
from transport.host.feature import HealthSection, Parts
from transport.host.route import Route, ok
from transport.privacy.answers import PrivacyControls, PrivacyHealth
from transport.privacy.handler import get_privacy, post_privacy, read_privacy

PRIVACY = Parts(
    "privacy",
    (
        Route(
            "GET",
            "/privacy",
            get_privacy,
            "The privacy controls: the pause, the exclusions, the retention",
            ok(PrivacyControls, "The controls in force."),
        ),
        Route(
            "POST",
            "/privacy",
            post_privacy,
            "Pause or resume capture, replace the exclusions or the retention",
            ok(PrivacyControls, "The controls in force after the change, as `GET` answers."),
            ("BadRequest", "PayloadTooLarge", "UnsupportedMediaType", "Unavailable"),
            "Any subset of the fields; an unknown field, a wrong type or an invalid title "
            "expression is a 400 that changes nothing. `paused: true` pauses until resumed, "
            f"`pauseMinutes` (at most {MAX_PAUSE_MINUTES}) for that long, `paused: false` "
            "resumes. While paused, `POST /sense` and `POST /feed` answer `dropped: "
            '"paused"` and keep nothing, the relay\'s audio capture stops and no tick runs. '
            "Each change is stored: it outlives a restart, and wins over the environment's "
            "value from then on.",
            body=PrivacyUpdate,
            body_limit=PRIVACY_BODY_LIMIT,
        ),
    ),
    health=(HealthSection("privacy", PrivacyHealth, read_privacy),),
)
