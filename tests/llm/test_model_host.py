"""ModelHost failure paths: clear errors, no process left behind.

Marked real_model because they start the server process (tests/conftest.py
forbids that elsewhere); none of them needs the packaged model.
"""

from __future__ import annotations

import pytest

from capabilities.llm import ModelHost, ModelHostError

pytestmark = pytest.mark.real_model


def test_missing_model_file_is_refused_before_starting_anything(tmp_path):
    host = ModelHost(tmp_path / "absent.gguf")
    with pytest.raises(ModelHostError, match="absent.gguf does not exist"):
        host.start()
    assert host.pid is None


def test_base_url_before_start_is_an_error(tmp_path):
    with pytest.raises(ModelHostError, match="not running"):
        ModelHost(tmp_path / "m.gguf").base_url


def test_a_server_that_dies_while_loading_reports_the_tail_of_its_log(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed (scripts/install_llm.sh)")
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(b"GGUF" + b"\0" * 4096)
    host = ModelHost(corrupt, startup_timeout_s=60)
    with pytest.raises(ModelHostError, match="(?s)exited with status 1.*Failed to load model"):
        host.start()
    assert not host.running


def test_the_server_does_not_read_its_settings_from_our_environment(monkeypatch):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed (scripts/install_llm.sh)")
    from capabilities.llm.model_host import _server_environment

    monkeypatch.setenv("PORT", "8080")
    monkeypatch.setenv("api_key", "secret")
    monkeypatch.setenv("FLORA_KEEP_ME", "1")
    env = _server_environment()
    assert "PORT" not in env and "api_key" not in env
    assert env["FLORA_KEEP_ME"] == "1"
