"""One person across channels: one-time codes that link chat accounts to one Flora user, the
attacks they withstand (guessing, replaying, taking someone else's account), the chat commands,
group chats remembering as the group, and notifications following the person. Every store test
runs on SQLite and on Redis."""

from __future__ import annotations

import pytest

from agents.coordination.interaction_coordinator import InteractionCoordinator
from agents.coordination.notification_desk import NotificationDesk
from api.service import APIError, Caller, FloraService
from capabilities.channels.model import Inbound
from capabilities.channels.service import ChannelService
from capabilities.channels.telegram import TelegramAdapter
from common import messages as m
from common.accounts.linking import (
    CODE_TTL_S, MAX_FAILURES, MAX_TENANT_FAILURES, Account, AccountLinks, LinkRefused,
)
from common.accounts.store import open_link_store
from common.tasks.models import ChannelMessage
from config import load_config


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def links_store(store_config):
    store = open_link_store(store_config)
    yield store
    store.close()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def links(links_store, clock):
    return AccountLinks(links_store, clock=clock)


TG = Account("tg:7", "tg:7")
DC = Account("dc:9", "dc:9")
MALLORY = Account("dc:66", "dc:66")


# -- codes -------------------------------------------------------------------------------------
def test_a_code_from_one_chat_links_another_account_to_the_same_person(links):
    code = links.issue("acme", TG.user, TG)
    assert len(code) == 8
    assert links.redeem_in_chat("acme", code.lower(), DC) == "tg:7"  # typed in lower case: the same code
    assert links.resolve("acme", "dc:9", "dc:9") == "tg:7"
    assert links.accounts("acme", "tg:7") == ["dc:9"]
    assert links.resolve("other-tenant", "dc:9", "dc:9") == "dc:9"  # a tenant's links are its own


def test_a_code_links_once_and_a_replay_links_nothing(links):
    code = links.issue("acme", TG.user, TG)
    links.redeem_in_chat("acme", code, DC)
    with pytest.raises(LinkRefused) as refused:
        links.redeem_in_chat("acme", code, MALLORY)
    assert refused.value.reason == "unknown_code"
    assert links.resolve("acme", MALLORY.account, MALLORY.user) == MALLORY.user


def test_an_expired_code_links_nothing(links, clock):
    code = links.issue("acme", TG.user, TG)
    clock.now += CODE_TTL_S + 1
    with pytest.raises(LinkRefused, match="unknown or has expired"):
        links.redeem_in_chat("acme", code, DC)


def test_guessing_is_cut_off_per_account_and_per_tenant_even_for_a_right_code(links, clock):
    code = links.issue("acme", TG.user, TG)
    for _ in range(MAX_FAILURES):
        with pytest.raises(LinkRefused):
            links.redeem_in_chat("acme", "AAAAAAAA", MALLORY)
    with pytest.raises(LinkRefused) as refused:
        links.redeem_in_chat("acme", code, MALLORY)  # the right one, now refused unread
    assert refused.value.reason == "too_many"
    assert links.redeem_in_chat("acme", code, DC) == "tg:7"  # nobody else is locked out, and the code lived on
    for n in range(MAX_TENANT_FAILURES):  # many accounts guessing together
        with pytest.raises(LinkRefused):
            links.redeem_in_chat("acme", "BBBBBBBB", Account(f"dc:g{n}", f"dc:g{n}"))
    fresh = links.issue("acme", TG.user, TG)
    with pytest.raises(LinkRefused, match="Too many"):
        links.redeem_in_chat("acme", fresh, Account("dc:new", "dc:new"))
    clock.now += 901  # the window passed (and that code with it)
    assert links.redeem_in_chat("acme", links.issue("acme", TG.user, TG), Account("dc:new", "dc:new")) == "tg:7"


