"""A message the rules are certain about costs no model: from the front desk to its reply it is
not read against the labelled examples (an embedding), recalls no memories and asks no model;
a message they are not certain about still gets its reading and its recall. Nor does it cost
more store work than its records need: one read of what it finds, the task created, started
and completed (each with its event), the turn kept, and the task's whiteboard read."""

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
# SQLite statements of one round trip of a capability named outright: 4 write transactions of BEGIN,
# the task's row, its event (the turn: the session's row, its messages), COMMIT; the read of what the
# message finds; the task's whiteboard (24 before the worker and the agent stopped reading the task
# they were handed, and the front desk its draft and paused tasks when the person has none; 29 on a
# conversation's first turn)
ROUND_TRIP_STATEMENTS = 18


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


def round_trip(desks, msg_id: str) -> dict:
    front, agent, worker, *_ = desks
    (_, task), = front.on_user_input(m.user_input(user_id=USER, tenant_id=TENANT, content="noop", msg_id=msg_id))
    (_, execute), = agent.on_agent_task(task)
    (_, done), = agent.on_subtask_result(worker.execute(execute))
    (_, reply), = front.on_backend_reply(done)
    return reply


@pytest.mark.parametrize("turn", ["first", "later"])
def test_a_round_trip_that_needs_no_model_is_few_statements_in_four_write_transactions(desks, store, db_path,
                                                                                       turn):
    if turn == "later":
        round_trip(desks, "msg_0")
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    reply = round_trip(desks, "msg_1")
    store._db.set_trace_callback(None)
    assert reply["message_type"] == "task_completed"
    verbs = [s.split()[0].upper() for s in statements]
    assert len(statements) <= ROUND_TRIP_STATEMENTS, "\n".join(statements)
    assert verbs.count("BEGIN") == verbs.count("COMMIT") == 4, verbs  # created, started, completed; the turn
    assert verbs.count("SELECT") == 2, verbs  # what the message finds; the whiteboard
    kept = store.get_session(TENANT, ConversationLog.conversation_id(TENANT, USER)).messages
    assert [m["content"] for m in kept[-2:]] == ["noop", reply["message"]]


def test_a_worker_given_a_task_written_since_it_was_sent_runs_the_stored_one(desks, store):
    front, agent, worker, *_ = desks
    (_, task), = front.on_user_input(m.user_input(user_id=USER, tenant_id=TENANT, content="noop", msg_id="msg_1"))
    (_, execute), = agent.on_agent_task(task)
    assert execute["task"]["state"] == "created"  # the record as written travels with the message
    store.update_task(TENANT, task["task_id"], meta={**execute["task"]["meta"], "comments": [{"text": "soon"}]})
    result = worker.execute(execute)
    assert result["ok"] and result["result"] == {"ok": True}
    started = store.get_task(TENANT, task["task_id"])
    assert started.state == "running" and started.meta["comments"] == [{"text": "soon"}]  # the comment stands
    assert [e.event_type for e in store.events(TENANT, task_id=task["task_id"])] == ["TASK_CREATED", "TASK_STARTED"]
