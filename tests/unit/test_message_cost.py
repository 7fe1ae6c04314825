"""A message the rules are certain about costs no model: from the front desk to its reply it is
not read against the labelled examples (an embedding), recalls no memories and asks no model;
a message they are not certain about still gets its reading and its recall."""

from __future__ import annotations

import pytest

from agents.coordination.interaction_coordinator import InteractionCoordinator
from agents.coordination.task_coordinator import TaskCoordinator
from capabilities.cognition.intent_router import IntentRouter
from capabilities.context.conversation_log import ConversationLog
from capabilities.context.conversation_manager import ConversationManager
from capabilities.llm.fake import ScriptedLLM
from capabilities.routing.task_router import TaskRouter
from capability_actors.task_execution_service import TaskExecutionService
from common import messages as m
from config import FloraConfig
from events.event_bus import EventBus
from init_plugins import build_registry

TENANT, USER = "acme", "li"


class CountingReader:
    """The semantic reader's interface; every reading would cost an embedding of the message."""

    def __init__(self):
        self.read_texts: list[str] = []

    def read(self, text, impossible=()):
        self.read_texts.append(text)
        return None


@pytest.fixture
def desks(store, monkeypatch):
    registry = build_registry(FloraConfig(capabilities={"plugin_modules": ["bench.noop_plugin"],
                                                        "entry_points": False}), llm=None)
    reader = CountingReader()
    services = registry.get_capability
    monkeypatch.setattr(registry, "get_capability",
                        lambda name, *default: reader if name == "semantic_reader" else services(name, *default))
    events = EventBus(store)
    llm = ScriptedLLM([])  # any model call raises, and is recorded
    front = InteractionCoordinator(ConversationManager(store, events, registry), log=ConversationLog(store),
                                   memory_store=store, store=store, events=events, default_tenant=TENANT)
    agent = TaskCoordinator(store, events, rules=IntentRouter(TaskRouter(registry)), tenant_id=TENANT)
    worker = TaskExecutionService(store=store, events=events, registry=registry, llm=llm, understanding_llm=llm)
    return front, agent, worker, reader, llm


def test_a_capability_named_outright_runs_without_reading_recall_or_model(desks, store):
    front, agent, worker, reader, llm = desks
    (to, task), = front.on_user_input(m.user_input(user_id=USER, tenant_id=TENANT, content="noop", msg_id="msg_1"))
    assert to == "agent"  # straight on: no recall from the MemoryActor first
    assert "memories" not in task and "family" not in task["reading"]  # the examples were not weighed
    assert task["reading"]["capability"] == "noop"
    (to, execute), = agent.on_agent_task(task)
    assert (to, execute["message_type"], execute["capability"]) == ("worker", "execute", "noop")  # no analyze
    (to, done), = agent.on_subtask_result(worker.execute(execute))
    assert (to, done["message_type"], done["result"]) == ("reply", "task_completed", {"ok": True})
    assert front.on_backend_reply(done) == [("reply", done)]  # nothing to distil either
    assert reader.read_texts == [] and llm.calls == []
    assert store.get_task(TENANT, task["task_id"]).state == "completed"


def test_a_message_the_rules_are_not_certain_of_is_read_and_recalls_first(desks):
    front, _, _, reader, llm = desks
    (to, recall), = front.on_user_input(m.user_input(user_id=USER, tenant_id=TENANT, msg_id="msg_2",
                                                     content="what should I cook tonight?"))
    assert (to, recall["op"], recall["query"]) == ("memory", "recall", "what should I cook tonight?")
    assert reader.read_texts == ["what should I cook tonight?"]
    assert llm.calls == []  # the model is the worker's, after the recall


def test_a_capability_that_reads_memories_recalls_them_even_when_named(desks):
    front, *_ = desks
    assert front._conversation._registry.get_executable("agent").reads_memories
    (to, recall), = front.on_user_input(m.user_input(user_id=USER, tenant_id=TENANT, msg_id="msg_3",
                                                     content="agent: how much disk space is left here?"))
    assert (to, recall["op"]) == ("memory", "recall")  # the agent loop's prompt shows them
