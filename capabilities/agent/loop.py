"""AgentLoop: the model proposes a tool call, Flora checks it, runs it, shows the model the
result, until the model answers or a budget runs out.

The loop keeps nothing in memory between runs: each step is written to the task's
transcript (:mod:`capabilities.agent.transcript`) before and after it happens, so the
handler can be called again after any pause, restart or move to another node and go on
from the last entry; a call already run is never run twice.

It stops for the person by raising (:class:`~capabilities.base.TaskPause`):
``ApprovalRequired`` before a call whose tool needs a yes (each such call asks again, unless
the tool is auto-approved in config or the person always allows it), ``InputRequired`` when
the model asks for a value only the person knows. Ends:

- an answer from the model (``final``);
- a budget spent: ``max_steps`` calls, ``max_seconds`` of running time, ``max_tokens`` of
  model tokens, ``max_invalid`` unusable replies in a row; the reply then says so and what
  was done so far;
- the task cancelled: ``CapabilityError(error_type="cancelled")`` between calls.

What a tool does wrong (a failure, a refused value, a crash) is data for the model, never
an end of the loop; a model back end that is down is a retryable ``CapabilityError``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from dataclasses import dataclass
from typing import Callable

from jsonschema import Draft202012Validator

from capabilities.agent import prompt
from capabilities.agent.budget import ContextBudget, EstimatingCounter, TokenCounter, TooLong, fits_badly, overflow
from capabilities.agent.native import offered as native_offered
from capabilities.agent.native import step as native_step
from capabilities.agent.selection import ToolSelector, fit_tools
from capabilities.agent.transcript import (
    APPROVED, AWAITING_APPROVAL, DONE, PROPOSED, STARTED, Transcript, TranscriptKeeper,
)
from capabilities.base import (
    ApprovalRequired, CapabilityError, CapabilityInputError, CapabilitySpec, ExecutionContext, InputRequired,
)
from capabilities.llm.base import LLMError, LLMOutputError, LLMRequestRejected, LLMUnavailable, complete_json_reply
from common.i18n import language_of
from events.event_types import EventType

log = logging.getLogger("flora.agent")

NAME = "agent"
ANSWER = "answer"  # the agent's parameter that carries the person's answer to its question
SOURCE = "agent"
EVENT_PREVIEW_CHARS = 500


@dataclass(frozen=True)
class Budgets:
    max_steps: int = 8
    max_seconds: float = 300.0
    max_tokens: int = 20_000
    max_invalid: int = 3
    max_result_chars: int = 2000
    reply_tokens: int = 512
    native_tools: bool = False  # the back end's own function calling, where it has it
    n_ctx: int = 4096  # the model's context: prompt and reply together (llm.n_ctx)

    @classmethod
    def from_config(cls, agent, n_ctx: int = 4096) -> "Budgets":
        return cls(max_steps=agent.max_steps, max_seconds=agent.max_seconds, max_tokens=agent.max_tokens,
                   max_invalid=agent.max_invalid, max_result_chars=agent.max_result_chars,
                   reply_tokens=min(agent.reply_tokens, n_ctx // 4), native_tools=agent.native_tools, n_ctx=n_ctx)

    @property
    def context(self) -> ContextBudget:
        return ContextBudget(self.n_ctx, self.reply_tokens)


class ToolBox:
    """The capabilities the loop may call: the configured ones (``agent.tools``; empty: every
    executable offered to agents — the routable ones, and those such as ``update_whiteboard``
    that declare ``agent_tool``), never the agent itself, and only those a persona allows
    (``allowed_capabilities``) when it says."""

    def __init__(self, specs: list[CapabilitySpec]):
        self._tools = {s.name: s for s in specs if s.name != NAME}

    @classmethod
    def from_registry(cls, registry, *, configured: list[str] | None = None,
                      allowed: list[str] | None = None) -> "ToolBox":
        specs = list(registry.executables())
        specs = [s for s in specs if s.name in configured] if configured else [s for s in specs if s.offered_to_agent]
        if allowed is not None:
            specs = [s for s in specs if s.name in allowed]
        return cls(specs)

    @property
    def tools(self) -> list[CapabilitySpec]:
        return list(self._tools.values())

    def get(self, name: str) -> CapabilitySpec | None:
        return self._tools.get(name)

    def only(self, names: list[str]) -> "ToolBox":
        """These tools of the box, in the order given (those no longer in it are left out)."""
        return ToolBox([self._tools[n] for n in names if n in self._tools])


class Approvals:
    """Whether a call needs the person's yes: its tool says so for these arguments, and neither
    the configuration (``capabilities.auto_approve``) nor the person ("always allow") waived it."""

    def __init__(self, auto_approved: set[str] = frozenset(), always_allowed: Callable[[], set[str]] = set):
        self._auto = set(auto_approved)
        self._always = always_allowed

    def needed(self, spec: CapabilitySpec, arguments: dict, request: str = "") -> bool:
        """In the loop, a call that sends data out or changes something asks too (the tool's
        ``agent_approval``): words planted in a file or a page the model read must not make it
        act unseen."""
        if not (spec.approval_needed(arguments) or spec.agent_approval_needed(arguments, request)) \
                or spec.name in self._auto:
            return False
        return spec.name not in self._always()


class AgentLoop:
    def __init__(self, *, llm, tools: ToolBox, context: ExecutionContext, budgets: Budgets = Budgets(),
                 approvals: Approvals | None = None, keeper: TranscriptKeeper | None = None,
                 clock: Callable[[], float] = time.monotonic, selector: ToolSelector | None = None,
                 counter: TokenCounter | None = None):
        self._llm = llm
        self._all_tools = tools
        self._tools = tools
        self._selector = selector
        self._counter = counter or EstimatingCounter()
        self._context_budget = budgets.context
        self._context = context
        self._budgets = budgets
        self._approvals = approvals or Approvals()
        self._keeper = keeper or TranscriptKeeper(context.store, context.tenant_id, context.task_id)
        self._clock = clock
        self._mark = clock()

    # -- the loop ------------------------------------------------------------------------
    def run(self, request: str, *, approved_call: str | None = None, answer: str | None = None) -> dict:
        """Go on with the task from its transcript; returns the agent's result."""
        self._mark = self._clock()
        transcript = self._keeper.load(request)
        if transcript.final is not None:  # finished before (a message delivered twice)
            return self._result(transcript)
        self._offer(transcript)
        self._take_up(transcript, approved_call, answer)
        while True:
            self._check_cancelled()
            stop = self._spent(transcript)
            if stop is not None:
                return self._stop(transcript, stop)
            try:
                step = self._propose(transcript)
            except _Overflow:
                return self._stop(transcript, "context")
            if step is None:
                continue  # an unusable reply, written down; the model sees the error next time
            second_look = GAVE_UP if "final" in step and gives_up(transcript) else \
                UNTRIED if "final" in step and answers_untried(transcript) else \
                LOOK_AGAIN if "ask" in step and asks_past_a_result(transcript) else None
            if second_look is not None:
                transcript.add_invalid(json.dumps(step, ensure_ascii=False), second_look)
                self._save(transcript)
                continue  # once: the model reads the error again and corrects the call, or says why not
            if "final" in step:
                transcript.final = step["final"].strip() or "-"
                self._save(transcript)
                return self._result(transcript)
            if "ask" in step:
                transcript.add_ask(step["ask"].strip())
                self._save(transcript)
                raise InputRequired(ANSWER, step["ask"].strip())
            spec = self._tools.get(step["tool"])
            entry = transcript.add_call(step["tool"], spec.prepared(step["arguments"]) if spec else step["arguments"])
            self._perform(transcript, entry, approved_call)

    def _offer(self, transcript: Transcript) -> None:
        """The tools offered for this request: chosen once, the most relevant that fit the
        context (:mod:`capabilities.agent.selection`), and kept in the transcript."""
        if transcript.tools is None:
            if self._selector is not None:
                ranked, most = self._selector.ranked(transcript.request, self._all_tools.tools), self._selector.max_tools
            else:  # no selector: every tool, as far as the context allows
                ranked, most = self._all_tools.tools, len(self._all_tools.tools)
            called = {e["tool"] for e in transcript.calls}  # a transcript kept before tools were chosen
            ranked = sorted(ranked, key=lambda s: s.name not in called)
            transcript.tools = [s.name for s in fit_tools(ranked, self._counter, self._context_budget,
                                                          max(most, len(called)))]
            log.info("tools offered task_id=%s: %s", self._context.task_id, ", ".join(transcript.tools) or "none")
        self._tools = self._all_tools.only(transcript.tools)

    def _take_up(self, transcript: Transcript, approved_call: str | None, answer: str | None) -> None:
        """Finish what the last run left: an answer to record, a call to run or to report as
        interrupted."""
        last = transcript.last
        if last is None:
            return
        if last["kind"] == "ask" and last.get("answer") is None:
            if answer is None or not str(answer).strip():
                raise InputRequired(ANSWER, last["question"])
            last["answer"] = str(answer).strip()
            self._save(transcript)
        elif last["kind"] == "call" and last["status"] == STARTED:  # its process died while it ran
            last.update(status=DONE, ok=None)
            self._save(transcript)
        elif last["kind"] == "call" and last["status"] in (PROPOSED, AWAITING_APPROVAL, APPROVED):
            self._perform(transcript, last, approved_call)

    def _spent(self, transcript: Transcript) -> str | None:
        b = self._budgets
        if transcript.invalid_in_a_row() >= b.max_invalid:
            return "invalid"
        if transcript.steps >= b.max_steps:
            return "steps"
        if transcript.seconds + self._clock() - self._mark >= b.max_seconds:
            return "seconds"
        if transcript.tokens >= b.max_tokens:
            return "tokens"
        return None

    # -- the model -----------------------------------------------------------------------
    def _propose(self, transcript: Transcript) -> dict | None:
        """The model's next step, checked; None when it was unusable (written down as such)."""
        budget = self._context_budget
        for attempt in range(2):
            try:
                proposal = propose(self._llm, self._tools, transcript, self._budgets, native=self._budgets.native_tools,
                                   memories=self._context.meta.get("memories"), budget=budget, counter=self._counter)
                break
            except TooLong:
                raise _Overflow() from None
            except LLMUnavailable as exc:
                raise CapabilityError(f"The model is not available: {exc}", retryable=True,
                                      error_type="unavailable") from exc
            except LLMRequestRejected as exc:  # the host counted more than we did: once more, smaller
                log.warning("model refused the agent's prompt task_id=%s (attempt %d): %s",
                            self._context.task_id, attempt + 1, exc)
                if not fits_badly(exc):
                    raise CapabilityError(f"The model refused the request: {exc}") from exc
                if attempt:
                    raise _Overflow() from None
                budget = budget.shrunk(overflow(exc, budget))
            except LLMError as exc:
                raise CapabilityError(f"The model refused the request: {exc}") from exc
        transcript.tokens += proposal.tokens
        if proposal.error is not None:
            transcript.add_invalid(proposal.text, proposal.error)
            self._save(transcript)
            return None
        return proposal.step

    # -- a call --------------------------------------------------------------------------
    def _perform(self, transcript: Transcript, entry: dict, approved_call: str | None) -> None:
        spec = self._tools.get(entry["tool"])
        if spec is None:  # no longer allowed (config or persona changed while it waited)
            entry.update(status=DONE, ok=False, error=f"{entry['tool']} may not be used here")
            self._save(transcript)
            return
        if entry["status"] == PROPOSED:
            refused = self._refused(spec, entry["arguments"])
            if refused is not None:  # what the tool would refuse is never offered for approval
                entry.update(status=DONE, ok=False, error=refused)
                self._save(transcript)
                self._publish(EventType.TOOL_RESULT, {"call_id": entry["call_id"], "step": transcript.steps,
                                                      "tool": spec.name, "ok": False, "elapsed_ms": 0.0,
                                                      "error": refused[:EVENT_PREVIEW_CHARS]})
                return
        if entry["status"] in (PROPOSED, AWAITING_APPROVAL):
            if entry["call_id"] == approved_call or \
                    not self._approvals.needed(spec, entry["arguments"], transcript.request):
                entry["status"] = APPROVED
            else:
                entry["status"] = AWAITING_APPROVAL
                self._save(transcript)
                raise ApprovalRequired(spec.name, entry["arguments"], entry["call_id"],
                                       spec.describe(language_of(transcript.request)))
        entry["status"] = STARTED
        self._save(transcript)  # before the tool runs: a crash from here on never runs it twice
        step = transcript.steps
        self._publish(EventType.TOOL_CALLED, {"call_id": entry["call_id"], "step": step, "tool": spec.name,
                                              "arguments": entry["arguments"]})
        started = time.perf_counter()
        ok, value = self._invoke(spec, entry["arguments"])
        elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
        shown = prompt.preview(value, self._budgets.max_result_chars)
        entry.update(status=DONE, ok=ok, elapsed_ms=elapsed_ms, **({"result": shown} if ok else {"error": shown}))
        self._save(transcript)
        data = {"call_id": entry["call_id"], "step": step, "tool": spec.name, "ok": ok, "elapsed_ms": elapsed_ms}
        data["result" if ok else "error"] = shown[:EVENT_PREVIEW_CHARS]
        self._publish(EventType.TOOL_RESULT, data)
        log.info("tool done task_id=%s tool=%s ok=%s elapsed_ms=%.1f", self._context.task_id, spec.name, ok,
                 elapsed_ms)

    def _refused(self, spec: CapabilitySpec, arguments: dict) -> str | None:
        """Why the tool's own check refuses these values (the command policy, the script's
        syntax), or None."""
        try:
            spec.check_before_approval(arguments, self._tool_context(spec))
        except CapabilityInputError as exc:
            return f"refused before running, the value of {exc.parameter!r}: {exc}"
        except CapabilityError as exc:
            return f"refused before running: {exc}"
        return None

    def _invoke(self, spec: CapabilitySpec, arguments: dict) -> tuple[bool, object]:
        """Run one tool; its failure is data for the model. A cancel ends the loop."""
        context = self._tool_context(spec)
        try:
            result = spec.invoke(arguments, context)
            return not program_failed(result), result
        except CapabilityInputError as exc:
            return False, f"the value of {exc.parameter!r} was refused: {exc}"
        except CapabilityError as exc:
            if exc.error_type == "cancelled":
                raise
            return False, f"{exc.error_type}: {exc}"
        except (ApprovalRequired, InputRequired) as exc:  # a tool that itself needs the person: not supported
            return False, f"{spec.name} cannot be used by the agent ({type(exc).__name__})"
        except Exception as exc:  # a tool's bug: reported to the model, the loop goes on
            log.exception("tool raised task_id=%s tool=%s", self._context.task_id, spec.name)
            return False, f"{spec.name} crashed: {exc!r}"

    def _tool_context(self, spec: CapabilitySpec) -> ExecutionContext:
        config = self._context.config
        settings = dict(config.capabilities.settings.get(spec.name, {})) if config is not None else {}
        return dataclasses.replace(self._context, settings=settings, instruction="",
                                   logger=logging.getLogger(f"flora.capability.{spec.name}"))

    # -- bookkeeping ---------------------------------------------------------------------
    def _save(self, transcript: Transcript) -> None:
        now = self._clock()
        transcript.seconds += now - self._mark
        self._mark = now
        self._keeper.save(transcript)

    def _check_cancelled(self) -> None:
        if self._context.cancelled():
            raise CapabilityError("The task was cancelled.", error_type="cancelled")

    def _publish(self, event_type: EventType, data: dict) -> None:
        events = self._context.events
        if events is None:
            return
        data = {**data}
        if "arguments" in data:
            data["arguments"] = {k: prompt.preview(v, EVENT_PREVIEW_CHARS) if not isinstance(v, (int, float, bool))
                                 else v for k, v in data["arguments"].items()}
        events.publish_task_event(task_id=self._context.task_id, event_type=event_type, source=SOURCE,
                                  tenant_id=self._context.tenant_id, user_id=self._context.user_id, data=data)

    def _stop(self, transcript: Transcript, reason: str) -> dict:
        transcript.stopped = reason
        transcript.final = stopped_reply(transcript, reason, self._budgets)
        self._save(transcript)
        return self._result(transcript)

    @staticmethod
    def _result(transcript: Transcript) -> dict:
        return {"message": transcript.final, "stopped": transcript.stopped,
                "steps": [{k: e[k] for k in ("call_id", "tool", "arguments", "ok", "elapsed_ms")}
                          for e in transcript.calls],
                "tokens": transcript.tokens, "seconds": round(transcript.seconds, 3)}


