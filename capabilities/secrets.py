"""Parameters that are secrets (an API key, a password), and how the conversation history keeps
them masked.

A capability marks a parameter as a secret in its JSON schema, with ``"x-flora-secret": true``
(or the standard ``"format": "password"``). The task that runs gets the real value, from the
task store, where the value has to be to run the task (after an approval, after a restart).
What the person said and Flora answered is kept as the conversation's history
(:class:`capabilities.context.conversation_log.ConversationLog`): there every secret value is
replaced by its mask, ``app-…c9f2`` (the prefix that tells what kind of key it is, up to its
first dash, and the last four characters, for a value long enough that they give nothing
away), so the history, the HTTP API's sessions and the recent turns shown to a model never
hold the key itself.

Which values are secret: those the task records of the turn hold for secret parameters (the
value the person answered with is stored there before the turn is recorded), any ``parameters``
in the turn next to the ``capability`` they are for, and text that looks like a secret
parameter's value where its schema says how one looks (``x-flora-value-pattern``, dify's
``app-…``, and read as a generated key: 12 characters or more, letters and digits): a key
pasted in the first message of a request is masked before any task exists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

SECRET = "x-flora-secret"
VALUE_PATTERN = "x-flora-value-pattern"
MIN_SECRET_CHARS = 4  # shorter values are not searched for in text (they would mask ordinary words)
_SHOWN_TAIL = 4
_MIN_FOR_TAIL = 12  # a value shorter than this shows no characters at all


def is_secret(schema: Any) -> bool:
    return isinstance(schema, dict) and (schema.get(SECRET) is True or schema.get("format") == "password")


def secret_names(parameters: Any) -> set[str]:
    """The names of the secret parameters of a capability's parameter schema."""
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    if not isinstance(properties, dict):
        return set()
    return {name for name, schema in properties.items() if is_secret(schema)}


def mask(value: str) -> str:
    """``app-AbCdEf123456`` -> ``app-…3456``; a short value -> ``…``."""
    prefix = value.split("-", 1)[0] + "-" if "-" in value[:6] else ""
    if len(value) < _MIN_FOR_TAIL:
        return (prefix if len(value) >= 8 else "") + "…"
    return f"{prefix}…{value[-_SHOWN_TAIL:]}"


def _masked_if_key_like(found: re.Match) -> str:
    """A pattern's match masked where it reads as a generated key (long, letters and digits):
    ``app-store`` fits dify's pattern and is a word, not a key."""
    text = found.group(0)
    key_like = (len(text) >= _MIN_FOR_TAIL and any(c.isdigit() for c in text)
                and any(c.isalpha() for c in text))
    return mask(text) if key_like else text


class SecretMasker:
    """Masks secret values in a turn (dicts, lists and text, to any depth)."""

    def __init__(self, schemas: dict[str, dict]):
        """``schemas``: capability name -> its parameter schema."""
        self._names = {capability: secret_names(schema) for capability, schema in schemas.items()}
        self._names = {capability: names for capability, names in self._names.items() if names}
        patterns = []
        for capability, names in self._names.items():
            for name in names:
                pattern = schemas[capability]["properties"][name].get(VALUE_PATTERN)
                if isinstance(pattern, str):
                    patterns.append(re.compile(pattern))
        self._patterns = patterns

    @classmethod
    def from_registry(cls, registry: Any) -> SecretMasker:
        return cls({spec.name: spec.parameters for spec in registry.executables()})

    def keeps_none(self, capability: Any) -> bool:
        """Whether ``capability`` (a name) is known to have no secret parameters."""
        return isinstance(capability, str) and bool(capability) and capability not in self._names

    def secret_values(self, capability: str, parameters: Any) -> list[str]:
        """The values of ``parameters`` that are secrets of ``capability``."""
        if not isinstance(parameters, dict):
            return []
        return [str(parameters[n]) for n in self._names.get(capability, ()) if isinstance(parameters.get(n), str)]

    def masked(self, value: Any, known: Iterable[str] = ()) -> Any:
        """``value`` with every secret in it masked: the ``known`` values, the values of secret
        parameters beside their capability's name, and text shaped like a secret's value."""
        known = {v for v in known if len(v) >= MIN_SECRET_CHARS}
        known |= set(self._beside_capability(value))
        return self._masked(value, sorted(known, key=len, reverse=True))

    def _beside_capability(self, value: Any) -> Iterable[str]:
        if isinstance(value, dict):
            if isinstance(value.get("capability"), str):
                yield from self.secret_values(value["capability"], value.get("parameters"))
            for item in value.values():
                yield from self._beside_capability(item)
        elif isinstance(value, list):
            for item in value:
                yield from self._beside_capability(item)

    def _masked(self, value: Any, known: list[str]) -> Any:
        if isinstance(value, str):
            for secret in known:
                if secret in value:
                    value = value.replace(secret, mask(secret))
            for pattern in self._patterns:
                value = pattern.sub(_masked_if_key_like, value)
            return value
        if isinstance(value, dict):
            return {key: self._masked(item, known) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._masked(item, known) for item in value]
        return value
