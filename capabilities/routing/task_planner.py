"""TaskPlanner (the ``planning`` service): one request in, a plan of subtasks out.

``plan(content)`` answers None for a request one capability does (the normal path runs it)
and a :class:`~capabilities.routing.plan.Plan` for one that takes several steps:

1. Rules first. The request is cut at sequencing words into stages ("then", "and then",
   "after that", "finally", "然后", "接着", "再", "之后", "最后") and each stage into parts
   that run side by side ("and", ",", ";", "、", "，", "并且", "同时"). Every step of a stage
   depends on every step of the stage before. A part that points back ("send it to…", "把结果
   发给…", "step 1's result") depends on the part before it even beside it, and the
   reference goes into the capability's input parameter when it has one (``input``,
   ``data``, ``json``…). Each part is routed with the registry's TaskRouter; a part with no
   evidence for any capability right after a routed one is the same kind of work
   ("fetch the sales, the returns and the refunds", "下载A、B").
2. Templates. A last part that asks for a summary ("write me a summary", "汇总一下") is not a
   step but how the results combine: ``{"strategy": "map_reduce", "reduce": "summary"}``.
3. The model, when the rules cannot route every part yet the request looks like several
   steps: one call constrained by PLAN_SCHEMA, checked by ``Plan.from_dict`` and against the
   registry; an invalid plan is sent back once with the error; a second failure leaves the
   request to the normal path (None).

An operation on an existing task (comment, revise, re-run, cancel) is no plan: the message's
reading finds it (``capabilities/cognition/reading.py``, by :mod:`capabilities.routing.task_operations`).

The words that cut a request into steps and tie the steps together live in the table
``capabilities/cognition/tables/planner.json`` (``rule_tables``), each rule with the messages that
prove it; numbered lists, quoted values and SQL statements are value shapes, read here in code.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Callable

from capabilities.base import CapabilitySpec
from capabilities.cognition import cues
from capabilities.cognition.rule_tables import table
from capabilities.memory import recalled
from capabilities.routing.context_resolver import REFERENCE, ContextResolver
from capabilities.routing.plan import PLAN_SCHEMA, Plan, PlanError, PlanStep
from capabilities.routing.task_operations import TaskOperation
from capabilities.routing.task_router import CONFIDENT_SCORE, TaskRouter
from common.i18n import cjk_chars
from common.numerals import zh_number
from config import DEFAULT_PLAN_MAX_STEPS

__all__ = ["TaskPlanner", "TaskOperation", "DEFAULT_MAX_STEPS", "asks_beyond"]

log = logging.getLogger("flora.planning")

DEFAULT_MAX_STEPS = DEFAULT_PLAN_MAX_STEPS
PLAN_MAX_TOKENS = 1024
INPUT_PARAMETERS = ("input", "inputs", "data", "json", "body", "payload", "content", "text", "message")
_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "credential")  # in a parameter's name



def _names_a_secret(parameter: str) -> bool:
    """Whether a parameter's name says it holds a secret ("api_key", "AuthToken", "db_password")."""
    name = parameter.casefold()
    return any(word in name for word in _SECRET_WORDS)


_RULES = table("planner")  # the words that cut a request into steps and tie the steps together
_SEQUENCE = _RULES["sequence"]  # "then", "after that", "然后", "再…": the next stage
_PARALLEL = _RULES["parallel"]  # ",", "and", "、", "并且": parts side by side ("A 和 B" only between two addresses)
_BACK_REFERENCE = _RULES["back_reference"]
_STEP_REFERENCE = _RULES["step_reference"]
_SUMMARY = _RULES["summary"]
# a comparison or a judgement over what several steps found ("compare the two", "两边对比一下",
# "tell me whether anything is low"): written by the model from the results, like a summary
_JUDGEMENT = _RULES["judgement"]
# a clause that only shows what the step before returned ("show me what it says", "看看返回了什么"):
# every plan's result is shown, so it is no step
_SHOWS_RESULT = _RULES["shows_result"]
# a clause that asks for work of its own: getting or doing something with its own verb ("look up
# today's orders in the db", "查下我们库里的价格"); reading or showing a result is not ("show me the
# result", "find the cheapest one" in what was fetched)
_OWN_WORK = _RULES["own_work"]
# "three things: …", "两件事：…": a lead-in that counts what follows is no step
_LEAD_IN = _RULES["lead_in"]
# a numbered list ("1. … 2. …", "1) …", "（1）…", "①…"): its items are done in order, like "then"
_NUMBERED = re.compile(r"(?:^|(?<=[\s:：;；,，。]))(?:\(?\d{1,2}[.)](?=\s)|（\d{1,2}）|[①②③④⑤⑥⑦⑧⑨⑩])\s*"
                       r"|(?:^|(?<=[\n:：;；]))\d{1,2}、\s*")
