"""The agent loop as plain classes: a scripted model, real capabilities, a real SQLite store.

The service-level tests drive TaskExecutionService and ConversationManager (what the
ExecutionActor and the InteractionActor call) without an actor system."""

from __future__ import annotations

import json

import pytest

from capabilities.agent.loop import AgentLoop, Approvals, Budgets, ToolBox, arguments_problem
from capabilities.agent.transcript import TranscriptKeeper
from capabilities.base import ApprovalRequired, CapabilityError, ExecutionContext, InputRequired
from capabilities.context.conversation_manager import ConversationManager
from capabilities.llm.base import LLMReply
from capabilities.llm.fake import ScriptedLLM
from capabilities.memory import recalled
from capabilities.registry import CapabilityRegistry
from capability_actors.task_execution_service import TaskExecutionService
from common import messages as m
from common.tasks.models import CANCELLED, WAITING_APPROVAL, WAITING_PARAMETERS, TaskRecord
from common.tasks.sqlite_store import SQLiteTaskStore
from config import load_config
from events.event_bus import EventBus
from init_plugins import AGENT_MODULE


def call(tool: str, **arguments) -> dict:
    return {"tool": tool, "arguments": arguments}


def final(text: str) -> dict:
    return {"final": text}


@pytest.fixture
def world(tmp_path):
    store = SQLiteTaskStore(tmp_path / "tasks.db")
    registry = CapabilityRegistry()
    for module in ("tests.support.sample_plugins", "tests.support.agent_plugins", AGENT_MODULE):
        registry.register_module(module)
    marks = {"dir": str(tmp_path)}
    config = load_config({"data_dir": str(tmp_path), "agent": {"max_steps": 5},
                          "capabilities": {"settings": {"count_mark": marks, "write_note": marks,
                                                        "wait_for_cancel": marks}}})
    yield World(store, EventBus(store), registry, config, tmp_path)
    store.close()


class World:
    def __init__(self, store, events, registry, config, path):
        self.store, self.events, self.registry, self.config, self.path = store, events, registry, config, path
        self.llm = None

    def task(self, content: str, user: str = "u1", meta: dict | None = None) -> TaskRecord:
        return self.events.create_task(TaskRecord(task_id=m.new_id("task"), tenant_id="default", user_id=user,
                                                  content=content, capability="agent", meta=meta or {}),
                                       source="test")

    def loop(self, task: TaskRecord, llm, *, budgets: Budgets = Budgets(max_steps=5), allowed=None,
             auto=(), approved_call=None):
        context = ExecutionContext(task_id=task.task_id, user_id=task.user_id, config=self.config,
                                   registry=self.registry, llm=llm, store=self.store, events=self.events,
                                   request=task.content, meta=task.meta)
        approvals = Approvals(set(auto), lambda: self.store.allowed_tools("default", task.user_id))
        return AgentLoop(llm=llm, tools=ToolBox.from_registry(self.registry, allowed=allowed), context=context,
                         budgets=budgets,
                         approvals=approvals)

    def service(self, llm) -> TaskExecutionService:
        return TaskExecutionService(store=self.store, events=self.events, registry=self.registry,
                                    config=self.config, llm=llm)

    def conversation(self) -> ConversationManager:
        return ConversationManager(self.store, self.events, self.registry)

    def marks(self, task: TaskRecord) -> list[str]:
        path = self.path / f"{task.task_id}.marks"
        return path.read_text().splitlines() if path.exists() else []

    def transcript(self, task: TaskRecord) -> dict:
        return self.store.get_task("default", task.task_id).meta["agent"]


def told(llm: ScriptedLLM, call_index: int) -> str:
    """What the model was last told of the work before its call number ``call_index`` (the
    language to answer in comes after it)."""
    return llm.calls[call_index][0][-2]["content"]


