"""MemoryDesk and the front desk's side of memory, with a scripted memory service: failures
are retried a bounded number of times and reported once, a refused distillation is not
retried, recall that does not come in time lets the work go on, questions about memory are
answered in the person's language."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from agents.coordination.interaction_coordinator import RECALL_WAIT_S, InteractionCoordinator, memory_answer
from agents.coordination.memory_desk import MAX_ATTEMPTS, WORK_KIND, ConversationPause, MemoryDesk, turn_work
from capabilities.memory.service import DistillationFailed
from capabilities.memory.store import MemoryRecord, MemoryUnavailable, Recalled
from common import messages as m
from common.tasks.sqlite_store import SQLiteTaskStore


class ScriptedMemory:
    def __init__(self, fail_with: BaseException | None = None):
        self.fail_with = fail_with
        self.turns = []
        self.floors = []  # each recall's: True for a prompt, False for a person's search

    def remember_turn(self, tenant_id, user_id, turn, *, questions=True):
        self.turns.append((tenant_id, user_id, turn))
        if self.fail_with is not None:
            raise self.fail_with
        return [MemoryRecord("mem_1", tenant_id, user_id, f"fact from {turn.message}")]

    def recall(self, tenant_id, user_id, query, k=5, *, floor=True):
        self.floors.append(floor)
        if self.fail_with is not None:
            raise self.fail_with
        return [Recalled(MemoryRecord("mem_1", tenant_id, user_id, "Likes green tea"), 0.83)]


@pytest.fixture
def store(tmp_path):
    opened = SQLiteTaskStore(tmp_path / "flora.db")
    yield opened
    opened.close()


def left(store, key="msg_1"):
    store.add_work(turn_work(tenant_id="acme", user_id="alice", msg_id=key, content="I like green tea", reply="ok"))


def test_a_distilled_turn_is_finished_and_its_facts_announced(store):
    memory, events = ScriptedMemory(), []

    class Events:
        def publish_task_event(self, **event):
            events.append(event)

    left(store)
    assert MemoryDesk(memory, store, Events()).distil_pending() == 1
    assert store.pending_work(WORK_KIND) == []
    assert memory.turns[0][2].message_id == "msg_1"
    assert events[0]["event_type"].value == "MEMORY_WRITTEN" and events[0]["user_id"] == "alice"


def test_an_unreachable_store_leaves_the_turn_waiting_reports_once_and_gives_up_after_max_attempts(store, caplog):
    desk = MemoryDesk(ScriptedMemory(MemoryUnavailable("chroma down")), store)
    left(store)
    with caplog.at_level(logging.WARNING, logger="flora.memory"):
        for attempt in range(1, MAX_ATTEMPTS):
            assert desk.distil_pending() == 0
            assert store.pending_work(WORK_KIND)[0].attempts == attempt
        assert desk.distil_pending() == 0
    assert store.pending_work(WORK_KIND) == []  # dropped, not looped
    reports = [r for r in caplog.records if "failed (attempt" in r.getMessage()]
    assert len(reports) == 1


def test_a_refused_distillation_is_finished_at_once(store):
    desk = MemoryDesk(ScriptedMemory(DistillationFailed("msg_1", "not JSON")), store)
    left(store)
    assert desk.distil_pending() == 1
    assert store.pending_work(WORK_KIND) == []


def test_requests_when_memory_is_off_or_down_say_so(store):
    off = MemoryDesk(None, store).on_request(m.memory_request(op="list", tenant_id="acme", user_id="alice"))
    assert "memory.enabled" in off["error"]
    down = MemoryDesk(ScriptedMemory(MemoryUnavailable("chroma down")), store).on_request(
        m.memory_request(op="recall", tenant_id="acme", user_id="alice", query="tea"))
    assert "unavailable" in down["error"]
    assert "不可用" in memory_answer(down, "zh") and "memory.enabled" in memory_answer(off, "en")


def test_a_search_asks_without_the_floor_and_a_recall_with_it(store):
    memory = ScriptedMemory()
    desk = MemoryDesk(memory, store)
    for op in ("recall", "search"):
        reply = desk.on_request(m.memory_request(op=op, tenant_id="acme", user_id="alice", query="tea"))
        assert reply["op"] == op and reply["memories"][0]["fact"] == "Likes green tea"
    assert memory.floors == [True, False]


class KeepingMemory(ScriptedMemory):
    """Keeps what it distils, so listing, forgetting and clearing can be seen."""

    def __init__(self, hold: threading.Event | None = None):
        super().__init__()
        self.kept: list[MemoryRecord] = []
        self.questioned: list[str] = []  # memories whose questions were written
        self.hold = hold  # a distillation waits for it, as a slow model call would

    def remember_turn(self, tenant_id, user_id, turn, *, questions=True):
        self.turns.append((tenant_id, user_id, turn))
        if self.hold is not None:
            self.hold.wait(5)
        record = MemoryRecord(f"mem_{len(self.turns)}", tenant_id, user_id, turn.message)
        self.kept.append(record)
        if questions:
            self.questioned.append(record.memory_id)
        return [record]

    def write_questions(self, tenant_id, user_id, memory_id):
        if not any(r.memory_id == memory_id for r in self.list(tenant_id, user_id)):
            return 0  # forgotten meanwhile
        self.questioned.append(memory_id)
        return 4

    def list(self, tenant_id, user_id):
        return [r for r in self.kept if (r.tenant_id, r.user_id) == (tenant_id, user_id)]

    def forget_matching(self, tenant_id, user_id, text):
        gone = [r for r in self.list(tenant_id, user_id) if text in r.fact]
        self.kept = [r for r in self.kept if r not in gone]
        return gone

    def clear(self, tenant_id, user_id):
        mine = self.list(tenant_id, user_id)
        self.kept = [r for r in self.kept if r not in mine]
        return len(mine)


def in_the_model(memory: KeepingMemory) -> None:
    """Wait until a distillation has begun (and holds, as a slow model call would)."""
    deadline = time.monotonic() + 5
    while not memory.turns and time.monotonic() < deadline:
        time.sleep(0.005)


def told(store, user, key, content):
    store.add_work(turn_work(tenant_id="acme", user_id=user, msg_id=key, content=content, reply="ok"))


def test_asking_what_is_remembered_takes_in_what_the_person_just_said_and_only_theirs(store):
    memory = KeepingMemory()
    desk = MemoryDesk(memory, store)
    told(store, "alice", "msg_1", "I live in Shanghai")
    told(store, "bob", "msg_2", "I live in Lyon")
    reply = desk.on_request(m.memory_request(op="list", tenant_id="acme", user_id="alice"))
    assert [r["fact"] for r in reply["memories"]] == ["I live in Shanghai"]
    waiting = [(w.payload["user_id"], "questions_for" in w.payload) for w in store.pending_work(WORK_KIND)]
    assert waiting == [("bob", False), ("alice", True)]  # his turn waits for the pause, and her fact's questions


def test_the_facts_are_listed_at_once_and_their_questions_written_after_the_pause(store):
    memory = KeepingMemory()
    desk = MemoryDesk(memory, store)
    told(store, "alice", "msg_1", "I live in Shanghai")
    desk.on_request(m.memory_request(op="list", tenant_id="acme", user_id="alice"))
    assert memory.questioned == []  # not while the person waits
    assert [w.key for w in store.pending_work(WORK_KIND)] == ["questions:mem_1"]
    assert desk.distil_pending() == 1
    assert memory.questioned == ["mem_1"] and store.pending_work(WORK_KIND) == []


def test_forgetting_right_after_telling_leaves_nothing_to_come_back(store):
    memory = KeepingMemory()
    desk = MemoryDesk(memory, store)
    told(store, "alice", "msg_1", "I live in Shanghai")
    reply = desk.on_request(m.memory_request(op="forget", tenant_id="acme", user_id="alice", query="Shanghai"))
    assert reply["removed"] == 1
    desk.distil_pending()  # the forgotten memory's questions are not written
    assert memory.list("acme", "alice") == [] and memory.questioned == []


def test_clearing_drops_the_persons_waiting_turns_unread(store):
    memory = KeepingMemory()
    desk = MemoryDesk(memory, store)
    told(store, "alice", "msg_1", "I live in Shanghai")
    told(store, "bob", "msg_2", "I live in Lyon")
    desk.on_request(m.memory_request(op="clear", tenant_id="acme", user_id="alice"))
    assert desk.distil_pending() == 1
    assert [t[1] for t in memory.turns] == ["bob"] and memory.list("acme", "alice") == []


def test_a_person_asking_while_the_worker_distils_gets_every_turn_distilled_once(store):
    hold = threading.Event()
    memory = KeepingMemory(hold)
    desk = MemoryDesk(memory, store)
    told(store, "alice", "msg_1", "I live in Shanghai")
    told(store, "alice", "msg_2", "I am a nurse")
    worker = threading.Thread(target=desk.distil_pending, kwargs={"limit": 1})
    worker.start()
    in_the_model(memory)  # the worker is inside its model call
    replies = []
    asking = threading.Thread(target=lambda: replies.append(
        desk.on_request(m.memory_request(op="list", tenant_id="acme", user_id="alice"))))
    asking.start()
    hold.set()
    worker.join(5)
    asking.join(5)
    assert sorted(t[2].message_id for t in memory.turns) == ["msg_1", "msg_2"]
    assert sorted(r["fact"] for r in replies[0]["memories"]) == ["I am a nurse", "I live in Shanghai"]


class NewWorkDesk:
    """A front desk that makes every message new work."""

    def handle_user_input(self, msg, history=None, standing=None):
        from capabilities.context.conversation_manager import Decision
        return Decision("new_task", needs_backend=True, content=msg["content"])


def test_recall_carries_scores_and_new_work_waits_for_it_but_not_longer_than_the_wait(store):
    reply = MemoryDesk(ScriptedMemory(), store).on_request(
        m.memory_request(op="recall", tenant_id="acme", user_id="alice", query="what do I drink?", request_id="r1"))
    assert reply["memories"][0]["fact"] == "Likes green tea" and reply["memories"][0]["score"] == 0.83

    desk = InteractionCoordinator(NewWorkDesk(), memory_store=store)
    outs = desk.on_user_input(m.user_input(user_id="alice", content="recommend a drink", msg_id="msg_a"))
    assert [(to, out["op"]) for to, out in outs] == [("memory", "recall")]
    (to, task), = desk.on_memory_reply({**reply, "request_id": "msg_a"})
    assert to == "agent" and task["memories"] == [{"memory_id": "mem_1", "fact": "Likes green tea"}]

    desk.on_user_input(m.user_input(user_id="alice", content="and a snack?", msg_id="msg_b"))
    import time
    (to, task), = desk.expire_overdue(time.monotonic() + RECALL_WAIT_S + 0.1)
    assert to == "agent" and task["msg_id"] == "msg_b" and "memories" not in task
    assert desk.on_memory_reply({**reply, "request_id": "msg_b"}) == []  # too late: it went on without


def test_work_whose_reply_is_overdue_before_its_memories_came_still_goes_on(store):
    """A reply timeout shorter than the wait for memories: the person is told, and the task,
    which the timeout reply says goes on, is handed to the agent instead of dropped."""
    desk = InteractionCoordinator(NewWorkDesk(), memory_store=store, reply_timeout_s=0.5)
    outs = desk.on_user_input(m.user_input(user_id="alice", content="recommend a drink", msg_id="msg_a"))
    assert [(to, out["op"]) for to, out in outs] == [("memory", "recall")]
    outs = desk.expire_overdue(time.monotonic() + 1.0)  # past the reply timeout, not past RECALL_WAIT_S
    assert sorted(to for to, _ in outs) == ["agent", "reply"]
    task = next(out for to, out in outs if to == "agent")
    told = next(out for to, out in outs if to == "reply")
    assert task["msg_id"] == "msg_a" and "memories" not in task
    assert told["error_type"] == "timeout" and told["task_id"] == task["task_id"]
    assert desk.expire_overdue(time.monotonic() + 10) == []  # handed on once


# -- waiting for a pause in the conversation -------------------------------------------------

def test_the_pause_is_counted_from_the_last_sign_of_conversation():
    pause = ConversationPause(0.3, threading.Event())
    done: dict = {}
    waiter = threading.Thread(target=lambda: done.update(ok=pause.wait(), at=time.monotonic()))
    waiter.start()
    spoken: list[float] = []
    started = time.monotonic()
    while time.monotonic() - started < 1.0:  # keep talking for a second
        pause.spoken()
        spoken.append(time.monotonic())
        time.sleep(0.05)
    waiter.join(timeout=30)
    assert done["ok"] is True
    before = [t for t in spoken if t <= done["at"]]
    assert done["at"] - before[-1] >= 0.3 - 0.01  # a full pause after the last word before it
    if max(b - a for a, b in zip(spoken, spoken[1:])) < 0.3:  # (a busy machine may have paused the talk)
        assert done["at"] > spoken[-1], "the pause came while the conversation went on"


def test_a_stop_ends_the_wait_for_a_pause_at_once():
    stop = threading.Event()
    pause = ConversationPause(3600, stop)
    result: list = []
    waiter = threading.Thread(target=lambda: result.append(pause.wait()))
    waiter.start()
    stop.set()
    pause.spoken()
    waiter.join(timeout=30)
    assert result == [False]
    assert ConversationPause(0, threading.Event()).wait() is True  # no pause asked for: at once


def test_the_worker_gives_way_to_a_person_waiting_on_their_own_turns(store):
    hold = threading.Event()
    memory = KeepingMemory(hold)
    desk = MemoryDesk(memory, store)
    told(store, "alice", "msg_1", "I live in Shanghai")
    told(store, "bob", "msg_2", "I live in Lyon")
    asking = threading.Thread(target=lambda: desk.on_request(
        m.memory_request(op="list", tenant_id="acme", user_id="alice")))
    asking.start()
    in_the_model(memory)  # alice's turn is in the model
    started = time.monotonic()
    assert desk.distil_pending() == 0 and time.monotonic() - started < 1  # not waiting behind her
    hold.set()
    asking.join(5)
    assert [t[1] for t in memory.turns] == ["alice"]
