"""Channels fail closed: a channel whose verification secret is not set does not start; a
forged or old Discord interaction and a forged Feishu event are refused; an e-mail is its
From's only when the receiving server's Authentication-Results shows it (real messages, parsed
by the stdlib as the channel parses them)."""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

import main
from capabilities.channels.adapters import ChannelSetupError, build_adapter, check_credentials
from capabilities.channels.discord import DiscordAdapter
from capabilities.channels.email import EmailAdapter
from capabilities.channels.feishu import FeishuAdapter
from capabilities.channels.model import Unauthorized
from capabilities.channels.email.sender_auth import aligned, parse, verdict
from capabilities.channels.service import ChannelService
from agents.node import StartupError
from capabilities.channels.email.settings import MailServer
from config import ConfigError, load_config
from tests.support.mail_servers import mail

FEISHU = {"type": "feishu", "app_id_env": "FS_ID", "app_secret_env": "FS_SECRET",
          "verification_token_env": "FS_VERIFY", "allow": ["*"]}
FS_ENV = {"FS_ID": "cli_1", "FS_SECRET": "s"}


# -- Feishu ---------------------------------------------------------------------------------
def test_a_feishu_channel_whose_verification_token_variable_is_unset_does_not_start(tmp_path):
    config = load_config({"data_dir": str(tmp_path), "channels": {"fs": FEISHU}}, env={})
    with pytest.raises(ChannelSetupError, match="channels.fs.verification_token_env: environment variable "
                                                "FS_VERIFY is not set"):
        check_credentials(config, env=FS_ENV)
    with pytest.raises(ChannelSetupError, match="channels.fs.verification_token_env"):
        build_adapter("fs", config.channels["fs"], env=FS_ENV)
    check_credentials(config, env={**FS_ENV, "FS_VERIFY": "v"})


def test_flora_refuses_to_start_with_a_channel_missing_its_secret(tmp_path, monkeypatch):
    for name in ("FS_ID", "FS_SECRET"):
        monkeypatch.setenv(name, "x")
    monkeypatch.delenv("FS_VERIFY", raising=False)
    config = load_config({"data_dir": str(tmp_path), "channels": {"fs": FEISHU}}, env={})
    with pytest.raises(StartupError, match="channels.fs.verification_token_env"):
        main.start_flora(config)


def test_a_named_encrypt_key_must_be_set_too():
    config = load_config({"channels": {"fs": {**FEISHU, "encrypt_key_env": "FS_ENC"}}}, env={})
    with pytest.raises(ChannelSetupError, match="channels.fs.encrypt_key_env"):
        check_credentials(config, env={**FS_ENV, "FS_VERIFY": "v"})


def test_a_feishu_channel_must_name_a_secret():
    with pytest.raises(ConfigError, match="verification_token_env"):
        load_config({"channels": {"fs": {**FEISHU, "verification_token_env": ""}}}, env={})


def fs_event(token: str | None) -> str:
    event = {"schema": "2.0", "header": {"event_id": "e1", "event_type": "im.message.receive_v1"},
             "event": {"sender": {"sender_id": {"open_id": "ou_1"}},
                       "message": {"message_id": "om_1", "chat_id": "oc_1", "message_type": "text",
                                   "content": json.dumps({"text": "rewrite my memories"})}}}
    if token is not None:
        event["header"]["token"] = token
    return json.dumps(event)


def test_a_forged_feishu_event_is_refused():
    adapter = FeishuAdapter(base_url="http://127.0.0.1:9", app_id="a", app_secret="s", verification_token="v")
    for forged in (fs_event(None), fs_event("guess"), fs_event("")):
        with pytest.raises(Unauthorized):
            adapter.webhook(forged, {})
    assert adapter.webhook(fs_event("v"), {})[2][0].text == "rewrite my memories"


def test_a_feishu_adapter_without_any_secret_refuses_everything():
    adapter = FeishuAdapter(base_url="http://127.0.0.1:9", app_id="a", app_secret="s")
    for body in (fs_event(None), fs_event(""), json.dumps({"type": "url_verification", "challenge": "c"})):
        with pytest.raises(Unauthorized, match="no verification token or encrypt key"):
            adapter.webhook(body, {})