# -- the loop --------------------------------------------------------------------------
def test_two_calls_then_the_answer_with_each_result_fed_back(world):
    task = world.task("add 2 and 3, then say the sum")
    llm = ScriptedLLM([call("add_numbers", a=2, b=3), call("echo", text="5"), final("The sum is 5.")])
    result = world.loop(task, llm).run(task.content)
    assert result["message"] == "The sum is 5."
    assert [s["tool"] for s in result["steps"]] == ["add_numbers", "echo"]
    assert '"sum": 5' in told(llm, 1) and "Result of add_numbers" in told(llm, 1)
    events = [e for e in world.events.history("default", task_id=task.task_id)
              if e.event_type in ("TOOL_CALLED", "TOOL_RESULT")]
    assert [(e.event_type, e.data["tool"]) for e in events] == [
        ("TOOL_CALLED", "add_numbers"), ("TOOL_RESULT", "add_numbers"), ("TOOL_CALLED", "echo"),
        ("TOOL_RESULT", "echo")]
    assert events[0].data["arguments"] == {"a": 2, "b": 3} and events[1].data["ok"] is True
    assert events[1].data["elapsed_ms"] >= 0


def test_the_model_is_constrained_to_the_tools_schemas(world):
    task = world.task("say hi")
    llm = ScriptedLLM([final("hi"), final("hi")])
    world.loop(task, llm, allowed=["echo"]).run(task.content)
    schema = llm.calls[0][1]["json_schema"]
    tools = [c["properties"]["tool"]["const"] for c in schema["anyOf"] if "tool" in c["properties"]]
    assert tools == ["echo"]
    assert schema["anyOf"][0]["properties"]["arguments"]["required"] == ["text"]


def test_the_persons_memories_follow_the_fixed_prompt_on_every_step(world):
    known = [{"memory_id": "mem_1", "fact": "The person keeps their notes in notes.txt"}]
    task = world.task("read my notes", meta={"memories": known})
    llm = ScriptedLLM([call("echo", text="notes"), final("done")])
    world.loop(task, llm).run(task.content)
    plain = ScriptedLLM([final("done"), final("done")])
    world.loop(world.task("read my notes"), plain).run("read my notes")
    for messages, _ in llm.calls:
        assert messages[0] == plain.calls[0][0][0]  # the fixed system prompt, the same for everyone
        assert messages[1] == {"role": "system", "content": recalled.block(known)}
        assert messages[2] == {"role": "user", "content": "read my notes"}
    assert all(m["role"] != "system" or "remember" not in m["content"] for m in plain.calls[0][0])


def test_a_wrong_typed_call_goes_back_to_the_model_with_the_error(world):
    task = world.task("add two and three")
    llm = ScriptedLLM([call("add_numbers", a="two", b=3), call("add_numbers", a=2, b=3), final("5")])
    result = world.loop(task, llm).run(task.content)
    assert result["message"] == "5" and len(result["steps"]) == 1
    assert "not usable" in told(llm, 1) and "'two' is not of type 'integer'" in told(llm, 1)


def test_unknown_tool_malformed_json_and_extra_arguments_are_told_to_the_model(world):
    task = world.task("do something")
    llm = ScriptedLLM(["this is not json", call("rm_rf", path="/"), call("echo", text="x", loud=True),
                       final("gave up on those"), final("gave up on those")])
    result = world.loop(task, llm, budgets=Budgets(max_invalid=5)).run(task.content)
    assert result["message"] == "gave up on those" and result["steps"] == []
    assert "not JSON" in told(llm, 1)
    assert "no tool named 'rm_rf'" in told(llm, 2) and "echo" in told(llm, 2)
    assert "no parameter 'loud'" in told(llm, 3)


def test_unusable_replies_are_bounded_and_the_reply_says_so(world):
    task = world.task("do something")
    llm = ScriptedLLM(["nope", "{}", "[1]"])
    result = world.loop(task, llm, budgets=Budgets(max_invalid=3)).run(task.content)
    assert result["stopped"] == "invalid" and "3 in a row" in result["message"]
    assert llm.remaining == 0


def test_the_step_limit_ends_with_what_was_done(world):
    task = world.task("keep adding")
    llm = ScriptedLLM([call("add_numbers", a=1, b=i) for i in range(3)])
    result = world.loop(task, llm, budgets=Budgets(max_steps=2)).run(task.content)
    assert result["stopped"] == "steps" and len(result["steps"]) == 2
    assert "2 tool calls" in result["message"] and result["message"].count("add_numbers") == 2