@dataclass(frozen=True)
class Proposal:
    """One reply of the model: the ``step`` when usable, else the ``error`` to tell it."""

    step: dict | None
    error: str | None
    text: str
    tokens: int


def propose(llm, tools: ToolBox, transcript: Transcript, budgets: Budgets = Budgets(), *,
            native: bool = False, memories: list[dict] | None = None, budget: ContextBudget | None = None,
            counter: TokenCounter | None = None) -> Proposal:
    """Ask the model for the next step of ``transcript`` with the agent's prompt and schema
    (``native``: through the back end's own function calling, where it has it), and check it:
    one of tool/final/ask, a known tool, arguments that fit its schema. Raises only what the
    back end raises for being down or refusing (``LLMError`` but not ``LLMOutputError``), and
    ``TooLong`` when the request cannot fit the model's context.
    ``memories``: what is remembered of the person (the task's ``meta["memories"]``)."""
    specs = tools.tools
    budget = budget or budgets.context
    counter = counter or EstimatingCounter()
    native = native and hasattr(llm, "complete_tools")
    if native:  # the functions travel beside the messages, in the same context
        budget = budget.shrunk(counter.count(json.dumps(native_offered(specs)[0], ensure_ascii=False)))
    said = prompt.messages(specs, transcript, max_result_chars=budgets.max_result_chars, memories=memories,
                           budget=budget, counter=counter)
    if native:
        step, error, text, tokens = native_step(llm, specs, said, budgets.reply_tokens)
        tokens = tokens or _estimate_tokens(said, text)
        if error is None:
            error = step_problem(tools, step)
        return Proposal(step if error is None else None, error, text, tokens)
    try:
        step, reply = complete_json_reply(llm, said, prompt.output_schema(specs), check=prompt.ENVELOPE,
                                          max_tokens=budgets.reply_tokens)
    except LLMOutputError as exc:
        return Proposal(None, str(exc), exc.text, _estimate_tokens(said, exc.text))
    tokens = (reply.prompt_tokens + reply.completion_tokens) or _estimate_tokens(said, reply.text)
    error = step_problem(tools, step)
    return Proposal(step if error is None else None, error, reply.text, tokens)


