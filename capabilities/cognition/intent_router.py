"""IntentRouter (the ``intent_router`` capability): what a message means, in one step.

``classify(text, history=..., pending=...)`` reads a message as one of:

============  ==================================================================
chat          conversation Flora answers itself (thanks, feelings, small talk, jokes,
              general knowledge, arithmetic, advice, writing)
task          run one installed capability now (``capability``, stated ``parameters``)
plan          several steps with installed capabilities
status        a question about Flora's own work for this person (tasks, loop tasks)
command       a system command (``command``: clear_history, shutdown, switch_model, help, status)
unsupported   needs the person's own data or an action no installed capability provides
              (unless an MCP tool clearly does it: then that tool is the task, docs/mcp.md)
clarify       two readings are close; ``options`` to choose from
answer        the value a paused task's question asked for (``pending`` names it)
============  ==================================================================

Rules decide only what the words make certain (``cues``: thanks and greetings, slash and
spelled-out commands, a capability the user named by its keywords); the rest is one
JSON-schema-constrained model call whose prompt is a stable prefix (capabilities, the intents,
worked examples as earlier turns, so the model host reuses its evaluated state) followed by
the recent turns, the paused question if any, and the message. The model answers one field,
``{"route": ...}``: an intent, or the name of the capability to run — a handful of tokens,
which small models get right more often than an intent and a capability apart. Parameters
are read from the message by the rules (``TaskRouter.extract_parameters``); where the model
picks a function the deployment installed (a plugin's, a skill's), the reading model
(``reader``) chooses among those functions and reads their values as a model with tools in its
prompt would, held to their schemas and to what the message states (``own_call``,
capabilities/arguments.py) — and a request that gives such a function its values is its call,
whatever the words say of the person's world or of figures to sum. Checks after the call keep the
model honest: a value it proposes for a parameter is kept only if it is written in the
message (a small model asked for an API key invents one), a "chat" about the person's own
records becomes ``unsupported``, a "chat" about their tasks becomes ``status``, a "chat" about
an address that an installed capability can fetch becomes a choice among those. Without a
model, or when its answer is unusable, the rules read the message as best they can.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from capabilities.arguments import as_written, read_call
from capabilities.cognition import cues, semantic, world
from capabilities.cognition.rule_tables import table
from capabilities.cognition.semantic import Reading
from capabilities.cognition.understanding_prompt import ROUTES, Pending, prompt
from capabilities.context.answers import is_help, sounds_like_request, urls
from capabilities.loop.requests import asks_to_be_reminded
from capabilities.routing.task_planner import asks_beyond
from capabilities.routing.task_router import CONFIDENT_SCORE, TaskRouter, is_builtin
from common.i18n import language_of
from common.messages import Option

log = logging.getLogger("flora.intent")

_QUERY = table("intents")["query"]  # a question about data rather than a task to do
MAX_OPTIONS = 5
UNDERSTANDING_MAX_TOKENS = 96
CLAIMED = 3.0  # a keyword score at which an installed capability clearly claims a message (its name, two keywords)
AGENT = "agent"  # the capability that calls the others as tools (capabilities/agent)
_FAMILIES = {"task": "task", "query": "task"}  # an Intent's kind -> its reading's family (the rest are the same)
_COMMANDS_READ = {"clear": "clear_history", "switch_model": "switch_model", "shutdown": "shutdown"}  # command/<kind>


@dataclass
class Intent:
    kind: str  # chat | task | query | plan | status | command | unsupported | clarify | answer
    capability: str | None = None
    parameters: dict = field(default_factory=dict)
    options: list[Option] = field(default_factory=list)
    source: str = "rules"  # rules | llm | examples (semantic.py)
    command: str | None = None
    elapsed_ms: float = 0.0
    refers_to: str | None = None  # clarify: the pointing words ("it", "那个文件") nothing before explains


class IntentRouter:
    def __init__(self, router: TaskRouter, llm=None, *, reader=None):
        """``llm`` reads what a message means; ``reader`` (default ``llm``) reads the arguments of
        a call of a capability the deployment installed (capabilities/arguments.py)."""
        self._router = router
        self._llm = llm
        self._reader = reader if reader is not None else llm

    @property
    def has_model(self) -> bool:
        return self._llm is not None

    @property
    def router(self) -> TaskRouter:
        return self._router

    def examples_know(self, capability: str | None) -> bool:
        """Whether the labelled examples know ``capability`` by enough of its requests for their
        reading to overrule a task of it (semantic.covered): a plugin's capability they have
        never seen said is the rules' and the model's to read."""
        return semantic.knows(self._router.registry, capability)

    def within(self, allowed) -> "IntentRouter":
        """The same reading, choosing only among ``allowed`` capabilities (a persona's
        allow-list; None: all)."""
        return self if allowed is None else IntentRouter(self._router.within(allowed), self._llm, reader=self._reader)

    def decide_by_rules(self, content: str, capability: str | None = None) -> Intent | None:
        """The task the rules are sure of (a capability the user chose, or one named by its
        keywords), without a model and without blocking; None when the rules are not sure."""
        ruled = self._ruled(content, capability)
        if ruled is not None and ruled.kind == "plan":
            return None  # a plan is the understanding step's
        if ruled is None or capability:
            return ruled
        # read as the understanding step reads a task (``classify``): a script described, or a
        # value of another tool's beside this one's ("fetch https://… and save the build number
        # to build.txt"), makes it the agent's work, whichever path decided
        return self._looked_at(content.strip(), self._written(ruled, content))

    def _ruled(self, content: str, capability: str | None = None) -> Intent | None:
        """What the rules read: a task, or a ``plan`` when the capability they are sure of is
        one step of several ("fetch https://…, then look up today's orders in the db"); the plan
        keeps that capability's task to fall back on when no plan can be made."""
        text = content.strip()
        if capability:
            spec = self._router.find(capability)
            return Intent("task", spec.name, self._router.extract_parameters(spec, text)) if spec else None
        if cues.conversation_only(text) or is_help(text) or cues.command(text):
            return None
        if cues.asks_about_own_work(text):
            return None  # "我那个dify的任务现在什么情况了": a question about the work, not more of it
        if cues.tells_of_an_address(text):
            return None  # "saw https://… on a bus ad, obvious scam lol": told of, not given to fetch
        best = self._router.confident(text)
        if best is None:
            return self._mcp_fallback(text) or self._steps_of_unsure(text)  # an MCP tool that clearly does it
        if world.needs_the_world(text) and best.score < CLAIMED and not self._values_in(best.spec, text):
            return None  # "restart the web server": a keyword alone, with nothing to run, does not make it this capability's
        if cues.is_question(text) and not self._router.has_evidence_beyond_name(best.spec, text):
            return None  # "what does a shell do?": a question that names a tool is not a request to run it
        if world.asks_how_it_works(text) and not self._values_in(best.spec, text):
            return None  # "数据库索引为什么能让查询变快？": how a thing works, asked of no data of the person's
        beyond = best.spec.name != AGENT and asks_beyond(self._router, text, best.spec)  # the agent plans itself
        kind = "plan" if beyond else _task_kind(text)
        return Intent(kind, best.spec.name, self._router.extract_parameters(best.spec, text))

    def _written(self, intent: Intent, text: str) -> Intent:
        """A task of a capability whose script or command the request describes rather than gives
        ("use python to compute the sha256 of hello") is the agent's: it writes the code and asks
        approval for exactly that, instead of asking the person for code."""
        if intent.kind not in ("task", "query") or not intent.capability:
            return intent
        spec = self._router.find(intent.capability)
        if spec is None or not self._router.written_by_agent(spec, intent.parameters, text):
            return intent
        return Intent(intent.kind, AGENT, {}, source=intent.source)

    def _looked_at(self, text: str, intent: Intent) -> Intent:
        """A message read as conversation, as needing what nothing installed does, or as too
        unclear to place (not for a pointing word nothing explains), that holds by its look a value
        a tool takes ("which port does config.ini set?": a file's name) is the agent's: chat cannot
        see the file and would invent its content, and a question back would offer tools that have
        nothing to do with it; the agent opens it.
        So is a task of one tool whose message also holds a value of a kind that tool takes no
        parameter for ("fetch https://… and save the build number to build.txt"): the agent does
        both steps, reading the first's result before the second."""
        if cues.conversation_only(text) or self._router.find(AGENT) is None:
            return intent
        if intent.kind in ("chat", "unsupported", "clarify") and not intent.refers_to \
                and self._router.tool_value_in(text):
            return Intent(_task_kind(text), AGENT, {}, source=intent.source)
        spec = self._router.find(intent.capability) if intent.kind in ("task", "query") and intent.capability else None
        if spec is not None and spec.name != AGENT and spec.offered_to_agent \
                and self._router.tool_value_in(text, besides=spec, given=intent.parameters):
            return Intent(intent.kind, AGENT, {}, source=intent.source)  # another tool's value: more than one step
        return intent

    def _values_in(self, spec, text: str) -> bool:
        """Whether ``text`` gives a value of ``spec``'s by its look or an address: something to run."""
        return bool(urls(text) or self._router.extract_parameters(spec, text))

    def _steps_of_unsure(self, text: str) -> Intent | None:
        """A ``plan`` when a capability with a keyword in the message is one step of several
        though none is sure ("把 https://… 的数据抓下来，再查下库里的价格"), else None."""
        ranked = self._router.rank(text)
        if not ranked or ranked[0].score < CONFIDENT_SCORE or ranked[0].spec.name == AGENT or world.needs_the_world(text):
            return None
        return Intent("plan") if asks_beyond(self._router, text, ranked[0].spec) else None

    def _mcp_fallback(self, text: str, source: str = "rules") -> Intent | None:
        found = self._router.fallback(text)
        if found is None:
            return None
        return Intent(_task_kind(text), found.spec.name, self._router.extract_parameters(found.spec, text),
                      source=source)

    def _unsupported(self, text: str, source: str = "rules") -> Intent:
        """Nothing installed can do it: an MCP tool that clearly can, else ``unsupported``."""
        return self._mcp_fallback(text, source) or Intent("unsupported", source=source)

    def warm_up(self) -> None:
        """Have the model evaluate the prompt's stable prefix once, before anyone waits for it."""
        if self._llm is not None:
            self._llm.complete(prompt(self._router.routable(), "hello"), max_tokens=1)

    def certain(self, content: str) -> Intent | None:
        """What the words alone make certain, or None: conversation, a command, a question
        about the person's own tasks."""
        text = content.strip()
        if cues.conversation_only(text):
            return Intent("chat")
        named = cues.command(text)
        if named == "status":  # "/status" is a question about Flora's state, asked as a command
            return Intent("status")
        if named is not None:
            return Intent("command", command=named)
        if is_help(text) or cues.asks_about_abilities(text):
            return Intent("status", command="help")
        if cues.asks_about_own_work(text):
            return Intent("status")
        if cues.asks_about_self(text):  # "what's my name?": chat answers from what it remembers
            return Intent("chat")
        return None

    def classify(self, content: str, *, history: list[dict] | None = None,
                 pending: Pending | None = None, memories: list[dict] | None = None,
                 reading: Reading | None = None) -> Intent:
        """``memories``: what is remembered of the person that bears on the message (it can
        turn "what's the weather at home?" into a request the person's city completes).
        ``reading``: what the message resembles among labelled examples (semantic.py); where
        it is sure and the rules or the model read otherwise, it decides (``second_opinion``)."""
        started = time.perf_counter()
        text = cues.spelled_out(content.strip())
        intent = self._classify(text, history or [], pending, memories or [])
        intent = self._written(self.second_opinion(text, intent, reading, pending), text)
        if pending is None:
            intent = self._own_instead(text, self._looked_at(text, intent))
        if pending is not None and intent.kind in ("task", "query", "clarify", "chat") \
                and intent.capability in (None, pending.capability) and self._gives_awaited(text, pending):
            # "just call this one: https://…" while the task waits for its address: the answer
            intent = Intent("answer", pending.capability, source=intent.source)
        intent.elapsed_ms = (time.perf_counter() - started) * 1000
        return intent

    def second_opinion(self, text: str, intent: Intent, reading: Reading | None,
                       pending: Pending | None = None) -> Intent:
        """The reading of the message by its nearest labelled examples, held against the
        rules' or the model's: where they disagree and the examples are sure (more sure for
        overruling a rule than the small model), the examples decide what Flora does. Thanks,
        greetings and slash commands are certain; an ``unsupported`` is made chat only for a
        question about the person themselves, which what they told answers, or one of general
        knowledge that names nothing of theirs or of the live world (elsewhere an
        invented answer is worse than a refusal); a task, plan or answer is taken only where the
        examples say which (the model and the rules keep those), except a plan the rules would
        make one task of."""
        if reading is None or reading.family == _FAMILIES.get(intent.kind, intent.kind):
            return intent
        if intent.kind in ("task", "query") and not self.examples_know(intent.capability):
            return intent  # a capability the examples have never seen asked for: they cannot judge
        # a capability the model chose knowing what this deployment installed ("what were the
        # sales last month?" where a sales database is configured) gives way only to a near-certain
        # reading; conversation is made a refusal only by a sure one ("终于还完最后一期房贷了！" is
        # no question about a bank account)
        if intent.kind in ("task", "query") and intent.source == "llm":
            # ...but a capability the words give no sign of ("一支足球队上场是几个人" read as a
            # database query) gives way to a sure reading as conversation
            needed = semantic.SURE if reading.family == "chat" and self._groundless(text, intent.capability) \
                else semantic.CERTAIN
        elif intent.source == "llm" and not (intent.kind == "chat" and reading.family == "unsupported"):
            needed = semantic.LEANS
        else:
            needed = semantic.SURE
        if not reading.sure(needed):
            return intent
        if _stands(text, intent, reading) or self._chosen(text, intent):
            return intent
        family, kind = reading.family, reading.kind
        if family == "chat" and (not urls(text) or cues.tells_of_an_address(text)):
            # chat cannot look at an address: that stays a capability's, unless it is only told of
            return Intent("chat", source="examples")
        if family == "unsupported":
            return self._unsupported(text, "examples")
        if family == "status":
            return Intent("status", command="help" if kind == "abilities" else None, source="examples")
        if family == "command" and kind in _COMMANDS_READ:
            named = cues.command(text) or _COMMANDS_READ[kind]
            if named == "clear_history" and not cues.command(text) and not reading.sure(semantic.CERTAIN):
                return intent  # clearing is done at once and cannot be undone: only on words or near certainty
            return Intent("command", command=named, source="examples")
        if family == "clarify":
            return Intent("clarify", options=choices(self._router.routable(), language_of(text)), source="examples")
        if family == "loop_op" and kind == "list":  # "what have I got scheduled with you?": the status answer lists them
            return Intent("status", source="examples")
        if family == "plan" and intent.kind in ("task", "query") and intent.source == "rules":
            # "hit https://…, and once you've got it, send a summary to https://…"; the task stays
            # what is done when no plan of several steps can be made of it
            return Intent("plan", intent.capability, intent.parameters, source="examples")
        if family == "answer" and pending is not None:
            return Intent("answer", pending.capability, source="examples")
        if family == "task" and intent.kind == "plan":  # "调下 http://…，看看返回了几条": one request, its result shown
            ruled = self._ruled(text)
            if ruled is not None and ruled.capability:
                return Intent(_task_kind(text), ruled.capability, ruled.parameters, source="examples")
        return intent

    def _chosen(self, text: str, intent: Intent) -> bool:
        """Whether the person named the capability of a task or plan as the means ("run some
        python to work out…", "用Python帮我生成…"): what the message resembles does not overrule
        their choice of tool."""
        spec = self._router.find(intent.capability) if intent.kind in ("task", "query", "plan") \
            and intent.capability else None
        return spec is not None and self._router.named_as_means(spec, text)

    def _groundless(self, text: str, capability: str | None) -> bool:
        """Whether nothing in ``text`` points at ``capability``: no keyword of it, no address, no
        value of it by its look."""
        spec = self._router.find(capability) if capability else None
        return spec is not None and not self._router.has_evidence_beyond_name(spec, text) \
            and not self._router.extract_parameters(spec, text)

    def own_call(self, chosen, text: str) -> tuple[str, dict] | None:
        """The call of one of the deployment's own functions that ``text`` makes — ``chosen``, the
        one the understanding step picked, or another of them the reading model finds fits
        better, as a model given the functions as tools would — with the values the request
        states (the rules', then the model's held to the request: capabilities/arguments.py).
        None when the request gives nothing the function needs (its words name no call of it,
        whatever the model chose: the other checks decide)."""
        own = [s for s in self._router.routable() if not is_builtin(s) and s.name != AGENT] or [chosen]
        by_rules = {spec.name: self._router.extract_parameters(spec, text) for spec in own}
        name, values = chosen.name, by_rules.get(chosen.name, {})
        if self._reader is not None and (len(own) > 1 or any(n not in values for n in chosen.required)):
            read, model_values = read_call(self._reader, own, text, by_rules)
            if read is None:
                return None
            name, values = read, {**model_values, **by_rules[read]}
        spec = next(s for s in own + [chosen] if s.name == name)
        if spec.required and not any(n in values for n in spec.required):
            return None
        return name, values

    def unplanned(self, text: str, intent: Intent) -> Intent:
        """What a ``plan`` reading becomes when no plan can be made of the message: the task of
        the capability it names; else the agent's, where the message holds a value a tool takes
        ("帮我打开 notes/march.txt 念一下，看看三月都约了哪几家": the agent opens it and answers);
        else a question which capability."""
        if intent.capability:
            return Intent("task", intent.capability, intent.parameters, source=intent.source)
        if self._router.find(AGENT) is not None and self._router.tool_value_in(text):
            return Intent(_task_kind(text), AGENT, {}, source=intent.source)
        return Intent("clarify", options=intent.options, source=intent.source)

    def _own_instead(self, text: str, intent: Intent) -> Intent:
        """A message read as conversation or as needing what nothing installed does, that calls
        one of the deployment's own functions with every value it needs stated ("my garden bed is
        a triangle, twelve metres along the bottom and seven high: how big is it?" where
        ``triangle_area`` is installed; "深圳明天天气怎么样" where ``weather_forecast`` is): that
        function's call. The understanding step chooses among routes and every capability at
        once, and a small model reads a word problem or a question about the world as talk; the
        reading model, shown the functions as tools, finds the call as a model with tools in its
        prompt does — and says "none" for a message that calls none of them. Greetings, thanks
        and commands are never asked, nor is a message about one of the person's own records
        ("what's my bank account balance?" is no stock quote): only a function the understanding
        step itself chose answers that."""
        if intent.kind not in ("chat", "unsupported") or self._reader is None or cues.conversation_only(text) \
                or world.names_own_records(text):
            return intent
        own = [s for s in self._router.routable() if not is_builtin(s) and s.name != AGENT]
        if not own:
            return intent
        by_rules = {spec.name: self._router.extract_parameters(spec, text) for spec in own}
        name, values = read_call(self._reader, own, text, by_rules)
        spec = next((s for s in own if s.name == name), None)
        if spec is None:
            return intent
        values = {**values, **by_rules[spec.name]}
        if not values or any(n not in values for n in spec.required) or not as_written(values, text):
            # a call the message gives only part of is not what it asks for; nor is one with a
            # name the message never wrote ("Celtics" read into "篮球比赛一节打几分钟？")
            return intent
        return Intent(_task_kind(text), spec.name, values, source="llm")

    def _gives_awaited(self, text: str, pending: Pending) -> bool:
        return bool(self.awaited_values(pending.capability, pending.names, text))

    def awaited_values(self, capability: str, names, text: str) -> dict:
        """The values of ``names`` that ``capability``'s own readers find in ``text`` ("the key
        is app-…", "就请求这个吧 https://…"): what a paused task of it waits for, given."""
        spec = self._router.find(capability)
        if spec is None:
            return {}
        return {k: v for k, v in self._router.extract_parameters(spec, text).items() if k in names}

    def _classify(self, text: str, history: list[dict], pending: Pending | None, memories: list[dict]) -> Intent:
        sure = self.certain(text)
        if sure is not None:
            return sure
        said_before = any(turn.get("role") == "user" and not cues.conversation_only(str(turn.get("content", "")))
                          for turn in history)
        pointed = cues.unclear_reference(text) if not said_before and pending is None else None
        if pointed:  # "send it to them" with nothing said before but "hi": "it" is nothing yet, so ask
            return Intent("clarify", options=choices(self._router.routable(), language_of(text)), refers_to=pointed)
        ruled = self._ruled(text)
        if ruled is not None and (pending is None or ruled.capability != pending.capability):
            return ruled  # a capability the words name (not the one a question waits for), or its plan
        if self._llm is not None:
            intent = self._ask_model(text, history, pending, memories)
            if intent is not None:
                return intent
        return ruled or self._fallback(text, pending)

    # -- model -----------------------------------------------------------------------
    def _ask_model(self, text: str, history: list[dict], pending: Pending | None,
                   memories: list[dict]) -> Intent | None:
        from capabilities.llm.base import LLMError, complete_json

        specs = self._router.routable()
        names = [s.name for s in specs if s.name not in ROUTES]
        schema = {"type": "object", "properties": {"route": {"type": "string", "enum": [*ROUTES, *names]}},
                  "required": ["route"]}
        try:
            answer = complete_json(self._llm, prompt(specs, text, history, pending, memories), schema,
                                   max_tokens=UNDERSTANDING_MAX_TOKENS)
        except LLMError as exc:
            log.warning("understanding model call failed, using rules: %s", exc)
            return None
        return self._checked(text, answer, specs, pending)

    def _checked(self, text: str, answer: dict, specs, pending: Pending | None) -> Intent | None:
        """The model's reading, held to what the message and the installed capabilities allow."""
        names = [s.name for s in specs]
        route = answer.get("route", "chat")
        kind, capability = (route, None) if route in ROUTES else ("task", route)
        if kind == "answer" and pending is None:
            kind = "chat"
        if kind == "answer":
            return Intent("answer", pending.capability, source="llm")
        chosen = next((s for s in specs if s.name == capability), None)
        if chosen is not None and not is_builtin(chosen) and capability != AGENT:
            called = self.own_call(chosen, text)
            if called is not None:  # the request gives what one of the deployment's own functions takes: its call
                return Intent(_task_kind(text), called[0], called[1], source="llm")
        if capability == AGENT and world.beyond_this_machine(text) \
                and self._router.confident(text, min_score=CLAIMED) is None:
            return self._unsupported(text, "llm")  # a cluster, a mailbox, a ticket elsewhere: no tool here reaches it
        if capability == AGENT and AGENT in names:  # the tool-using loop: it finds out itself what it can do
            spec = next(s for s in specs if s.name == AGENT)
            return Intent("task", AGENT, self._router.extract_parameters(spec, text), source="llm")
        if kind != "answer" and (world.needs_the_world(text) or _asks_of_own_records(text)) \
                and not cues.asks_about_flora(text) and self._router.confident(text, min_score=CLAIMED) is None:
            return self._unsupported(text, "llm")  # only a capability could know or do it: never made up
        if kind == "chat" and (cues.vague_request(text) or (urls(text) and self._router.rank(text)
                                                            and not cues.tells_of_an_address(text))):
            kind = "clarify"  # chat cannot see an address: what is there is a capability's to fetch
        if kind == "chat" and cues.asks_about_flora(text):
            kind = "status"
        if kind == "unsupported" and (world.computes_on_given_figures(text) or world.asks_how_it_works(text)):
            kind = "chat"  # "I earn 6200 and save 15%, how much a year?", "how does k8s restart a pod?"
        if kind == "task" and world.computes_on_given_figures(text) and self._groundless(text, capability):
            kind, capability = "chat", None  # "进货价35，卖58，卖了40件，毛利多少": the sum is in the message
        chosen = next((s for s in specs if s.name == capability), None)
        if chosen is not None and chosen.asked_for_by_name \
                and not self._router.has_evidence_beyond_name(chosen, text):
            kind, capability = "chat", None  # a dilemma to talk over, not a request for the panel
        if kind == "command":
            named = cues.command(text)
            return Intent("command", command=named, source="llm") if named else Intent("chat", source="llm")
        if kind == "unsupported":
            return self._unsupported(text, "llm")
        if kind in ("chat", "status"):
            return Intent(kind, source="llm")
        if kind == "plan":
            return Intent("plan", source="llm")
        if kind == "clarify" or capability not in names:  # a task, but which? the person chooses (or says it was not one)
            if world.needs_the_world(text):
                return self._unsupported(text, "llm")
            ranked = self._router.rank(text)
            specs_offered = [c.spec for c in ranked] or self._router.routable()
            return Intent("clarify", options=choices(specs_offered, language_of(text)), source="llm")
        spec = next(s for s in specs if s.name == capability)
        return Intent(_task_kind(text), capability, self._router.extract_parameters(spec, text), source="llm")

    # -- rules -------------------------------------------------------------------------
    def _fallback(self, text: str, pending: Pending | None = None) -> Intent:
        if pending is not None and not cues.reads_as_new_request(text):
            return Intent("answer", pending.capability)
        if cues.asks_about_flora(text):
            return Intent("status")
        if world.needs_the_world(text) and self._router.confident(text, min_score=CLAIMED) is None:
            return self._unsupported(text)
        ranked = self._router.rank(text)
        if ranked:
            return Intent("clarify", options=choices([c.spec for c in ranked], language_of(text)))
        if cues.vague_request(text) or sounds_like_request(text) and not _QUERY.search(text):
            return Intent("clarify", options=choices(self._router.routable(), language_of(text)))
        return Intent("chat")


