"""One reading of a message (capabilities/cognition/reading.py): what ``read`` finds in
representative messages, how it travels in messages, and that a message is read once, at the
front desk, with the later steps taking what they need from the reading it carries."""

from __future__ import annotations

import json

import pytest

from agents.coordination.task_coordinator import TaskCoordinator
from capabilities.cognition import reading as front_reading
from capabilities.cognition.intent_router import IntentRouter
from capabilities.cognition.reading import Reading, Situation, carried, read
from capabilities.cognition.semantic import Reading as SemanticReading
from capabilities.context.conversation_manager import ConversationManager
from capabilities.routing.task_operations import TaskOperation
from capabilities.routing.task_planner import TaskPlanner
from capabilities.routing.task_router import TaskRouter
from common import messages as m
from common.i18n import say
from events.event_bus import EventBus
from init_plugins import build_registry

TENANT, USER = "acme", "li"


class FixedReader:
    """The semantic reader's interface, reading every message as ``reading``; records what it read
    and what the situation ruled out."""

    def __init__(self, reading: SemanticReading | None = SemanticReading("chat", "smalltalk", 0.7, 0.9)):
        self.reading = reading
        self.calls: list[tuple[str, list[str]]] = []

    def read(self, text, impossible=()):
        self.calls.append((text, list(impossible)))
        return self.reading


class Named:
    """An installed capability's name, as TaskRouter.named finds it."""

    def __init__(self, name: str):
        self.name = name


class Capabilities:
    def __init__(self, names: dict[str, str]):
        self._names = names  # words -> capability

    def named(self, text: str):
        return next((Named(c) for words, c in self._names.items() if words in text), None)


# -- what read() finds ------------------------------------------------------------------------------
def test_a_front_desk_rule_decides_and_the_examples_are_not_weighed():
    reader = FixedReader()
    thanks = read("thanks!", Situation(), reader)
    assert (thanks.rule, thanks.examples, thanks.confidence) == ("conversation_only", None, 1.0)
    remembered = read("what do you remember about me?", Situation(), reader)
    assert (remembered.rule, remembered.memory) == ("memory", ("list", ""))
    assert read("continue", Situation(), reader).rule == "continue"
    assert reader.calls == []
    assert [(e.source, e.name) for e in thanks.evidence] == [("rule", "conversation_only")]


def test_an_operation_on_a_task_and_the_ids_it_names_are_read():
    said = read("cancel task_abc12")
    assert said.task_operation == TaskOperation("cancel_task", "task_abc12", "")
    assert said.values.task_ids == ("task_abc12",) and said.values.numbers == ()
    assert ("rule", "task_operations.cancel_task") in [(e.source, e.name) for e in said.evidence]
    assert said.rule is None and said.language == "en"


def test_a_new_reminder_is_spotted_with_its_time_in_its_language():
    said = read("每天早上9点提醒我复习GRPO")
    assert said.language == "zh" and said.loop_words and said.values.times
    assert read("pause loop_3fa9c2ab").values.loop_ids == ("loop_3fa9c2ab",)
    assert read("明天早上9点吧").only_a_time


def test_addresses_answers_and_statements_about_the_person_are_read():
    fetch = read("fetch https://example.com/x please")
    assert fetch.values.urls == ("https://example.com/x",) and fetch.asks_for_something
    assert read("yes").verdict is True and read("no").verdict is False
    assert read("always allow").always and read("always allow").verdict is True
    assert read("I go running every morning").states_about_self
    assert read("what's my name?").asks_about_self


def test_the_examples_read_only_what_the_situation_allows_and_a_follow_up_as_what_it_continues():
    reader = FixedReader()
    history = ({"role": "user", "content": "what's the news in Beijing?"}, {"role": "assistant", "content": "…"})
    said = read("and tomorrow?", Situation(has_tasks=False, history=history), reader)
    assert reader.calls == [("what's the news in Beijing?", ["answer", "task_op"])]
    assert said.read_as == "what's the news in Beijing?" and said.text == "and tomorrow?"
    assert (said.family, said.kind, said.confidence) == ("chat", "smalltalk", 0.7)
    assert ("examples", "chat/smalltalk", 0.7) in [(e.source, e.name, e.score) for e in said.evidence]
    # while a question waits, the message is read as it is, and may be its answer
    read("and tomorrow?", Situation(waiting=True, history=history), reader)
    assert reader.calls[-1] == ("and tomorrow?", [])


def test_a_capability_named_outright_is_asked_for_with_nothing_to_weigh():
    reader = FixedReader()
    said = read("run noop now", Situation(capabilities=Capabilities({"noop": "noop"})), reader)
    assert said.capability == "noop" and said.examples is None and reader.calls == []


