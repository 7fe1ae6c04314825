"""Where account links live: the :class:`LinkStore` contract and how to open the configured one.

An *account* is ``<channel name>:<sender id>`` (``telegram:4711``); a *conversation* is
``<channel name>:<chat id>``, what a notification is addressed to. The store keeps three
things, each with an atomic operation where two nodes could race:

- links, account → Flora user: ``link`` sets one only when the account has none or the same
  (two codes redeemed at once cannot both take an account);
- one-time codes, kept by their hash (a copy of the store does not hold a live code):
  ``take_code`` returns and deletes in one step, so a code is used once even by two nodes;
- failed attempts per key in a time window (``count_failure``), what rate-limits guessing;
- conversations: who last talked in each and through which account, and each person's last
  direct conversation (``seen``, ``conversation``, ``last_conversation``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass


@dataclass
class Conversation:
    """Who last talked in a conversation: the ``account`` and the Flora ``user`` it was then;
    ``fixed``: the operator mapped that account in the channel's config (it never changes);
    ``group``: a chat of several people; ``at``: when."""

    conversation: str
    account: str
    user: str
    fixed: bool = False
    group: bool = False
    at: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Conversation":
        return cls(conversation=str(data["conversation"]), account=str(data["account"]), user=str(data["user"]),
                   fixed=_truthy(data.get("fixed")), group=_truthy(data.get("group")),
                   at=float(data.get("at") or 0.0))


def _truthy(value) -> bool:
    return value in (True, 1, "1", "true", "True")


class LinkStore(ABC):
    @abstractmethod
    def linked_user(self, tenant_id: str, account: str) -> str | None:
        """The Flora user an account was linked to, None when it was not."""

    @abstractmethod
    def link(self, tenant_id: str, account: str, user_id: str) -> str:
        """Link ``account`` to ``user_id`` unless it is linked to someone else; the user it is
        linked to afterwards (``user_id``, or the other one, unchanged)."""

    @abstractmethod
    def unlink(self, tenant_id: str, account: str) -> str | None:
        """Remove an account's link; the user it was linked to, None when it had none."""

    @abstractmethod
    def accounts_of(self, tenant_id: str, user_id: str) -> list[str]:
        """The accounts linked to a user, sorted."""

    @abstractmethod
    def put_code(self, tenant_id: str, code_hash: str, data: dict, expires_at: float) -> None:
        """Keep a code (by its hash) with what it links, until ``expires_at``."""

    @abstractmethod
    def take_code(self, tenant_id: str, code_hash: str, now: float) -> dict | None:
        """A code's data, deleted in the same step; None when there is none or it expired."""

    @abstractmethod
    def count_failure(self, tenant_id: str, key: str, window_s: float, now: float) -> int:
        """Count one failed attempt under ``key``; the failures within the last ``window_s``."""

    @abstractmethod
    def failures(self, tenant_id: str, key: str, window_s: float, now: float) -> int:
        """The failed attempts under ``key`` within the last ``window_s``."""

    @abstractmethod
    def seen(self, tenant_id: str, record: Conversation) -> None:
        """Someone talked in a conversation; a direct one becomes its user's last."""

    @abstractmethod
    def conversation(self, tenant_id: str, conversation: str) -> Conversation | None:
        """Who last talked in a conversation, None when nobody was recorded there."""

    @abstractmethod
    def last_conversation(self, tenant_id: str, user_id: str) -> Conversation | None:
        """The direct conversation a user talked in last."""

    def close(self) -> None:
        """Release connections."""


def open_link_store(config) -> LinkStore:
    """The link store beside the TaskStore the configuration asks for: the same SQLite file,
    or the same Redis under the same prefix."""
    if config.store.backend == "sqlite":
        from common.accounts.sqlite_store import SQLiteLinkStore
        return SQLiteLinkStore(config.sqlite_path)
    if config.store.backend == "redis":
        from common.accounts.redis_store import RedisLinkStore
        return RedisLinkStore.from_url(config.redis.url, prefix=config.loops.redis_prefix)
    raise ValueError(f"store.backend {config.store.backend!r} is not supported")
