"""Channel types as plugins: the catalogue (built-in types, entry points, a duplicate refused),
the config's ``channels`` validated by the model of the type each names, and a channel type
from outside Flora's tree configured, built and run through the same ChannelService."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import ClassVar, Literal

import pytest

from capabilities.channels import plugin
from capabilities.channels.adapters import ChannelSetupError, build_adapter, build_poller, check_credentials
from capabilities.channels.model import Inbound, Outbound, post_only
from capabilities.channels.plugin import ChannelCatalogue, ChannelCatalogueError, ChannelPlugin, default_catalogue
from capabilities.channels.slack.settings import SlackSettings
from capabilities.channels.telegram.settings import TelegramSettings
from config import ChannelConfig, ConfigError, load_config


class PagerSettings(ChannelConfig):
    """A third-party channel type's settings, as a package outside Flora would write them."""

    CREDENTIALS: ClassVar[tuple[str, ...]] = ("token_env",)

    type: Literal["pager"]
    token_env: str = ""
    beep: bool = True


class PagerAdapter:
    def __init__(self, token: str):
        self.token, self.sent, self.closed = token, [], False

    def webhook(self, body, headers, *, method="POST", query=None):
        post_only(method)
        return 200, {}, [Inbound(key=body, chat_id="pager", sender_id="p1", text=body)]

    def parse(self, raw):
        return []

    def render(self, out: Outbound) -> list[dict]:
        return [{"chat_id": out.chat_id, "text": out.text[:80]}]

    def send(self, body: dict) -> None:
        self.sent.append(body)

    def acknowledge(self, inbound) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def _pager(name, settings, env):
    from capabilities.channels.adapters import credential

    return PagerAdapter(credential(name, settings, "token_env", env))


PAGER = ChannelPlugin(type="pager", settings=PagerSettings, adapter=_pager)
PAGER_CONFIG = {"type": "pager", "token_env": "PAGER_TOKEN", "allow": ["*"]}


@pytest.fixture
def catalogue():
    made = ChannelCatalogue()
    for module in plugin.BUILTIN_CHANNELS:
        made.register_module(module)
    made.register(PAGER)
    return made


def test_the_built_in_channel_types_are_in_the_default_catalogue():
    assert default_catalogue().types() == ["dingtalk", "discord", "email", "feishu", "matrix", "slack", "telegram",
                                           "wecom", "whatsapp"]


def test_a_channel_type_registered_twice_is_refused(catalogue):
    with pytest.raises(ChannelCatalogueError, match="'pager' is already registered"):
        catalogue.register(PAGER)


def test_a_channel_whose_settings_name_another_type_is_refused():
    with pytest.raises(ChannelCatalogueError, match="Literal"):
        ChannelCatalogue().register(ChannelPlugin(type="pagers", settings=PagerSettings, adapter=_pager))
    with pytest.raises(ChannelCatalogueError, match="not a channel"):
        ChannelCatalogue().register(object())


def test_a_channel_type_installed_by_entry_point_is_registered(monkeypatch):
    point = EntryPoint(name="pager", value="tests.channels.test_plugins:PAGER", group=plugin.ENTRY_POINT_GROUP)
    monkeypatch.setattr(plugin, "entry_points", lambda group: [point] if group == plugin.ENTRY_POINT_GROUP else [])
    made = ChannelCatalogue()
    assert made.load_entry_points() == ["pager"] and made.get("pager") is PAGER


def test_each_channel_is_validated_by_the_model_of_its_type():
    config = load_config({"channels": {
        "tg": {"type": "telegram", "mode": "polling", "token_env": "T"},
        "sl": {"type": "slack", "bot_token_env": "B", "signing_secret_env": "S"}}}, env={})
    assert type(config.channels["tg"]) is TelegramSettings and type(config.channels["sl"]) is SlackSettings
    assert config.channels["sl"].base_url() == "https://slack.com/api" and config.channels["sl"].mode == "webhook"
    with pytest.raises(ConfigError, match="channels.sl.token_env: unknown configuration key"):
        load_config({"channels": {"sl": {"type": "slack", "bot_token_env": "B", "signing_secret_env": "S",
                                         "token_env": "telegram's key"}}}, env={})


def test_the_config_sent_to_actors_as_json_loads_back_as_the_same_channels():
    config = load_config({"channels": {"sl": {"type": "slack", "bot_token_env": "B", "signing_secret_env": "S",
                                              "retry": {"max_attempts": 2}}}}, env={})
    dumped = config.to_dict()
    assert dumped["channels"]["sl"]["bot_token_env"] == "B"  # the type's own keys, not only the common ones
    assert load_config(dumped, env={}).channels == config.channels


def test_a_third_party_channel_is_configured_built_and_checked_through_the_catalogue(catalogue):
    with pytest.raises(ConfigError, match="channels.pg.type"):
        load_config({"channels": {"pg": PAGER_CONFIG}}, env={})  # not installed in this process
    config = load_config({"channels": {"pg": PAGER_CONFIG}}, env={}, channels=catalogue)
    settings = config.channels["pg"]
    assert type(settings) is PagerSettings and settings.beep and settings.mode == "webhook"
    with pytest.raises(ChannelSetupError, match="channels.pg.token_env: environment variable PAGER_TOKEN"):
        check_credentials(config, env={}, catalogue=catalogue)
    adapter = build_adapter("pg", settings, env={"PAGER_TOKEN": "t0k"}, catalogue=catalogue)
    assert adapter.token == "t0k"
    assert build_poller("pg", settings, adapter, receive=None, stop=None, env={}, catalogue=catalogue) is None
    with pytest.raises(ConfigError, match="channels.pg: .*token_env"):
        load_config({"channels": {"pg": {**PAGER_CONFIG, "token_env": ""}}}, env={}, channels=catalogue)


def test_a_channel_without_polling_refuses_mode_polling(catalogue):
    with pytest.raises(ConfigError, match="mode: pager has no polling; use mode: webhook"):
        load_config({"channels": {"pg": {**PAGER_CONFIG, "mode": "polling"}}}, env={}, channels=catalogue)