def choices(specs, language: str = "en") -> list[Option]:
    """A clarification's options: the capabilities, described in the person's language."""
    return [{"id": str(i), "label": f"{s.name}: {s.describe(language)}", "capability": s.name}  # type: ignore[typeddict-item]
            for i, s in enumerate(specs[:MAX_OPTIONS], start=1)]


def _stands(text: str, intent: Intent, reading: Reading) -> bool:
    """What a reading never overrules: thanks, greetings and slash commands (certain); a refusal,
    but of a question about the person themselves or of general knowledge (elsewhere an invented
    answer is worse than a refusal); conversation over figures the message gives, or asked for advice ("有什么练习建议吗"
    lies near "你有哪些技能"), unless the examples name work to do."""
    if cues.conversation_only(text) or text.lstrip().startswith("/"):
        return True
    if intent.kind == "unsupported":
        return reading.family == "chat" and not (_about_the_person(text, reading) or _general_knowledge(text, reading))
    if intent.kind == "chat":
        return world.computes_on_given_figures(text) or cues.asks_hypothetical(text) \
            or cues.asks_for_advice(text) and reading.family not in ("task", "plan")
    return False


def _about_the_person(text: str, reading: Reading) -> bool:
    """A question about the person themselves ("is there any food I must avoid?"), surely read so
    by the examples: what they told Flora answers it, so a refusal is no better than an invented
    answer — unless it is about their records or the world, which only a capability sees."""
    return reading.kind == "about_me" and reading.sure(semantic.SURE) and not world.needs_the_world(text)


