"""A model named by a setting: a path when it is written as one, a name otherwise.

``STT_MODEL`` and ``AGENT_MODEL`` take either. A name is never looked for as a folder or a
file in the working directory: a ``tiny.en/`` folder left where the relay was started must not
stand in for the model of that name.
"""

from __future__ import annotations

from pathlib import Path

MODEL_PATH_STARTS = ("/", "~", "./", "../")
"""How a model setting that names a file or a directory starts (a model's name never does)."""


def model_path(model: str) -> Path | None:
    """The file or directory ``model`` names when it is written as a path (it starts with
    ``/``, ``~``, ``./`` or ``../``), absolute (``~`` expanded, a relative path taken from the
    working directory); ``None`` for a model's name, which is never looked for on disk."""
    if not model.startswith(MODEL_PATH_STARTS):
        return None
    return Path(model).expanduser().absolute()
