"""The HTTP API's plain parts: API keys, exposure check, the OpenAI shapes, metrics text."""

from __future__ import annotations

import pytest

from api.auth import AuthError, KeyRing, Principal, is_loopback, parse_key_list
from api.metrics import HTTPMetrics
from api.openai_compat import ChatRequest, count_tokens, last_user_text, split_text
from api.service import APIError
from config import ConfigError, load_config
from main import StartupError, check_api_exposure


def keyring(http: dict, env: dict | None = None) -> KeyRing:
    return KeyRing.from_config(load_config({"http": http}, env={}), env or {})


def test_keys_from_config_and_environment_map_to_tenants_and_pinned_users():
    ring = keyring({"api_keys": {"k1": "acme", "k2": {"tenant": "acme", "user": "alice"}}},
                   {"FLORA_API_KEYS": "k3=globex, k4=globex:bob"})
    assert ring.authenticate("Bearer k1", None) == Principal("acme")
    assert ring.authenticate(None, "k2") == Principal("acme", "alice")
    assert ring.authenticate("bearer k3", None) == Principal("globex")
    assert ring.authenticate("Bearer k4", None) == Principal("globex", "bob")
    with pytest.raises(AuthError, match="required"):
        ring.authenticate(None, None)
    with pytest.raises(AuthError, match="not valid"):
        ring.authenticate("Bearer k5", None)
    with pytest.raises(AuthError):
        ring.authenticate("Basic k1", None)


def test_no_key_at_all_is_open_as_the_default_tenant():
    ring = keyring({})
    assert ring.open and ring.authenticate(None, None) == Principal("default")


@pytest.mark.parametrize("text", ["k1", "=acme", "k1=", "k1=:bob"])
def test_a_malformed_key_list_names_its_source(text):
    with pytest.raises(ConfigError, match="FLORA_API_KEYS"):
        parse_key_list(text, "FLORA_API_KEYS")


def test_bad_key_config_is_a_config_error():
    with pytest.raises(ConfigError, match="http.api_keys"):
        load_config({"http": {"api_keys": {"k": {"user": "alice"}}}}, env={})
    with pytest.raises(ConfigError, match="http.max_body_bytes"):
        load_config({"http": {"max_body_bytes": 10}}, env={})


def test_serving_without_keys_is_refused_off_loopback():
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")
    check_api_exposure(load_config({"http": {"host": "127.0.0.1"}}, env={}), env={})
    check_api_exposure(load_config({"http": {"host": "0.0.0.0"}}, env={}), env={"FLORA_API_KEYS": "k=acme"})
    with pytest.raises(StartupError, match="without API keys"):
        check_api_exposure(load_config({"http": {"host": "0.0.0.0"}}, env={}), env={})


def test_split_text_pieces_join_back_exactly():
    text = "To run add_numbers I need:\n- b: the second number\n(task t is waiting)  "
    assert "".join(split_text(text, 3)) == text
    assert split_text("") == [""]
    assert len(split_text("one two three four five", 2)) == 3


def test_token_estimate_counts_words_and_cjk_characters():
    assert count_tokens("hello big world") == 3
    assert count_tokens("每天提醒") == 4
    assert count_tokens("") == 0


def test_the_last_user_message_is_read_from_text_parts():
    request = ChatRequest(model="flora", messages=[
        {"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {}},
                                     {"type": "text", "text": "b"}]}])
    assert last_user_text(request) == "a\nb"
    with pytest.raises(APIError) as caught:
        last_user_text(ChatRequest(model="flora", messages=[{"role": "user", "content": "  "}]))
    assert caught.value.status == 422


def test_metrics_text_is_prometheus_exposition():
    metrics = HTTPMetrics()
    metrics.count("GET", "/v1/tasks", 200)
    metrics.count("GET", "/v1/tasks", 200)
    metrics.observe_reply(0.02)
    metrics.observe_reply(3.0)
    text = metrics.render({"completed": 2, "waiting_parameters": 1})
    assert 'flora_tasks{state="completed"} 2' in text
    assert 'flora_http_requests_total{method="GET",route="/v1/tasks",status="200"} 2' in text
    assert 'flora_reply_seconds_bucket{le="0.025"} 1' in text and 'flora_reply_seconds_bucket{le="+Inf"} 2' in text
    assert "flora_reply_seconds_count 2" in text and text.endswith("\n")