# -- Discord --------------------------------------------------------------------------------
KEY = Ed25519PrivateKey.generate()
PUBLIC = KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
NOW = 1_800_000_000


def discord(clock=lambda: NOW) -> DiscordAdapter:
    return DiscordAdapter(base_url="http://127.0.0.1:9", token="t", public_key=PUBLIC, clock=clock)


def signed(timestamp: str, key=KEY) -> tuple[str, dict]:
    body = json.dumps({"id": "1", "type": 1})
    return body, {"x-signature-timestamp": timestamp, "x-signature-ed25519": key.sign((timestamp + body).encode()).hex()}


def test_a_fresh_discord_interaction_is_answered():
    assert discord().webhook(*signed(str(NOW - 299)))[1] == {"type": 1}


@pytest.mark.parametrize("timestamp", [str(NOW - 301), str(NOW - 86400), str(NOW + 301), "0"])
def test_a_discord_interaction_older_than_five_minutes_is_refused(timestamp):
    with pytest.raises(Unauthorized, match="signed .* ago"):
        discord().webhook(*signed(timestamp))


@pytest.mark.parametrize("timestamp", ["", "soon", "1.5e9"])
def test_a_discord_timestamp_that_is_no_number_is_refused(timestamp):
    with pytest.raises(Unauthorized):
        discord().webhook(*signed(timestamp))


def test_a_forged_discord_signature_is_refused_whatever_its_timestamp():
    with pytest.raises(Unauthorized, match="signature"):
        discord().webhook(*signed(str(NOW), key=Ed25519PrivateKey.generate()))
    body, headers = signed(str(NOW - 1000))
    headers["x-signature-timestamp"] = str(NOW)  # a replayed body with a fresh timestamp: the signature breaks
    with pytest.raises(Unauthorized, match="signature"):
        discord().webhook(body, headers)


# -- e-mail ---------------------------------------------------------------------------------
TRUSTED = ["mx.flora.test"]


def parsed(message) -> object:
    import email
    import email.policy

    return email.message_from_bytes(message.as_bytes(), policy=email.policy.default)


@pytest.mark.parametrize("results", [
    "dmarc=pass header.from={domain}",
    "dmarc=pass (p=reject) header.from={domain}",
    "spf=fail smtp.mailfrom=x.test; dkim=pass header.d={domain} header.s=sel; dmarc=fail",
    "dkim=pass header.d=mail.{domain}",
    "spf=pass smtp.mailfrom=bounce@{domain}",
    "SPF=Pass smtp.mailfrom=\"bounce@{domain}\"",
])
def test_a_passing_aligned_check_from_the_trusted_server_verifies_the_sender(results):
    found = verdict(parsed(mail("Alice <alice@people.test>", "hi", authentication=results)), TRUSTED)
    assert found.ok, found.reason


@pytest.mark.parametrize("results, why", [
    ("spf=fail smtp.mailfrom=evil.test; dkim=fail header.d=people.test; dmarc=fail header.from={domain}",
     "no passing check"),
    ("dkim=pass header.d=evil.test; spf=pass smtp.mailfrom=evil.test", "no passing check"),  # not aligned
    ("dkim=pass header.d=test", "no passing check"),  # a parent of one label is no organisational domain
    ("none", "no passing check"),
    ("dmarc=pass header.from=evil.test", "no passing check"),
])
def test_a_forged_from_is_not_verified(results, why):
    found = verdict(parsed(mail("alice@people.test", "hi", authentication=results)), TRUSTED)
    assert not found.ok and why in found.reason


def test_a_header_from_an_untrusted_server_or_none_at_all_is_not_enough():
    message = mail("alice@people.test", "hi", authentication=None)
    message["Authentication-Results"] = "mx.evil.test; dmarc=pass header.from=people.test"
    assert "no Authentication-Results header from a trusted server" in verdict(parsed(message), TRUSTED).reason
    assert not verdict(parsed(mail("alice@people.test", "hi", authentication=None)), TRUSTED).ok


