"""API keys: which tenant (and maybe which user) a request acts for.

Keys come from ``http.api_keys`` and from the environment variable named by
``http.api_keys_env`` (``"key=tenant,key2=tenant:user"``), so secrets can stay out of files.
With no key at all the server is open, as the default tenant; ``main`` allows that only on
a loopback address.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from typing import Mapping

from config import ConfigError, FloraConfig


@dataclass(frozen=True)
class Principal:
    """Who a request acts for: a tenant, and the user the key is pinned to (or None)."""

    tenant_id: str
    user_id: str | None = None


class AuthError(Exception):
    """No key or an unknown one; the message says which."""


class KeyRing:
    def __init__(self, keys: Mapping[str, Principal], *, default_tenant: str):
        self._keys = dict(keys)
        self._default_tenant = default_tenant

    @classmethod
    def from_config(cls, config: FloraConfig, env: Mapping[str, str]) -> "KeyRing":
        keys: dict[str, Principal] = {}
        for key, grant in config.http.api_keys.items():
            keys[key] = (Principal(grant) if isinstance(grant, str)
                         else Principal(grant.tenant, grant.user or None))
        keys.update(parse_key_list(env.get(config.http.api_keys_env, ""), config.http.api_keys_env))
        return cls(keys, default_tenant=config.default_tenant)

    @property
    def open(self) -> bool:
        """No key is configured: every request acts for the default tenant."""
        return not self._keys

    def authenticate(self, authorization: str | None, api_key: str | None) -> Principal:
        if self.open:
            return Principal(self._default_tenant)
        given = api_key or _bearer(authorization)
        if not given:
            raise AuthError("an API key is required: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'")
        for key, principal in self._keys.items():
            if hmac.compare_digest(key.encode(), given.encode()):
                return principal
        raise AuthError("the API key is not valid")


def parse_key_list(text: str, source: str) -> dict[str, Principal]:
    """``"key=tenant,key2=tenant:user"`` → keys; ConfigError naming ``source`` if malformed."""
    keys: dict[str, Principal] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, grant = item.partition("=")
        tenant, _, user = grant.partition(":")
        if not sep or not key.strip() or not tenant.strip():
            raise ConfigError(f"{source}: expected 'key=tenant' or 'key=tenant:user', got {item!r}")
        keys[key.strip()] = Principal(tenant.strip(), user.strip() or None)
    return keys


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bearer(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""
