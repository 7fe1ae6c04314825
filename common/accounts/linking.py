"""AccountLinks: one person across channels, as a plain class (docs/channels.md).

A person asks for a one-time code in one place and enters it in another:

- ``/link`` in a chat (or ``POST /v1/links/code`` in the HTTP API) *issues* a code for the
  Flora user that account is; ``/link <code>`` from another chat account *redeems* it: that
  account is linked to the issuer's user, so whatever the person says there is theirs.
- A code issued in a chat may instead be entered in the browser (``POST /v1/links``): then
  the issuing account is linked to the browser's user.

What the codes withstand:

- guessing: 8 characters of a 31-letter alphabet (about 2^39.6), alive ``CODE_TTL_S``, and
  failed attempts counted per account (``MAX_FAILURES`` per ``FAILURE_WINDOW_S``) and per
  tenant (``MAX_TENANT_FAILURES``): past either limit every attempt is refused unread;
- replaying: a code is taken out of the store in the same step as it is read, so it links
  once even when two nodes are handed it at the same moment; only its hash is stored;
- taking an account that is someone else's: an account linked to another person, or mapped
  by the operator in the channel's ``users``, is not moved; it must be unlinked first (the
  operator's mapping cannot be);
- being fooled: every link is reported where it happens and to the person it joins, who can
  ``/unlink <account>`` from any of their accounts.

A code is a bearer secret for the minutes it lives: it is shown only in a direct chat (never
in a group, where others read it), and whoever holds it can link an account to its issuer.

Errors::

    LinkRefused         the code is unknown or expired, the attempts are used up, the account
                        is someone else's, or the request makes no sense (``reason`` says which)
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import Callable

from common.accounts.store import Conversation, LinkStore

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: read aloud or typed from a phone
CODE_LENGTH = 8
CODE_TTL_S = 600.0
FAILURE_WINDOW_S = 900.0
MAX_FAILURES = 5  # per account (or browser user) in the window
MAX_TENANT_FAILURES = 50  # all accounts of a tenant together: many accounts guessing at once


class LinkRefused(Exception):
    """A link that was not made; ``reason`` is a short key (``unknown_code``, ``too_many``,
    ``taken``, ``fixed``, ``same``, ``no_account``, ``group``, ``not_yours``)."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Account:
    """A chat account as it talks now: ``account`` (``<channel>:<sender>``), the Flora ``user``
    it is, and whether the operator mapped it (``fixed``: it cannot be linked or unlinked)."""

    account: str
    user: str
    fixed: bool = False


