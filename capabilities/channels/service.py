"""ChannelService: what a chat channel decides, as a plain class (its actor only moves messages).

- ``receive``: what came in (a polled update, a webhook call's) is parsed by the adapter,
  checked against the channel's allow-list and identity map, and **recorded in the store
  before anyone acknowledges it**, keyed by the channel's id for it. A redelivery finds the
  record and is dropped; an unknown sender's message, and one whose sender the adapter could
  not verify (``Inbound.unverified``: an e-mail's forged From), is recorded as refused,
  logged, and never answered. Returns the new messages to hand to Flora.
- ``user_input``: a recorded message as Flora's ``user_input``: the sender as its Flora user,
  ``channel`` ``<name>:<chat id>`` (a loop task made here notifies here), an approval button
  as ``approve`` for its task, an option button as the option's id.
- ``command``: ``/link``, ``/link <code>``, ``/unlink [account]`` and ``/whoami``, answered
  here (they are about who the sender is, not work for Flora): see
  :mod:`common.accounts.linking`. A linked account is its person's Flora user everywhere.
- ``outbound`` / ``notification``: a reply or a notification as what to send, with Yes/No
  buttons for an approval question and a button per option for a clarification.

Group chats: each message is its sender's (their tasks, approvals and conversation), but what
Flora remembers or recalls there is the group's (``group`` on the ``user_input``): a member's
own memories are never recalled into a chat others read, nor the group's talk into theirs.
"""

from __future__ import annotations

import logging
from typing import Any

from common import messages as m
from common.tasks.models import (
    CHANNEL_ANSWERED, CHANNEL_DISPATCHED, CHANNEL_REFUSED, CHANNEL_REPLIED, PAUSED_STATES, ChannelMessage,
    Notification, WAITING_APPROVAL,
)
from common.tasks.store import TaskStore
from common.accounts.linking import Account, AccountLinks, LinkRefused
from capabilities.channels.model import (
    Button, Inbound, MalformedUpdate, Outbound, approve_data, option_data,
)

log = logging.getLogger("flora.channels")

MAX_BUTTON_LABEL = 60
MAX_BUTTON_DATA = 64  # Telegram's limit on callback_data, the smallest of the three
OPTIONS_PER_ROW = 2