def test_the_step_limit_reply_is_in_the_persons_language(world):
    task = world.task("帮我一直加下去")
    llm = ScriptedLLM([call("add_numbers", a=1, b=1)])
    result = world.loop(task, llm, budgets=Budgets(max_steps=1)).run(task.content)
    assert "工具调用上限" in result["message"] and "add_numbers" in result["message"]


def test_the_token_budget_ends_the_loop(world):
    task = world.task("add")
    llm = ScriptedLLM([LLMReply(json.dumps(call("add_numbers", a=1, b=2)), prompt_tokens=900, completion_tokens=200),
                       final("never asked")])
    result = world.loop(task, llm, budgets=Budgets(max_tokens=1000)).run(task.content)
    assert result["stopped"] == "tokens" and len(result["steps"]) == 1 and llm.remaining == 1


def test_the_time_budget_ends_the_loop(world):
    task = world.task("add")
    clock = iter(float(t) for t in range(0, 1000, 10))
    llm = ScriptedLLM([call("add_numbers", a=1, b=2), final("never asked")])
    context = ExecutionContext(task_id=task.task_id, user_id="u1", config=world.config, registry=world.registry,
                               llm=llm, store=world.store, request=task.content)
    loop = AgentLoop(llm=llm, tools=ToolBox.from_registry(world.registry), context=context,
                     budgets=Budgets(max_seconds=25), clock=lambda: next(clock))
    result = loop.run(task.content)
    assert result["stopped"] == "seconds" and "25 s" in result["message"]


def test_a_failing_tool_is_data_for_the_model(world):
    task = world.task("try the failing tool")
    llm = ScriptedLLM([call("always_fails"), final("it failed"), final("it failed: the tool is broken")])
    result = world.loop(task, llm).run(task.content)
    assert result["message"] == "it failed: the tool is broken" and result["steps"][0]["ok"] is False
    assert "always_fails failed" in told(llm, 1)


def test_giving_up_on_the_first_failure_is_questioned_once(world):
    task = world.task("try the failing tool, then echo")
    llm = ScriptedLLM([call("always_fails"), final("sorry"), call("echo", text="hi"), call("always_fails"),
                       final("echoed hi; the other tool fails")])
    result = world.loop(task, llm).run(task.content)
    assert "correct the call" in told(llm, 2)  # the first give-up is sent back
    assert result["message"] == "echoed hi; the other tool fails"  # after a call worked, an answer is taken
    assert [s["tool"] for s in result["steps"]] == ["always_fails", "echo", "always_fails"]


def test_a_program_that_exits_with_an_error_is_a_failed_call_the_model_is_told_to_correct(world):
    # the tool ran, the script did not: "strings must be encoded" is no result to answer from
    task = world.task("run the script that hashes my name")
    llm = ScriptedLLM([call("run_script", exit_code=1, error="TypeError: Strings must be encoded before hashing"),
                       final("The hash is not valid because strings must be encoded"),
                       call("run_script", exit_code=0), final("done")])
    result = world.loop(task, llm).run(task.content)
    assert [s["ok"] for s in result["steps"]] == [False, True]
    assert "correct the call" in told(llm, 2) and result["message"] == "done"


@pytest.mark.parametrize("result, failed", [({"exit_code": 0, "stdout": "4\n"}, False), ({"exit_code": 2}, True),
                                            ({"exit_code": 0, "timed_out": True}, True), ({"exit_code": None,
                                             "killed": True}, True), ({"text": "hi"}, False), ("plain", False)])
def test_which_results_are_a_failed_program(result, failed):
    from capabilities.agent.loop import program_failed

    assert program_failed(result) is failed


def test_a_question_right_after_a_result_is_sent_back_once(world):
    task = world.task("echo hi and tell me what it said")
    llm = ScriptedLLM([call("echo", text="hi"), {"ask": "What did it say?"}, final("it said hi")])
    result = world.loop(task, llm).run(task.content)
    assert "read the last result again" in told(llm, 2) and result["message"] == "it said hi"