# -- how it travels ---------------------------------------------------------------------------------
def test_a_reading_travels_as_json_in_an_agent_task_and_its_examples_part_reads_as_before():
    said = read("cancel task_abc12 please", Situation(), FixedReader(SemanticReading("task_op", "cancel", 0.93, 0.88)))
    data = json.loads(json.dumps(said.to_dict()))
    assert Reading.from_dict(data) == said
    assert SemanticReading.from_dict(data) == SemanticReading("task_op", "cancel", 0.93, 0.88)
    task = m.agent_task(task_id="task_1", msg_id="msg_1", tenant_id=TENANT, user_id=USER, content=said.text,
                        reading=data)
    assert m.validate(task) is task
    with pytest.raises(m.ProtocolError):
        m.validate({**task, "reading": {**data, "language": 3}})


def test_a_message_without_a_reading_is_read_by_the_rules_where_it_is_taken():
    assert carried({"content": "cancel it"}).task_operation == TaskOperation("cancel_task", "last", "")
    examples_only = carried({"content": "cancel it", "reading": {"family": "task_op", "kind": "cancel", "share": 0.8}})
    assert examples_only.examples == SemanticReading("task_op", "cancel", 0.8, 0.0)


# -- read once, consumed later ----------------------------------------------------------------------
@pytest.fixture
def desks(store, store_config, monkeypatch):
    events = EventBus(store)
    registry = build_registry(store_config, store=store, events=events, llm=None)
    reader = FixedReader(SemanticReading("task", "http_request", 0.55, 0.8))
    services = registry.get_capability
    monkeypatch.setattr(registry, "get_capability",
                        lambda name, *default: reader if name == "semantic_reader" else services(name, *default))
    reads: list[str] = []
    unwrapped = front_reading.read

    def counted(text, *args, **kwargs):
        reads.append(text)
        return unwrapped(text, *args, **kwargs)

    monkeypatch.setattr(front_reading, "read", counted)
    desk = ConversationManager(store, events, registry)
    coordinator = TaskCoordinator(store, events, rules=IntentRouter(TaskRouter(registry)),
                                  loops=registry.get_capability("loop_tasks"), tenant_id=TENANT,
                                  planner=TaskPlanner(registry, None), registry=registry)
    return desk, coordinator, reader, reads


def agent_task(content: str, reading: dict | None) -> dict:
    return m.agent_task(task_id="task_new", msg_id="msg_new", tenant_id=TENANT, user_id=USER, content=content,
                        reading=reading)


@pytest.mark.parametrize("said", ["remind me to water the plants every day at 8am",
                                  "fetch https://example.com/report.json", "cancel it"])
def test_a_message_is_read_once_from_the_front_desk_to_the_agent(desks, said):
    desk, coordinator, reader, reads = desks
    decision = desk.handle_user_input({"user_id": USER, "content": said, "tenant_id": TENANT})
    assert decision.action == "new_task" and decision.reading["text"] == said
    coordinator.on_agent_task(agent_task(said, decision.reading))
    assert reads == [said]  # the front desk's reading, and no other
    assert len(reader.calls) <= 1  # the examples weighed it at most once, at the front desk


def test_the_agent_acts_on_the_operation_and_the_language_the_reading_carries(desks):
    desk, coordinator, _, reads = desks
    reading = desk.handle_user_input({"user_id": USER, "content": "cancel it", "tenant_id": TENANT}).reading
    [(to, asked)] = coordinator.on_agent_task(agent_task("cancel it", {**reading, "language": "zh"}))
    # no task to cancel yet: asked which, in the language the reading carries
    assert (to, asked["message_type"], asked["message"]) == ("reply", "clarification", say("zh", "no_task_yet"))
    without = {k: v for k, v in reading.items() if k != "task_operation"}
    [(to, analyze)] = coordinator.on_agent_task(agent_task("cancel it", without))
    assert (to, analyze["message_type"]) == ("worker", "analyze")  # no operation carried: understanding decides
    assert reads == ["cancel it"]


def test_the_loop_reader_reads_a_schedule_only_where_the_reading_spotted_loop_words(desks):
    desk, coordinator, _, _ = desks
    said = "remind me to water the plants every day at 8am"
    reading = desk.handle_user_input({"user_id": USER, "content": said, "tenant_id": TENANT}).reading
    assert reading["loop_words"]
    started = coordinator.on_agent_task(agent_task(said, reading))
    assert any(out.get("capability") == "remind" for _, out in started)
    coordinator = TaskCoordinator(coordinator._store, coordinator._events, tenant_id=TENANT, loops=coordinator._loops)
    unspotted = coordinator.on_agent_task(agent_task(said, {k: v for k, v in reading.items() if k != "loop_words"}))
    assert not any(out.get("capability") == "remind" for _, out in unspotted)