def _general_knowledge(text: str, reading: Reading) -> bool:
    """A question of general knowledge ("请问您，中国最长的河是哪一条？"), surely read so by the
    examples, that names nothing of the person's and nothing of the live world: no capability is
    needed for it, so a refusal is the small model's mistake."""
    return reading.kind == "knowledge" and reading.sure(semantic.SURE) and not cues.speaks_of_self(text) \
        and not world.needs_the_world(text)


def _asks_of_own_records(text: str) -> bool:
    """Whether ``text`` asks something of one of the person's own records ("看看我邮箱，导师有没有回我",
    "我工资到账了没？"): only the record's own service could answer, so an answer made here would
    be invented. A reminder about one asks for a reminder ("remind me when my parcel arrives"), and
    a sum on figures the message gives is worked out from them ("my salary is 4100 and my rent
    1400, how much is left?")."""
    return cues.asks(text) and world.names_own_records(text) and not asks_to_be_reminded(text) \
        and not world.computes_on_given_figures(text)


def _task_kind(text: str) -> str:
    return "query" if _QUERY.search(text) and not sounds_like_request(text) else "task"


def reply_language(text: str, history: list[dict] | None = None) -> str:
    """The language to answer in: the message's, or the conversation's when the message
    has no words of either script ("👍", "17*23")."""
    said = language_of(text, default="")
    if said:
        return said
    for turn in reversed(history or []):
        if turn.get("role") == "user":
            lang = language_of(str(turn.get("content", "")), default="")
            if lang:
                return lang
    return "en"
