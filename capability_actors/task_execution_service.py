"""TaskExecutionService: what an ExecutionActor does, as a plain class.

``analyze`` works out what a request means (and writes the reply when it is chat);
``execute`` and ``resume`` run a capability for a task: check the gathered parameters
against its JSON schema, pause the task for whatever is missing or refused, ask for
approval where the capability needs it, otherwise run it and report the result.

A task carrying ``meta["loop"]`` is a request to run the capability on a schedule: it is
paused for its parameters (and for its time, when none was said) like any task, and once
complete it is registered as a loop task instead of run. A loop *run* (``meta["run"]``)
starts only from ``created``, so a run handed on twice runs once.

Each method returns the one message to send back to the AgentActor. Capability failures
are data in that message; a bug in Flora itself raises.
"""

from __future__ import annotations

import logging
import time

from capabilities.base import (
    DESCRIPTION_IN, ApprovalRequired, CapabilityError, CapabilityInputError, CapabilitySpec, ExecutionContext,
    InputRequired,
)
from capabilities.cognition import cues
from capabilities.cognition.reading import carried
from capabilities.cognition.semantic import LEANS, Reading
from capabilities.cognition.chat import ChatResponder
from capabilities.cognition.intent_router import Intent, IntentRouter, Pending, choices, reply_language
from capabilities.cognition.personas import PersonaBook, PersonaChoice, choice_of, refusal
from capabilities.cognition.self_report import StatusReport, SystemCommands
from capabilities.arguments import read_arguments
from capabilities.context import answers
from capabilities.context.conversation_manager import ConversationManager, ask_message
from capabilities.params import check_parameters, shown_values
from capabilities.registry import CapabilityRegistry, UnknownCapability
from capabilities.routing.task_planner import DEFAULT_MAX_STEPS, TaskPlanner
from capabilities.routing.task_router import REQUEST_TEXT, TaskRouter, is_builtin
from common import messages as m
from common import spans
from config import DEFAULT_RECONFIRM_AFTER_S
from common.cluster import current_node
from common.i18n import language_of, say
from capabilities.loop.schedule import ScheduleError
from capabilities.memory.results import with_memory
from common.tasks.models import (
    CREATED, FAILED, PAUSED_STATES, RUNNING, WAITING_APPROVAL, WAITING_PARAMETERS, InvalidTransition, TaskChanged,
    TaskNotFound, TaskRecord,
)
from common.tasks.store import TaskStore
from events.event_bus import EventBus
from events.event_types import EventType

log = logging.getLogger("flora.execution")

SOURCE = "ExecutionActor"
ASKED_AT_META = "approval_asked_at"  # task.meta: when the person was last asked to approve this task
APPROVAL_META = "approval"  # task.meta while a task waits for the yes to one call: {call_id, tool, arguments}
TIME_PARAMETER = "time"
# how sure the examples must be, alone, that a question is about the person before the honest "you
# haven't told me" replaces the model's reply: questions about the person read 0.87–0.98 with the
# learned reader, "could the writer tell me a story?" 0.62
ABOUT_SELF_SHARE = 0.8
TIME_DESCRIPTION = "when to run it: 15:30, tomorrow at 9:00, every day at 9:00, every Monday at 10:00, in 20 minutes"
TIME_DESCRIPTION_ZH = "什么时候运行：15:30、明天9点、每天9点、每周一10点、20分钟后"
TIME_PASSED_ZH = "这个时间已经过去了"