def test_an_account_linked_to_someone_else_or_mapped_by_the_operator_is_not_taken(links):
    links.redeem_in_chat("acme", links.issue("acme", "bob", None), DC)
    assert links.resolve("acme", "dc:9", "dc:9") == "bob"
    with pytest.raises(LinkRefused) as refused:  # alice's code from bob's linked account
        links.redeem_in_chat("acme", links.issue("acme", "alice", None), Account("dc:9", "bob"))
    assert refused.value.reason == "taken" and links.resolve("acme", "dc:9", "dc:9") == "bob"
    with pytest.raises(LinkRefused) as refused:
        links.redeem_in_chat("acme", links.issue("acme", "alice", None), Account("tg:1", "carol", fixed=True))
    assert refused.value.reason == "fixed"


def test_a_code_made_in_a_chat_entered_in_the_browser_links_that_chat_account(links):
    code = links.issue("acme", TG.user, TG)
    assert links.redeem_in_browser("acme", code, "alice") == "tg:7"
    assert links.resolve("acme", "tg:7", "tg:7") == "alice"
    with pytest.raises(LinkRefused) as refused:  # a browser code belongs in a chat
        links.redeem_in_browser("acme", links.issue("acme", "alice"), "mallory")
    assert refused.value.reason == "no_account"


def test_unlinking_gives_the_account_back_to_itself_and_only_the_owner_can(links):
    links.redeem_in_chat("acme", links.issue("acme", "alice", None), DC)
    with pytest.raises(LinkRefused, match="not linked to you"):
        links.unlink("acme", MALLORY, "dc:9")
    assert links.unlink("acme", Account("tg:7", "alice"), "dc:9") == "dc:9"  # from another of alice's accounts
    assert links.resolve("acme", "dc:9", "dc:9") == "dc:9" and links.accounts("acme", "alice") == []


# -- where notifications go ---------------------------------------------------------------------
def test_a_notification_goes_where_it_was_asked_while_that_chat_is_still_the_persons(links):
    alice_dc = Account("dc:9", "alice")
    links.redeem_in_chat("acme", links.issue("acme", "alice", None), DC)
    links.seen("acme", "dc:chat9", alice_dc, group=False)
    links.seen("acme", "tg:7", Account("tg:7", "alice", fixed=True), group=False)  # used last
    assert links.route("acme", "alice", "dc:chat9") == "dc:chat9"  # the origin
    assert links.route("acme", "alice", None) == "tg:7"  # asked in the browser: where they talk last
    links.unlink("acme", alice_dc)
    assert links.route("acme", "alice", "dc:chat9") == "tg:7"  # that chat is no longer alice's
    links.redeem_in_chat("acme", links.issue("acme", "bob", None), DC)
    links.seen("acme", "dc:chat9", Account("dc:9", "bob"), group=False)
    assert links.route("acme", "alice", "dc:chat9") == "tg:7"
    assert links.route("acme", "bob", "dc:chat9") == "dc:chat9"


def test_the_notification_desk_readdresses_a_note_whose_chat_left_its_person(links, store):
    links.redeem_in_chat("acme", links.issue("acme", "alice", None), DC)
    links.seen("acme", "dc:chat9", Account("dc:9", "alice"), group=False)
    links.seen("acme", "tg:7", Account("tg:7", "alice", fixed=True), group=False)
    links.unlink("acme", Account("dc:9", "alice"))
    desk = NotificationDesk(store, channels={"dc": "DC-ACTOR", "tg": "TG-ACTOR"}, links=links)
    note = m.notification(notification_id="n1", tenant_id="acme", user_id="alice", message="done",
                          kind="loop_run", channel="dc:chat9")
    [(address, sent)] = desk.deliveries(note)
    assert address == "TG-ACTOR" and sent["channel"] == "tg:7" and note["channel"] == "dc:chat9"


# -- in the chats ----------------------------------------------------------------------------------
def service(name, store, links, **settings):
    settings = {"type": "telegram", "mode": "polling", "token_env": "T", "allow": ["*"], **settings}
    config = load_config({"channels": {name: settings}}, env={})
    return ChannelService(name, config.channels[name], store, tenant_id="acme", links=links)


