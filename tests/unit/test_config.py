"""load_config: defaults < file (YAML or JSON) < FLORA_ environment variables; errors name the key."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from config import (
    DEFAULT_EXECUTION_POOL_SIZE, DEFAULT_MODEL, ConfigError, FloraConfig, load_config,
)


@pytest.fixture
def no_flora_env(monkeypatch):
    """os.environ without any FLORA_ variable the machine running the tests may have."""
    for name in list(os.environ):
        if name.startswith("FLORA_"):
            monkeypatch.delenv(name)


def write(path: Path, data) -> Path:
    path.write_text(json.dumps(data) if path.suffix == ".json" else yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.fixture(params=["yaml", "json"])
def config_file(request, tmp_path):
    """A function writing a config file of each supported kind."""
    return lambda data: write(tmp_path / f"flora.{request.param}", data)


def test_defaults_apply_when_nothing_is_given():
    config = load_config({}, env={})
    assert config.actors.execution_pool_size == DEFAULT_EXECUTION_POOL_SIZE
    assert config.llm.model == DEFAULT_MODEL
    assert config.sqlite_path == Path("data") / "flora.db"


def test_file_values_override_defaults(config_file):
    path = config_file({"actors": {"execution_pool_size": 4}, "llm": {"backend": "none"}, "log_level": "INFO"})
    config = load_config(path, env={})
    assert config.actors.execution_pool_size == 4
    assert config.llm.backend == "none"
    assert config.log_level == "INFO"
    assert config.llm.model == DEFAULT_MODEL  # untouched keys keep their default


def test_environment_overrides_the_file(config_file):
    path = config_file({"actors": {"execution_pool_size": 4}, "llm": {"backend": "none"}})
    config = load_config(path, env={"FLORA_ACTORS__EXECUTION_POOL_SIZE": "8"})
    assert config.actors.execution_pool_size == 8
    assert config.llm.backend == "none"


def test_path_given_as_a_string_is_read(tmp_path):
    path = write(tmp_path / "flora.yml", {"http": {"port": 9000}})
    assert load_config(str(path), env={}).http.port == 9000


def test_top_level_key_from_environment():
    assert load_config({}, env={"FLORA_LOG_LEVEL": "DEBUG"}).log_level == "DEBUG"


def test_nested_environment_keys_create_sections_as_needed():
    env = {"FLORA_LLM__TIMEOUT_S": "2.5", "FLORA_CAPABILITIES__SETTINGS__DIFY__BASE_URL": "http://dify.local",
           "FLORA_CAPABILITIES__ENTRY_POINTS": "false"}
    config = load_config({}, env=env)
    assert config.llm.timeout_s == 2.5
    assert config.capabilities.settings == {"dify": {"base_url": "http://dify.local"}}
    assert config.capabilities.entry_points is False


def test_environment_list_is_given_as_json_and_replaces_the_file_list(tmp_path):
    path = write(tmp_path / "flora.yaml", {"capabilities": {"plugin_modules": ["from.file"]}})
    config = load_config(path, env={"FLORA_CAPABILITIES__PLUGIN_MODULES": '["my.tools", "other.tools"]'})
    assert config.capabilities.plugin_modules == ["my.tools", "other.tools"]


def test_environment_object_is_given_as_json():
    config = load_config({}, env={"FLORA_CAPABILITIES__SETTINGS": '{"dify": {"timeout_s": 5}}'})
    assert config.capabilities.settings == {"dify": {"timeout_s": 5}}


def test_list_key_given_plain_text_in_environment_is_refused_naming_the_key():
    with pytest.raises(ConfigError, match=r"capabilities\.plugin_modules"):
        load_config({}, env={"FLORA_CAPABILITIES__PLUGIN_MODULES": "my.tools"})


def test_unknown_key_in_file_is_refused_naming_it(config_file):
    with pytest.raises(ConfigError) as info:
        load_config(config_file({"llm": {"bakend": "none"}}), env={})
    assert "llm.bakend" in str(info.value) and "unknown" in str(info.value)


def test_unknown_key_in_environment_is_refused_naming_it():
    with pytest.raises(ConfigError, match=r"llm\.bakend: unknown configuration key"):
        load_config({}, env={"FLORA_LLM__BAKEND": "none"})


def test_value_out_of_bounds_names_the_key(config_file):
    with pytest.raises(ConfigError) as info:
        load_config(config_file({"actors": {"execution_pool_size": 0}}), env={})
    assert "actors.execution_pool_size" in str(info.value)
    assert "greater than or equal to 1" in str(info.value)


def test_value_out_of_bounds_from_environment_names_the_key():
    with pytest.raises(ConfigError, match=r"actors\.execution_pool_size"):
        load_config({}, env={"FLORA_ACTORS__EXECUTION_POOL_SIZE": "0"})


def test_value_outside_the_choices_names_the_key_and_the_choices():
    with pytest.raises(ConfigError) as info:
        load_config({"llm": {"backend": "gpt"}}, env={})
    assert "llm.backend" in str(info.value) and "'local'" in str(info.value) and "'gpt'" in str(info.value)


def test_every_bad_key_is_reported_at_once():
    with pytest.raises(ConfigError) as info:
        load_config({"http": {"port": 0}, "llm": {"bakend": "x"}}, env={})
    assert "http.port" in str(info.value) and "llm.bakend" in str(info.value)


def test_missing_file_is_a_config_error_naming_the_path(tmp_path):
    path = tmp_path / "nowhere.yaml"
    with pytest.raises(ConfigError, match="cannot read config file") as info:
        load_config(path, env={})
    assert str(path) in str(info.value)


def test_a_directory_is_not_a_config_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path, env={})


def test_invalid_yaml_is_a_config_error(tmp_path):
    path = tmp_path / "flora.yaml"
    path.write_text("actors:\n  execution_pool_size: [1, 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path, env={})


def test_invalid_json_is_a_config_error(tmp_path):
    path = tmp_path / "flora.json"
    path.write_text('{"actors": {', encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(path, env={})


def test_file_holding_a_list_is_a_config_error(tmp_path):
    path = write(tmp_path / "flora.yaml", ["actors"])
    with pytest.raises(ConfigError, match="mapping at the top level"):
        load_config(path, env={})


def test_empty_yaml_file_means_defaults(tmp_path):
    path = tmp_path / "flora.yaml"
    path.write_text("# nothing set yet\n", encoding="utf-8")
    assert load_config(path, env={}) == load_config({}, env={})


def test_environment_cannot_treat_a_value_as_a_section():
    with pytest.raises(ConfigError, match="FLORA_LOG_LEVEL__COLOUR"):
        load_config({"log_level": "INFO"}, env={"FLORA_LOG_LEVEL__COLOUR": "red"})


def test_flora_config_variable_names_the_file(tmp_path):
    path = write(tmp_path / "flora.yaml", {"default_tenant": "acme"})
    assert load_config(None, env={"FLORA_CONFIG": str(path)}).default_tenant == "acme"


def test_flora_config_is_read_from_the_process_environment(tmp_path, monkeypatch, no_flora_env):
    path = write(tmp_path / "flora.json", {"default_tenant": "acme"})
    monkeypatch.setenv("FLORA_CONFIG", str(path))
    monkeypatch.setenv("FLORA_HTTP__PORT", "9100")
    config = load_config()
    assert config.default_tenant == "acme" and config.http.port == 9100


def test_no_source_and_no_flora_config_means_defaults(no_flora_env):
    assert load_config() == load_config({}, env={})


def test_secrets_in_the_environment_are_not_config_keys():
    config = load_config({}, env={"FLORA_LLM_API_KEY": "sk-secret", "FLORA_DIFY_API_KEY": "app-secret"})
    dumped = json.dumps(config.to_dict())
    assert "sk-secret" not in dumped and "app-secret" not in dumped
    assert config.llm.api_key_env == "FLORA_LLM_API_KEY"


def test_unrelated_environment_variables_are_ignored():
    assert load_config({}, env={"PATH": "/bin", "FLORAL_THEME": "rose"}) == load_config({}, env={})


def test_a_flora_config_passes_through_unchanged():
    config = load_config({"actors": {"execution_pool_size": 6}, "llm": {"backend": "none"}}, env={})
    again = load_config(config, env={})
    assert again == config
    assert again.to_dict() == config.to_dict()


def test_environment_applies_on_top_of_a_flora_config_without_changing_it():
    config = load_config({"log_level": "INFO"}, env={})
    assert load_config(config, env={"FLORA_LOG_LEVEL": "ERROR"}).log_level == "ERROR"
    assert config.log_level == "INFO"


def test_mapping_source_is_not_mutated_by_environment_overrides():
    source = {"actors": {"execution_pool_size": 3}}
    load_config(source, env={"FLORA_ACTORS__EXECUTION_POOL_SIZE": "5", "FLORA_LLM__BACKEND": "none"})
    assert source == {"actors": {"execution_pool_size": 3}}


def test_to_dict_is_json_and_loads_back_to_the_same_config():
    config = load_config({"capabilities": {"plugin_modules": ["my.tools"]}}, env={})
    data = json.loads(json.dumps(config.to_dict()))
    assert load_config(data, env={}) == config
    assert isinstance(load_config(data, env={}), FloraConfig)


def test_store_path_setting_wins_over_the_data_dir():
    config = load_config({"data_dir": "/var/flora", "store": {"sqlite_path": "/tmp/x.db"}}, env={})
    assert config.sqlite_path == Path("/tmp/x.db")
    assert load_config({"data_dir": "/var/flora"}, env={}).sqlite_path == Path("/var/flora/flora.db")
