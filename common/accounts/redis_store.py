"""Redis backend of the LinkStore, for several nodes: keys under ``<prefix>:{<tenant>}:acct``
(one hash slot per tenant, like the TaskStore's)."""

from __future__ import annotations

import json
import uuid

import redis

from common.accounts.store import Conversation, LinkStore

CODE_SWEEP_S = 24 * 3600  # an unused code's key is dropped after this, long after it expired

# set the link only when the account has none; answer whoever it is linked to afterwards
_LINK = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('SADD', KEYS[2], ARGV[1])
end
return redis.call('HGET', KEYS[1], ARGV[1])
"""


class RedisLinkStore(LinkStore):
    def __init__(self, client: redis.Redis, *, prefix: str = "flora"):
        if not client.connection_pool.connection_kwargs.get("decode_responses"):
            raise ValueError("RedisLinkStore needs a client made with decode_responses=True")
        self._redis = client
        self._prefix = prefix
        self._link = client.register_script(_LINK)

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "flora") -> "RedisLinkStore":
        return cls(redis.Redis.from_url(url, decode_responses=True), prefix=prefix)

    def _key(self, tenant_id: str, *parts: str) -> str:
        if not isinstance(tenant_id, str) or not tenant_id or any(c in tenant_id for c in "{}|"):
            raise ValueError(f"tenant id must be non-empty without '{{', '}}' or '|'; got {tenant_id!r}")
        return ":".join((f"{self._prefix}:{{{tenant_id}}}:acct", *parts))

    def linked_user(self, tenant_id: str, account: str) -> str | None:
        return self._redis.hget(self._key(tenant_id, "links"), account)

    def link(self, tenant_id: str, account: str, user_id: str) -> str:
        user_set = self._key(tenant_id, "user", user_id)
        return self._link(keys=[self._key(tenant_id, "links"), user_set], args=[account, user_id])

    def unlink(self, tenant_id: str, account: str) -> str | None:
        links = self._key(tenant_id, "links")

        def write(pipe: redis.client.Pipeline) -> str | None:
            user = pipe.hget(links, account)
            pipe.multi()
            if user is not None:
                pipe.hdel(links, account)
                pipe.srem(self._key(tenant_id, "user", user), account)
            return user

        return self._redis.transaction(write, links, value_from_callable=True)

    def accounts_of(self, tenant_id: str, user_id: str) -> list[str]:
        return sorted(self._redis.smembers(self._key(tenant_id, "user", user_id)))

    def put_code(self, tenant_id: str, code_hash: str, data: dict, expires_at: float) -> None:
        # the expiry is checked against the caller's clock on taking; Redis's TTL only sweeps
        self._redis.set(self._key(tenant_id, "code", code_hash), json.dumps({"data": data, "expires_at": expires_at}),
                        ex=CODE_SWEEP_S)

    def take_code(self, tenant_id: str, code_hash: str, now: float) -> dict | None:
        raw = self._redis.getdel(self._key(tenant_id, "code", code_hash))
        if not raw:
            return None
        kept = json.loads(raw)
        return kept["data"] if kept["expires_at"] > now else None

    def count_failure(self, tenant_id: str, key: str, window_s: float, now: float) -> int:
        zkey = self._key(tenant_id, "fail", key)
        pipe = self._redis.pipeline(transaction=True)
        pipe.zremrangebyscore(zkey, "-inf", now - window_s)
        pipe.zadd(zkey, {f"{now!r}:{uuid.uuid4().hex}": now})
        pipe.expire(zkey, int(window_s) + 1)
        pipe.zcard(zkey)
        return int(pipe.execute()[-1])

    def failures(self, tenant_id: str, key: str, window_s: float, now: float) -> int:
        return int(self._redis.zcount(self._key(tenant_id, "fail", key), f"({now - window_s!r}", "+inf"))

    def seen(self, tenant_id: str, record: Conversation) -> None:
        data = json.dumps(record.to_dict())
        pipe = self._redis.pipeline(transaction=True)
        pipe.set(self._key(tenant_id, "conv", record.conversation), data)
        if not record.group:
            pipe.set(self._key(tenant_id, "last", record.user), data)
        pipe.execute()

    def conversation(self, tenant_id: str, conversation: str) -> Conversation | None:
        raw = self._redis.get(self._key(tenant_id, "conv", conversation))
        return Conversation.from_dict(json.loads(raw)) if raw else None

    def last_conversation(self, tenant_id: str, user_id: str) -> Conversation | None:
        raw = self._redis.get(self._key(tenant_id, "last", user_id))
        return Conversation.from_dict(json.loads(raw)) if raw else None

    def close(self) -> None:
        self._redis.close()