def said(service_, key, text, *, chat="7", sender="7", group=None):
    return ChannelMessage(tenant_id="acme", channel=service_.name, message_key=key,
                          payload=Inbound(key=key, chat_id=chat, sender_id=sender, text=text, group=group).to_dict())


def test_link_in_one_channel_then_the_code_in_another_makes_both_one_user(store, links):
    tg, dc = service("tg", store, links), service("dc", store, links)
    reply = tg.command(said(tg, "1", "/link"))
    code = reply["message"].split("Your code: ")[1].split()[0]
    assert tg.command(said(tg, "2", "/link", chat="-100", group=True))["error_type"] == "forbidden"  # not in a group
    assert "Linked" in dc.command(said(dc, "3", f"/link@FloraBot {code}", chat="9", sender="9"))["message"]
    assert dc.user_input(said(dc, "4", "what did I ask?", chat="9", sender="9"))["user_id"] == "tg:7"
    assert "dc:9" in tg.command(said(tg, "5", "/whoami"))["message"]
    notes = store.notifications("acme", "tg:7")
    assert [n.kind for n in notes] == ["account_linked"] and "/unlink dc:9" in notes[0].message
    assert dc.command(said(dc, "6", "/unlink", chat="9", sender="9"))["message"].startswith("Unlinked")
    assert dc.user_input(said(dc, "7", "hi", chat="9", sender="9"))["user_id"] == "dc:9"
    assert tg.command(said(tg, "8", "hello")) is None  # anything else goes to Flora


def test_in_a_group_each_message_is_its_senders_but_memory_is_the_groups(store, links):
    tg = service("tg", store, links)
    msg = tg.user_input(said(tg, "1", "remember that we ship on Fridays", chat="-100", sender="7", group=True))
    assert msg["user_id"] == "tg:7" and msg["group"] == "tg:-100"
    assert "group" not in tg.user_input(said(tg, "2", "hi"))

    class NewWork:
        def handle_user_input(self, msg, history=None, standing=None):
            from capabilities.context.conversation_manager import Decision
            return Decision("new_task", needs_backend=True, content=msg["content"])

    desk = InteractionCoordinator(NewWork(), memory_store=store)
    [(to, recall)] = desk.on_user_input(msg)
    assert to == "memory" and recall["op"] == "recall" and recall["user_id"] == "tg:-100"


def test_telegram_says_which_chats_are_groups():
    adapter = TelegramAdapter(token="1:a", base_url="http://127.0.0.1:9")
    update = {"update_id": 1, "message": {"text": "hi", "from": {"id": 7}, "chat": {"id": -100, "type": "group"}}}
    assert adapter.parse(update)[0].in_group()
    update["message"]["chat"] = {"id": 7, "type": "private"}
    assert not adapter.parse(update)[0].in_group()
    adapter.close()


# -- the HTTP API's side ----------------------------------------------------------------------------
def test_the_browser_gives_codes_takes_codes_lists_and_unlinks(store, links):
    api = FloraService(gateway=None, store=store, interaction=None, scheduler=None, router=None,
                       default_user="web", ask_timeout_s=1, links=links)
    alice = Caller("acme", "alice")
    code = api.link_code(alice)["code"]
    tg = service("tg", store, links)
    tg.command(said(tg, "1", f"/link {code}"))
    assert api.linked(alice) == {"user_id": "alice", "accounts": ["tg:7"]}
    dc = service("dc", store, links)
    chat_code = dc.command(said(dc, "2", "/link", chat="9", sender="9"))["message"].split("Your code: ")[1].split()[0]
    assert api.link(alice, chat_code)["accounts"] == ["dc:9", "tg:7"]
    with pytest.raises(APIError) as refused:
        api.link(alice, chat_code)
    assert refused.value.status == 400 and refused.value.error_type == "unknown_code"
    assert api.unlink(alice, "dc:9")["accounts"] == ["tg:7"]
    with pytest.raises(APIError) as refused:
        api.unlink(Caller("acme", "mallory"), "tg:7")
    assert refused.value.status == 404