# a part that names only an object ("the returns", a URL, "退货数据"): the verb is the previous part's
# (a short Chinese clause that says how, "按多到少排个序", "只要前十个", is not an object)
_ELLIPSIS = _RULES["ellipsis"]
# a clause that gives a value ("api key是 app-X", "key: app-X", "the url is https://…"): the
# step before it takes the value; it is never a step of its own
_GIVES_A_VALUE = _RULES["gives_a_value"]
# a clause that is only values given by name ("b=-3", "and c = 2", "y2: 8"; not an address): the shape of a value
_NAMED_VALUES = re.compile(r"\s*(?:and\s+|&\s*|和|以及)?(?:[A-Za-z_]\w*\s*[=:：](?!//)\s*[^\s,，;；]+\s*)+[.。]?\s*", re.I)


@dataclass(frozen=True)
class _Part:
    stage: int
    text: str


class _CannotPlan(Exception):
    """The rules cannot turn the request into a plan; the message says why (for the log)."""


class TaskPlanner:
    def __init__(self, registry, llm=None, *, max_steps: int = DEFAULT_MAX_STEPS):
        self._registry = registry
        self._llm = llm
        self._max_steps = max_steps
        router = registry.get_capability("routing", None)
        self._router: TaskRouter = router if isinstance(router, TaskRouter) else TaskRouter(registry)
        self._resolver = ContextResolver()

    # -- plans ---------------------------------------------------------------------------
    def plan(self, content: str, memories: list[dict] | None = None) -> Plan | None:
        """``memories``: what is remembered of the person; a step of a model-written plan may
        take a value from it ("my city" when Flora knows where the person lives)."""
        text = content.strip()
        if not text:
            return None
        split = _split(text)
        parts = _with_values(split)
        try:
            plan = self._plan_by_rules(parts)
        except _CannotPlan as exc:
            log.debug("rules cannot plan %r: %s", text, exc)
        else:
            if plan is not None:
                return plan
        asked = text  # what asks for work: the request without the values it gives
        for part in split:
            if _GIVES_A_VALUE.match(part.text):
                asked = asked.replace(part.text, " ")
        if self._llm is None or not self._looks_multi_step(asked, parts):
            return None
        return self._plan_by_model(text, memories or [])

    def _plan_by_rules(self, parts: list[_Part]) -> Plan | None:
        aggregation = None
        while len(parts) > 1 and _SHOWS_RESULT.search(parts[-1].text):
            parts = parts[:-1]
        if len(parts) > 1 and _SUMMARY.search(parts[-1].text) or len(parts) > 2 and _JUDGEMENT.search(parts[-1].text):
            aggregation = {"strategy": "map_reduce", "reduce": "summary", "instruction": parts[-1].text}
            parts = parts[:-1]
        if len(parts) < 2 and aggregation is None:
            return None  # one step: the normal path runs it
        if len(parts) > self._max_steps:
            raise _CannotPlan(f"{len(parts)} parts, more than planning.max_steps ({self._max_steps})")
        specs = self._route(parts)
        parts, specs = _said_once(parts, specs, self._router.extract_parameters)
        if len(parts) < 2 and aggregation is None:
            return None  # one request in two clauses: the normal path runs it
        ids = [f"s{i}" for i in range(1, len(parts) + 1)]
        steps = []
        for i, (part, spec) in enumerate(zip(parts, specs)):
            before = [j for j in range(i) if parts[j].stage == part.stage - 1]
            sources = self._sources(parts, i, ids)
            parameters = self._router.extract_parameters(spec, part.text)
            if sources and not any(REFERENCE.search(str(v)) for v in parameters.values()):
                _pass_results(spec, parameters, [f"${{{ids[j]}.result}}" for j in sources])
            depends = [ids[j] for j in sorted({*before, *sources})]
            steps.append(PlanStep(ids[i], spec.name, parameters, tuple(depends), part.text, _kind(spec)))
        fed = {dep for step in steps for dep in self._resolver.references(step.parameters) if dep != step.id}
        steps = [PlanStep(s.id, s.capability, s.parameters, s.depends_on, s.description,
                          "intermediate" if s.id in fed and s.kind == "leaf" else s.kind) for s in steps]
        return Plan(tuple(steps), aggregation or {"strategy": "concat"}, "template" if aggregation else "rules")

    def _route(self, parts: list[_Part]) -> list[CapabilitySpec]:
        specs: list[CapabilitySpec] = []
        for i, part in enumerate(parts):
            best = self._router.confident(part.text)
            if best is not None:
                specs.append(best.spec)
            elif (i > 0 and parts[i - 1].stage == part.stage and _ELLIPSIS.search(part.text)
                  and not self._router.rank(part.text)):
                specs.append(specs[-1])  # "the sales, the returns": the same work on another object
            else:
                raise _CannotPlan(f"no capability clearly fits {part.text!r}")
        return specs

    @staticmethod
    def _sources(parts: list[_Part], i: int, ids: list[str]) -> list[int]:
        """The parts whose results part ``i`` refers to: "step 2", ``${s2.result}``, or "it"."""
        text = parts[i].text
        named = set()
        for match in _STEP_REFERENCE.finditer(text):
            number = match.group(1) or match.group(2)
            n = int(number) if number.isdigit() else int(zh_number(number) or 0)
            if not 1 <= n <= len(parts) or n - 1 == i:
                raise _CannotPlan(f"{match.group(0)!r} in {text!r} names no other step")
            named.add(n - 1)
        for match in REFERENCE.finditer(text):
            if match.group(1) not in ids:
                raise _CannotPlan(f"{match.group(0)!r} in {text!r} names no step")
            named.add(ids.index(match.group(1)))
        if named or not _BACK_REFERENCE.search(text) or i == 0:
            return sorted(named)
        if parts[i - 1].stage == parts[i].stage:
            return [i - 1]
        return [j for j in range(i) if parts[j].stage == parts[i].stage - 1]

    def _looks_multi_step(self, text: str, parts: list[_Part]) -> bool:
        if len({part.stage for part in parts}) > 1:  # "then", "然后": steps in order
            return True
        if len(parts) > 1 and (_JOINED.search(text) or sum(1 for part in parts if self._router.rank(part.text)) > 1):
            return True  # "… and …", or two clauses each asking for work: not a comma alone
        strong = [c for c in self._router.rank(text) if c.score >= CONFIDENT_SCORE]
        return len(strong) > 1 or (bool(strong) and asks_beyond(self._router, text, strong[0].spec))

    # -- model ---------------------------------------------------------------------------
    def _plan_by_model(self, text: str, memories: list[dict]) -> Plan | None:
        from capabilities.llm.base import LLMError, LLMOutputError, complete_json

        messages = _prompt(self._router.routable(), text, memories)
        for attempt in (1, 2):
            try:
                answer = complete_json(self._llm, messages, PLAN_SCHEMA, max_tokens=PLAN_MAX_TOKENS)
                plan = self._accept(Plan.from_dict({**answer, "source": "llm"}, max_steps=self._max_steps), text)
            except LLMOutputError as exc:
                error, reply = str(exc), exc.text
            except PlanError as exc:
                error, reply = str(exc), json.dumps(answer, ensure_ascii=False)
            except LLMError as exc:
                log.warning("planning model call failed, leaving %r to the normal path: %s", text, exc)
                return None
            else:
                log.info("model planned %d steps for %r", len(plan.steps), text)
                return plan
            log.info("model plan attempt %d refused: %s", attempt, error)
            messages = [*messages, {"role": "assistant", "content": reply},
                        {"role": "user", "content": f"That plan is not valid: {error}. "
                                                    "Answer again with the corrected plan as JSON."}]
        return None

    def _accept(self, plan: Plan, text: str) -> Plan:
        """What a plan from the model must also satisfy: real capabilities, known parameters,
        and no secret the request does not contain (a model asked for a key invents one)."""
        steps = []
        for i, step in enumerate(plan.steps):
            if not self._registry.has_executable(step.capability):
                names = ", ".join(s.name for s in self._router.routable())
                raise PlanError(f"steps[{i}].capability: unknown capability {step.capability!r}; use one of {names}")
            spec = self._registry.get_executable(step.capability)
            if spec.parameters.get("additionalProperties") is False:
                unknown = sorted(set(step.parameters) - set(spec.properties))
                if unknown:
                    raise PlanError(f"steps[{i}].parameters: {step.capability} has no parameter {unknown[0]!r}; "
                                    f"it takes {', '.join(spec.properties) or 'none'}")
            kept = {k: v for k, v in step.parameters.items()
                    if not (_names_a_secret(k) and isinstance(v, str) and v not in text)}
            steps.append(PlanStep(step.id, step.capability, kept, step.depends_on, step.description,
                                  _kind(spec) if step.kind == "leaf" else step.kind))
        return Plan(tuple(steps), plan.aggregation, plan.source)


