"""Replies for conversation (chat), and the help text.

The model answers with the recent turns of the conversation in view, told which language
to answer in (the person's, read from their message, not left to a small model to notice)
and what it must not do: invent facts about the person's systems, orders, accounts or
tasks, which it cannot see. A calculation the message asks for is worked out exactly
(arithmetic.py) and handed to the model beside the message, so the number it states is
right. ``reply`` streams: each piece of text is handed to
``on_text`` as it comes, and the whole reply is returned. Without a model, Flora says
plainly what it can do instead of pretending to converse.

A question about the person themselves ("what's my name?", "我的狗叫什么名字？") has one
source of truth: what they told Flora. With nothing recalled, the reply says so without asking
the model (a small model asked such a question invents a name, a plate number, a city); with
memories, the model is told to answer from them alone.
"""

from __future__ import annotations

import itertools
import logging
from typing import Callable

from capabilities.cognition import arithmetic
from capabilities.cognition.rule_tables import table
from capabilities.memory import recalled
from capabilities.registry import CapabilityRegistry
from common.i18n import EN, answer_in, say

log = logging.getLogger("flora.chat")

# Flora's own voice (the built-in "flora" persona), then what every persona is held to
FLORA_PROMPT = (
    "You are Flora, a friendly and capable assistant. Answer the person's last message directly and briefly "
    "(one to four sentences unless they ask for more), warmly when they share feelings, accurately for facts and "
    "arithmetic. If you are not sure of a fact, say so instead of guessing."
)
LIMITS = (
    "You cannot see the person's orders, "
    "parcels, accounts, e-mail, calendar, tickets, files or devices, and you do not know their tasks: never make "
    "up such details; say you cannot look them up. You cannot act in the world (send e-mail, book, buy, pay, "
    "open tickets, restart servers): when asked to, say you cannot, never that you will or did."
)
SYSTEM_PROMPT = FLORA_PROMPT + " " + LIMITS
ONLY_WHAT_WAS_TOLD = ("The person asks about themselves. Answer only from what they said in this conversation or "
                      "what you remember of them; if neither says, tell them they have not told you. Never guess.")
MAX_CHAT_TOKENS = 200
HISTORY_TURNS = 6
HISTORY_CHARS = 1500  # the budget for earlier turns in a chat prompt
# a request to translate: the translation is in the other language, the words around it in the person's
_TRANSLATION = table("chat")["translation"]
_ASKED = ("?", "？", "吗", "呢", "么")  # how a question ends
_TRANSLATION_FRAME = {
    "zh": "Reply in Chinese: one short Chinese phrase, then the translation (for example: 译文是：“…”).",
    EN: "Reply in English: one short English phrase, then the translation (for example: Translation: “…”).",
}


class ChatResponder:
    def __init__(self, registry: CapabilityRegistry, llm=None, *, max_tokens: int = MAX_CHAT_TOKENS):
        self._registry = registry
        self._llm = llm
        self._max_tokens = max_tokens

    def reply(self, content: str, *, language: str = EN, history: list[dict] | None = None,
              memories: list[dict] | None = None, on_text: Callable[[str], None] | None = None,
              persona_prompt: str | None = None, llm=None, about_self: bool = False,
              may_be_about_self: bool = False) -> str:
        """``persona_prompt``: the chosen persona's system prompt (default: Flora's own);
        ``llm``: the persona's own model (default: the chat model); ``about_self``: the message
        asks about the person themselves (answered from ``memories`` only); ``may_be_about_self``:
        it may (the examples lean that way without being sure): the model is told to answer from
        what it was told, and a reply that states a figure nobody told it (a date, a plate, a code)
        is not shown — the person reads that they have not said instead."""
        if about_self and not recalled.facts(memories) and not _said_before(history):
            told = say(language, "not_told")
            if on_text is not None:
                on_text(told)
            return told
        llm = llm if llm is not None else self._llm
        if llm is None:
            return say(language, "no_model") + "\n" + self.help_text(language)
        from capabilities.llm.base import LLMError

        guarded = may_be_about_self and not about_self
        messages = chat_prompt(content, language, history or [], memories or [], persona_prompt=persona_prompt,
                               about_self=about_self or guarded)
        if guarded:  # held back until it is checked: what streamed could not be taken back
            text = _complete(llm, messages, self._max_tokens)
            if text is None:
                text = say(language, "model_unavailable") + "\n" + self.help_text(language)
            elif untold_figures(text, [content, *(f["fact"] for f in recalled.facts(memories)),
                                       *(str(t.get("content") or "") for t in history or [])]):
                log.info("a reply about the person stated figures nobody told it; answered that they have not said")
                text = say(language, "not_told")
            if on_text is not None:
                on_text(text)
            return text
        pieces: list[str] = []
        try:
            for piece in llm.stream(messages, max_tokens=self._max_tokens, temperature=0.3):
                pieces.append(piece)
                if on_text is not None and piece:
                    on_text(piece)
        except LLMError as exc:
            log.warning("chat model call failed: %s", exc)
            if pieces:  # what was already said stands; the reply is cut, not replaced
                return "".join(pieces).strip() + "…"
            return say(language, "model_unavailable") + "\n" + self.help_text(language)
        return "".join(pieces).strip() or "…"

    def warm_up(self) -> None:
        """Have the model evaluate the system prompt once, before anyone waits for it."""
        if self._llm is not None:
            self._llm.complete(chat_prompt("hi", EN, []), max_tokens=1)

    def help_text(self, language: str = EN) -> str:
        specs = [s for s in self._registry.executables() if s.routable]
        lines = [say(language, "abilities_intro")] + [f"- {s.name}: {s.describe(language)}" for s in specs]
        lines.append(say(language, "abilities_outro"))
        return "\n".join(lines)

    def abilities(self) -> list[str]:
        return [s.name for s in self._registry.executables() if s.routable]