GAVE_UP = ("the last call failed and nothing has worked yet; read its error, correct the call and make it "
           "again, or, if it cannot be done, answer saying why")


UNTRIED = ("no tool has been called yet, so nothing of this request has been done or looked at; call the tool "
           "that does it, or, if none can, answer saying so: never give results, files or figures no tool produced")


def answers_untried(transcript: Transcript) -> bool:
    """Whether an answer now would come before any call, the first time in this task: the
    agent has the request because it needs a tool, and a small model answers from nothing
    (a rota "generated", "[insert dates here]"); it is told once to do the work or say why not."""
    return not transcript.calls and not any(e["kind"] == "invalid" and e["error"] == UNTRIED[:500]
                                            for e in transcript.entries)


LOOK_AGAIN = ("before asking the person, read the last result again: if it answers the request, give the "
              "final answer from it; ask only for what no result can tell")


def asks_past_a_result(transcript: Transcript) -> bool:
    """Whether a question now would ask the person right after a call that worked, the first time
    in this task: what was asked is often in that result (a small model asks for the path a search
    just found)."""
    last = transcript.last
    return last is not None and last["kind"] == "call" and last.get("ok") is True \
        and not any(e["kind"] == "invalid" and e["error"] == LOOK_AGAIN[:500] for e in transcript.entries)