_JOINED = _RULES["joined"]


def _said_once(parts: list[_Part], specs: list[CapabilitySpec],
               values: Callable[[CapabilitySpec, str], dict]) -> tuple[list[_Part], list[CapabilitySpec]]:
    """Clauses of one stage that ask the same capability for the same thing, the later one
    pointing back at the earlier ("the revenue for Q2 by month, could you pull that from the
    database?"), leaving its object unsaid ("老板要上季度的销售额，帮我从 orders 表里拉一下") or giving nothing of its own for it where the earlier gives the values ("测试说
    https://… 一直报500，你帮我请求一下看看"), joined into one part: a comma alone does not make a
    second step. So is a later clause that only gives the earlier one's values, asking for nothing
    ("start the Dify workflow that prices the stock, the key's app-…").
    ``values(spec, text)``: the values of ``spec`` that ``text`` gives."""
    kept_parts, kept_specs = [parts[0]], [specs[0]]
    for part, spec in zip(parts[1:], specs[1:]):
        before = kept_parts[-1]
        gives, given_before = values(spec, part.text), values(spec, before.text)
        again = _POINTS_BACK.search(part.text) or _UNSAID_OBJECT.search(part.text) \
            or (not gives and given_before) or (gives and not given_before and not cues.reads_as_new_request(part.text))
        # a clause of nothing but values the step before still lacks ("…, API key app-…") is its own
        lacked = values(kept_specs[-1], part.text)
        lacked = lacked if not set(lacked) & set(values(kept_specs[-1], before.text)) else {}
        if part.stage == before.stage and (spec.name == kept_specs[-1].name and again
                                           or gives_only_values(lacked, part.text)):
            kept_parts[-1] = _Part(before.stage, f"{before.text}, {part.text}")
        else:
            kept_parts.append(part)
            kept_specs.append(spec)
    return kept_parts, kept_specs


