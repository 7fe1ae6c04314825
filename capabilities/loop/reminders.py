"""Reminders: what a reminder loop task runs, and the seed's scheduler tools.

``remind`` is the body of a reminder run: it tells the user the reminder's text. With
``auto_continue`` the run wakes the agent instead: the model is asked what to tell the user
and whether (and when) to remind them next, and a next time it names is registered as a new
one-shot of the same loop task, so a study coach can decide to follow up in two hours.

``scheduler_add``, ``scheduler_list`` and ``scheduler_cancel`` are the same operations as
tools with explicit parameters, for programs and agents (users say it in words instead; see
``requests.py``). They are not offered to the intent router: the words reach the loop
reader first.
"""

from __future__ import annotations

import logging
from zoneinfo import ZoneInfo

from capabilities.base import CapabilityError, CapabilityInputError, ExecutionContext, capability
from capabilities.loop.schedule import ScheduleError
from capabilities.llm.base import LLMError, complete_json
from common.loops.models import Forbidden, LoopStoreError

log = logging.getLogger("flora.loops")

WAKE_PROMPT = ("[定时任务触发 / scheduled reminder fired] 内容 / content: {content}\n"
               "Remind the user of it in one or two friendly sentences, in the language of the content. "
               "Then decide whether to remind them again: give next_time as 'YYYY-MM-DD HH:MM' or 'in N minutes', "
               "or an empty string for no further reminder. Now is {now}.")
WAKE_SCHEMA = {"type": "object", "properties": {"message": {"type": "string"}, "next_time": {"type": "string"}},
               "required": ["message", "next_time"]}


def _loops(context: ExecutionContext):
    return context.registry.get_capability("loop_tasks")


@capability(
    name="remind",
    description="Tell the user a reminder's text (the body of a reminder loop task).",
    parameters={"type": "object", "properties": {
        "content": {"type": "string", "minLength": 1, "description": "what to remind the user of"},
        "auto_continue": {"type": "boolean", "description": "wake the agent, which may set the next reminder"},
    }, "required": ["content"], "additionalProperties": False},  # extras (a stored "time") are left out
    routable=False,
)
def remind(content: str, auto_continue: bool = False, context: ExecutionContext | None = None) -> dict:
    text = f"⏰ Reminder: {content}"
    if not auto_continue or context is None or context.llm is None:
        return {"message": text}
    loops = _loops(context)
    now = loops.now().astimezone(ZoneInfo(loops.timezone)).strftime("%Y-%m-%d %H:%M")
    try:
        decided = complete_json(context.llm, [{"role": "user", "content": WAKE_PROMPT.format(content=content, now=now)}],
                                WAKE_SCHEMA, max_tokens=160)
    except LLMError as exc:
        log.warning("auto_continue reminder: the model did not answer (%s); plain reminder sent", exc)
        return {"message": text}
    message = str(decided.get("message") or "").strip() or text
    result = {"message": message}
    next_time = str(decided.get("next_time") or "").strip()
    loop_task_id = context.meta.get("loop_task_id") if context.meta else None
    if next_time and loop_task_id:
        try:
            parsed = loops.parse_time(next_time)
            loop = loops.modify(context.tenant_id, context.user_id, loop_task_id, schedule=parsed.schedule)
            result.update(next_fire_at=loop.next_fire_at, next=loops.local(loop.next_fire_at))
            result["message"] = f"{message}\n(next reminder: {loops.local(loop.next_fire_at)})"
        except (ScheduleError, LoopStoreError) as exc:
            log.info("auto_continue reminder: next time %r not used: %s", next_time, exc)
    return result


@capability(
    name="scheduler_add",
    description="Add a reminder at a time ('15:30', '2026-01-28 10:00', 'every day at 9:00', 'in 20 minutes').",
    parameters={"type": "object", "properties": {
        "time": {"type": "string", "minLength": 1, "description": "when: 15:30, 2026-01-28 10:00, every day at 9:00"},
        "content": {"type": "string", "minLength": 1, "description": "what to remind of"},
        "channel": {"type": "string", "description": "where to push the reminder"},
        "auto_continue": {"type": "boolean", "description": "wake the agent at each reminder to decide the next"},
    }, "required": ["time", "content"]},
    routable=False,
)
def scheduler_add(time: str, content: str, channel: str = "", auto_continue: bool = False,
                  context: ExecutionContext | None = None) -> dict:
    loops = _loops(context)
    try:
        parsed = loops.parse_time(time)
        loop = loops.register(tenant_id=context.tenant_id, user_id=context.user_id, content=content,
                              schedule=parsed.schedule, capability="remind", channel=channel,
                              parameters={"content": content, "auto_continue": auto_continue},
                              task_id=context.task_id)
    except ScheduleError as exc:
        raise CapabilityInputError("time", str(exc)) from None
    kind = "recurring" if parsed.schedule.kind != "once" else "one-time"
    return {"loop_task_id": loop.loop_task_id, "next_fire_at": loop.next_fire_at,
            "message": f"Set a {kind} reminder: {loops.describe(loop)}"}


@capability(
    name="scheduler_list",
    description="List the user's reminders and loop tasks.",
    parameters={"type": "object", "properties": {}},
    routable=False,
)
def scheduler_list(context: ExecutionContext | None = None) -> list[dict]:
    loops = _loops(context)
    return [{**t.to_dict(), "description": loops.describe(t)}
            for t in loops.list(context.tenant_id, context.user_id)]


@capability(
    name="scheduler_cancel",
    description="Cancel (delete) one of the user's reminders or loop tasks by id.",
    parameters={"type": "object", "properties": {
        "loop_task_id": {"type": "string", "pattern": "^loop_[0-9a-f]+$", "description": "the loop task's id"},
    }, "required": ["loop_task_id"]},
    routable=False,
)
def scheduler_cancel(loop_task_id: str, context: ExecutionContext | None = None) -> dict:
    try:
        loop = _loops(context).delete(context.tenant_id, context.user_id, loop_task_id)
    except Forbidden as exc:
        raise CapabilityError(str(exc), error_type="forbidden") from None
    except LoopStoreError as exc:
        raise CapabilityError(str(exc), error_type="not_found") from None
    return {"loop_task_id": loop.loop_task_id, "state": loop.state, "message": f"Cancelled {loop_task_id}."}