class TaskExecutionService:
    def __init__(self, *, store: TaskStore, events: EventBus, registry: CapabilityRegistry,
                 config=None, llm=None, understanding_llm=None, persona_llms=None):
        """``persona_llms``: a function from a persona's ``model`` to its LLM (None: the chat model)."""
        self._store = store
        self._events = events
        self._registry = registry
        self._config = config
        self._llm = llm
        self._conversation = ConversationManager(store, events, registry, source=SOURCE)
        self._router = TaskRouter(registry)
        self._intents = IntentRouter(self._router, understanding_llm if understanding_llm is not None else llm,
                                     reader=llm)
        self._understanding_llm = understanding_llm if understanding_llm is not None else llm
        self._personas = PersonaBook.from_config(config) if config is not None else None
        self._persona_llms = persona_llms
        self._chat = ChatResponder(registry, llm)
        self._planner = TaskPlanner(registry, llm, max_steps=config.planning.max_steps if config is not None
                                    else DEFAULT_MAX_STEPS)

    # -- understanding -------------------------------------------------------------------
    def analyze(self, msg: m.Analyze, on_text=None) -> m.AnalysisResult:
        """Understand a message in one step, then do just what that reading needs: write the
        chat reply (streamed to ``on_text``), answer from the store (status, commands),
        say plainly what cannot be done, plan, or name the capability to run — as the
        message's persona, with what it may use (picked here first with ``pick_persona``)."""
        persona = choice_of(msg)
        if msg.get("pick_persona") and self._personas is not None:
            persona = self._personas.pick(self._understanding_llm, msg["content"], msg.get("history"))
            self._events.publish_task_event(task_id=msg["task_id"], event_type=EventType.PERSONA_SELECTED,
                                            source=SOURCE, tenant_id=msg["tenant_id"], user_id=msg["user_id"],
                                            data=persona.event_data())
            log.info("persona task_id=%s picked %s (%s)", msg["task_id"], persona.name, persona.how)
        result = self._analyze(msg, persona, on_text)
        return {**result, "persona": persona.to_dict()} if msg.get("pick_persona") and persona else result

    def _analyze(self, msg: m.Analyze, persona: PersonaChoice | None, on_text) -> m.AnalysisResult:
        task_id, content = msg["task_id"], msg["content"]
        allowed = persona.allowed if persona is not None else None
        intents = self._intents.within(allowed)
        if msg.get("capability"):
            if persona is not None and not persona.allows(msg["capability"]):
                return m.analysis_result(task_id=task_id, intent="unsupported",
                                         message=refusal(persona.name, msg["capability"], allowed))
            chosen = intents.decide_by_rules(content, msg["capability"])
            if chosen is None:
                return m.analysis_result(task_id=task_id, intent="chat",
                                         message=f"There is no capability named {msg['capability']!r}.")
            return m.analysis_result(task_id=task_id, intent=chosen.kind, capability=chosen.capability,
                                     parameters=chosen.parameters)
        history = msg.get("history") or []
        language = reply_language(content, history)
        told = f"{content}\n{msg['instruction']}" if msg.get("instruction") else content
        if msg.get("instruction"):  # a revision of a plan the model wrote: planned again with it
            plan = self._planner.plan(told, msg.get("memories"))
            if plan is not None:
                return m.analysis_result(task_id=task_id, intent="task", capability="plan", plan=plan.to_dict())
        hint = msg.get("intent")
        if allowed is not None and hint not in ("chat", "system"):
            named = self._intents.decide_by_rules(content)  # the words name a capability it may not use
            if named is not None and named.capability not in allowed:
                return m.analysis_result(task_id=task_id, intent="unsupported",
                                         message=refusal(persona.name, named.capability, allowed))
        if hint == "chat":
            intent = Intent("chat")
        elif hint == "system":
            intent = Intent("status", command="help")
        else:
            intent = intents.classify(content, history=history, pending=self._pending(msg),
                                      memories=msg.get("memories"), reading=Reading.from_dict(msg.get("reading")))
        timing = {"understand_ms": round(intent.elapsed_ms, 1), "source": intent.source}
        log.info("analyzed task_id=%s intent=%s capability=%s source=%s elapsed_ms=%.0f", task_id, intent.kind,
                 intent.capability, intent.source, intent.elapsed_ms)
        kind = intent.kind
        if kind == "plan":
            plan = self._planner.plan(told, msg.get("memories"))
            if plan is not None:
                log.info("analyzed task_id=%s as a plan of %d steps", task_id, len(plan.steps))
                return m.analysis_result(task_id=task_id, intent="task", capability="plan", plan=plan.to_dict(),
                                         timing=timing)
            intent = intents.unplanned(content, intent)
            kind = intent.kind
            if kind == "clarify":
                intent.options = intent.options or choices([c.spec for c in intents.router.rank(content)], language)
        if kind == "answer":
            return self._answered(msg, timing)
        if kind == "chat":
            return m.analysis_result(task_id=task_id, intent="chat", timing=timing, message=self._chat.reply(
                content, language=language, history=history, memories=msg.get("memories"), on_text=on_text,
                persona_prompt=persona.prompt if persona is not None else None,
                llm=self._persona_llm(persona), **self._about_self(msg)))
        if kind == "status":
            asked_abilities = intent.command == "help" or cues.asks_about_abilities(content)
            return m.analysis_result(task_id=task_id, intent="status", timing=timing, message=(
                self._chat.help_text(language) if asked_abilities
                else self._status().answer(msg["tenant_id"], msg["user_id"], language)))
        if kind == "command":
            return m.analysis_result(task_id=task_id, intent="command", timing=timing,
                                     message=self._commands().run(intent.command or "help", msg["tenant_id"],
                                                                  msg["user_id"], language))
        if kind == "unsupported":
            abilities = ", ".join(a for a in self._chat.abilities() if allowed is None or a in allowed) or "-"
            return m.analysis_result(task_id=task_id, intent="unsupported", timing=timing, message=say(
                language, "unsupported", what=say(language, "unsupported_what"), abilities=abilities))
        if kind == "clarify":
            options = intent.options or choices(intents.router.routable(), language)
            options = [*options, {"id": str(len(options) + 1), "label": say(language, "just_chat")}]
            asked = say(language, "unclear_reference", ref=intent.refers_to) if intent.refers_to \
                else say(language, "not_sure")
            return m.analysis_result(task_id=task_id, intent="clarify", options=options, timing=timing,
                                     message=asked + "\n" +
                                     "\n".join(f"{o['id']}. {o['label']}" for o in options))
        return m.analysis_result(task_id=task_id, intent=kind, capability=intent.capability,
                                 parameters=intent.parameters, timing=timing)

    def _about_self(self, msg: m.Analyze) -> dict[str, bool]:
        """Whether a chat message asks about the person themselves (their name, their dog's
        name, where they live) — ``about_self``: by its reading's rules, else by the labelled
        examples it is nearest to (read here if the front desk did not), unless it asks about their
        records or the live world — or ``may_be_about_self``: the examples lean that way without
        being sure, or are unsure but the message speaks of the person's own things
        (ChatResponder.reply holds such a reply to what the person told)."""
        said = carried(msg)
        if said.asks_about_self:
            return {"about_self": True}
        if not said.asks:  # "my dog is called Bruno" lies near "what's my dog called?": told, not asked
            return {}
        read = said.examples
        if read is None:
            reader = self._registry.get_capability("semantic_reader", None)
            read = reader.read(msg["content"]) if reader is not None else None
        if read is None or read.family != "chat" or read.kind != "about_me" or said.needs_the_world:
            return {}
        if read.sure(ABOUT_SELF_SHARE):
            return {"about_self": True}
        # nearest to questions about the person, and speaking of their own things ("whats my van's
        # reg number again"): a figure in the reply must have been told, however unsure the examples
        return {"may_be_about_self": read.sure(LEANS) or cues.speaks_of_self(msg["content"])}

    def _persona_llm(self, persona: PersonaChoice | None):
        """The persona's own model for its chat replies, or None for the chat model."""
        if persona is None or not persona.model or self._persona_llms is None:
            return None
        return self._persona_llms(persona.model)

    def _pending(self, msg: m.Analyze) -> Pending | None:
        """The paused task's question the message may be answering."""
        if not msg.get("pending_task_id"):
            return None
        task = self._store.get_task(msg["tenant_id"], msg["pending_task_id"])
        if task is None or task.user_id != msg["user_id"] or task.state != WAITING_PARAMETERS:
            return None
        return Pending(task.task_id, task.capability, tuple(p["name"] for p in task.missing),
                       "; ".join(p.get("description", "") for p in task.missing)[:200])

    def _answered(self, msg: m.Analyze, timing: dict) -> m.AnalysisResult:
        """The message answers the paused task: its values are recorded with it (or refused)."""
        task = self._store.get_task(msg["tenant_id"], msg["pending_task_id"])
        if task is None or task.state != WAITING_PARAMETERS:  # answered or cancelled meanwhile
            return m.analysis_result(task_id=msg["task_id"], intent="chat", timing=timing,
                                     message=say(reply_language(msg["content"]), "no_longer_waiting"))
        asked = [p["name"] for p in task.missing]
        values = {**(answers.answer_values(msg["content"], asked, {p["name"]: p.get("schema", {}) for p in task.missing})
                     or {}), **self._intents.awaited_values(task.capability, asked, msg["content"])}
        decision = self._conversation.complete_task_parameters(task.tenant_id, task.task_id, task.user_id, values)
        if decision.action == "error":
            return m.analysis_result(task_id=msg["task_id"], intent="chat", message=decision.message, timing=timing)
        return m.analysis_result(task_id=msg["task_id"], intent="answer", answered_task_id=task.task_id,
                                 capability=task.capability, missing=decision.missing or None,
                                 message=decision.message or None, timing=timing)

    def _status(self) -> StatusReport:
        loops = self._registry.get_capability("loop_tasks", None)
        return StatusReport(self._store, loops, model=self._model_name())

    def _commands(self) -> SystemCommands:
        from capabilities.llm.models import CATALOGUE

        return SystemCommands(self._store, self._status(), self._chat.help_text, model=self._model_name(),
                              models=sorted(CATALOGUE))

    def _model_name(self) -> str:
        if self._config is None:
            return ""
        llm = self._config.llm
        return llm.model if llm.backend == "local" else (llm.model_name or llm.backend)

    # -- running ---------------------------------------------------------------------------
    def execute(self, msg: m.Execute) -> dict:
        tenant, task_id = msg["tenant_id"], msg["task_id"]
        sent = msg.get("task")
        task = TaskRecord(**sent) if sent else self._store.get_task(tenant, task_id)
        if task is None:
            return _failed(tenant, task_id, msg["capability"], "not_found", f"There is no task {task_id}.")
        if task.meta.get("run") and task.state != CREATED:
            return _failed(tenant, task_id, task.capability, "conflict", f"Run task {task_id} is {task.state} already.")
        try:
            return self._run(task, msg["capability"], {**task.parameters, **msg["parameters"]}, resumed=False,
                             as_sent=sent is not None)
        except TaskChanged:  # written since it was sent (a comment, say): decided again on what it is now
            return self.execute({k: v for k, v in msg.items() if k != "task"})

    def resume(self, msg: m.ResumeExecution) -> dict:
        tenant, task_id = msg["tenant_id"], msg["task_id"]
        task = self._store.get_task(tenant, task_id)
        if task is None:
            return _failed(tenant, task_id, "", "not_found", f"There is no task {task_id}.")
        if task.state not in PAUSED_STATES:
            return _failed(tenant, task_id, task.capability, "conflict",
                           f"Task {task_id} is {task.state}; only a paused task can be resumed.")
        return self._run(task, task.capability, task.parameters, resumed=True)

    def _run(self, task: TaskRecord, capability: str, parameters: dict, *, resumed: bool,
             as_sent: bool = False) -> dict:
        """Run ``task`` (``as_sent``: the record its ``execute`` carried, so it starts only if
        nobody wrote the task since; TaskChanged otherwise)."""
        tenant, task_id = task.tenant_id, task.task_id
        try:
            spec = self._registry.get_executable(capability)
        except UnknownCapability as exc:
            return _failed(tenant, task_id, capability, "unknown_capability", str(exc))
        allowed = task.meta.get("allowed_capabilities")
        if isinstance(allowed, list) and capability not in allowed:  # whatever routed it here
            log.warning("refused task_id=%s capability=%s: not allowed to persona %s", task_id, capability,
                        task.meta.get("persona"))
            return _failed(tenant, task_id, capability, "forbidden",
                           refusal(str(task.meta.get("persona", "")), capability, allowed))
        check = check_parameters(spec, parameters)
        if check.missing and not resumed:
            check = self._read_by_model(task, spec, parameters, check)
        missing = list(check.to_ask)
        loop = task.meta.get("loop")
        if loop is not None and loop.get("schedule") is None:
            loop, asked = self._loop_time(task, parameters.get(TIME_PARAMETER))
            missing += asked
        if missing:
            return self._pause(tenant, task_id, spec, missing, check.values)
        if resumed and self._stale(task) and self._has_effects(task, spec, check.values):
            return self._reconfirm(task, spec, check.values)
        if spec.approval_needed(check.values) and not task.approved and not self._waived(task, spec.name):
            refused = self._refused(task, spec, check.values)  # never offered for approval
            return refused or self._pause(tenant, task_id, spec, [], check.values, kind=WAITING_APPROVAL)
        # a yes to one call of a tool (the agent's) holds for that call only: it is handed on and spent
        call = task.meta.get(APPROVAL_META)
        approved_call = call["call_id"] if call and task.approved else None
        meta = {k: v for k, v in task.meta.items() if k != APPROVAL_META} | {"node": self._node()}
        try:
            task = self._events.transition(
                tenant, task_id, RUNNING, source=SOURCE, data={"capability": capability},
                event_type=EventType.TASK_RESUMED if resumed else EventType.TASK_STARTED,
                expect=None if resumed or not task.meta.get("run") else (CREATED,),
                unchanged_since=task.updated_at if as_sent else None,
                parameters=check.values, missing=[], meta=meta,
                **({"approved": False} if call else {}))
        except InvalidTransition as exc:
            return _failed(tenant, task_id, capability, "conflict", str(exc))
        if loop is not None:
            return self._as_kept(task, self._register_loop(task, spec, check.values, loop))
        run = task.meta.get("run") or {}
        meta = {k: run[k] for k in ("loop_task_id", "run_key") if k in run}
        meta.update({k: task.meta[k] for k in ("allowed_capabilities", "memories") if k in task.meta})
        if approved_call:
            meta["approved_call"] = approved_call
        context = ExecutionContext(task_id=task_id, user_id=task.user_id, tenant_id=tenant, config=self._config,
                                   settings=self._settings(capability), llm=self._llm, registry=self._registry,
                                   meta=meta, logger=logging.getLogger(f"flora.capability.{capability}"),
                                   instruction=task.meta.get("instruction", ""), store=self._store,
                                   events=self._events, request=task.content)
        started = time.perf_counter()
        try:
            with spans.span("capability"):
                result = spec.invoke(check.values, context)
        except ApprovalRequired as exc:
            return self._pause_for_call(task, spec, exc, check.values)
        except InputRequired as exc:
            values = {k: v for k, v in check.values.items() if k != exc.parameter}
            # the answer to a question is free text, whatever words it uses
            asked = [{"name": exc.parameter, "description": exc.question,
                      "schema": {**spec.properties.get(exc.parameter, {"type": "string"}), REQUEST_TEXT: True}}]
            return self._pause(tenant, task_id, spec, asked, values, question=exc.question)
        except CapabilityInputError as exc:
            values = {k: v for k, v in check.values.items() if k != exc.parameter}
            refused = [{"name": exc.parameter, "description": spec.describe_parameter(exc.parameter),
                        "schema": spec.properties.get(exc.parameter, {}), "reason": str(exc)}]
            return self._pause(tenant, task_id, spec, refused, values)
        except CapabilityError as exc:
            log.warning("capability failed task_id=%s capability=%s: %s", task_id, capability, exc)
            return _failed(tenant, task_id, capability, exc.error_type, str(exc), exc.retryable)
        except Exception as exc:  # a plugin's bug: report it on the task, keep the worker serving
            log.exception("capability raised task_id=%s capability=%s", task_id, capability)
            return _failed(tenant, task_id, capability, "capability_failed", f"{capability} crashed: {exc!r}")
        log.info("capability done task_id=%s capability=%s elapsed_ms=%.1f", task_id, capability,
                 (time.perf_counter() - started) * 1000)
        said = result.get("message") if isinstance(result, dict) and isinstance(result.get("message"), str) else None
        return self._as_kept(task, m.subtask_result(task_id=task_id, tenant_id=tenant, capability=capability,
                                                    ok=True, result=result, message=said))

    def _as_kept(self, task: TaskRecord, reply: dict) -> dict:
        """A result with what its task keeps beside it (its whiteboard, the memories it used): what
        the AgentActor records as the task's result. A plan's step writes on its plan's board,
        which the plan's result carries."""
        if reply["message_type"] != "subtask_result" or not reply["ok"] or task.meta.get("parent"):
            return reply
        return {**reply, "result": with_memory(reply.get("result"), self._store, task)}

    def _read_by_model(self, task: TaskRecord, spec: CapabilitySpec, parameters: dict, check):
        """The check again with what the model reads from the request for a capability a
        plugin, a skill or an MCP server added (capabilities/arguments.py): the rules read
        Flora's own capabilities' values, a person's own function is asked for as people talk.
        Only before the first run: an answer to a question is read by the rules."""
        if self._llm is None or is_builtin(spec) or not task.content:
            return check
        given = {name: value for name, value in parameters.items() if name in check.values}
        read = read_arguments(self._llm, spec, task.content, given)
        return check_parameters(spec, {**read, **given}) if read else check

    # -- loop tasks ------------------------------------------------------------------------
    def _loop_time(self, task: TaskRecord, said: object) -> tuple[dict, list]:
        """Read the time the user gave for a loop request; the question to ask if there is none
        (or it cannot be read)."""
        loop = dict(task.meta["loop"])
        reason = ""
        if isinstance(said, str) and said.strip():
            try:
                parsed = self._loops().parse_time(said)
            except ScheduleError as exc:
                reason = str(exc)
            else:
                loop.update(schedule=parsed.schedule.to_dict(), description=parsed.description)
                self._store.update_task(task.tenant_id, task.task_id, meta={**task.meta, "loop": loop})
                return loop, []
        return loop, [_time_ask(reason)]

    def _register_loop(self, task: TaskRecord, spec: CapabilitySpec, values: dict, loop: dict) -> dict:
        loops = self._loops()
        if TIME_PARAMETER not in spec.properties:  # the asked time became the schedule; each run gets the rest
            values = {name: value for name, value in values.items() if name != TIME_PARAMETER}
        try:
            registered = loops.register(tenant_id=task.tenant_id, user_id=task.user_id, content=loop["content"],
                                        schedule=loop["schedule"], capability=spec.name, parameters=values,
                                        channel=loop.get("channel", ""), task_id=task.task_id)
        except ScheduleError as exc:  # a one-shot whose time passed while the task waited
            self._store.update_task(task.tenant_id, task.task_id, meta={**task.meta, "loop": {**loop, "schedule": None}})
            ask = _time_ask(str(exc), reason_zh=TIME_PASSED_ZH)
            return self._pause(task.tenant_id, task.task_id, spec, [ask], values)
        language = language_of(loop.get("request") or task.content)
        text = say(language, "loop_registered", loop_task_id=registered.loop_task_id,
                   what=loops.describe(registered, language))
        return m.subtask_result(task_id=task.task_id, tenant_id=task.tenant_id, capability=spec.name, ok=True,
                                result={"loop_task_id": registered.loop_task_id, "schedule": registered.schedule,
                                        "next_fire_at": registered.next_fire_at, "capability": spec.name,
                                        "parameters": registered.parameters,
                                        "description": loops.describe(registered)},
                                message=text)

    def _loops(self):
        return self._registry.get_capability("loop_tasks")

    def _refused(self, task: TaskRecord, spec: CapabilitySpec, values: dict) -> dict | None:
        """The task failed with the capability's reason when its own check refuses these values
        (a command the policy refuses): the person is never asked to approve what cannot run."""
        context = ExecutionContext(task_id=task.task_id, user_id=task.user_id, tenant_id=task.tenant_id,
                                   config=self._config, settings=self._settings(spec.name), llm=self._llm,
                                   registry=self._registry, store=self._store, request=task.content)
        try:
            spec.check_before_approval(values, context)
        except CapabilityError as exc:
            log.info("refused before approval task_id=%s capability=%s: %s", task.task_id, spec.name, exc)
            return _failed(task.tenant_id, task.task_id, spec.name, exc.error_type, str(exc))
        return None

    # -- stale work ------------------------------------------------------------------------
    def _stale(self, task: TaskRecord) -> bool:
        """Whether the person last spoke about this task (asked for it, or was asked to approve
        it) longer ago than ``tasks.reconfirm_after``: what they wanted then may not hold now."""
        after = self._config.tasks.reconfirm_after if self._config is not None else DEFAULT_RECONFIRM_AFTER_S
        asked = max(task.created_at, float(task.meta.get(ASKED_AT_META) or 0.0))
        return after > 0 and time.time() - asked > after

    @staticmethod
    def _has_effects(task: TaskRecord, spec: CapabilitySpec, values: dict) -> bool:
        """Whether the next step changes something or sends something out: the capability
        asks approval for these values (whether or not it was given or waived), or the task
        waits to make one such call (the agent's)."""
        return (spec.approval_needed(values) or spec.agent_approval_needed(values, task.content)
                or bool(task.meta.get(APPROVAL_META)))

    def _reconfirm(self, task: TaskRecord, spec: CapabilitySpec, values: dict) -> dict:
        """Pause a stale task for one more yes, restating what was asked and what comes next;
        any earlier yes is spent (an approved call waits for the new one)."""
        lang = language_of(task.content)
        call = task.meta.get(APPROVAL_META)
        try:
            self._store.update_task(task.tenant_id, task.task_id, approved=False,
                                    meta={**task.meta, ASKED_AT_META: time.time()})
            if task.state != WAITING_APPROVAL:  # answered a question: now it waits for the yes
                self._conversation.pause_task_for_parameters(task.tenant_id, task.task_id, [], values,
                                                             kind=WAITING_APPROVAL)
        except (InvalidTransition, TaskNotFound) as exc:
            return _failed(task.tenant_id, task.task_id, spec.name, "conflict", str(exc))
        if call:
            tool = next((s for s in self._registry.executables() if s.name == call["tool"]), None)
            what = say(lang, "run_capability", capability=call["tool"])
            description, shown = (tool.describe(lang) if tool else call["tool"]), shown_values(tool, call["arguments"])
        else:
            what, description, shown = say(lang, "run_capability", capability=spec.name), spec.describe(lang), \
                shown_values(spec, values)
        request = " ".join(task.content.split())[:120]
        text = say(lang, "reconfirm", ago=_ago(lang, time.time() - task.created_at), request=request) + "\n" + \
            say(lang, "needs_approval", what=what, description=description, parameters=shown)
        log.info("task_id=%s resumed %.0f s after it was asked: asking again before %s", task.task_id,
                 time.time() - task.created_at, call["tool"] if call else spec.name)
        return m.task_paused(msg_id=task.msg_id or m.new_id("msg"), task_id=task.task_id, message=text,
                             missing_parameters=[], pause_kind=WAITING_APPROVAL, capability=spec.name,
                             tool_call={"call_id": call["call_id"], "tool": call["tool"],
                                        "arguments": call["arguments"]} if call else None)

    def _pause_for_call(self, task: TaskRecord, spec: CapabilitySpec, call: ApprovalRequired, values: dict) -> dict:
        """A capability (the agent) is about to call a tool that needs the person's yes: the task
        waits for approval of that one call, which the question shows exactly."""
        try:
            self._store.update_task(task.tenant_id, task.task_id, approved=False, meta={
                **self._store.get_task(task.tenant_id, task.task_id).meta, ASKED_AT_META: time.time(),
                APPROVAL_META: {"call_id": call.call_id, "tool": call.tool, "arguments": call.arguments}})
            self._conversation.pause_task_for_parameters(task.tenant_id, task.task_id, [], values,
                                                         kind=WAITING_APPROVAL)
        except (InvalidTransition, TaskNotFound) as exc:
            return _failed(task.tenant_id, task.task_id, spec.name, "conflict", str(exc))
        lang = language_of(task.content)
        shown = shown_values(next((s for s in self._registry.executables() if s.name == call.tool), None),
                             call.arguments)
        text = say(lang, "needs_approval", what=say(lang, "run_capability", capability=call.tool),
                   description=call.description or call.tool, parameters=shown) + "\n" + say(lang, "always_hint")
        return m.task_paused(msg_id=task.msg_id or m.new_id("msg"), task_id=task.task_id, message=text,
                             missing_parameters=[], pause_kind=WAITING_APPROVAL, capability=spec.name,
                             tool_call={"call_id": call.call_id, "tool": call.tool, "arguments": call.arguments})

    def _pause(self, tenant: str, task_id: str, spec: CapabilitySpec, missing: list, values: dict,
               kind: str = WAITING_PARAMETERS, question: str = "") -> dict:
        try:
            task = self._conversation.pause_task_for_parameters(tenant, task_id, missing, values, kind=kind)
        except InvalidTransition as exc:
            return _failed(tenant, task_id, spec.name, "conflict", str(exc))
        if kind == WAITING_APPROVAL:
            task = self._store.update_task(tenant, task_id, meta={**task.meta, ASKED_AT_META: time.time()})
            lang = language_of(task.content)
            said = " ".join(task.content.split())[:80]
            what = say(lang, "do_request", request=said, capability=spec.name) if said else \
                say(lang, "run_capability", capability=spec.name)
            shown = shown_values(spec, values)
            text = say(lang, "needs_approval", what=what, description=spec.describe(lang), parameters=shown)
        elif question:  # the capability put its own question (the agent asking the person)
            text = question
        else:
            text = ask_message(spec.name, missing, request=task.content)
        return m.task_paused(msg_id=task.msg_id or m.new_id("msg"), task_id=task_id, message=text,
                             missing_parameters=missing, pause_kind=kind, capability=spec.name)

    def crashed(self, msg: dict, exc: BaseException) -> dict:
        """Fail the task that a bug in Flora stopped (``execute``/``resume_execution`` raised),
        so it is reported and not left running."""
        tenant, task_id = msg["tenant_id"], msg["task_id"]
        error = f"Flora failed while running this task (an internal error, logged): {exc!r}"[:500]
        try:
            self._events.transition(tenant, task_id, FAILED, source=SOURCE, error=error,
                                    data={"error_type": "internal", "error": error})
        except (InvalidTransition, TaskNotFound):
            pass  # it ended meanwhile, or never existed: the report below is all there is to do
        return _failed(tenant, task_id, msg.get("capability", ""), "internal", error)

    def _settings(self, capability: str) -> dict:
        if self._config is None:
            return {}
        return dict(self._config.capabilities.settings.get(capability, {}))

    def _node(self) -> str:
        """The node that runs the task: after a crash, that node's restart answers for it."""
        return current_node(self._config.actors.node if self._config is not None else "local")

    def _auto_approved(self) -> set[str]:
        return set(self._config.capabilities.auto_approve) if self._config is not None else set()

    def _waived(self, task: TaskRecord, capability: str) -> bool:
        """No yes is asked: the configuration auto-approves the capability, or the person
        always allows it."""
        return capability in self._auto_approved() or \
            capability in self._store.allowed_tools(task.tenant_id, task.user_id)