def test_a_header_the_sender_planted_below_the_servers_own_does_not_count():
    message = mail("alice@people.test", "hi", authentication="dmarc=fail header.from={domain}")
    message["Authentication-Results"] = "mx.flora.test; dmarc=pass header.from=people.test"  # below the server's
    assert not verdict(parsed(message), TRUSTED).ok


def test_two_from_addresses_are_refused():
    message = mail("alice@people.test", "hi")
    message.replace_header("From", "alice@people.test, mallory@evil.test")
    found = verdict(parsed(message), TRUSTED)
    assert not found.ok and "2 From addresses" in found.reason


def test_the_header_is_read_as_rfc_8601_writes_it():
    server, results = parse('mx.flora.test 1; (a comment; with a semicolon) dkim=pass (good sig) '
                            'header.d=people.test header.s="sel;1"; spf=softfail smtp.mailfrom=a@b.test')
    assert server == "mx.flora.test"
    assert results == [{"method": "dkim", "result": "pass", "header.d": "people.test", "header.s": "sel;1"},
                       {"method": "spf", "result": "softfail", "smtp.mailfrom": "a@b.test"}]
    assert aligned("people.test", "mail.people.test") and not aligned("people.test", "evilpeople.test")


def test_an_email_channel_needs_its_trusted_server_or_an_explicit_opt_out():
    base = {"type": "email", "address": "flora@flora.test", "username_env": "U", "password_env": "P",
            "imap": {"host": "imap.flora.test"}, "smtp": {"host": "smtp.flora.test"}}
    with pytest.raises(ConfigError, match="trusted_authserv_ids"):
        load_config({"channels": {"mail": base}}, env={})
    settings = load_config({"channels": {"mail": {**base, "trusted_authserv_ids": ["MX.Flora.test"]}}},
                           env={}).channels["mail"]
    assert settings.require_sender_auth is True and settings.trusted_authserv_ids == ["mx.flora.test"]
    opted_out = load_config({"channels": {"mail": {**base, "require_sender_auth": False}}}, env={})
    assert opted_out.channels["mail"].require_sender_auth is False


def email_settings(**channel):
    base = {"type": "email", "address": "flora@flora.test", "username_env": "U", "password_env": "P",
            "imap": {"host": "imap.flora.test"}, "smtp": {"host": "smtp.flora.test"},
            "users": {"alice@people.test": "alice"}, "trusted_authserv_ids": TRUSTED}
    return load_config({"channels": {"mail": {**base, **channel}}}, env={}).channels["mail"]


def test_the_channel_records_a_forged_mail_as_refused_and_takes_the_real_one(store):
    settings = email_settings()
    adapter = build_adapter("mail", settings, env={"U": "u", "P": "p"})
    service = ChannelService("mail", settings, store, tenant_id="default")
    forged = mail("alice@people.test", "delete my notes", message_id="<f1@evil.test>",
                  authentication="spf=fail smtp.mailfrom=evil.test; dmarc=fail header.from={domain}")
    real = mail("alice@people.test", "a joke please", message_id="<r1@people.test>")
    assert service.receive(adapter, {"uid": 1, "uidvalidity": 1, "body": forged.as_bytes()}) == []
    record = store.get_channel_message("default", "mail", "f1@evil.test")
    assert record.state == "refused" and "dmarc=fail" in record.payload["unverified"]
    [taken] = service.receive(adapter, {"uid": 2, "uidvalidity": 1, "body": real.as_bytes()})
    assert service.user_input(taken)["user_id"] == "alice"


def test_with_sender_auth_off_the_from_is_taken_as_it_is(store):
    settings = email_settings(require_sender_auth=False, trusted_authserv_ids=[])
    adapter = EmailAdapter(address="flora@flora.test", smtp=MailServer(host="127.0.0.1", port=25),
                           require_sender_auth=settings.require_sender_auth)
    service = ChannelService("mail", settings, store, tenant_id="default")
    unchecked = mail("alice@people.test", "hi", message_id="<u1@people.test>", authentication=None)
    assert len(service.receive(adapter, {"uid": 3, "uidvalidity": 1, "body": unchecked.as_bytes()})) == 1

