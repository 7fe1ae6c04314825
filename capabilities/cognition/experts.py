"""ExpertPanel: one question, several configured personas, one answer.

Strategies (``experts.strategy``, or per question):

``summary`` (the default, "debate then summary")
    every expert answers; in each further round (``experts.rounds``) every expert sees the
    others' latest answers and keeps or revises its own; then the model writes one answer
    from the final opinions.
``voting`` / ``weighted``
    the same rounds, then the experts' final answers (their "Final answer:" line when they
    give one) are counted: one vote each, or each persona's ``weight``; numeric answers under
    ``weighted`` give the weighted mean. Ties follow ``experts.tie``.
``map_reduce``
    the question is split into parts (its lines, numbered items, or clauses joined by
    "and" / "以及"), the parts are handed to the experts in turn (round robin), and the
    answered parts are joined (``experts.reduce``: ``concat``, or ``summary`` by the model).
    The words a question splits at live in the table
    ``capabilities/cognition/tables/cognition_misc.json`` (rule_tables.py).

An expert whose model call fails is left out of that round (and tries again in the next);
fewer than ``experts.min_ok`` answering experts fail the question.

Exceptions::

    ExpertPanelError (ValueError)
    ├── NoModelError        no language model is configured
    └── PanelFailed         too few experts answered, or the summary could not be written
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any

from capabilities.aggregation.result_aggregator import AggregationError, Outcome, ResultAggregator, final_answer
from capabilities.cognition.rule_tables import table
from capabilities.llm.base import LLMError
from common.i18n import answer_in, cjk_chars, language_of
from config import ExpertsConfig

log = logging.getLogger("flora.experts")

STRATEGIES = ("summary", "voting", "weighted", "map_reduce")
ANSWER_RULE = "Answer briefly. End with one line 'Final answer: <your answer in a few words>'."
MODERATOR = ("You are the moderator of a panel of experts. Write one answer to the question from their final "
             "opinions: keep what they agree on, settle disagreements with the best argument, and say what "
             "remains uncertain.")
_SPLITS = table("cognition_misc")
_NUMBERED = re.compile(r"(?:(?:^|(?<=[\s:：,，;；]))(?:\(?\d{1,2}[.)、:：](?!\d)|[(（]\d{1,2}[)）])|[①-⑳])\s*")
_CLAUSES = _SPLITS["clause_joiners"]
# "and" joins two questions only when a new question or request follows it: "the pros and
# cons of X" is one question, "what is X and how does Y work" two
_AND_NEW_QUESTION = _SPLITS["and_new_question"]
_MIN_PART_WORDS = 3  # a shorter clause is a fragment ("以及价格"), not a part worth an expert


class ExpertPanelError(ValueError):
    """The panel could not answer; the message says why in words a user understands."""


class NoModelError(ExpertPanelError):
    pass


class PanelFailed(ExpertPanelError):
    pass


@dataclass(frozen=True)
class Opinion:
    """What one expert said in one round (or about one part, for map_reduce)."""

    expert: str
    round: int
    text: str
    ok: bool = True
    error: str = ""
    part: str = ""  # map_reduce: the part of the question it answered

    def to_dict(self) -> dict:
        data = {"expert": self.expert, "round": self.round, "text": self.text, "ok": self.ok}
        if self.error:
            data["error"] = self.error
        if self.part:
            data["part"] = self.part
        return data


@dataclass(frozen=True)
class PanelAnswer:
    answer: str
    strategy: str
    opinions: tuple[Opinion, ...]
    detail: dict = field(default_factory=dict)  # votes/scores and tie, weights, parts, failed experts

    def to_dict(self) -> dict:
        return {"answer": self.answer, "strategy": self.strategy,
                "opinions": [o.to_dict() for o in self.opinions], "detail": self.detail}


class ExpertPanel:
    def __init__(self, llm, aggregator: ResultAggregator | None = None, config: Any = None):
        self._llm = llm
        self._aggregator = aggregator or ResultAggregator(llm)
        if config is None:
            config = ExpertsConfig()
        self._config: ExpertsConfig = getattr(config, "experts", config)  # a FloraConfig or its section
        self._shared = ""  # the whiteboard of the task being answered, for every expert's prompt

    @property
    def personas(self):
        return list(self._config.personas)

    def ask(self, question: str, strategy: str | None = None, *, shared: str = "") -> PanelAnswer:
        """``shared``: the task's whiteboard as text (facts found so far, decisions), which
        every expert reads with the question."""
        if self._llm is None:
            raise NoModelError("Asking the experts needs a language model, and none is configured "
                               "(set llm.backend to local or openai).")
        question = (question or "").strip()
        if not question:
            raise ExpertPanelError("There is no question to ask the experts.")
        strategy = strategy or self._config.strategy
        if strategy not in STRATEGIES:
            raise ExpertPanelError(f"strategy: unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
        rule = answer_in(language_of(question))  # every expert and the moderator answer in the asker's language
        self._shared = shared.strip()
        if strategy == "map_reduce":
            return self._map_reduce(question, rule)
        opinions, latest = self._debate(question, rule)
        if strategy == "summary":
            return self._summarise(question, latest, opinions, rule)
        # the vote is over each expert's short verdict; the reasoning stays in the opinions
        outcomes = [Outcome(p.name, p.name in latest, final_answer(latest.get(p.name, "")).strip(),
                            error="" if p.name in latest else "no answer", weight=p.weight)
                    for p in self._config.personas]
        try:
            result = self._aggregator.aggregate(outcomes, strategy, tie=self._config.tie, min_ok=self._config.min_ok)
        except AggregationError as exc:
            raise PanelFailed(f"The experts could not reach an answer: {exc}") from exc
        detail = {**result.detail, "failed": list(result.failed)}
        if result.value is None:  # tie policy "none": report the split instead of choosing
            tied = " / ".join(str(v) for v in result.detail.get("tied", []))
            return PanelAnswer(f"The experts are split evenly between: {tied}", strategy, opinions, detail)
        return PanelAnswer(_as_text(result.value), strategy, opinions, detail)

    # -- rounds ------------------------------------------------------------------------
    def _debate(self, question: str, rule: str) -> tuple[tuple[Opinion, ...], dict[str, str]]:
        """Every round, every expert speaks; from round 2 on it sees the others' latest answers."""
        opinions: list[Opinion] = []
        latest: dict[str, str] = {}
        for rnd in range(1, self._config.rounds + 1):
            said: dict[str, str] = {}
            for persona in self._config.personas:
                others = {name: text for name, text in latest.items() if name != persona.name}
                prompt = _debate_prompt(question, latest.get(persona.name), others) if rnd > 1 else question
                opinion = self._speak(persona, prompt, rnd, rule)
                opinions.append(opinion)
                if opinion.ok:
                    said[persona.name] = opinion.text
            latest.update(said)  # everyone in a round sees the same previous round
            self._check_enough(len(latest), f"round {rnd}")
        return tuple(opinions), latest

    def _map_reduce(self, question: str, rule: str) -> PanelAnswer:
        parts = split_question(question)
        personas = self._config.personas
        opinions, outcomes = [], []
        for i, part in enumerate(parts):
            persona = personas[i % len(personas)]
            prompt = (f"This is part {i + 1} of {len(parts)} of a larger question:\n{question}\n\n"
                      f"Answer only this part: {part}")
            opinion = self._speak(persona, prompt, 1, rule, part=part)
            opinions.append(opinion)
            label = f"{i + 1}. {part}"
            outcomes.append(Outcome(f"part{i + 1}:{persona.name}", opinion.ok,
                                    f"{label}\n{opinion.text}" if opinion.ok else None, error=opinion.error))
        reduce = self._config.reduce
        options: dict = {"reduce": reduce, "min_ok": self._config.min_ok}
        if reduce == "summary":
            options["instruction"] = f"Combine these answers to the parts of one question into one answer. " \
                                     f"{rule}\nQuestion: {question}"
        try:
            result = self._aggregator.aggregate(outcomes, "map_reduce", **options)
        except AggregationError as exc:
            raise PanelFailed(f"The experts could not answer the parts of the question: {exc}") from exc
        detail = {"parts": [{"part": p, "expert": personas[i % len(personas)].name} for i, p in enumerate(parts)],
                  "reduce": reduce, "failed": list(result.failed)}
        return PanelAnswer(_as_text(result.value), "map_reduce", tuple(opinions), detail)

    def _summarise(self, question: str, latest: dict[str, str], opinions: tuple[Opinion, ...],
                   rule: str) -> PanelAnswer:
        listed = "\n\n".join(f"[{name}]\n{text}" for name, text in latest.items())
        messages = [{"role": "system", "content": f"{MODERATOR}\n{rule}"},
                    {"role": "user", "content": f"Question: {question}\n\nThe experts' final opinions:\n\n{listed}"}]
        try:
            reply = self._llm.complete(messages, max_tokens=self._config.max_tokens)
        except LLMError as exc:
            raise PanelFailed(f"The experts answered, but their answers could not be summarised: {exc}") from exc
        failed = [p.name for p in self._config.personas if p.name not in latest]
        return PanelAnswer(reply.text.strip(), "summary", opinions, {"experts": list(latest), "failed": failed})

    def _speak(self, persona, prompt: str, rnd: int, rule: str, *, part: str = "") -> Opinion:
        system = f"{persona.prompt}\n{ANSWER_RULE}\n{rule}"
        messages = [{"role": "system", "content": f"{system}\n\n{self._shared}" if self._shared else system},
                    {"role": "user", "content": prompt}]
        try:
            reply = self._llm.complete(messages, max_tokens=self._config.max_tokens)
        except LLMError as exc:
            log.warning("expert %s failed in round %d: %s", persona.name, rnd, exc)
            return Opinion(persona.name, rnd, "", ok=False, error=str(exc), part=part)
        return Opinion(persona.name, rnd, reply.text.strip(), part=part)

    def _check_enough(self, answered: int, where: str) -> None:
        if answered < self._config.min_ok:
            raise PanelFailed(f"Only {answered} of {len(self._config.personas)} experts answered ({where}); "
                              f"at least {self._config.min_ok} are needed.")


