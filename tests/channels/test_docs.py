"""The channel configurations shown in docs/channels.md and the README load as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from capabilities.channels.plugin import default_catalogue
from config import load_config

ROOT = Path(__file__).resolve().parents[2]


def channel_blocks() -> list[tuple[str, str]]:
    blocks = []
    for name in ("docs/channels.md", "README.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        blocks += [(name, b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if b.startswith("channels:")]
    return blocks


def test_the_docs_show_a_configuration_for_every_channel_type():
    types = {c["type"] for _, block in channel_blocks() for c in yaml.safe_load(block)["channels"].values()}
    assert types == set(default_catalogue().types())


@pytest.mark.parametrize("where, block", channel_blocks())
def test_a_documented_channel_configuration_loads(where, block):
    config = load_config(yaml.safe_load(block), env={})
    assert config.channels, where


def test_the_feature_table_has_a_row_for_every_channel_type():
    text = (ROOT / "docs/channels.md").read_text(encoding="utf-8")
    section = text.split("## What each channel does", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ")][1:]
    names = {"telegram": "Telegram", "discord": "Discord", "feishu": "Feishu / Lark", "email": "e-mail",
             "slack": "Slack", "whatsapp": "WhatsApp", "dingtalk": "DingTalk", "wecom": "WeCom / 企业微信",
             "matrix": "Matrix"}
    assert set(default_catalogue().types()) == set(names)  # a new type needs its row, and its name here
    assert sorted(rows) == sorted(names.values())