def _complete(llm, messages: list[dict], max_tokens: int) -> str | None:
    """The model's whole reply, or None when it could not give one."""
    from capabilities.llm.base import LLMError

    try:
        return "".join(llm.stream(messages, max_tokens=max_tokens, temperature=0.3)).strip() or "…"
    except LLMError as exc:
        log.warning("chat model call failed: %s", exc)
        return None


def figures(text: str) -> set[str]:
    """The runs of digits in ``text`` ("10月25日" -> {"10", "25"})."""
    return {"".join(run) for digit, run in itertools.groupby(text, str.isdigit) if digit}


def untold_figures(reply: str, told: list[str]) -> bool:
    """Whether ``reply`` states a figure that none of ``told`` (the message, what is remembered,
    the conversation) holds: made up."""
    return bool(figures(reply) - set().union(*map(figures, told)))


def _said_before(history: list[dict] | None) -> bool:
    """Whether the person told anything earlier in this conversation (which may answer a
    question about them before it reaches long-term memory): a turn of theirs that is not
    itself a question."""
    return any(t.get("role") == "user" and str(t.get("content") or "").strip()
               and not str(t["content"]).strip().endswith(_ASKED) for t in history or [])


def chat_prompt(content: str, language: str, history: list[dict], memories: list[dict] | None = None, *,
                persona_prompt: str | None = None, about_self: bool = False) -> list[dict]:
    """The system prompt (the persona's, else Flora's own, with the limits every persona keeps;
    identical across calls and people, so the model host reuses its evaluated state), the
    recent turns within a character budget, the language to answer in, what Flora remembers
    of the person that bears on the message, the calculation it asks for worked out, the
    message, and for a translation how to frame it (in the person's language around it)."""
    system = SYSTEM_PROMPT if not persona_prompt or persona_prompt == FLORA_PROMPT else persona_prompt + " " + LIMITS
    messages = [{"role": "system", "content": system}]
    kept: list[dict] = []
    budget = HISTORY_CHARS
    for turn in reversed([t for t in history if t.get("role") in ("user", "assistant") and t.get("content")]
                         [-HISTORY_TURNS:]):
        text = str(turn["content"])
        if len(text) > budget:
            break
        budget -= len(text)
        kept.append({"role": turn["role"], "content": text})
    messages += reversed(kept)
    messages.append({"role": "system", "content": answer_in(language)})
    known = recalled.block(memories)
    if known:  # next to the message: a small model heeds what it read last
        messages.append({"role": "system", "content": known})
    if about_self:
        messages.append({"role": "system", "content": ONLY_WHAT_WAS_TOLD})
    calculation = arithmetic.worked(content)
    if calculation is not None:
        messages.append({"role": "system", "content": f"Worked out exactly for this message: {calculation.shown()}. "
                                                      "State this result."})
    messages.append({"role": "user", "content": content})
    if _TRANSLATION.search(content):  # said after the message: a small model heeds what it read last
        messages.append({"role": "system", "content": _TRANSLATION_FRAME.get(language, _TRANSLATION_FRAME[EN])})
    return messages
