"""Replies for conversation (chat) and for questions about Flora itself (system).

With a model, chat is the model's answer; without one, Flora says plainly what it can do
instead of pretending to converse.
"""

from __future__ import annotations

import logging

from capabilities.registry import CapabilityRegistry

log = logging.getLogger("flora.chat")

SYSTEM_PROMPT = ("You are Flora, a helpful assistant that can also run tasks. "
                 "Answer briefly, in the language of the user.")
MAX_CHAT_TOKENS = 200


class ChatResponder:
    def __init__(self, registry: CapabilityRegistry, llm=None):
        self._registry = registry
        self._llm = llm

    def reply(self, content: str) -> str:
        if self._llm is None:
            return "Hello! I can't chat freely without a language model, but I can run tasks.\n" + self.help_text()
        from capabilities.llm.base import LLMError

        try:
            answer = self._llm.complete([{"role": "system", "content": SYSTEM_PROMPT + "\n" + self.help_text()},
                                         {"role": "user", "content": content}], max_tokens=MAX_CHAT_TOKENS)
        except LLMError as exc:
            log.warning("chat model call failed: %s", exc)
            return "Sorry, I can't answer right now (the language model is unavailable).\n" + self.help_text()
        return answer.text.strip() or "…"

    def help_text(self) -> str:
        specs = [s for s in self._registry.executables() if s.routable]
        lines = ["Things I can do:"] + [f"- {s.name}: {s.description}" for s in specs]
        lines.append("Ask in your own words; I'll ask for anything that is missing.")
        return "\n".join(lines)
