"""The `llm` capability plugin: chat models behind one small interface.

`build_llm(settings)` turns the ``llm`` config section (a plain dict) into an
`LLM`; `build_model_host(settings)` makes the one shared model server the
main process starts for a multi-process actor system. See docs/llm.md.

Settings keys (absent or None means the default)::

    backend      "local" | "openai" | "function" | "none"
    model        catalogue name for backend local (default qwen2.5-coder-0.5b)
    model_path   explicit GGUF path, instead of the catalogue
    data_dir     where catalogue models are assembled (default "data")
    host_url     base_url of a running ModelHost; backend local then talks to it
    n_ctx, n_threads
    base_url     backend openai: e.g. https://api.example.com/v1
    api_key_env  backend openai: NAME of the environment variable with the key
    model_name   backend openai: model id sent to the server (default: `model`)
    schema_mode  backend openai: "json_schema" (default) or "json_object"
    timeout_s, max_retries
    priority     "background": work nobody waits for; Flora's model host lets every other request go
                 first (model_server.py), and a request it cut short for one is LLMUnavailable
    function     backend function: "package.module:attr" of fn(messages, json_schema)
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any, Mapping

from capabilities.llm.base import (
    LLM,
    LLMError,
    LLMOutputError,
    LLMReply,
    LLMRequestRejected,
    LLMScriptExhausted,
    LLMUnavailable,
    ModelError,
    ModelIntegrityError,
    ModelNotInstalled,
    complete_json,
)
from capabilities.llm.fake import FunctionLLM, ScriptedLLM
from capabilities.llm.local import DEFAULT_N_CTX, DEFAULT_N_THREADS, LocalLlamaLLM
from capabilities.llm.model_host import ModelHost, ModelHostError
from capabilities.llm.model_server import PRIORITY_HEADER
from capabilities.llm.openai_compat import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_S, OpenAICompatibleLLM

__all__ = [
    "LLM", "LLMReply", "complete_json",
    "LLMError", "LLMUnavailable", "LLMRequestRejected", "LLMOutputError", "LLMScriptExhausted",
    "ModelError", "ModelNotInstalled", "ModelIntegrityError", "ModelHostError",
    "ScriptedLLM", "FunctionLLM", "LocalLlamaLLM", "OpenAICompatibleLLM", "ModelHost",
    "build_llm", "build_model_host", "understanding_settings", "persona_models", "persona_llm", "host_state_dir",
]

BACKENDS = ("local", "openai", "function", "none")
DEFAULT_DATA_DIR = "data"
# how long a request to one of Flora's own model hosts that died under it waits for the host to
# be started again (host_supervisor.py) before it is sent once more: its first restarts come
# within seconds, plus the model's load
HOST_RESTART_WAIT_S = 120.0


def build_llm(settings: Mapping[str, Any]) -> LLM | None:
    """The LLM the ``llm`` settings describe, or None for backend "none"."""
    backend = _get(settings, "backend", "none")
    if backend == "none":
        return None
    if backend == "local":
        return _local(settings)
    if backend == "openai":
        return _openai(settings)
    if backend == "function":
        return FunctionLLM(_import_function(_required(settings, "function")))
    raise ValueError(f"llm.backend must be one of {', '.join(BACKENDS)}, not {backend!r}")


def understanding_settings(settings: Mapping[str, Any]) -> dict | None:
    """The settings of the understanding step's own model (backend local with an
    ``understanding_model`` other than ``model``), or None when it shares the main one."""
    wanted = _get(settings, "understanding_model", "")
    if _get(settings, "backend", "none") != "local" or not wanted or _get(settings, "model_path", "") \
            or wanted == _model_name(settings):
        return None
    return {**settings, "model": wanted, "host_url": _get(settings, "understanding_host_url", "")}


def persona_models(settings: Mapping[str, Any], wanted: list[str]) -> list[str]:
    """The personas' models that need a host of their own: backend local, and neither the chat
    model nor the understanding model (those have hosts already)."""
    if _get(settings, "backend", "none") != "local" or _get(settings, "model_path", ""):
        return []
    have = {_model_name(settings), _get(settings, "understanding_model", "")}
    return sorted({name for name in wanted if name and name not in have})


def persona_llm(settings: Mapping[str, Any], model: str) -> LLM | None:
    """The LLM for a persona's own ``model``: its host's (``persona_host_urls``) with backend
    local; None means the chat model (another back end, or the chat model itself)."""
    if _get(settings, "backend", "none") != "local" or not model or model == _model_name(settings):
        return None
    if model == _get(settings, "understanding_model", "") and _get(settings, "understanding_host_url", ""):
        url = settings["understanding_host_url"]
    else:
        url = (_get(settings, "persona_host_urls", {}) or {}).get(model)
    if not url:
        return None
    return OpenAICompatibleLLM(url, model=model, schema_mode="json_object",
                               timeout_s=float(_get(settings, "timeout_s", DEFAULT_TIMEOUT_S)),
                               max_retries=int(_get(settings, "max_retries", DEFAULT_MAX_RETRIES)),
                               restart_wait_s=HOST_RESTART_WAIT_S)


def build_model_host(settings: Mapping[str, Any]) -> ModelHost | None:
    """An unstarted ModelHost for backend local, or None for other back ends."""
    if _get(settings, "backend", "none") != "local":
        return None
    return ModelHost(
        _model_file(settings),
        n_ctx=int(_get(settings, "n_ctx", DEFAULT_N_CTX)),
        n_threads=int(_get(settings, "n_threads", DEFAULT_N_THREADS)),
        alias=_model_name(settings),
        idle_unload_s=float(_get(settings, "idle_unload_s", 0.0)),
        state_file=host_state_dir(_get(settings, "data_dir", DEFAULT_DATA_DIR)) / f"{_model_name(settings)}.json",
    )


def host_state_dir(data_dir: str | os.PathLike) -> Path:
    """Where the model hosts of a Flora with this data directory write their state."""
    return Path(data_dir) / "run" / "model_hosts"


def _local(settings: Mapping[str, Any]) -> LLM:
    host_url = _get(settings, "host_url", None)
    if host_url:
        return OpenAICompatibleLLM(
            host_url,
            model=_model_name(settings),
            schema_mode="json_object",
            timeout_s=float(_get(settings, "timeout_s", DEFAULT_TIMEOUT_S)),
            max_retries=int(_get(settings, "max_retries", DEFAULT_MAX_RETRIES)),
            restart_wait_s=HOST_RESTART_WAIT_S,
            headers={PRIORITY_HEADER: "background"} if _get(settings, "priority", "") == "background" else None,
        )
    return LocalLlamaLLM(
        _model_file(settings),
        n_ctx=int(_get(settings, "n_ctx", DEFAULT_N_CTX)),
        n_threads=int(_get(settings, "n_threads", DEFAULT_N_THREADS)),
    )


def _model_file(settings: Mapping[str, Any]) -> str:
    explicit = _get(settings, "model_path", None)
    if explicit:
        return str(explicit)
    from capabilities.llm.models import ensure_model

    return str(ensure_model(_model_name(settings), _get(settings, "data_dir", DEFAULT_DATA_DIR)))


def _model_name(settings: Mapping[str, Any]) -> str:
    # models.py is imported only when needed, so that `python -m
    # capabilities.llm.models` does not find itself already imported.
    from capabilities.llm.models import DEFAULT_MODEL

    return str(_get(settings, "model", DEFAULT_MODEL))


def _openai(settings: Mapping[str, Any]) -> LLM:
    api_key = None
    key_env = _get(settings, "api_key_env", None)
    if key_env:
        api_key = os.environ.get(key_env)
        if not api_key:
            raise ValueError(f"llm.api_key_env names {key_env}, which is not set in the environment")
    return OpenAICompatibleLLM(
        _required(settings, "base_url"),
        model=_get(settings, "model_name", None) or _required(settings, "model"),
        api_key=api_key,
        timeout_s=float(_get(settings, "timeout_s", DEFAULT_TIMEOUT_S)),
        max_retries=int(_get(settings, "max_retries", DEFAULT_MAX_RETRIES)),
        schema_mode=_get(settings, "schema_mode", "json_schema"),
    )


def _import_function(path: str) -> Any:
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise ValueError(f"llm.function must look like 'package.module:attr', not {path!r}")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"llm.function {path!r} cannot be imported: {exc}") from exc


def _get(settings: Mapping[str, Any], key: str, default: Any) -> Any:
    value = settings.get(key)
    return default if value is None else value


def _required(settings: Mapping[str, Any], key: str) -> Any:
    value = settings.get(key)
    if value in (None, ""):
        raise ValueError(f"llm.{key} is required for llm.backend {settings.get('backend')!r}")
    return value