MAX_NAME_WORDS = 3  # what may stand beside a value in a clause that only gives it: "API key", "the token"


def gives_only_values(values: dict, text: str) -> bool:
    """Whether a clause holds nothing but ``values`` (what the capability before it takes, read
    by their look) and a few words naming them ("API key app-R4nT9bLe", "token sk-…"): it gives
    the step before its values, even where a word of it is another capability's keyword."""
    if not values:
        return False
    rest = text
    for value in values.values():
        rest = rest.replace(str(value), " ")
    return not _OWN_WORK.search(rest) and len(rest.split()) + len(cjk_chars(rest)) // 2 <= MAX_NAME_WORDS


def asks_beyond(router: TaskRouter, text: str, spec: CapabilitySpec) -> bool:
    """Whether ``text``, beside ``spec``'s work, asks in a clause of its own for other work
    ("fetch https://…, then look up today's orders in the db", "把 https://… 抓下来，再查下库里的
    价格"): several steps, even when the rules know only ``spec`` among them. A clause that gives
    a value, says how, reads the result back or sums the results up asks for nothing more."""
    parts = _with_values(_split(text.strip()))
    if len(parts) < 2:
        return False
    others = [part.text for part in parts if spec.name not in {c.spec.name for c in router.rank(part.text)}]
    if len(others) == len(parts):
        return False  # no clause is plainly this capability's: its evidence is spread over the message
    for other in others:
        if _SHOWS_RESULT.search(other) or gives_only_values(router.extract_parameters(spec, other), other):
            continue
        if router.confident(other) is not None:
            return True  # another capability's work
        if _OWN_WORK.search(other) and not _POINTS_BACK.search(other) and _names_an_object(other) \
                and not (_SUMMARY.search(other) or _JUDGEMENT.search(other)):
            return True
    return False


def _names_an_object(text: str) -> bool:
    """Whether a clause says what its verb works on: "运行" or "and run" alone goes on with the
    work before it."""
    rest = _NO_OBJECT.sub("", _OWN_WORK.sub("", text))
    return len(rest) >= 2


def _with_values(parts: list[_Part]) -> list[_Part]:
    """A clause that only gives a value, joined to the clause before it in its stage."""
    joined: list[_Part] = []
    for part in parts:
        if joined and joined[-1].stage == part.stage and (_GIVES_A_VALUE.match(part.text)
                                                          or _NAMED_VALUES.fullmatch(part.text)):
            joined[-1] = _Part(part.stage, f"{joined[-1].text}, {part.text}")
        else:
            joined.append(part)
    return joined