def test_a_question_asked_again_after_the_reminder_reaches_the_person(world):
    task = world.task("echo hi, then ask me for the colour")
    llm = ScriptedLLM([call("echo", text="hi"), {"ask": "Which colour?"}, {"ask": "Which colour?"}])
    with pytest.raises(InputRequired) as paused:
        world.loop(task, llm).run(task.content)
    assert paused.value.question == "Which colour?" and len(llm.calls) == 3


def test_an_answer_after_the_reminder_is_taken(world):
    task = world.task("try the failing tool")
    llm = ScriptedLLM([call("always_fails"), final("sorry"), call("always_fails"), final("it cannot be done")])
    result = world.loop(task, llm).run(task.content)
    assert result["message"] == "it cannot be done" and len(llm.calls) == 4


def test_a_long_result_is_cut_before_the_model_sees_it(world):
    task = world.task("echo a lot")
    llm = ScriptedLLM([call("echo", text="x" * 5000), final("ok")])
    world.loop(task, llm, budgets=Budgets(max_result_chars=100)).run(task.content)
    assert "[cut:" in told(llm, 1) and len(told(llm, 1)) < 300


def test_allowed_capabilities_limit_the_tools(world):
    task = world.task("add")
    llm = ScriptedLLM([call("add_numbers", a=1, b=2), final("not allowed"), final("not allowed")])
    result = world.loop(task, llm, allowed=["echo"]).run(task.content)
    assert result["steps"] == [] and "no tool named 'add_numbers'" in told(llm, 1)
    assert "add_numbers" not in llm.calls[0][0][0]["content"]


def test_the_agent_is_never_its_own_tool(world):
    assert "agent" not in [s.name for s in ToolBox.from_registry(world.registry).tools]
    assert "echo" in [s.name for s in ToolBox.from_registry(world.registry).tools]


def test_arguments_problem_names_the_field():
    from capabilities.base import spec_of
    from tests.support.sample_plugins import add_numbers

    assert "b: 'x' is not of type 'integer'" in arguments_problem(spec_of(add_numbers), {"a": 1, "b": "x"})
    assert "'b' is a required property" in arguments_problem(spec_of(add_numbers), {"a": 1})
    assert arguments_problem(spec_of(add_numbers), {"a": 1, "b": 2}) is None


# -- re-entry --------------------------------------------------------------------------
def test_a_second_run_continues_from_the_transcript_without_running_calls_again(world):
    task = world.task("mark twice")
    first = ScriptedLLM([call("count_mark", label="one"), call("ask_person_please", x=1),
                         {"ask": "Which label next?"}])
    with pytest.raises(InputRequired) as asked:
        world.loop(task, first).run(task.content)
    assert asked.value.question == "Which label next?" and world.marks(task) == ["one"]
    second = ScriptedLLM([call("count_mark", label="two"), final("two marks")])
    result = world.loop(task, second).run(task.content, answer="two")
    assert result["message"] == "two marks" and world.marks(task) == ["one", "two"]
    assert "The person answered: two" in second.calls[0][0][-2]["content"]
    again = world.loop(task, ScriptedLLM([])).run(task.content)  # finished: nothing runs, nothing is asked
    assert again["message"] == "two marks" and world.marks(task) == ["one", "two"]


def test_a_call_interrupted_by_a_crash_is_not_run_again(world):
    task = world.task("mark once")
    keeper = TranscriptKeeper(world.store, "default", task.task_id)
    transcript = keeper.load(task.content)
    entry = transcript.add_call("count_mark", {"label": "one"})
    entry["status"] = "started"  # the process died while the tool ran
    keeper.save(transcript)
    llm = ScriptedLLM([final("not sure it ran")])
    result = world.loop(task, llm).run(task.content)
    assert world.marks(task) == [] and result["steps"][0]["ok"] is None
    assert "interrupted" in told(llm, 0)


def test_no_answer_to_the_question_asks_again(world):
    task = world.task("ask me")
    with pytest.raises(InputRequired):
        world.loop(task, ScriptedLLM([{"ask": "What name?"}])).run(task.content)
    with pytest.raises(InputRequired) as again:
        world.loop(task, ScriptedLLM([])).run(task.content)
    assert again.value.question == "What name?"