def program_failed(result: object) -> bool:
    """Whether a tool ran a program that failed: it exited non-zero, timed out or was killed
    (``shell``, ``python_exec``). The tool worked, but the call did not: a traceback is no
    result to answer from, and the model is told once to correct its code (``GAVE_UP``)."""
    if not isinstance(result, dict) or "exit_code" not in result:
        return False
    return result.get("exit_code") not in (0, None) or bool(result.get("timed_out")) or bool(result.get("killed"))


def gives_up(transcript: Transcript) -> bool:
    """Whether an answer now would give up on the first failure: the last call failed, no call
    has worked, and the model was not told so before in this task (it is told once)."""
    last = transcript.last
    return last is not None and last["kind"] == "call" and last.get("ok") is False \
        and not any(e["ok"] for e in transcript.calls) \
        and not any(e["kind"] == "invalid" and e["error"] == GAVE_UP[:500] for e in transcript.entries)


class _Overflow(Exception):
    """The prompt cannot be made to fit the model's context."""


def step_problem(tools: ToolBox, step: dict) -> str | None:
    """What is wrong with a step, in words the model can act on; None when it is usable."""
    kinds = [k for k in ("tool", "final", "ask") if k in step]
    if len(kinds) != 1:
        return 'give exactly one of "tool" (with "arguments"), "final" or "ask"'
    if kinds[0] in ("final", "ask"):
        return None if isinstance(step[kinds[0]], str) and step[kinds[0]].strip() else f'"{kinds[0]}" is empty'
    spec = tools.get(step["tool"])
    if spec is None:
        names = ", ".join(s.name for s in tools.tools) or "none"
        return f"there is no tool named {step['tool']!r}; the tools are: {names}"
    arguments = step.get("arguments")
    if not isinstance(arguments, dict):
        return f'"arguments" for {spec.name} must be an object'
    return arguments_problem(spec, arguments)


