"""The whiteboard (a task's shared state) on both store backends: lines written once however
often and from however many writers, to-dos ticked off, lines removed, the change recorded as
an event, the board in prompts and results, and the ``update_whiteboard`` capability."""

from __future__ import annotations

import threading

import pytest

from capabilities.base import CapabilityError, ExecutionContext
from capabilities.cognition.experts import ExpertPanel
from capabilities.llm.fake import FunctionLLM
from capabilities.memory.whiteboard import (
    Whiteboard, WhiteboardError, entry_id, render, update_whiteboard, view,
)
from capabilities.memory.results import memories_used, memory_meta, with_memory
from capabilities.registry import CapabilityRegistry
from common.tasks.models import TaskRecord
from config import ExpertsConfig


def add_task(store, task_id: str, **meta) -> TaskRecord:
    return store.create_task(TaskRecord(task_id=task_id, tenant_id="acme", user_id="li", content="x", meta=meta))


def context_for(store, task_id: str) -> ExecutionContext:
    return ExecutionContext(task_id=task_id, user_id="li", tenant_id="acme", store=store)


def test_lines_are_written_once_ticked_off_and_removed_by_id_or_text(store):
    board = Whiteboard(store)
    change = board.write("acme", "t1", facts=["The supplier replied", "the  SUPPLIER replied"],
                         todo=["Call Li", "Send the invoice"], decisions=["Ship on Friday"], author="step-1")
    assert [a["text"] for a in change.added] == ["The supplier replied", "Call Li", "Send the invoice",
                                                  "Ship on Friday"]  # the same fact said twice is one line
    again = board.write("acme", "t1", facts=["The supplier replied"], author="step-2")
    assert not again and again.added == []
    ticked = board.write("acme", "t1", done=["Call Li", "no such to-do"], remove=[entry_id("decision", "Ship on Friday")])
    assert ticked.done == [entry_id("todo", "Call Li")] and ticked.unknown == ["no such to-do"]
    assert ticked.removed == [entry_id("decision", "Ship on Friday")]
    shown = board.view("acme", "t1")
    assert shown == {"facts": [{"id": entry_id("fact", "The supplier replied"), "text": "The supplier replied",
                                "by": "step-1"}],
                     "todo": [{"id": entry_id("todo", "Call Li"), "text": "Call Li", "done": True, "by": "step-1"},
                              {"id": entry_id("todo", "Send the invoice"), "text": "Send the invoice", "done": False,
                               "by": "step-1"}]}
    assert board.read("acme", "other") == [] and board.read("beta", "t1") == []  # boards and tenants apart


def test_every_change_is_one_event_of_the_boards_task_and_no_change_none(store):
    add_task(store, "t1")
    board = Whiteboard(store)
    board.write("acme", "t1", facts=["a"], author="me", user_id="li")
    board.write("acme", "t1", facts=["a"])  # nothing new: no event
    board.write("acme", "t1", remove=["a"])
    events = store.events("acme", task_id="t1", event_type="WHITEBOARD_UPDATED")
    assert [(e.data["author"], len(e.data["added"]), e.data["removed"]) for e in events] == [
        ("me", 1, []), ("", 0, [entry_id("fact", "a")])]
    assert events[0].user_id == "li"


def test_empty_lines_and_a_full_board_are_refused_before_anything_is_written(store):
    board = Whiteboard(store, max_entries=3)
    with pytest.raises(WhiteboardError, match="cannot be empty"):
        board.write("acme", "t1", facts=["fine", "   "])
    board.write("acme", "t1", facts=["one", "two"])
    with pytest.raises(WhiteboardError, match="at most 3 lines"):
        board.write("acme", "t1", todo=["three", "four"])
    assert len(board.read("acme", "t1")) == 2
    board.write("acme", "t1", facts=["one"], todo=["three"])  # an old line again does not count
    long = board.write("acme", "t2", notes=["x" * 5000]).added[0]["text"]
    assert len(long) == 1000 and long.endswith("…")


