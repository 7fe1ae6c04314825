"""Personas: who Flora speaks as for one message, and what it may use while it does.

A persona (top-level ``personas`` in the config; the expert panel's ``experts.personas`` are
another thing) has a system prompt for chat replies, an allow-list of capabilities (empty:
all), an optional model of its own, and rules. :class:`PersonaBook` chooses once per
message:

1. the rules, in order — the roster's personas in the order written, each one's rules in
   the order written; the first rule whose every condition holds wins (``how: "rule"``);
2. with ``personas.auto``, the understanding model picks the persona that fits from their
   names and descriptions, in one JSON-schema-constrained call (``how: "auto"``), or, with a
   ``template``, names a specialty and a specialist is composed from the template
   (``how: "template"``);
3. otherwise, or when the model cannot answer, ``personas.default`` (``how: "default"``).

Step 1 is cheap and runs in the InteractionActor; step 2 is a model call and runs in an
ExecutionActor (the InteractionActor never blocks), so a message left to the model travels
with ``pick_persona`` instead of a persona.

The choice travels with the work as JSON (:meth:`PersonaChoice.to_dict`) on ``agent_task``,
``analyze`` and ``analysis_result``; a task records its persona's name and allow-list in
``meta`` (``persona``, ``allowed_capabilities``), where execution enforces it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from config import DEFAULT_PERSONA, PersonasConfig

log = logging.getLogger("flora.personas")

SPECIALIST = "specialist"  # the name of a persona composed from the template
MAX_SPECIALTY_CHARS = 60
PICK_MAX_TOKENS = 48
HOW = ("rule", "auto", "template", "default")


@dataclass(frozen=True)
class PersonaChoice:
    """The persona chosen for one message, and how it was chosen."""

    name: str
    prompt: str
    how: str  # rule | auto | template | default
    capabilities: tuple[str, ...] = ()  # empty: every capability
    model: str = ""
    rule: str = ""  # which rule matched: "<persona>.rules[<i>]" (how == "rule")
    specialty: str = ""  # how == "template"

    def allows(self, capability: str) -> bool:
        return not self.capabilities or capability in self.capabilities

    @property
    def allowed(self) -> list[str] | None:
        """The allow-list, or None when everything is allowed."""
        return list(self.capabilities) if self.capabilities else None

    def to_dict(self) -> dict:
        """As it travels in messages (JSON only)."""
        out = {"name": self.name, "prompt": self.prompt, "how": self.how}
        out.update({k: v for k, v in (("capabilities", list(self.capabilities)), ("model", self.model),
                                      ("rule", self.rule), ("specialty", self.specialty)) if v})
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "PersonaChoice":
        """From a message; raises ValueError naming what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"persona must be an object, not {type(data).__name__}")
        for key in ("name", "prompt", "how"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise ValueError(f"persona.{key} must be a non-empty string")
        if data["how"] not in HOW:
            raise ValueError(f"persona.how must be one of {', '.join(HOW)}, not {data['how']!r}")
        capabilities = data.get("capabilities") or []
        if not isinstance(capabilities, list) or not all(isinstance(c, str) for c in capabilities):
            raise ValueError("persona.capabilities must be a list of capability names")
        return cls(name=data["name"], prompt=data["prompt"], how=data["how"], capabilities=tuple(capabilities),
                   model=str(data.get("model") or ""), rule=str(data.get("rule") or ""),
                   specialty=str(data.get("specialty") or ""))

    def event_data(self) -> dict:
        """What the PERSONA_SELECTED event says."""
        data = {"persona": self.name, "how": self.how}
        if self.rule:
            data["rule"] = self.rule
        if self.specialty:
            data["specialty"] = self.specialty
        if self.capabilities:
            data["capabilities"] = list(self.capabilities)
        if self.model:
            data["model"] = self.model
        return data


@dataclass(frozen=True)
class _Rule:
    where: str  # "<persona>.rules[<i>]"
    keywords: tuple[re.Pattern, ...]
    regex: re.Pattern | None
    channel: str
    user: str

    def matches(self, content: str, channel: str, user_id: str) -> bool:
        if self.keywords and not any(k.search(content) for k in self.keywords):
            return False
        if self.regex is not None and not self.regex.search(content):
            return False
        if self.channel and not _same_channel(self.channel, channel):
            return False
        return not self.user or self.user == user_id


@dataclass(frozen=True)
class _Persona:
    name: str
    prompt: str
    description: str = ""
    capabilities: tuple[str, ...] = ()
    model: str = ""
    rules: tuple[_Rule, ...] = field(default_factory=tuple)

    def chosen(self, how: str, rule: str = "") -> PersonaChoice:
        return PersonaChoice(self.name, self.prompt, how, self.capabilities, self.model, rule)


class PersonaBook:
    """The configured personas; decides which one takes a message."""

    def __init__(self, config: PersonasConfig, *, flora_prompt: str):
        """``flora_prompt``: the built-in ``flora`` persona's prompt (Flora's own voice)."""
        personas = [_Persona(p.name, p.prompt, p.description, tuple(p.capabilities), p.model,
                             tuple(_rule(p.name, i, r) for i, r in enumerate(p.rules)))
                    for p in config.roster]
        if DEFAULT_PERSONA not in {p.name for p in personas}:
            personas.append(_Persona(DEFAULT_PERSONA, flora_prompt, "Flora herself, for anything else"))
        self._personas = {p.name: p for p in personas}
        self._default = self._personas[config.default]
        self.auto = config.auto
        self._template = config.template
        self.enabled = bool(config.roster) or bool(config.template)

    @classmethod
    def from_config(cls, config) -> "PersonaBook":
        """From the whole FloraConfig."""
        from capabilities.cognition.chat import FLORA_PROMPT

        return cls(config.personas, flora_prompt=FLORA_PROMPT)

    @property
    def names(self) -> list[str]:
        return list(self._personas)

    def capabilities_named(self) -> dict[str, tuple[str, ...]]:
        """Each persona's allow-list (for the start-up check that the names exist)."""
        return {p.name: p.capabilities for p in self._personas.values()}

    def by_rules(self, content: str, *, channel: str | None = None, user_id: str = "") -> PersonaChoice | None:
        """The persona of the first rule that matches, or None."""
        for persona in self._personas.values():
            for rule in persona.rules:
                if rule.matches(content, channel or "", user_id):
                    return persona.chosen("rule", rule.where)
        return None

    def default(self) -> PersonaChoice:
        return self._default.chosen("default")

    def choose(self, content: str, *, channel: str | None = None, user_id: str = "") -> PersonaChoice | None:
        """What can be decided without a model: a rule's persona, else the default; None when
        the model is to pick (``auto`` and no rule matched)."""
        if not self.enabled:
            return None
        ruled = self.by_rules(content, channel=channel, user_id=user_id)
        if ruled is not None:
            return ruled
        return None if self.auto else self.default()

    # -- auto ------------------------------------------------------------------------------
    def pick_schema(self) -> dict:
        names = list(self._personas) + ([SPECIALIST] if self._template and SPECIALIST not in self._personas else [])
        properties: dict = {"persona": {"type": "string", "enum": names}}
        if self._template:
            properties["specialty"] = {"type": "string", "maxLength": MAX_SPECIALTY_CHARS}
        return {"title": "Persona", "type": "object", "properties": properties, "required": ["persona"]}

    def pick_prompt(self, content: str, history: list[dict] | None = None) -> list[dict]:
        lines = [f"- {p.name}: {p.description or _first_sentence(p.prompt)}" for p in self._personas.values()]
        if self._template and SPECIALIST not in self._personas:
            lines.append(f"- {SPECIALIST}: none of the above fits, but an expert in one field would; "
                         f"name the field in specialty (a few words)")
        system = ("Choose who should answer the person's message. Answer with JSON: persona is one of these "
                  "names:\n" + "\n".join(lines) + f"\nIf none fits clearly, choose {self._default.name}.")
        said = [f"{'Person' if t.get('role') == 'user' else 'Flora'}: {' '.join(str(t.get('content', '')).split())[:150]}"
                for t in (history or [])[-2:] if t.get("content")]
        earlier = ("Earlier:\n" + "\n".join(said) + "\n") if said else ""
        return [{"role": "system", "content": system}, {"role": "user", "content": f"{earlier}Message: {content}"}]

    def pick(self, llm, content: str, history: list[dict] | None = None) -> PersonaChoice:
        """The model's pick for a message no rule matched (one constrained call); the default
        when there is no model or its answer is unusable."""
        if llm is None:
            return self.default()
        from capabilities.llm.base import LLMError, complete_json

        try:
            answer = complete_json(llm, self.pick_prompt(content, history), self.pick_schema(),
                                   max_tokens=PICK_MAX_TOKENS)
        except LLMError as exc:
            log.warning("persona pick failed, using the default %s: %s", self._default.name, exc)
            return self.default()
        name = answer["persona"]
        if name in self._personas:
            return self._personas[name].chosen("auto")
        specialty = " ".join(str(answer.get("specialty") or "").split())[:MAX_SPECIALTY_CHARS]
        if name == SPECIALIST and specialty:
            return PersonaChoice(SPECIALIST, self._template.format(specialty=specialty), "template",
                                 self._default.capabilities, self._default.model, specialty=specialty)
        return self.default()


def _rule(persona: str, index: int, rule) -> _Rule:
    return _Rule(where=f"{persona}.rules[{index}]",
                 keywords=tuple(_word(k) for k in rule.keywords),
                 regex=re.compile(rule.regex, re.I) if rule.regex else None,
                 channel=rule.channel, user=rule.user)


def _word(keyword: str) -> re.Pattern:
    """A keyword as a whole word (or phrase); in scripts without spaces, anywhere."""
    text = re.escape(keyword.strip())
    if re.search(r"[\u3040-\u30ff\u3400-\u9fff]", keyword):
        return re.compile(text, re.I)
    return re.compile(rf"(?<!\w){text}(?!\w)", re.I)


def _same_channel(wanted: str, channel: str) -> bool:
    """``telegram`` matches every Telegram conversation; ``telegram:12345`` only that one."""
    return channel == wanted or (":" not in wanted and channel.split(":", 1)[0] == wanted)


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?。！？])\s", text.strip(), maxsplit=1)[0][:160]


def choice_of(msg: dict) -> PersonaChoice | None:
    """The persona a message carries (``persona``), or None. A malformed one is a bug of the
    sender and raises ValueError."""
    data = msg.get("persona")
    return PersonaChoice.from_dict(data) if data else None


def task_meta(choice: PersonaChoice | None) -> dict:
    """What a task records of its persona: its name, and its allow-list when it has one
    (what execution enforces)."""
    if choice is None:
        return {}
    meta: dict = {"persona": choice.name}
    if choice.allowed is not None:
        meta["allowed_capabilities"] = choice.allowed
    return meta


def refusal(persona: str, capability: str, allowed: list[str]) -> str:
    """Why a capability is refused, for a person."""
    return (f"The persona {persona!r} may not use {capability!r}; it may use: "
            f"{', '.join(allowed) or 'no capability'}.")
