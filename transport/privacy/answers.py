"""What the privacy routes answer, and the section of ``/health`` they hold."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from actors.core.exclusion import PrivacyState
from actors.core.shapes import Shape
from config.privacy import Matrix

_PAUSED = "`true` while capture is paused: screen events, feed items and audio are dropped."
_UNTIL = "When a timed pause ends (epoch ms); `null`: not paused, or paused until resumed."
_RETENTION = "Days agent entries are kept beyond the newest 50."


class PrivacyControls(Shape, frozen=True):
    """The privacy controls in force."""

    paused: Annotated[bool, Meta(description=_PAUSED)]
    paused_until: Annotated[int | None, Meta(description=_UNTIL)]
    exclude_apps: Annotated[
        list[str], Meta(description="Apps whose screen events are dropped as they arrive.")
    ]
    exclude_titles: Annotated[
        list[str],
        Meta(description="Expressions: a screen event whose window title one finds is dropped."),
    ]
    retention_days: Annotated[float, Meta(description=_RETENTION)]
    mode: Annotated[
        str, Meta(description="`PRIVACY_MODE`'s preset, or `default` when it is unset.")
    ]
    matrix: Annotated[
        Matrix,
        Meta(
            description="What each destination gets of each kind (`PRIVACY_<TYPE>_<DEST>`): "
            "set at start, by the preset and the cells set on their own."
        ),
    ]


class PrivacyHealth(Shape, frozen=True):
    """``/health.privacy``: the controls; the app names and the title expressions are `null`
    for a caller without the token when one is set, as they say what is private."""

    paused: Annotated[bool, Meta(description=_PAUSED)]
    paused_until: Annotated[int | None, Meta(description=_UNTIL)]
    exclude_apps: list[str] | None
    exclude_titles: list[str] | None
    retention_days: Annotated[float, Meta(description=_RETENTION)]


def controls(state: PrivacyState, now_ms: int, matrix: Matrix, mode: str) -> PrivacyControls:
    """``state`` as the routes answer it at ``now_ms`` (a timed pause past its end is over),
    with the privacy ``matrix`` and the preset (``mode``) it was built from."""
    paused = state.paused_at(now_ms)
    return PrivacyControls(
        paused=paused,
        paused_until=state.paused_until_ms if paused else None,
        exclude_apps=list(state.exclude_apps),
        exclude_titles=list(state.exclude_titles),
        retention_days=state.retention_days,
        mode=mode,
        matrix=matrix,
    )


def health(state: PrivacyState, now_ms: int, *, private: bool) -> PrivacyHealth:
    """``state`` as ``/health.privacy`` shows it to a caller (``private``: it may see names)."""
    paused = state.paused_at(now_ms)
    return PrivacyHealth(
        paused=paused,
        paused_until=state.paused_until_ms if paused else None,
        exclude_apps=list(state.exclude_apps) if private else None,
        exclude_titles=list(state.exclude_titles) if private else None,
        retention_days=state.retention_days,
    )