def arguments_problem(spec: CapabilitySpec, arguments: dict) -> str | None:
    """What is wrong with a call's arguments against its tool's schema, or None."""
    properties = spec.properties
    if spec.parameters.get("additionalProperties") is False:
        extra = sorted(set(arguments) - set(properties))
        if extra:
            return f"{spec.name} has no parameter {', '.join(map(repr, extra))}; its parameters: " \
                   f"{', '.join(properties) or 'none'}"
    errors = sorted(Draft202012Validator(spec.parameters).iter_errors(arguments), key=lambda e: list(e.path))
    if not errors:
        return None
    said = []
    for error in errors[:3]:
        where = "/".join(str(p) for p in error.absolute_path)
        said.append(f"{where}: {error.message}" if where else error.message)
    return f"arguments for {spec.name} do not fit its schema: " + "; ".join(said)


STOPPED = {
    "en": {"steps": "I stopped after {n} tool calls, the most one task may make.",
           "seconds": "I stopped: this task used its time ({limit:.0f} s).",
           "tokens": "I stopped: this task used its model budget ({limit} tokens).",
           "invalid": "I stopped: the model's replies could not be used ({n} in a row).",
           "context": "I cannot go on: the request and what the tools returned do not fit the model's context "
                      "({limit} tokens). Ask for less at once, or raise llm.n_ctx where the machine's memory allows.",
           "done": "What was done so far:", "nothing": "No tool was run.",
           "ok": "ok", "failed": "failed", "unknown": "interrupted, outcome unknown"},
    "zh": {"steps": "已达到单个任务的工具调用上限（{n} 次），我先停在这里。",
           "seconds": "本任务的时间预算（{limit:.0f} 秒）已用完，我先停在这里。",
           "tokens": "本任务的模型预算（{limit} 个 token）已用完，我先停在这里。",
           "invalid": "模型的回复无法使用（连续 {n} 次），我先停在这里。",
           "context": "无法继续：请求和工具返回的内容超出了模型的上下文（{limit} 个 token）。请一次少问一些，"
                      "或在内存允许时调大 llm.n_ctx。",
           "done": "目前已完成：", "nothing": "还没有运行任何工具。",
           "ok": "成功", "failed": "失败", "unknown": "被中断，结果未知"},
}


def stopped_reply(transcript: Transcript, reason: str, budgets: Budgets) -> str:
    """The reply when a budget ends the loop: why, and each call made with how it went."""
    words = STOPPED["zh" if language_of(transcript.request) == "zh" else "en"]
    limit = {"seconds": budgets.max_seconds, "tokens": budgets.max_tokens, "context": budgets.n_ctx}.get(reason, 0)
    n = transcript.invalid_in_a_row() if reason == "invalid" else transcript.steps
    lines = [words[reason].format(n=n, limit=limit)]
    calls = transcript.calls
    if not calls:
        lines.append(words["nothing"])
    else:
        lines.append(words["done"])
        for entry in calls:
            how = words["unknown"] if entry["ok"] is None else words["ok"] if entry["ok"] else words["failed"]
            args = prompt.preview(entry["arguments"], 120)
            lines.append(f"- {entry['tool']} {args}: {how}")
    return "\n".join(lines)


def _estimate_tokens(said: list[dict], text: str) -> int:
    """About how many tokens a call took when the back end does not say (4 characters each)."""
    return (sum(len(str(m.get("content", ""))) for m in said) + len(text or "")) // 4