def test_a_cancelled_task_stops_between_calls(world):
    task = world.task("mark")
    world.events.transition("default", task.task_id, CANCELLED, source="test")
    with pytest.raises(CapabilityError) as stopped:
        world.loop(task, ScriptedLLM([call("count_mark", label="x")])).run(task.content)
    assert stopped.value.error_type == "cancelled" and world.marks(task) == []


# -- approval --------------------------------------------------------------------------
def test_each_call_that_needs_approval_asks_again(world):
    task = world.task("write two notes")
    loop = world.loop(task, ScriptedLLM([call("write_note", name="a", text="1")]))
    with pytest.raises(ApprovalRequired) as first:
        loop.run(task.content)
    assert (first.value.tool, first.value.arguments) == ("write_note", {"name": "a", "text": "1"})
    assert world.marks(task) == []
    loop = world.loop(task, ScriptedLLM([call("write_note", name="b", text="2")]))
    with pytest.raises(ApprovalRequired) as second:
        loop.run(task.content, approved_call=first.value.call_id)
    assert world.marks(task) == ["note a"] and second.value.call_id != first.value.call_id
    result = world.loop(task, ScriptedLLM([final("both written")])).run(task.content,
                                                                         approved_call=second.value.call_id)
    assert result["message"] == "both written" and world.marks(task) == ["note a", "note b"]


def test_auto_approve_and_always_allow_skip_the_question(world):
    task = world.task("write notes")
    result = world.loop(task, ScriptedLLM([call("write_note", name="a", text="1"), final("ok")]),
                        auto=["write_note"]).run(task.content)
    assert result["message"] == "ok"
    other = world.task("write notes", user="u2")
    world.store.allow_tool("default", "u2", "write_note")
    result = world.loop(other, ScriptedLLM([call("write_note", name="b", text="2"), final("ok")])).run(other.content)
    assert world.marks(other) == ["note b"]
    third = world.task("write notes", user="u3")  # another person is still asked
    with pytest.raises(ApprovalRequired):
        world.loop(third, ScriptedLLM([call("write_note", name="c", text="3")])).run(third.content)


# -- through the ExecutionActor's service and the front desk ---------------------------
def execute(service: TaskExecutionService, task: TaskRecord) -> dict:
    return service.execute(m.execute(task_id=task.task_id, tenant_id="default", user_id=task.user_id,
                                     capability="agent", parameters={}))


def resume(service: TaskExecutionService, task: TaskRecord) -> dict:
    return service.resume(m.resume_execution(task_id=task.task_id, tenant_id="default", user_id=task.user_id))


def test_service_pauses_per_call_and_a_yes_holds_for_one_call(world):
    task = world.task("write notes a and b")
    llm = ScriptedLLM([call("write_note", name="a", text="1"), call("write_note", name="b", text="2"),
                       final("notes a and b written")])
    service, desk = world.service(llm), world.conversation()
    paused = execute(service, task)
    assert paused["message_type"] == "task_paused" and paused["pause_kind"] == WAITING_APPROVAL
    assert paused["tool_call"]["tool"] == "write_note"
    assert paused["tool_call"]["arguments"] == {"name": "a", "text": "1"}
    assert "write_note" in paused["message"] and "name=a" in paused["message"]
    assert m.validate(paused)
    decision = desk.handle_user_input({"user_id": "u1", "content": "yes", "tenant_id": "default"})
    assert decision.action == "parameter_completion" and decision.task_id == task.task_id
    again = resume(service, task)
    assert again["pause_kind"] == WAITING_APPROVAL and again["tool_call"]["arguments"]["name"] == "b"
    assert world.marks(task) == ["note a"]
    desk.handle_user_input({"user_id": "u1", "content": "yes", "tenant_id": "default"})
    done = resume(service, task)
    assert done["ok"] and done["message"] == "notes a and b written"
    assert world.marks(task) == ["note a", "note b"]


