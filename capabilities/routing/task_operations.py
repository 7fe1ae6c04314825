"""Operations on a task the user already has, read from plain words, Chinese or English.

``read_operation`` answers a :class:`TaskOperation` or None (an ordinary request):

====================  ==============================================  ===========================
kind                  said as                                         ``text``
====================  ==============================================  ===========================
``comment_on_task``   "comment on t_1: looks good", "评论：不错",        the comment
                      "在这个任务下面写一句：…"
``revise_result``     "revise it: use euros", "把结果改成英文",          the added instruction
                      "re-run it with prices in euros", "结果按时间排一下"
``re_run_task``       "re-run it", "run task_3f… again", "重新执行",    ""
                      "重新请求一次", "once more, the api is back up"
``cancel_task``       "cancel task t_123", "stop it", "取消刚才的任务",   ""
                      "这个任务不要了", "I don't need that anymore"
====================  ==============================================  ===========================

``task_ref`` is the task id written in the text (``task_…`` or ``t_…``) or ``"last"`` (the
user's most recent task). Each pattern covers the whole message, with the operation word
and a word for the task ("it", "the task", "刚才的任务", an id): "stop the server" or "取消
订阅" is a request to do something, not an operation on a task. Loop tasks (``loop_…``,
reminders, schedules) have their own reader, ``capabilities.loop.requests``, and are left to it.

The words these rules read live in the table ``capabilities/cognition/tables/task_operations.json``
(``rule_tables``), each rule with the messages that prove it; its parts are the words for the task,
the polite leads and the endings that the rules share. An operator adds words there without code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from capabilities.cognition.cues import reads_as_new_request
from capabilities.cognition.rule_tables import table

KINDS = ("comment_on_task", "revise_result", "re_run_task", "cancel_task")
LAST = "last"

_RULES = table("task_operations")
# a task's id as the user writes it (the table's part task_id, which the rules read it with)
_TASK_ID = re.compile(r"(?<![A-Za-z0-9_])(?:task|t)_[A-Za-z0-9]{1,40}(?![A-Za-z0-9_])")
_ASKED_END = _RULES["revision_asked_end"]
_LOOP = _RULES["loop_words"]
# in order, the first that matches the whole message wins
_CANCEL = tuple(_RULES[name] for name in (
    "cancel_en", "cancel_unneeded_en", "cancel_call_off_en", "cancel_not_needed_en", "cancel_unwanted_zh",
    "cancel_unwanted_before_zh", "cancel_task_first_zh", "cancel_verb_first_zh", "cancel_alone_en", "cancel_alone_zh"))
_RERUN = tuple(_RULES[name] for name in (
    "rerun_en", "rerun_again_en", "rerun_another_go_en", "rerun_redo_writing_zh", "rerun_zh"))
_REVISE = tuple(_RULES[name] for name in (
    "revise_en", "revise_make_en", "revise_turn_into_en", "revise_change_zh", "revise_show_zh", "revise_result_first_zh",
    "revise_sort_en", "revise_part_zh", "revise_colon_zh"))
_COMMENT = tuple(_RULES[name] for name in (
    "comment_en", "comment_note_on_en", "comment_where_zh", "comment_zh", "comment_verb_zh"))
# what may follow "re-run it" and still be a re-run: an instruction after a separator or a joining word
_RERUN_REST = _RULES["rerun_rest_en"]
_RERUN_REST_ZH = _RULES["rerun_rest_zh"]
_RERUN_AFTERWORD = _RULES["rerun_afterword"]  # all that is left after "re-run it" when it adds nothing
_TRAILING = " \t.!。！?？"


@dataclass(frozen=True)
class TaskOperation:
    kind: str  # "comment_on_task" | "revise_result" | "re_run_task" | "cancel_task"
    task_ref: str  # a task id said in the text, or "last" (the user's most recent task)
    text: str  # the comment / revision instruction ("" when none)


# a reading's kind (capabilities/cognition/semantic.py: task_op/<kind>) and the operation it names
_READ_KINDS = {"cancel": "cancel_task", "revise": "revise_result", "rerun": "re_run_task", "comment": "comment_on_task"}
# what a comment says, after its lead: 'note on that task: "sent to legal"', "在刚才的任务上记一笔：已确认"
_SAID = re.compile(r"[:：]\s*(.+)$|[“\"「『](.+?)[”\"」』]|\s[—–-]+\s*(.+)$", re.S)


# once a message is known to be an operation on a task, the words that say which one
_OPERATION_WORDS = tuple((kind, _RULES[f"{kind}_word"]) for kind in ("comment", "cancel", "rerun", "revise"))


def operation_read_as(kind: str, content: str, *, needs_word: bool = False) -> TaskOperation | None:
    """The operation on the person's latest task that a semantic reading of ``content`` names
    (``cancel``, ``revise``, ``rerun``, ``comment``), when no rule read one. The nearest examples
    tell the topic better than the verb, so an operation word in the text decides which, and the
    reading's kind only where there is none (``needs_word``: not even then — a reading that only
    leans needs a word for the operation beside it). A comment is what follows a colon or dash or
    stands in quotes (else the whole message); a revision's instruction is the whole message."""
    if kind not in _READ_KINDS:
        return None
    said = next((k for k, pattern in _OPERATION_WORDS if pattern.search(content)), None)
    if said is None and needs_word:
        return None
    kind = said or kind
    operation = _READ_KINDS.get(kind)
    text = content.strip()
    if operation is None or not text:
        return None
    if operation == "comment_on_task":
        said = _SAID.search(text)
        note = next((g for g in said.groups() if g), "") if said else ""
        return TaskOperation(operation, _ref_in(text), note.strip().strip("“”\"") or text)
    return TaskOperation(operation, _ref_in(text), text if operation == "revise_result" else "")


