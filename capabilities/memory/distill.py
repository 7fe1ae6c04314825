"""FactDistiller: what a conversation turn says about the person, as facts worth keeping.

One ``complete_json`` call per turn, constrained by :data:`FACTS_SCHEMA`. The model sees the
person's message (and Flora's reply only as context) and lists facts about the PERSON:
their name, preferences, work and projects, people and pets in their life, recurring
needs. Nothing from Flora's reply becomes a fact, small talk yields none, and each fact
stays in the language the person used.

A reply that is not valid JSON for the schema is not retried: the turn yields no facts and
the error is returned beside them (:class:`Distilled`), for the caller to report once.
A fact citing a message id it was not given is pinned to the person's message instead.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from capabilities.cognition.rule_tables import table
from capabilities.llm.base import LLM, LLMError, LLMUnavailable, complete_json
from capabilities.memory.store import KINDS
from common.i18n import EN, ZH, language_of

log = logging.getLogger("flora.memory.distill")
_WORDS = table("memory")  # the words that give a name, in a message and in a fact; a fact's first-person lead

MAX_FACTS = 8
MAX_FACT_CHARS = 300
MAX_INPUT_CHARS = 4000  # of the person's message; a longer one is cut before it reaches the model
REPLY_CONTEXT_CHARS = 400
DISTILL_MAX_TOKENS = 400

FACTS_SCHEMA = {
    "title": "Facts about the person",
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "maxItems": MAX_FACTS,
            "items": {
                "type": "object",
                "properties": {
                    "fact": {"type": "string", "minLength": 1, "maxLength": MAX_FACT_CHARS},
                    "subject": {"type": "string", "maxLength": 80},
                    "kind": {"type": "string", "enum": list(KINDS)},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "source_message_ids": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["fact", "subject", "kind", "confidence"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["facts"],
    "additionalProperties": False,
}

PROMPT = """You keep notes about a person for later conversations. From the PERSON's message below, list the \
facts about the person worth remembering: their name, job, team, projects, city, family, pets, likes and \
dislikes, allergies, schedules and recurring needs. Rules:
- Only what the person says about themselves. Never take facts from the assistant's reply.
- Questions, requests, greetings and small talk give no facts: answer {{"facts": []}}.
- Write each fact as a short sentence about the person in the third person ("The person…", "用户…", never \
"I" or "我"), in the language the person used.
- subject: two or three words naming what the fact is about, the same words each time for the same thing \
("home city", "employer", "dog's name", "coffee").
- kind: one of {kinds}.
- confidence: 1.0 when stated plainly, lower when hedged ("I think", "maybe").
Examples:
{examples}

