"""ConversationManager: the front desk's memory of who is waiting for what.

``handle_user_input`` decides, before any model is asked, whether a message answers a
paused task (``parameter_completion``), picks an option of an earlier clarification,
resumes the latest unfinished draft (``resume_draft``: "continue", "继续"), is chat, needs a
clarification (an answer that fits several paused tasks), or starts a ``new_task``.
Paused tasks and open drafts live in the TaskStore, so any node can take the answer.

``pause_task_for_parameters`` and ``complete_task_parameters`` are the two halves of the
pause/resume protocol (ExecutionActor calls the first, the front desk the second).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from capabilities.base import DESCRIPTION_IN, described
from capabilities.cognition import cues, reading as front_reading
from capabilities.cognition.reading import CONTINUE, CONVERSATION, HELP, MEMORY, Reading, Situation
from capabilities.cognition.semantic import CERTAIN, LEANS
from capabilities.cognition.semantic import Reading as SemanticReading
from capabilities.context import answers
from capabilities.context.fits import fits, fits_strictly, fitting_value, takes_free_text
from capabilities.context.pointing import Pointed, point
from capabilities.params import check_parameters
from capabilities.registry import CapabilityRegistry, UnknownCapability
from capabilities.routing.task_router import TaskRouter
from common import spans
from common.i18n import language_of, say
from common.messages import MissingParameter, Option, new_id
from common.tasks.cancel import cancel_task_tree
from common.tasks.models import (
    CANCELLED, PAUSED_STATES, WAITING_APPROVAL, WAITING_PARAMETERS, Draft, Standing, TaskRecord,
)
from common.tasks.store import TaskStore
from events.event_bus import EventBus

log = logging.getLogger("flora.conversation")

REQUEST_SHOWN = 80  # of the person's request, what a question repeats back
RECENT_TASKS = 50  # how far back an operation looks for the task it means



@dataclass
class Decision:
    """What to do with a user's message.

    action: new_task | parameter_completion | resume_draft | chat | clarification | rejected | error
    | memory (``intent`` is the operation on the person's memories: list, forget, clear;
    ``content`` what to forget)
    """

    action: str
    message: str = ""
    task_id: str | None = None
    parameters: dict = field(default_factory=dict)
    needs_backend: bool = False
    options: list[Option] = field(default_factory=list)
    content: str = ""
    intent: str | None = None
    capability: str | None = None
    missing: list[MissingParameter] = field(default_factory=list)
    error_type: str | None = None
    pending_task_id: str | None = None  # new_task: a paused task the message might be answering
    reading: dict | None = None  # new_task: the message's reading (capabilities/cognition/reading.py, to_dict())
    operation: dict | None = None  # new_task: an operation on another task or loop task (pointing.Pointed)
    # new_task: whether the memories bearing on the message may matter to it. Not for a message
    # that names a capability outright (nothing to weigh, no model reads it) unless the
    # capability reads them itself (``CapabilitySpec.reads_memories``)
    recall: bool = True


class ConversationManager:
    def __init__(self, store: TaskStore, events: EventBus, registry: CapabilityRegistry, *,
                 source: str = "ConversationManager"):
        self._store = store
        self._events = events
        self._registry = registry
        self._router = TaskRouter(registry)
        self._source = source

    # -- the front desk ------------------------------------------------------------------
    def handle_user_input(self, msg: dict | str, user_id: str | None = None, *,
                          tenant_id: str = "default", history: list[dict] | None = None,
                          standing: Standing | None = None) -> Decision:
        """Decide what a user message is. ``msg`` is a ``user_input`` dict, or (as in the
        seed) the text with ``user_id`` beside it; ``history``: the conversation's recent turns
        (``{"role", "content"}``, oldest first), in which a follow-up is read ("and tomorrow?");
        ``standing``: what the caller read already, so the person's open draft and paused tasks
        are read only when it says they have some (None: they are read)."""
        if isinstance(msg, str):
            msg = {"user_id": user_id, "content": msg, "tenant_id": tenant_id}
        tenant, user = msg.get("tenant_id", "default"), msg["user_id"]
        # "每天早上9點提醒我" read as "每天早上9点提醒我"; "查一下 https://…/v1 不对，是 https://…/v2" as
        # "查一下 https://…/v2"
        text = cues.corrected(cues.in_simplified(msg.get("content", "")))
        if msg.get("task_id"):
            return self._answer_named_task(tenant, user, msg["task_id"], text, msg.get("parameters"),
                                           msg.get("approve"), bool(msg.get("always_allow")))
        paused = self._paused(tenant, user) if standing is None or standing.paused else []
        reading = self.read(tenant, user, text, paused=bool(paused), history=history or [])
        if reading.rule == MEMORY:  # "what do you remember about me?", "忘掉我住在上海"
            return Decision("memory", intent=reading.memory[0], content=reading.memory[1])
        draft = self._store.open_draft(tenant, user) if standing is None or standing.open_draft else None
        if draft is not None:
            decision = self._answer_draft(draft, text, reading)
            if decision is not None:
                return decision
        if reading.rule == CONTINUE:
            return self._resume_latest(tenant, user)
        # the reading travels with every message for the back end, which then reads nothing again
        if reading.rule == CONVERSATION:
            return Decision("chat", needs_backend=True, content=text, intent="chat", reading=reading.to_dict())
        if reading.rule == HELP:
            return Decision("chat", needs_backend=True, content=text, intent="system", reading=reading.to_dict())
        asked_of_memory = _memory_asked(reading)
        if asked_of_memory is not None:  # "scrub that thing about my ex from your memory"
            return asked_of_memory
        if paused:
            decision = self._answer_paused(tenant, user, paused, reading)
            if decision is not None:
                return decision
            waiting = [t for t in paused if t.state == WAITING_PARAMETERS]
            if len(waiting) == 1 and not reading.command:  # maybe an answer: understanding decides
                return Decision("new_task", needs_backend=True, content=text, pending_task_id=waiting[0].task_id,
                                reading=reading.to_dict())
        if reading.states_about_self and not _reads_as_more_than_talk(reading):
            # "I go running every morning", "我下周要去上海出差三天": about the person, not a request
            return Decision("chat", needs_backend=True, content=text, intent="chat", reading=reading.to_dict())
        named = self._router.find(reading.capability) if reading.capability is not None else None
        return Decision("new_task", needs_backend=True, content=text, reading=reading.to_dict(),
                        recall=named is None or named.reads_memories)

    def read(self, tenant: str, user: str, text: str, *, paused: bool, history: list[dict]) -> Reading:
        """The message's one reading, in the person's situation: an answer only while a question
        waits, an operation on a task only when they have one, on a loop task only when they have
        one ("照这个再弄一份吧" from someone with no task yet points at nothing)."""
        with spans.span("reading"):
            reader = self._registry.get_capability("semantic_reader", None)
            loops = self._registry.get_capability("loop_tasks", None)
            # what the examples may read depends on what the person has: looked up only if they are read
            situation = Situation(waiting=paused, history=tuple(history), capabilities=self._router,
                                  has_tasks=lambda: bool(self._store.list_tasks(tenant, user_id=user, limit=1)),
                                  has_loops=lambda: loops is not None and bool(loops.list(tenant, user)))
            return front_reading.read(text, situation, reader)

    def _paused(self, tenant: str, user: str) -> list[TaskRecord]:
        """The user's paused tasks as the user knows them: a plan's step that waits is
        answered through its plan (which waits with the step's question), never alone."""
        return [t for t in self._store.paused_tasks(tenant, user) if not t.meta.get("parent")]

    def _answer_named_task(self, tenant: str, user: str, task_id: str, text: str,
                           parameters: dict | None, approve: bool | None, always_allow: bool = False) -> Decision:
        task = self._store.get_task(tenant, task_id)
        if task is not None and task.meta.get("parent"):  # a plan's step: its plan takes the answer
            task_id = task.meta["parent"]
            task = self._store.get_task(tenant, task_id)
        if task is None:
            return _error("not_found", f"There is no task {task_id}.", task_id)
        if task.user_id != user:
            return _error("forbidden", f"Task {task_id} belongs to another user.", task_id)
        if task.state not in PAUSED_STATES:
            return _error("conflict", f"Task {task_id} is {task.state}, not waiting for an answer.", task_id)
        if task.state == WAITING_APPROVAL:
            said = front_reading.read(text)  # a yes or a no: no examples to weigh
            verdict = approve if approve is not None else said.verdict
            if verdict is None:
                return _error("invalid_parameter", "Please answer yes or no (or send approve=true/false).", task_id)
            return self._decide_approval(task, verdict, always=verdict and (always_allow or said.always))
        values = parameters if parameters is not None else answers.answer_values(
            text, _names(task.missing), _schemas(task.missing))
        if not values:
            return _error("invalid_parameter",
                          "Please give a value for: " + ", ".join(_names(task.missing)), task_id)
        return self.complete_task_parameters(tenant, task_id, user, values)

    def _answer_draft(self, draft: Draft, text: str, reading: Reading) -> Decision | None:
        choice = _pick(text, draft.options)
        if choice is None:
            if reading.rule == CONTINUE:
                return Decision("clarification", message=_choice_prompt(draft), options=draft.options)
            self._store.close_draft(draft.tenant_id, draft.draft_id)  # the user moved on
            return None
        self._store.close_draft(draft.tenant_id, draft.draft_id)
        if choice.get("operation"):  # the operation on other work, not the answer
            return Decision("new_task", needs_backend=True, content=draft.content, operation=choice["operation"])
        if draft.kind == "task_choice":
            task = self._store.get_task(draft.tenant_id, choice["task_id"])
            if task is None or not task.paused:
                return _error("conflict", "That task is no longer waiting for an answer.", choice.get("task_id"))
            values = answers.answer_values(draft.pending_answer, _names(task.missing), _schemas(task.missing)) or {}
            return self.complete_task_parameters(draft.tenant_id, task.task_id, draft.user_id, values)
        if not choice.get("capability"):  # "none of these": it was conversation after all
            return Decision("chat", needs_backend=True, content=draft.content, intent="chat")
        return Decision("new_task", needs_backend=True, content=draft.content, capability=choice.get("capability"))

    def _resume_latest(self, tenant: str, user: str) -> Decision:
        paused = self._paused(tenant, user)
        if not paused:
            return Decision("chat", message=say("en", "nothing_to_continue"))
        task = paused[0]
        return Decision("resume_draft", task_id=task.task_id, needs_backend=True, content=task.content)

    def _answer_paused(self, tenant: str, user: str, paused: list[TaskRecord], reading: Reading) -> Decision | None:
        text, examples = reading.text, reading.examples
        approvals = [t for t in paused if t.state == WAITING_APPROVAL]
        if approvals and reading.verdict is not None and len(paused) == 1:
            return self._decide_approval(approvals[0], reading.verdict, always=reading.always)
        waiting = [t for t in paused if t.state == WAITING_PARAMETERS]
        named = [t for t in waiting if answers.named_values(text, _names(t.missing))]
        if len(named) == 1:
            task = named[0]
            return self.complete_task_parameters(tenant, task.task_id, user,
                                                 answers.named_values(text, _names(task.missing)))
        if not named and not answers.is_bare_value(text):
            pointed = self._pointed(tenant, user, reading)
            if pointed is not None:  # about other work: an answer only where a value fits the question too
                return self._operation_or_answer(tenant, user, reading, pointed, waiting)
        claimed = self._router.confident(text) if not named else None
        if claimed is not None and (reading.asks_for_something
                                    or all(claimed.spec.name != t.capability for t in waiting)):
            return None  # asks for a capability by its words (another one than it waits for): a new request
        asks_time = [t for t in waiting if "time" in _names(t.missing)]
        if not named and len(asks_time) == 1 and reading.only_a_time:  # "明天早上9点吧" answers "when?"
            return self.complete_task_parameters(tenant, asks_time[0].task_id, user, {"time": text.strip()})
        if not named and not answers.is_bare_value(text) and _asks_something_else(examples):
            return None  # "同事说今天不用跑了，你把它取消了吧": an operation, a command, a question — no value
        if not named and reading.loop_words:
            return None  # "remind me at 15:30...", "list my reminders": a new request, not an answer
        if not named and reading.task_operation is not None:
            return None  # "cancel it", "重新执行": an operation on a task, not an answer
        free_text = len(waiting) == 1 and len(waiting[0].missing) == 1 and takes_free_text(waiting[0].missing[0])
        if not named and not free_text and (reading.command or reading.new_request):
            # a question or a request: maybe a new request, maybe an answer; not certain either way
            strict = [t for t in waiting
                      if fits_strictly(answers.answer_values(text, _names(t.missing), _schemas(t.missing)),
                                        _schemas(t.missing))]
            if len(strict) != 1 or len(paused) != 1:
                return None
            task = strict[0]
            return self.complete_task_parameters(
                tenant, task.task_id, user, answers.answer_values(text, _names(task.missing), _schemas(task.missing)))
        values = {t.task_id: answers.answer_values(text, _names(t.missing), _schemas(t.missing)) for t in waiting}
        fitting = named or [t for t in waiting if values[t.task_id]]
        sure = len(paused) == 1
        by_look = [t for t in fitting if fitting_value(text, t)]
        if len(fitting) > 1 and len(by_look) == 1:  # only one waits for a value that looks like this one
            fitting, sure = by_look, True
        if len(paused) > 1 and not by_look and not answers.is_bare_value(text):
            return None  # a sentence holding no value any waiting question asks for: understanding reads it
        if len(fitting) > 1:  # several could take it: keep those whose schema accepts the value as written
            accepting = [t for t in fitting if fits(values[t.task_id], _schemas(t.missing))]
            fitting, sure = (accepting, len(accepting) == 1) if accepting else (fitting, False)
        if len(fitting) == 1 and sure:
            task = fitting[0]
            return self.complete_task_parameters(tenant, task.task_id, user, values[task.task_id] or {})
        if not fitting:
            return None
        options: list[Option] = [
            {"id": str(i), "task_id": t.task_id,
             "label": f"{t.capability or 'task'} ({t.task_id}) waiting for {', '.join(_names(t.missing))}"}
            for i, t in enumerate(fitting, start=1)]
        draft = self._store.save_draft(Draft(draft_id=new_id("draft"), tenant_id=tenant, user_id=user,
                                             kind="task_choice", content=text, options=options,
                                             pending_answer=text))
        return Decision("clarification", message=_choice_prompt(draft), options=options)

    def _pointed(self, tenant: str, user: str, reading: Reading) -> Pointed | None:
        """The operation on one of the person's tasks or loop tasks the message asks for, if any."""
        return point(reading, tasks=self._store.list_tasks(tenant, user_id=user, limit=RECENT_TASKS),
                     loops=self._registry.get_capability("loop_tasks", None), tenant=tenant, user=user)

    def _operation_or_answer(self, tenant: str, user: str, reading: Reading, pointed: Pointed,
                             waiting: list[TaskRecord]) -> Decision:
        """An operation on other work, unless a value in the message fits a waiting question as
        well (an address the waiting request asks for, said with "once more"): then ask which,
        naming both."""
        text, lang = reading.text, reading.language
        fitting = [t for t in waiting if t.task_id != pointed.target and fitting_value(text, t)]
        operation = Decision("new_task", needs_backend=True, content=text, operation=pointed.to_dict(),
                             reading=reading.to_dict())
        if not fitting:
            return operation
        options: list[Option] = [
            {"id": str(i), "task_id": t.task_id,
             "label": say(lang, "option_answer", capability=t.capability or "task", task_id=t.task_id,
                          names=", ".join(_names(t.missing)))}
            for i, t in enumerate(fitting, start=1)]
        options.append({"id": str(len(options) + 1), "operation": pointed.to_dict(),
                        "label": say(lang, "option_operation", operation=_operation_words(lang, pointed),
                                     target=pointed.target or say(lang, "the_latest"))})
        draft = self._store.save_draft(Draft(draft_id=new_id("draft"), tenant_id=tenant, user_id=user,
                                             kind="task_choice", content=text, options=options, pending_answer=text))
        return Decision("clarification", message=_choice_prompt(draft), options=options)

    def record_clarification(self, *, tenant_id: str, user_id: str, content: str, options: list[Option]) -> Draft:
        """Remember a clarification the back end asked, so the user's pick can be applied."""
        return self._store.save_draft(Draft(draft_id=new_id("draft"), tenant_id=tenant_id, user_id=user_id,
                                            kind="capability_choice", content=content, options=options))

    # -- pause / resume ----------------------------------------------------------------
    def pause_task_for_parameters(self, tenant_id: str, task_id: str, missing: list[MissingParameter],
                                  parameters: dict, *, kind: str = WAITING_PARAMETERS) -> TaskRecord:
        task = self._events.transition(tenant_id, task_id, kind, source=self._source,
                                       data={"pause_kind": kind, "missing": [m["name"] for m in missing]},
                                       missing=missing, parameters=parameters)
        log.info("task paused task_id=%s kind=%s missing=%s", task_id, kind, [m["name"] for m in missing])
        return task

    def complete_task_parameters(self, tenant_id: str, task_id: str, user_id: str, values: dict) -> Decision:
        """Record the user's values with the paused task; ask again at once for any that the
        capability's schema refuses, else hand the task back to be resumed."""
        task = self._store.get_task(tenant_id, task_id)
        if task is None:
            return _error("not_found", f"There is no task {task_id}.", task_id)
        if task.user_id != user_id:
            return _error("forbidden", f"Task {task_id} belongs to another user.", task_id)
        if task.state != WAITING_PARAMETERS:
            return _error("conflict", f"Task {task_id} is {task.state}, not waiting for parameters.", task_id)
        merged = {**task.parameters, **values}
        # a plan waits on one of its steps: the answer is checked against that step's capability
        capability = (task.meta.get("paused_step") or {}).get("capability") or task.capability
        try:
            spec = self._registry.get_executable(capability)
        except UnknownCapability:
            spec = None
        if spec is not None:
            check = check_parameters(spec, merged)
            refused = [item for item in check.invalid if item["name"] in values]
            if refused:
                keep = {k: v for k, v in merged.items() if k not in {i["name"] for i in refused}}
                still = [*refused, *[m for m in task.missing if m["name"] not in values]]
                self._store.update_task(tenant_id, task_id, parameters=keep, missing=still)
                return Decision("parameter_completion", task_id=task_id, missing=still, needs_backend=False,
                                message=ask_message(capability, still, request=task.content),
                                capability=capability)
            merged = {k: v for k, v in merged.items() if k in check.values or k not in spec.properties}
        self._store.update_task(tenant_id, task_id, parameters=merged)
        log.info("parameters completed task_id=%s names=%s", task_id, sorted(values),
                 extra={"tenant_id": tenant_id, "task_id": task_id})
        return Decision("parameter_completion", task_id=task_id, parameters=values, needs_backend=True,
                        capability=task.capability)

    def _decide_approval(self, task: TaskRecord, approved: bool, *, always: bool = False) -> Decision:
        """Yes (``always``: and never ask this person again for the tool: the one call waiting,
        or the task's capability) resumes the task; no cancels it."""
        if approved:
            if always:
                tool = (task.meta.get("approval") or {}).get("tool") or task.capability
                self._store.allow_tool(task.tenant_id, task.user_id, tool)
                log.info("tool always allowed tenant_id=%s user_id=%s tool=%s", task.tenant_id, task.user_id, tool)
            self._store.update_task(task.tenant_id, task.task_id, approved=True)
            return Decision("parameter_completion", task_id=task.task_id, needs_backend=True,
                            capability=task.capability)
        if task.meta.get("children"):  # a plan waiting on a step's approval: the whole plan stops
            cancel_task_tree(self._events, self._store, task.tenant_id, task.task_id, source=self._source,
                             by=task.user_id, reason="rejected by the user")
        else:
            self._events.transition(task.tenant_id, task.task_id, CANCELLED, source=self._source,
                                    data={"reason": "approval rejected"}, error="rejected by the user")
        return Decision("rejected", task_id=task.task_id, message=f"Cancelled: {task.capability} was not approved.")


def ask_message(capability: str, missing: list[MissingParameter], *, request: str = "") -> str:
    """The question a paused task puts to its user, in the language of the request: what
    Flora understood it is to do, then each parameter, what it is for, and why it is asked
    again if a value was refused."""
    lang = language_of(request)
    said = " ".join(request.split())
    said = said if len(said) <= REQUEST_SHOWN else said[:REQUEST_SHOWN - 1] + "…"
    what = say(lang, "do_request", request=said, capability=capability) if said and capability else \
        say(lang, "run_capability", capability=capability or "this task")
    lines = [say(lang, "need_parameters", what=what)]
    for item in missing:
        line = f"- {item['name']}: {described(item.get('schema') or {}, item['description'], lang)}"
        if item.get("reason"):
            reason = described({DESCRIPTION_IN: item.get("reason_in")}, item["reason"], lang)
            line += " (" + say(lang, "not_accepted", reason=reason) + ")"
        lines.append(line)
    if len(missing) > 1:
        lines.append(say(lang, "reply_like", example=", ".join(f"{m['name']}=..." for m in missing)))
    return "\n".join(lines)


def _operation_words(lang: str, pointed: Pointed) -> str:
    return say(lang, f"op_{pointed.op}")


def _choice_prompt(draft: Draft) -> str:
    lines = [say(language_of(draft.content), "which_one")]
    lines += [f"{o['id']}. {o['label']}" for o in draft.options]
    return "\n".join(lines)


def _names(missing: list) -> list[str]:
    return [m["name"] for m in missing]


def _schemas(missing: list) -> dict[str, dict]:
    return {m["name"]: m.get("schema", {}) for m in missing}


def _pick(text: str, options: list[Option]) -> Option | None:
    key = text.strip().rstrip(".。").lower()
    for option in options:
        if key in (option["id"].lower(), option.get("task_id", "").lower(), option.get("capability", "").lower()):
            return option
    return None


def _error(error_type: str, message: str, task_id: str | None = None) -> Decision:
    return Decision("error", message=message, task_id=task_id, error_type=error_type)


# what a message that reads surely as one of these asks for is no value for a paused question
_NOT_ANSWERS = ("task_op", "loop_op", "command", "status", "unsupported", "clarify")


def _asks_something_else(reading: SemanticReading | None) -> bool:
    """Leaning is enough: the message goes on to the back end, whose understanding step can
    still read it as the answer."""
    return reading is not None and reading.family in _NOT_ANSWERS and reading.sure(LEANS)


def _reads_as_more_than_talk(reading: Reading) -> bool:
    """Whether a plain statement about the person reads surely as something else. Not as
    ``unsupported`` unless it names one of their records: "我下周要去上海出差三天" resembles
    requests for flights and the weather, but asks nothing a refusal could answer, while "我的
    银行卡被冻结了" wants what only the bank can do."""
    examples = reading.examples
    if examples is None or examples.family == "chat" or not examples.sure():
        return False
    return examples.family != "unsupported" or reading.names_own_records


def _memory_asked(reading: Reading) -> Decision | None:
    """What the person asks of Flora's memory of them, read from the labelled examples where the
    words' rules did not see it: a sure reading, never an operation on a task ("forget the dify
    one, cancel it"); forgetting everything cannot be undone, so only a near-certain one."""
    examples = reading.examples
    if examples is None or examples.family != "memory" or not examples.sure() or reading.task_operation is not None:
        return None
    if examples.kind == "clear" and not examples.sure(CERTAIN):
        return None
    return Decision("memory", intent=examples.kind, content=reading.text if examples.kind == "forget" else "")