_POINTS_BACK = _RULES["points_back"]
# in Chinese the object may go unsaid: "老板要上季度的销售额，帮我从 orders 表里拉一下" (a clause ending
# in a verb and 一下, naming nothing else to do it to: no 把, no 也/还/再/又/另外 for more)
_UNSAID_OBJECT = _RULES["unsaid_object"]
_NO_OBJECT = _RULES["no_object"]  # what a verb may stand with and still name nothing: "and", "please", "一下", "吧"


# values whose commas and semicolons do not split clauses: a SQL statement, something quoted
_WHOLE_VALUE = re.compile(r"\b(?:SELECT|WITH)\b[^。！？!?；;\n]*?\bFROM\b[^。！？!?；;\n]*|“[^”]*”|\"[^\"]*\"", re.IGNORECASE)
_SEPARATORS = {",": "\x01", "，": "\x02", ";": "\x03", "；": "\x04"}  # each kept as a control character meanwhile
_KEPT = str.maketrans(_SEPARATORS)
_RANGE = _RULES["range"]  # "between A and B": its "and" joins the ends of one range
_RANGE_AND = "\x05"
_RESTORED = str.maketrans({**{kept: separator for separator, kept in _SEPARATORS.items()}, _RANGE_AND: "and"})


def _range_kept(found: re.Match) -> str:
    """"between A and B" with its "and" kept from the cut into parts."""
    said = found.group(0)
    cut = said.lower().rindex("and")
    return said[:cut] + _RANGE_AND + said[cut + 3:]


def _split(text: str) -> list[_Part]:
    text = _WHOLE_VALUE.sub(lambda m: m.group(0).translate(_KEPT), text)
    text = _RANGE.sub(_range_kept, text)
    parts = []
    chunks = (c for item in _NUMBERED.split(_LEAD_IN.sub("", text, count=1)) for c in _SEQUENCE.split(item))
    for stage, chunk in enumerate(c for c in chunks if c and c.strip(" ,，;；。.")):
        for piece in _PARALLEL.split(chunk):
            piece = piece.translate(_RESTORED).strip(" \t,，;；。.、!！")
            if piece:
                parts.append(_Part(stage, piece))
    # stages numbered by position may have gaps when a stage was only punctuation
    renumbered, seen = [], {}
    for part in parts:
        seen.setdefault(part.stage, len(seen))
        renumbered.append(_Part(seen[part.stage], part.text))
    return renumbered


def _pass_results(spec: CapabilitySpec, parameters: dict, references: list[str]) -> None:
    """Put the referenced results into the capability's input parameter, if it has one."""
    for name in INPUT_PARAMETERS:
        if name in spec.properties and name not in parameters:
            value = references[0] if len(references) == 1 else references
            parameters[name] = {"input": value} if spec.properties[name].get("type") == "object" else value
            return


def _kind(spec: CapabilitySpec) -> str:
    return "workflow" if spec.name.endswith("workflow") else "leaf"


def _prompt(specs: list[CapabilitySpec], text: str, memories: list[dict] | None = None) -> list[dict]:
    """The rules first (a fixed prefix the model host keeps evaluated), then the capabilities
    installed now (they change when a skill or a plugin does: only they and what follows are
    evaluated again), then what is known about the person, the request last."""
    from capabilities.routing.task_router import is_builtin

    lines = []
    for spec in sorted(specs, key=lambda s: not is_builtin(s)):  # Flora's own first: a new skill changes the end
        params = ", ".join(f"{n}{' (required)' if n in spec.required else ''}" for n in spec.properties)
        lines.append(f"- {spec.name}: {spec.description} Parameters: {params or 'none'}.")
    system = (
        "You split a request into steps for an assistant, with the capabilities listed at the end.\n\n"
        "Answer with a JSON plan: steps is a list; each step has id (s1, s2, ...), capability (one of the names "
        "listed), parameters (only values written in the request, or a reference to an earlier step's result: "
        "\"${s1.result}\", \"${s1.result.rows[0].name}\"), depends_on (ids of the steps it needs first), "
        "description (the part of the request it does). A value the request leaves implicit (\"my city\") may "
        "come from what is known about the person, never from a guess. Steps that do not need each other have no dependency "
        "between them. aggregation.strategy says how the results combine: concat (list them), map_reduce "
        "(with reduce: summary, and instruction: the request's words for it, for a written summary, comparison or "
        "judgement of the results), voting, weighted.\n\n"
        "Capabilities:\n" + "\n".join(lines)
    )
    known = recalled.block(memories, recalled.SHORT_INTRO)
    return [{"role": "system", "content": system},
            {"role": "user", "content": (known + "\n" if known else "") + f"Request: {text}"}]