The person's message (id {message_id}):
<<<
{message}
>>>
The assistant's reply (context only, not a source of facts):
<<<
{reply}
>>>
The person wrote in {language}: write the facts in {language}.
JSON:"""


@dataclass(frozen=True)
class Fact:
    fact: str
    subject: str
    kind: str
    confidence: float
    source_message_ids: tuple[str, ...]


@dataclass(frozen=True)
class Distilled:
    facts: list[Fact] = field(default_factory=list)
    error: str = ""  # why the model's answer was refused; empty when it was fine


class FactDistiller:
    def __init__(self, llm: LLM, *, max_tokens: int = DISTILL_MAX_TOKENS):
        self._llm = llm
        self._max_tokens = max_tokens

    def distill(self, message: str, reply: str = "", *, message_id: str, reply_id: str = "") -> Distilled:
        """The facts about the person in ``message``; never raises for the model's misbehaviour.
        Raises LLMUnavailable (a timeout, a model host down): the turn is not refused, only not
        distilled yet."""
        if not message.strip():
            return Distilled()
        language = language_of(message)
        prompt = PROMPT.format(kinds=", ".join(KINDS), examples=EXAMPLES[language], message_id=message_id,
                               message=message[:MAX_INPUT_CHARS], reply=reply[:REPLY_CONTEXT_CHARS],
                               language=LANGUAGES[language])
        try:
            answer = complete_json(self._llm, [{"role": "user", "content": prompt}], FACTS_SCHEMA,
                                   max_tokens=self._max_tokens, temperature=0.0)
        except LLMUnavailable:
            raise  # the model is busy or down: nothing was refused, the turn waits to be tried again
        except LLMError as exc:
            log.warning("distilling message %s failed: %s", message_id, exc)
            return Distilled(error=f"{type(exc).__name__}: {exc}")
        facts = []
        for item in answer["facts"]:
            text = " ".join(item["fact"].split())
            if not text or _echoes_reply(text, reply, message):
                continue
            if _names_the_person(item, text) and not _NAMES.search(message):
                log.info("message %s: dropped the name %r it never gives", message_id, text)
                continue
            cited = tuple(s for s in item.get("source_message_ids", ()) if s == message_id)
            facts.append(Fact(fact=third_person(text), subject=item["subject"].strip(), kind=item["kind"],
                              confidence=float(item["confidence"]), source_message_ids=cited or (message_id,)))
        return Distilled(facts)


LANGUAGES = {EN: "English", ZH: "Chinese (简体中文)"}
# in the person's language: a small model writes its facts in the language of the examples it
# was shown more than in the one it is told ("The person's name is 陈静", "Works at a bank in Shenzhen")
EXAMPLES = {
    EN: """"I'm Li Wei, I work on the billing team" -> {"facts": [{"fact": "The person's name is Li Wei", \
"subject": "name", "kind": "name", "confidence": 1.0}, {"fact": "Works on the billing team", "subject": "team", \
"kind": "work", "confidence": 1.0}]}
"I'm allergic to peanuts, and every Friday I hand in a weekly report" -> {"facts": [{"fact": "The person is \
allergic to peanuts", "subject": "allergy", "kind": "personal", "confidence": 1.0}, {"fact": "The person hands in a \
weekly report every Friday", "subject": "weekly report", "kind": "recurring_need", "confidence": 1.0}]}
"what's the weather tomorrow?" -> {"facts": []}""",
    ZH: """"我叫李伟，在计费组工作" -> {"facts": [{"fact": "用户名叫李伟", "subject": "名字", "kind": "name", \
"confidence": 1.0}, {"fact": "用户在计费组工作", "subject": "团队", "kind": "work", "confidence": 1.0}]}
"我对花生过敏，每周五要交周报" -> {"facts": [{"fact": "用户对花生过敏", "subject": "过敏", "kind": "personal", \
"confidence": 1.0}, {"fact": "用户每周五要交周报", "subject": "周报", "kind": "recurring_need", "confidence": 1.0}]}
"明天天气怎么样？" -> {"facts": []}""",
}
# a message that gives the person's name says so; without these words a "name" fact is the
# model's guess ("I work as a nurse" -> "The person's name is Nurse"). After "I'm" only a capital
# letter makes a name ("I'm allergic to shellfish" -> "The person's name is John" is a guess)
_NAMES = _WORDS["gives_name"]
# a fact that gives the person's name, whatever kind the model gave it ("The person's name is
# unknown", kind personal, subject name, from "my favourite football club is Arsenal"); not a
# pet's or a relative's name ("The person's dog's name is Biscuit")
_NAME_SUBJECTS = {"name", "full name", "first name", "last name", "surname", "nickname", "名字", "姓名", "称呼", "名"}
_NAME_FACT = _WORDS["name_fact"]


def _names_the_person(item: dict, text: str) -> bool:
    return (item["kind"] == "name" or " ".join(item["subject"].split()).casefold() in _NAME_SUBJECTS
            or bool(_NAME_FACT.search(text)))


_FIRST_PERSON_LEAD = ((_WORDS["first_person_zh"], "用户"), (_WORDS["first_person_am"], "The person is "),
                      (_WORDS["first_person_my"], "The person's "))


def third_person(fact: str) -> str:
    """A fact the model wrote in the person's own first person ("我是老师", "My dog is Biscuit"),
    as one about them ("用户是老师", "The person's dog is Biscuit"): a model reading "我是老师"
    among its notes answers as if it were the person."""
    for pattern, replacement in _FIRST_PERSON_LEAD:
        if pattern.search(fact):
            return pattern.sub(replacement, fact, count=1)
    return fact


def _echoes_reply(fact: str, reply: str, message: str) -> bool:
    """A fact found word for word in Flora's reply but not in the person's message came from the
    reply (a small model copies what is in front of it)."""
    folded = fact.casefold()
    return bool(reply) and folded in reply.casefold() and folded not in message.casefold()