def test_writers_in_parallel_lose_no_line(make_store):
    """Several steps (here threads with their own store connections, as processes have) write
    at once; every line arrives, and lines they share are there once."""
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            board = Whiteboard(make_store())
            for i in range(10):
                board.write("acme", "plan", facts=[f"writer {n} fact {i}", "shared fact"], author=f"w{n}")
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    texts = [e.text for e in make_store().whiteboard("acme", "plan")]
    assert len(texts) == 41 and texts.count("shared fact") == 1


def test_the_board_as_a_prompt_section_and_in_a_finished_tasks_result(store):
    board = Whiteboard(store)
    board.write("acme", "t1", facts=["Revenue rose 4%"], todo=["Check returns"], decisions=["Use Q3 data"])
    board.write("acme", "t1", done=["Check returns"])
    text = render(board.read("acme", "t1"))
    assert text.splitlines() == ["Shared notes of this task (its whiteboard):", "Facts found so far:",
                                 "- Revenue rose 4%", "To do:", "- [x] Check returns", "Decisions:", "- Use Q3 data"]
    assert render(board.read("acme", "t1"), "zh").startswith("本任务的共享笔记（白板）：\n已知事实：")
    assert render([]) == ""
    task = add_task(store, "t1", memories=[{"memory_id": "mem_1", "fact": "x"}])
    assert with_memory({"value": 1}, store, task) == {"value": 1, "whiteboard": view(board.read("acme", "t1")),
                                                       "memories_used": ["mem_1"]}
    assert with_memory({"value": 1}, store, add_task(store, "empty")) == {"value": 1}  # nothing to add
    assert with_memory("text", store, task) == "text"  # only a dict result can carry it
    assert with_memory({"whiteboard": "mine"}, store, task)["whiteboard"] == "mine"  # the capability's own key
    kept = memory_meta({"memories": [{"memory_id": "mem_1", "fact": "x"}, {"fact": "no id"}, "junk", {"memory_id": "e"}]})
    assert kept == {"memories": [{"memory_id": "mem_1", "fact": "x"}, {"memory_id": "", "fact": "no id"}]}
    assert memories_used(add_task(store, "t2", **kept)) == ["mem_1"] and memory_meta({"memories": []}) == {}
    assert memories_used(add_task(store, "stored_before", memories_used=["mem_0"])) == ["mem_0"]


def test_update_whiteboard_writes_on_the_plans_board_for_a_step_and_says_what_changed(store):
    add_task(store, "plan")
    add_task(store, "step", parent="plan")
    registry = CapabilityRegistry()
    registry.register_module("capabilities.memory.whiteboard")
    spec = registry.get_executable("update_whiteboard")
    result = spec.invoke({"facts": ["Found 3 invoices"], "todo": ["Email Li"]}, context_for(store, "step"))
    assert result["board_id"] == "plan" and result["message"] == "Whiteboard: 2 added, 0 done, 0 removed."
    result = update_whiteboard(context_for(store, "step"), done=["Email Li"], remove=["not there"])
    assert result["message"] == "Whiteboard: 0 added, 1 done, 0 removed; not on the board: not there."
    assert result["whiteboard"]["todo"][0]["done"] is True
    assert store.whiteboard("acme", "step") == []  # a step has no board of its own
    with pytest.raises(CapabilityError, match="cannot be empty"):
        update_whiteboard(context_for(store, "step"), facts=[" "])
    with pytest.raises(CapabilityError, match="task store"):
        update_whiteboard(ExecutionContext(task_id="t", user_id="li"), facts=["x"])


def test_every_expert_reads_the_shared_notes_with_the_question():
    seen: list[str] = []

    def model(messages, schema):
        seen.append(messages[0]["content"])
        return "Yes."

    panel = ExpertPanel(FunctionLLM(model), config=ExpertsConfig(rounds=1, strategy="voting"))
    panel.ask("Ship now?", shared="Shared notes of this task (its whiteboard):\nDecisions:\n- Use Q3 data")
    assert len(seen) == len(ExpertsConfig().personas) and all("- Use Q3 data" in s for s in seen)
    seen.clear()
    panel.ask("Ship now?")  # no board: the prompt is as before
    assert not any("whiteboard" in s for s in seen)
