"""PollerLease: with several nodes, exactly one polls each bot or mailbox.

A lease is one Redis key per polled account (``<prefix>:poller:<channel>``; every node reads
the same configuration, so a channel's name is the account), set with ``SET NX PX`` to the
holder's id. The holder renews it every ``ttl_s / 3`` (a compare-and-set script: only while it
still holds it) and polls only while renewals succeed; when its node dies the key expires
within ``ttl_s`` and the next node to try takes it. Webhook calls need no lease: any node may
take them. Without Redis (the single-node embedded default) there is no lease: the one node
polls.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

import redis

log = logging.getLogger("flora.channels.lease")

LEASE_TTL_S = 10.0  # a dead holder's lease is free after this; another node takes over within it plus a try

_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


class PollerLease:
    def __init__(self, client: redis.Redis, key: str, holder: str, *, ttl_s: float = LEASE_TTL_S):
        self._redis, self.key, self.holder, self.ttl_s = client, key, holder, ttl_s
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)

    @property
    def every_s(self) -> float:
        """How often a holder renews, and a waiting node tries again."""
        return self.ttl_s / 3

    def acquire(self) -> bool:
        return bool(self._redis.set(self.key, self.holder, nx=True, px=int(self.ttl_s * 1000)))

    def renew(self) -> bool:
        return bool(self._renew(keys=[self.key], args=[self.holder, int(self.ttl_s * 1000)]))

    def release(self) -> None:
        self._release(keys=[self.key], args=[self.holder])

    def holder_now(self) -> str | None:
        return self._redis.get(self.key)

    def run_while_held(self, work: Callable[[threading.Event], None], stop: threading.Event) -> None:
        """Until ``stop``: wait for the lease, run ``work(lost)`` on a thread while it is held
        (``lost`` is set when a renewal fails or ``stop`` is set, and ``work`` returns then),
        and wait for it again once it is lost."""
        while not stop.is_set():
            try:
                held = self.acquire()
            except redis.RedisError as exc:
                log.warning("lease %s: Redis failed (%s); trying again in %.1f s", self.key, exc, self.every_s)
                held = False
            if not held:
                stop.wait(self.every_s)
                continue
            log.info("lease %s: %s polls now", self.key, self.holder)
            lost = threading.Event()
            worker = threading.Thread(target=work, args=(lost,), name=f"{self.key}-poller", daemon=True)
            worker.start()
            while not stop.wait(self.every_s):
                try:
                    if self.renew():
                        continue
                except redis.RedisError as exc:
                    log.warning("lease %s: renewal failed (%s)", self.key, exc)
                log.warning("lease %s: lost by %s; it stops polling", self.key, self.holder)
                break
            lost.set()
            worker.join(timeout=self.ttl_s)
            if stop.is_set():
                try:
                    self.release()  # a clean stop hands the account over at once
                except redis.RedisError:
                    pass