def said_operation(content: str) -> TaskOperation | None:
    """The operation on a task that an operation word of ``content`` says ("…再请求一次", "… again"),
    when no rule read one: to be taken only where the message names one of the person's tasks
    (its id, the words of what it did, its address), which the caller checks."""
    said = next((k for k, pattern in _OPERATION_WORDS if pattern.search(content)), None)
    return operation_read_as(said, content) if said is not None else None


def task_ids(text: str) -> list[str]:
    """The task ids ``text`` writes ("task_3f2a", "t_9c")."""
    return _TASK_ID.findall(text)


def _ref_in(text: str) -> str:
    named = _TASK_ID.search(text)
    return named.group(0) if named else LAST


def read_operation(content: str) -> TaskOperation | None:
    """The operation ``content`` asks for on an existing task, or None. What leads up to it
    in clauses of its own is said about it, not asked ("actually scratch that, cancel the
    workflow", "刚才网络抽风了，再重跑一遍"), unless it is a request or a step of its own, or
    names a loop task ("reminder for standup, kill it" is the loop reader's)."""
    text = content.strip()
    if not text:
        return None
    found = _read_whole(text) or _retry_when_back(text)
    if found is not None:
        return found
    for clause in _CLAUSE_END.finditer(text):
        lead, rest = text[:clause.end()], text[clause.end():].strip()
        if not rest or _NOT_A_LEAD.search(lead) or _LOOP.search(lead) or reads_as_new_request(lead.strip()):
            return None
        found = _read_whole(rest)
        if found is not None:
            return found
    return None


_CLAUSE_END = _RULES["clause_end"]  # punctuation, or the space after a particle: "好了 那就…"
# a lead that is a step or an address of its own: "fetch https://…, then re-run it" is a request
_NOT_A_LEAD = _RULES["not_a_lead"]


def _read_whole(text: str) -> TaskOperation | None:
    for kind, patterns in (("comment_on_task", _COMMENT), ("cancel_task", _CANCEL),
                           ("revise_result", _REVISE)):
        for pattern in patterns:
            match = pattern.match(text)
            if match and not _about_loops(text, match):
                said = (match.groupdict().get("text") or "").strip()
                if kind == "revise_result":
                    said = _ASKED_END.sub("", said)
                if kind == "comment_on_task":  # the note, not the quotes around it
                    said = said.strip(_TRAILING).strip("“”\"「」『』")
                return TaskOperation(kind, _task_ref(match), said.rstrip(_TRAILING) if said else "")
    for pattern in _RERUN:
        match = pattern.match(text)
        if not match or _about_loops(text, match):
            continue
        rest = match.group("rest").strip().rstrip(_TRAILING)
        if not rest or _RERUN_AFTERWORD.fullmatch(rest):
            return TaskOperation("re_run_task", _task_ref(match), "")
        added = _RERUN_REST.match(rest) or _RERUN_REST_ZH.match(rest)
        if added and _BACK_UP.search(added.group("text")) and not _asks(added.group("text")):
            return TaskOperation("re_run_task", _task_ref(match), "")  # "re-run it, the server is back"
        if added:  # a re-run with something to change is a revision
            return TaskOperation("revise_result", _task_ref(match), added.group("text").strip())
    return None


# "again" with nothing else to say what: "one more time pls", "再来一次", "try again"
_BARE_REPEAT = _RULES["bare_repeat"]
# what failed is working again: the reason to try once more
_BACK_UP = _RULES["back_up"]


def _retry_when_back(text: str) -> TaskOperation | None:
    """A bare "again" is about the last task when another clause says what failed works again
    ("one more time, the endpoint should be back up now", "网站恢复了，再来一次"); alone, after a
    chat reply, it asks for that reply again."""
    clauses = [c for c in _CLAUSE_END.split(text) if c.strip()]
    repeats = [c for c in clauses if _BARE_REPEAT.match(c)]
    reasons = [c for c in clauses if c not in repeats]
    if len(repeats) == 1 and reasons and all(_BACK_UP.search(c) and not _asks(c) for c in reasons):
        return TaskOperation("re_run_task", LAST, "")
    return None


def _asks(clause: str) -> bool:
    return "?" in clause or "？" in clause or reads_as_new_request(clause.strip())


def _task_ref(match: re.Match) -> str:
    for group in ("ref", "ref2"):
        said = match.groupdict().get(group)
        if said:
            found = _TASK_ID.search(said)
            if found:
                return found.group(0)
    return LAST


def _about_loops(text: str, match: re.Match) -> bool:
    """Loop tasks are another reader's; the words after a comment's colon do not count."""
    head = text[: match.start("text")] if match.groupdict().get("text") else text
    return bool(_LOOP.search(head))