def test_always_allow_is_remembered_for_the_person_and_tool(world):
    task = world.task("写两条笔记")
    llm = ScriptedLLM([call("write_note", name="a", text="1"), call("write_note", name="b", text="2"),
                       final("写好了")])
    service, desk = world.service(llm), world.conversation()
    paused = execute(service, task)
    assert "总是允许" in paused["message"]
    decision = desk.handle_user_input({"user_id": "u1", "content": "总是允许", "tenant_id": "default"})
    assert decision.action == "parameter_completion"
    assert world.store.allowed_tools("default", "u1") == {"write_note"}
    done = resume(service, task)  # the second call is not asked
    assert done["ok"] and world.marks(task) == ["note a", "note b"]


def test_always_allow_as_an_api_field(world):
    task = world.task("write a note")
    service, desk = world.service(ScriptedLLM([call("write_note", name="a", text="1")])), world.conversation()
    execute(service, task)
    decision = desk.handle_user_input({"user_id": "u1", "content": "", "tenant_id": "default",
                                       "task_id": task.task_id, "approve": True, "always_allow": True})
    assert decision.action == "parameter_completion"
    assert world.store.allowed_tools("default", "u1") == {"write_note"}


def test_no_cancels_the_agent_task(world):
    task = world.task("write a note")
    service, desk = world.service(ScriptedLLM([call("write_note", name="a", text="1")])), world.conversation()
    execute(service, task)
    decision = desk.handle_user_input({"user_id": "u1", "content": "no", "tenant_id": "default"})
    assert decision.action == "rejected"
    assert world.store.get_task("default", task.task_id).state == CANCELLED and world.marks(task) == []


def test_service_pauses_for_the_models_question_and_the_answer_continues(world):
    task = world.task("rename my photos")
    llm = ScriptedLLM([{"ask": "Which folder are the photos in?"}, call("echo", text="~/Pictures"),
                       final("renamed in ~/Pictures")])
    service, desk = world.service(llm), world.conversation()
    paused = execute(service, task)
    assert paused["pause_kind"] == WAITING_PARAMETERS and paused["message"] == "Which folder are the photos in?"
    assert world.store.get_task("default", task.task_id).state == WAITING_PARAMETERS
    decision = desk.handle_user_input({"user_id": "u1", "content": "~/Pictures", "tenant_id": "default"})
    assert decision.action == "parameter_completion", decision
    done = resume(service, task)
    assert done["ok"] and done["message"] == "renamed in ~/Pictures"
    assert "The person answered: ~/Pictures" in llm.calls[1][0][-2]["content"]


def test_service_passes_a_personas_allowed_capabilities(world):
    task = world.task("add", meta={"allowed_capabilities": ["agent", "echo"]})
    llm = ScriptedLLM([final("ok")])
    execute(world.service(llm), task)
    assert "add_numbers" not in llm.calls[0][0][0]["content"] and "echo" in llm.calls[0][0][0]["content"]


def test_a_model_that_is_down_fails_the_task_as_retryable(world):
    from capabilities.llm.base import LLMUnavailable

    task = world.task("add")
    result = execute(world.service(ScriptedLLM([LLMUnavailable("host down")])), task)
    assert result["ok"] is False and result["retryable"] is True and result["error_type"] == "unavailable"


def test_the_transcript_lives_with_the_task(world):
    task = world.task("add 1 and 2")
    execute(world.service(ScriptedLLM([call("add_numbers", a=1, b=2), final("3")])), task)
    kept = world.transcript(task)
    assert kept["final"] == "3" and kept["entries"][0]["tool"] == "add_numbers"
    assert kept["entries"][0]["status"] == "done" and '"sum": 3' in kept["entries"][0]["result"]


def test_an_answer_before_any_tool_was_called_is_sent_back_once(world):
    task = world.task("make me a 12-week rota for 5 people")
    llm = ScriptedLLM([final("Here is your rota: [insert rota here]"), call("echo", text="rota"), final("done: rota")])
    result = world.loop(task, llm).run(task.content)
    assert result["message"] == "done: rota" and len(result["steps"]) == 1
    assert "no tool has been called yet" in told(llm, 1)
    llm = ScriptedLLM([final("I can't do that with these tools."), final("I can't do that with these tools.")])
    assert world.loop(world.task("fly me to the moon"), llm).run("fly me to the moon")["message"] == \
        "I can't do that with these tools."  # said twice: it stands