def _failed(tenant: str, task_id: str, capability: str, error_type: str, error: str,
            retryable: bool = False) -> dict:
    """A failed run as the protocol says it: a capability's own kind of failure ("misconfigured",
    "workflow_failed") is a ``capability_failed`` whose message says what happened."""
    kind = error_type if error_type in m.ERROR_TYPES else "capability_failed"
    return m.subtask_result(task_id=task_id, tenant_id=tenant, capability=capability or "unknown", ok=False,
                            error_type=kind, error=error, retryable=retryable)


def _time_ask(reason: str = "", *, reason_zh: str = "") -> dict:
    """The question for a loop task's time, in the person's language when it is shown."""
    ask = {"name": TIME_PARAMETER, "description": TIME_DESCRIPTION,
           "schema": {"type": "string", "minLength": 1, DESCRIPTION_IN: {"zh": TIME_DESCRIPTION_ZH}}}
    if reason:
        ask["reason"] = reason
    if reason_zh:
        ask["reason_in"] = {"zh": reason_zh}
    return ask


def _ago(language: str, seconds: float) -> str:
    """A time span as a person says it: hours below two days, then days."""
    hours = seconds / 3600
    if hours < 48:
        return say(language, "ago_hours", n=f"{hours:.0f}")
    return say(language, "ago_days", n=f"{hours / 24:.0f}")