class AccountLinks:
    def __init__(self, store: LinkStore, *, clock: Callable[[], float] = time.time,
                 token: Callable[[int], str] | None = None):
        self._store = store
        self._clock = clock
        self._token = token or _token

    # -- who is who -------------------------------------------------------------------
    def resolve(self, tenant: str, account: str, default_user: str) -> str:
        """The Flora user an account is: its link, or ``default_user`` when it has none."""
        return self._store.linked_user(tenant, account) or default_user

    def accounts(self, tenant: str, user: str) -> list[str]:
        return self._store.accounts_of(tenant, user)

    # -- codes --------------------------------------------------------------------------
    def issue(self, tenant: str, user: str, who: Account | None = None) -> str:
        """A new code that links an account to ``user``; ``who``: the chat account that asked
        for it (a browser entering the code links that one), None from the browser."""
        code = self._token(CODE_LENGTH)
        data = {"user": user, "account": who.account if who else "", "fixed": bool(who and who.fixed)}
        self._store.put_code(tenant, _hash(tenant, code), data, self._clock() + CODE_TTL_S)
        return code

    def redeem_in_chat(self, tenant: str, code: str, who: Account) -> str:
        """Link the chat account ``who`` to the user the code was issued for; that user."""
        issued = self._take(tenant, code, who.account)
        if issued["user"] == who.user:
            raise LinkRefused("same", "This account is already yours.")
        self._move(tenant, who, issued["user"])
        return issued["user"]

    def redeem_in_browser(self, tenant: str, code: str, user: str) -> str:
        """Link the chat account that issued the code to the browser's ``user``; that account."""
        issued = self._take(tenant, code, f"user:{user}")
        if not issued["account"]:
            raise LinkRefused("no_account", "This code was made here; send it from the chat account to link.")
        current = self.resolve(tenant, issued["account"], issued["user"])
        if current == user:
            raise LinkRefused("same", f"{issued['account']} is already yours.")
        self._move(tenant, Account(issued["account"], current, fixed=bool(issued.get("fixed"))), user)
        return issued["account"]

    def _take(self, tenant: str, code: str, who: str) -> dict:
        now = self._clock()
        if (self._store.failures(tenant, who, FAILURE_WINDOW_S, now) >= MAX_FAILURES
                or self._store.failures(tenant, "*", FAILURE_WINDOW_S, now) >= MAX_TENANT_FAILURES):
            raise LinkRefused("too_many", "Too many wrong codes; wait a quarter of an hour and ask for a new one.")
        issued = self._store.take_code(tenant, _hash(tenant, normalise(code)), now)
        if issued is None:
            self._store.count_failure(tenant, who, FAILURE_WINDOW_S, now)
            self._store.count_failure(tenant, "*", FAILURE_WINDOW_S, now)
            raise LinkRefused("unknown_code", "That code is unknown or has expired; ask for a new one with /link.")
        return issued

    def _move(self, tenant: str, who: Account, user: str) -> None:
        if who.fixed:
            raise LinkRefused("fixed", f"{who.account} is set to a user by the operator; it cannot be linked.")
        linked = self._store.link(tenant, who.account, user)
        if linked != user:
            raise LinkRefused("taken", f"{who.account} is linked to another person; unlink it there first.")

    # -- unlinking ------------------------------------------------------------------------
    def unlink(self, tenant: str, who: Account, account: str | None = None) -> str:
        """Unlink ``account`` (default: ``who``'s own) when it is linked to ``who``'s user; the
        account unlinked. It goes back to being its own user, without the person's memory."""
        target = account or who.account
        if target == who.account and who.fixed:
            raise LinkRefused("fixed", f"{target} is set to a user by the operator; it cannot be unlinked.")
        if self._store.linked_user(tenant, target) != who.user:
            raise LinkRefused("not_yours", f"{target} is not linked to you.")
        self._store.unlink(tenant, target)
        return target

    def unlink_for(self, tenant: str, user: str, account: str) -> str:
        """Unlink one of ``user``'s accounts (the browser's way)."""
        if self._store.linked_user(tenant, account) != user:
            raise LinkRefused("not_yours", f"{account} is not linked to you.")
        self._store.unlink(tenant, account)
        return account

    # -- where a person is ------------------------------------------------------------
    def seen(self, tenant: str, conversation: str, who: Account, *, group: bool) -> None:
        self._store.seen(tenant, Conversation(conversation=conversation, account=who.account, user=who.user,
                                              fixed=who.fixed, group=group, at=self._clock()))

    def route(self, tenant: str, user: str, origin: str | None) -> str | None:
        """The conversation a notification for ``user`` goes to: where the work was asked
        (``origin``) while it is still theirs, else the direct conversation they used last
        while it is still theirs; None: it waits to be fetched."""
        if origin and self._theirs(tenant, user, self._store.conversation(tenant, origin), origin):
            return origin
        last = self._store.last_conversation(tenant, user)
        if last is not None and self._theirs(tenant, user, last, last.conversation):
            return last.conversation
        return None

    def _theirs(self, tenant: str, user: str, seen: Conversation | None, conversation: str) -> bool:
        """Whether ``user`` still reads ``conversation``: a group, one nobody was recorded in
        (made before links existed, or addressed by the operator), or a direct chat whose
        account is still theirs (not unlinked, not linked to someone else since)."""
        if seen is None or seen.group or seen.fixed:
            return seen is None or seen.group or seen.user == user
        now_user = self._store.linked_user(tenant, seen.account) or seen.account
        return now_user == user


def normalise(code: str) -> str:
    """A code as typed: case and spaces or dashes do not matter."""
    return "".join(ch for ch in str(code).upper() if ch.isalnum())


def _hash(tenant: str, code: str) -> str:
    return hashlib.sha256(f"{tenant}\x00{code}".encode()).hexdigest()


def _token(length: int) -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(length))