class ChannelService:
    def __init__(self, name: str, settings: Any, store: TaskStore, *, tenant_id: str,
                 links: AccountLinks | None = None):
        self.name = name
        self.settings = settings
        self.tenant_id = tenant_id
        self._store = store
        self._allow = set(settings.allow)
        self.links = links  # None: accounts are not linked (each is its own user)

    # -- in -------------------------------------------------------------------------
    def receive(self, adapter: Any, raw: Any) -> list[ChannelMessage]:
        """Parse, check and record what came in; the messages that are new and allowed.
        MalformedUpdate propagates (the caller logs it and goes on)."""
        return self.record(adapter.parse(raw))

    def record(self, inbounds: list[Inbound]) -> list[ChannelMessage]:
        """Check and record parsed messages; those that are new and allowed."""
        fresh = []
        for inbound in inbounds:
            allowed = self.flora_user(inbound.sender_id) is not None and not inbound.unverified
            record = ChannelMessage(tenant_id=self.tenant_id, channel=self.name, message_key=inbound.key,
                                    payload=inbound.to_dict(),
                                    state="received" if allowed else CHANNEL_REFUSED)
            if not self._store.record_channel_message(record):
                log.info("channel %s: message %s came again; it was handled already", self.name, inbound.key)
                continue
            if inbound.unverified:
                log.warning("channel %s: refused message %s: its sender %s is not verified: %s", self.name,
                            inbound.key, inbound.sender_id, inbound.unverified)
                continue
            if not allowed:
                log.warning("channel %s: refused message %s from unknown sender %s in chat %s", self.name,
                            inbound.key, inbound.sender_id, inbound.chat_id)
                continue
            fresh.append(record)
        return fresh

    def flora_user(self, sender_id: str) -> str | None:
        """The Flora user a sender is, None when the sender may not talk to Flora."""
        who = self.account(sender_id)
        return who.user if who is not None else None

    def account(self, sender_id: str) -> Account | None:
        """A sender as an account: the operator's mapping (``users``, fixed), else its link,
        else its own user ``<channel>:<sender>``; None when the sender may not talk to Flora."""
        account = f"{self.name}:{sender_id}"
        if sender_id in self.settings.users:
            return Account(account, self.settings.users[sender_id], fixed=True)
        if sender_id in self._allow or "*" in self._allow:
            user = self.links.resolve(self.tenant_id, account, account) if self.links is not None else account
            return Account(account, user)
        return None

    def msg_id(self, record: ChannelMessage) -> str:
        return f"ch_{self.name}_{record.message_key}"

    def user_input(self, record: ChannelMessage) -> dict:
        inbound = Inbound.from_dict(record.payload)
        who = self.account(inbound.sender_id)
        if who is None:  # the allow-list changed since it was recorded
            raise MalformedUpdate(f"sender {inbound.sender_id} may no longer talk to Flora")
        user, conversation = who.user, f"{self.name}:{inbound.chat_id}"
        if self.links is not None:
            self.links.seen(self.tenant_id, conversation, who, group=inbound.in_group())
        fields: dict[str, Any] = {"content": inbound.text}
        if inbound.task_id:  # an answer to a question about that task (a reply to its question mail)
            fields["task_id"] = inbound.task_id
        action = inbound.action or {}
        if "approve" in action:
            fields = {"content": "", "task_id": action["task_id"], "approve": bool(action["approve"])}
        elif "option" in action:
            fields = {"content": action["option"]}
        if inbound.in_group():
            fields["group"] = conversation
        return m.user_input(user_id=user, tenant_id=self.tenant_id, msg_id=self.msg_id(record),
                            channel=conversation, **fields)

    # -- who is who -------------------------------------------------------------------
    def command(self, record: ChannelMessage) -> dict | None:
        """The reply to ``/link``, ``/unlink`` or ``/whoami``; None for any other message."""
        inbound = Inbound.from_dict(record.payload)
        words = inbound.text.split() if inbound.action is None else []
        name = words[0].split("@", 1)[0].lower() if words else ""
        if self.links is None or name not in COMMANDS:
            return None
        who = self.account(inbound.sender_id)
        if who is None:
            return None  # user_input refuses it
        try:
            text = COMMANDS[name](self, who, words[1:], inbound.in_group())
        except LinkRefused as exc:
            log.info("channel %s: %s from %s refused: %s", self.name, name, who.account, exc.reason)
            return m.task_error(msg_id=self.msg_id(record), error_type="forbidden", message=str(exc))
        return m.chat_reply(msg_id=self.msg_id(record), message=text, intent="account")

    def _link(self, who: Account, args: list[str], group: bool) -> str:
        if args:  # redeeming works anywhere: the code is spent once read
            user = self.links.redeem_in_chat(self.tenant_id, "".join(args), who)
            log.info("channel %s: account %s linked to user %s", self.name, who.account, user)
            self._tell(user, f"{who.account} is now linked to you. Not you? Send /unlink {who.account}.")
            return f"Linked: {who.account} is now {user}. /whoami lists your accounts; /unlink undoes it."
        if group:
            raise LinkRefused("group", "Codes are given in a direct chat only: others read this one.")
        code = self.links.issue(self.tenant_id, who.user, who)
        return (f"Your code: {code} (valid 10 minutes, once). Send /link {code} from your other account, "
                f"or enter it in the browser under Linked accounts.")

    def _unlink(self, who: Account, args: list[str], group: bool) -> str:
        account = self.links.unlink(self.tenant_id, who, args[0] if args else None)
        log.info("channel %s: account %s unlinked from user %s", self.name, account, who.user)
        return f"Unlinked: {account} is on its own again."

    def _whoami(self, who: Account, args: list[str], group: bool) -> str:
        if group:
            raise LinkRefused("group", "Ask /whoami in a direct chat: others read this one.")
        accounts = sorted({who.account, *self.links.accounts(self.tenant_id, who.user)})
        return f"You are {who.user}. Accounts: {', '.join(accounts)}."

    def _tell(self, user: str, text: str) -> None:
        """A notice to the person an account was linked to, wherever they read it."""
        self._store.add_notification(Notification(notification_id=m.new_id("note"), tenant_id=self.tenant_id,
                                                  user_id=user, kind="account_linked", message=text))

    def dispatched(self, record: ChannelMessage) -> None:
        self._store.update_channel_message(self.tenant_id, self.name, record.message_key, CHANNEL_DISPATCHED)

    def replied(self, record: ChannelMessage, reply: dict) -> None:
        """Keep the reply with its message before sending it: a restart sends it, not runs it again."""
        self._store.update_channel_message(self.tenant_id, self.name, record.message_key, CHANNEL_REPLIED,
                                           reply=reply)

    def refused(self, record: ChannelMessage) -> None:
        self._store.update_channel_message(self.tenant_id, self.name, record.message_key, CHANNEL_REFUSED)

    def answered(self, record: ChannelMessage) -> None:
        self._store.update_channel_message(self.tenant_id, self.name, record.message_key, CHANNEL_ANSWERED)

    def has_delivery(self, ref: str) -> bool:
        """Whether the outbox holds an entry answering ``ref`` (a message key, a notification id)."""
        return bool(self._store.channel_deliveries(self.tenant_id, self.name, ref=ref, limit=1))

    def open_messages(self) -> list[ChannelMessage]:
        return self._store.open_channel_messages(self.tenant_id, self.name)

    # -- out ------------------------------------------------------------------------
    def outbound(self, record: ChannelMessage, reply: dict) -> Outbound:
        """A reply (the reply contract) to the message ``record`` as what to send to its chat."""
        out = self._outbound(record, reply)
        out.thread = dict(record.payload.get("thread") or {})
        return out

    def _outbound(self, record: ChannelMessage, reply: dict) -> Outbound:
        chat = record.payload["chat_id"]
        kind = reply.get("message_type")
        text = reply.get("message", "")
        if kind == "task_error":
            return Outbound(chat_id=chat, text=f"⚠️ {text}", kind="reply", ref=record.message_key)
        if kind == "task_paused":
            return self._question(chat, reply, record.message_key)
        if kind == "clarification":
            buttons = [Button(label=_short(o["label"]), data=option_data(o["id"])) for o in reply.get("options", [])
                       if len(option_data(o["id"]).encode()) <= MAX_BUTTON_DATA]
            rows = [buttons[i:i + OPTIONS_PER_ROW] for i in range(0, len(buttons), OPTIONS_PER_ROW)]
            return Outbound(chat_id=chat, text=text, kind="question", ref=record.message_key, buttons=rows)
        return Outbound(chat_id=chat, text=m.reply_text(reply) if kind == "task_queued" else text,
                        kind="reply", ref=record.message_key)

    def _question(self, chat: str, paused: dict, ref: str) -> Outbound:
        if paused.get("pause_kind") == WAITING_APPROVAL:
            return Outbound(chat_id=chat, text=paused.get("message", ""), kind="question", ref=ref,
                            buttons=self._approval_buttons(paused["task_id"]), task_id=paused["task_id"])
        # the question names each missing parameter already
        return Outbound(chat_id=chat, text=paused.get("message", ""), kind="question", ref=ref,
                        task_id=paused.get("task_id", ""))

    def _approval_buttons(self, task_id: str) -> list[list[Button]]:
        if len(approve_data(task_id, False).encode()) > MAX_BUTTON_DATA:
            return []
        return [[Button(label="✅ Yes", data=approve_data(task_id, True)),
                 Button(label="❌ No", data=approve_data(task_id, False))]]

    def notification(self, note: dict) -> Outbound | None:
        """A notification (a loop run's result) for a chat of this channel, None when it names none."""
        name, _, chat = str(note.get("channel") or "").partition(":")
        if name != self.name or not chat:
            return None
        buttons: list[list[Button]] = []
        task_id = note.get("task_id")
        asks = ""
        if task_id and note.get("kind") in ("loop_run_paused", "task_paused"):
            task = self._store.get_task(note["tenant_id"], task_id)
            if task is not None and task.state == WAITING_APPROVAL:
                buttons = self._approval_buttons(task_id)
            if task is not None and task.state in PAUSED_STATES:
                asks = task_id
        return Outbound(chat_id=chat, text=note.get("message", ""), kind="notification",
                        ref=note.get("notification_id", ""), buttons=buttons, task_id=asks)


COMMANDS = {"/link": ChannelService._link, "/unlink": ChannelService._unlink, "/whoami": ChannelService._whoami}


def _short(label: str) -> str:
    return label if len(label) <= MAX_BUTTON_LABEL else label[:MAX_BUTTON_LABEL - 1].rstrip() + "…"