def _debate_prompt(question: str, own: str | None, others: dict[str, str]) -> str:
    heard = "\n\n".join(f"[{name}]\n{text}" for name, text in others.items()) or "(no other expert answered)"
    mine = own if own else "(you have not answered yet)"
    return (f"Question: {question}\n\nYour previous answer:\n{mine}\n\nThe other experts answered:\n\n{heard}\n\n"
            "Consider their arguments. Keep your answer if you still think it is right, or revise it.")


def split_question(question: str) -> list[str]:
    """The parts of a question: its non-empty lines, else its numbered items, else its clauses
    joined by "and" / ";" / "以及" (each of at least a few words); else the whole question."""
    lines = [line.strip(" -*•\t") for line in question.splitlines() if line.strip(" -*•\t")]
    if len(lines) > 1:
        return [_NUMBERED.sub(" ", line, count=1).strip() or line for line in lines]
    text = question.strip()
    marks = list(_NUMBERED.finditer(text))
    if len(marks) > 1:  # "compare: 1) X 2) Y": the lead-in stays in the whole question every part sees
        ends = [m.start() for m in marks[1:]] + [len(text)]
        items = [text[m.end():end].strip(" ,;，；") for m, end in zip(marks, ends)]
        return [item for item in items if item] or [text]
    clauses = [c.strip(" ,，") for part in _CLAUSES.split(text) for c in _AND_NEW_QUESTION.split(part)
               if c.strip(" ,，")]
    if len(clauses) > 1 and all(_words(c) >= _MIN_PART_WORDS for c in clauses):
        return clauses
    return [text]


def _words(text: str) -> int:
    cjk = len(cjk_chars(text))
    return len(text.split()) + cjk // 2  # two Chinese characters are about one word


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
