"""IntentRouter (the ``intent_router`` capability): what a request means.

``classify`` answers task / query / chat / system, or clarify (with options) when it
cannot tell which capability is meant. Rules decide what they are sure of (greetings, help,
a capability named by its keywords); the model decides the rest through one
JSON-schema-constrained call; without a model, or when its answer is unusable, the rules
fall back to chat for conversation and to a clarification for what looks like a request.

A value the model proposes for a parameter is kept only if it is written in the request:
a small model asked for an API key will otherwise invent one, and the task would run
with it instead of asking.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from capabilities.context.answers import is_greeting, is_help, sounds_like_request
from capabilities.routing.task_router import TaskRouter
from common.messages import Option

log = logging.getLogger("flora.intent")

_QUERY = re.compile(r"(\?|？|\b(what|which|who|how many|how much|show|list|find|search|query|look up|get)\b|"
                    r"查询|查一下|多少|哪些|什么|是否|吗)", re.I)
_ABOUT_ASSISTANT = re.compile(r"\b(you|your|yourself|flora|assistant|capabilit\w*|features?)\b|你|您|功能|能力", re.I)
MAX_OPTIONS = 5


@dataclass
class Intent:
    kind: str  # task | query | chat | system | clarify
    capability: str | None = None
    parameters: dict = field(default_factory=dict)
    options: list[Option] = field(default_factory=list)
    source: str = "rules"


class IntentRouter:
    def __init__(self, router: TaskRouter, llm=None):
        self._router = router
        self._llm = llm

    def decide_by_rules(self, content: str, capability: str | None = None) -> Intent | None:
        """The task the rules are sure of (a capability the user chose, or one named by its
        keywords), without a model and without blocking; None when the rules are not sure."""
        text = content.strip()
        if capability:
            spec = next((s for s in self._router.routable() if s.name == capability), None)
            return Intent("task", spec.name, self._router.extract_parameters(spec, text)) if spec else None
        if is_greeting(text) or is_help(text):
            return None
        best = self._router.confident(text)
        if best is None:
            return None
        return Intent(_task_kind(text), best.spec.name, self._router.extract_parameters(best.spec, text))

    def classify(self, content: str) -> Intent:
        text = content.strip()
        if is_greeting(text):
            return Intent("chat")
        if is_help(text):
            return Intent("system")
        ruled = self.decide_by_rules(text)
        if ruled is not None:
            return ruled
        if self._llm is not None:
            intent = self._ask_model(text)
            if intent is not None:
                return intent
        return self._fallback(text)

    # -- model -----------------------------------------------------------------------
    def _ask_model(self, text: str) -> Intent | None:
        from capabilities.llm.base import LLMError, complete_json

        specs = self._router.routable()
        names = [s.name for s in specs]
        schema = {
            "type": "object",
            "properties": {
                "intent": {"type": "string", "enum": ["task", "query", "chat", "system"]},
                "capability": {"type": "string", "enum": [*names, "none"]},
                "parameters": {"type": "object"},
            },
            "required": ["intent", "capability", "parameters"],
        }
        try:
            answer = complete_json(self._llm, _prompt(specs, text), schema, max_tokens=160)
        except LLMError as exc:
            log.warning("intent model call failed, using rules: %s", exc)
            return None
        capability = answer.get("capability")
        kind = answer.get("intent", "chat")
        if kind == "system" and not _ABOUT_ASSISTANT.search(text):
            kind = "chat"  # small models call many plain questions "system"; those are chat
        if kind in ("chat", "system"):
            return Intent(kind, source="llm")
        if capability not in names:
            return None
        spec = next(s for s in specs if s.name == capability)
        stated = self._router.extract_parameters(spec, text)
        proposed = answer.get("parameters") if isinstance(answer.get("parameters"), dict) else {}
        quoted = {k: v for k, v in proposed.items()
                  if k in spec.properties and isinstance(v, (str, int, float)) and str(v) and str(v) in text}
        return Intent(kind, capability, {**quoted, **stated}, source="llm")

    # -- rules -------------------------------------------------------------------------
    def _fallback(self, text: str) -> Intent:
        ranked = self._router.rank(text)
        if ranked:
            return Intent("clarify", options=_options([c.spec for c in ranked]))
        if sounds_like_request(text) and not _QUERY.search(text):
            return Intent("clarify", options=_options(self._router.routable()))
        return Intent("chat")



def _options(specs) -> list[Option]:
    return [{"id": str(i), "label": f"{s.name}: {s.description}", "capability": s.name}  # type: ignore[typeddict-item]
            for i, s in enumerate(specs[:MAX_OPTIONS], start=1)]


_CONVERSATION_EXAMPLES = [
    ("hi there", "chat"),
    ("who wrote Hamlet?", "chat"),
    ("你好，今天怎么样", "chat"),
    ("what can you do?", "system"),
]
EXAMPLES_PER_CAPABILITY = 2


def _prompt(specs, text: str) -> list[dict]:
    """A stable prefix (capabilities, then worked examples as earlier turns) and the request
    last, so the model host can reuse the cached prefix from one call to the next."""
    lines = [f"- {s.name}: {s.description}" for s in specs]
    system = (
        "You route requests for an assistant. Capabilities:\n" + "\n".join(lines) +
        "\n\nAnswer with JSON: intent is task (do something), query (look something up), chat (conversation) "
        "or system (about the assistant itself); capability is the capability that does it, or none; "
        "parameters holds only values written in the request."
    )
    shots = [(example, _task_kind(example), s.name) for s in specs for example in s.examples[:EXAMPLES_PER_CAPABILITY]]
    shots += [(example, kind, "none") for example, kind in _CONVERSATION_EXAMPLES]
    messages = [{"role": "system", "content": system}]
    for example, kind, capability in shots:
        messages.append({"role": "user", "content": f"Request: {example}"})
        messages.append({"role": "assistant",
                         "content": f'{{"intent": "{kind}", "capability": "{capability}", "parameters": {{}}}}'})
    messages.append({"role": "user", "content": f"Request: {text}"})
    return messages


def _task_kind(text: str) -> str:
    return "query" if _QUERY.search(text) and not sounds_like_request(text) else "task"
