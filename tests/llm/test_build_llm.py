"""build_llm / build_model_host: from the plain ``llm`` settings dict to an LLM."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from capabilities.llm import (
    FunctionLLM,
    LocalLlamaLLM,
    ModelHost,
    OpenAICompatibleLLM,
    build_llm,
    build_model_host,
)

from .chat_server import completion


def canned_reply(messages, json_schema):
    """Importable by path, as the multi-process actor tests use it."""
    return {"intent": "chat"} if json_schema else "canned"


def test_backend_none_and_missing_backend_mean_no_llm():
    assert build_llm({"backend": "none"}) is None
    assert build_llm({}) is None


def test_unknown_backend_names_the_setting():
    with pytest.raises(ValueError, match="llm.backend must be one of local, openai, function, none"):
        build_llm({"backend": "gpt"})


def test_function_backend_imports_the_function_by_path():
    llm = build_llm({"backend": "function", "function": f"{__name__}:canned_reply"})
    assert isinstance(llm, FunctionLLM)
    assert llm.complete([{"role": "user", "content": "x"}]).text == "canned"


@pytest.mark.parametrize("path", ["no_colon_here", "nonexistent.module:fn", f"{__name__}:missing"])
def test_function_backend_rejects_a_bad_path_naming_the_setting(path):
    with pytest.raises(ValueError, match="llm.function"):
        build_llm({"backend": "function", "function": path})


def test_local_backend_with_a_host_url_talks_to_the_shared_host_in_json_object_mode():
    llm = build_llm({"backend": "local", "host_url": "http://127.0.0.1:9/v1", "model": "qwen2.5-coder-0.5b"})
    assert isinstance(llm, OpenAICompatibleLLM)
    assert llm.name == "openai:qwen2.5-coder-0.5b"
    assert llm.schema_mode == "json_object"


def test_local_backend_with_a_model_path_loads_nothing_until_called(tmp_path):
    llm = build_llm({"backend": "local", "model_path": str(tmp_path / "m.gguf"), "n_ctx": 1024})
    assert isinstance(llm, LocalLlamaLLM)
    assert llm.model_path == tmp_path / "m.gguf"


def test_openai_backend_sends_the_key_from_the_named_environment_variable(monkeypatch, chat_server):
    monkeypatch.setenv("FLORA_TEST_LLM_KEY", "sk-from-env")
    chat_server.answers.append(completion("hi"))
    llm = build_llm({
        "backend": "openai", "base_url": chat_server.base_url, "model_name": "small",
        "api_key_env": "FLORA_TEST_LLM_KEY", "timeout_s": 5, "max_retries": 1,
    })
    assert isinstance(llm, OpenAICompatibleLLM)
    assert llm.complete([{"role": "user", "content": "x"}]).text == "hi"
    assert chat_server.headers[0]["Authorization"] == "Bearer sk-from-env"
    assert chat_server.requests[0]["model"] == "small"


def test_openai_backend_requires_base_url_and_a_set_key_variable(monkeypatch):
    with pytest.raises(ValueError, match="llm.base_url is required"):
        build_llm({"backend": "openai", "model_name": "m"})
    monkeypatch.delenv("FLORA_TEST_LLM_KEY", raising=False)
    with pytest.raises(ValueError, match="FLORA_TEST_LLM_KEY, which is not set"):
        build_llm({"backend": "openai", "base_url": "https://x/v1", "model_name": "m",
                   "api_key_env": "FLORA_TEST_LLM_KEY"})


def test_model_host_is_built_only_for_the_local_backend(tmp_path):
    assert build_model_host({"backend": "openai"}) is None
    host = build_model_host({"backend": "local", "model_path": str(tmp_path / "m.gguf"), "model": "tiny"})
    assert isinstance(host, ModelHost)
    assert (host.alias, host.running) == ("tiny", False)


def test_the_documented_openai_config_loads_and_its_schema_mode_reaches_the_client(monkeypatch):
    from config import load_config

    docs = (Path(__file__).resolve().parents[2] / "docs" / "llm.md").read_text()
    documented = yaml.safe_load(re.search(r"```yaml\n(llm:\n  backend: openai.*?)```", docs, re.S).group(1))
    documented["llm"]["schema_mode"] = "json_object"  # the other form the comment names
    monkeypatch.setenv("FLORA_LLM_API_KEY", "sk-x")
    llm = build_llm(load_config(documented, env={}).llm.model_dump())
    assert isinstance(llm, OpenAICompatibleLLM) and llm.schema_mode == "json_object"
    with pytest.raises(Exception, match="schema_mode"):
        load_config({"llm": {"backend": "openai", "schema_mode": "xml"}}, env={})


def test_memory_talks_to_the_model_host_at_low_priority_with_its_own_short_timeout_sent_once(chat_server):
    from config import load_config
    from init_plugins import build_configured_llm

    chat_server.answers.append(completion("{}"))
    config = load_config({"llm": {"backend": "local", "host_url": chat_server.base_url, "timeout_s": 60,
                                  "max_retries": 3}, "memory": {"distil_timeout_s": 7}}, env={})
    llm = build_configured_llm(config, background=True)
    assert llm._client.timeout.read == 7 and llm._max_retries == 0 and llm.restart_wait_s > 0
    llm.complete([{"role": "user", "content": "x"}])
    assert {k.lower(): v for k, v in chat_server.headers[-1].items()}.get("x-flora-priority") == "background"
    chat = build_configured_llm(config)
    assert chat._client.timeout.read == 60 and chat._max_retries == 3 and "x-flora-priority" not in chat._client.headers
