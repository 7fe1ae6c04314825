"""Long-term memory through the actors: a person tells Flora something, it is distilled off
the reply path by the MemoryActor, recalled into a later chat, listed and forgotten on
request — one person's memories only — and a turn left waiting survives a restart."""

from __future__ import annotations

import time

import pytest

import main
from common import messages as m
from common.tasks.sqlite_store import SQLiteTaskStore
from events.event_types import EventType
from tests.actors.conftest import flora_config

WAIT_S = 60


def wait_for_memory(flora, user_id: str, text: str, *, present: bool = True) -> dict:
    """Ask "what do you remember about me?" until ``text`` is (or is no longer) in the answer."""
    deadline = time.monotonic() + WAIT_S
    while True:
        reply = flora.ask("what do you remember about me?", user_id=user_id)
        if (text in reply["message"]) == present or time.monotonic() > deadline:
            return reply
        time.sleep(0.2)


def test_a_fact_told_is_distilled_recalled_into_chat_listed_and_forgotten(flora):
    told = flora.ask("my name is Li Wei, I work on the billing team", user_id="mem_alice")
    assert told["message_type"] in m.REPLY_TYPES - {"task_error"}, told

    wait_for_memory(flora, "mem_alice", "Li Wei")
    listed = wait_for_memory(flora, "mem_alice", "billing team")  # the two facts are written one by one
    assert listed["message_type"] == "chat_reply" and listed["intent"] == "memory"
    assert "The person's name is Li Wei" in listed["message"] and "billing team" in listed["message"]

    asked = flora.ask("what's my name?", user_id="mem_alice")  # a chat reply with the memory in its prompt
    assert asked["message_type"] == "chat_reply" and "The person's name is Li Wei" in asked["message"]

    forgot = flora.ask("forget that I work on the billing team", user_id="mem_alice")
    assert forgot["intent"] == "memory" and "forgot 1" in forgot["message"]
    after = wait_for_memory(flora, "mem_alice", "billing team", present=False)
    assert "billing team" not in after["message"] and "Li Wei" in after["message"]


def test_a_task_run_with_memories_names_them_in_its_result(flora, store):
    told = flora.ask("I am saving up for a new bicycle", user_id="mem_dora")
    assert told["message_type"] == "chat_reply", told
    wait_for_memory(flora, "mem_dora", "bicycle")
    deadline = time.monotonic() + WAIT_S  # the event follows the whole turn (its questions too), not the fact alone
    while not (written := store.events("default", task_id="memory", user_id="mem_dora", event_type="MEMORY_WRITTEN")) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    ids = [w["memory_id"] for e in written for w in e.data["memories"]]
    done = flora.ask("add numbers a=2 b=3 for my bicycle savings", user_id="mem_dora")
    assert done["message_type"] == "task_completed" and done["result"].get("sum") == 5, done
    assert done["result"]["memories_used"] == ids
    meta = store.get_task("default", done["task_id"]).meta
    assert [r["memory_id"] for r in meta["memories"]] == ids and "bicycle" in meta["memories"][0]["fact"]


def test_memories_are_one_persons_own(flora):
    flora.ask("I am allergic to peanuts", user_id="mem_bob")
    wait_for_memory(flora, "mem_bob", "peanuts")
    other = flora.ask("what do you remember about me?", user_id="mem_carol")
    assert "peanuts" not in other["message"] and "don't remember anything" in other["message"]
    chat = flora.ask("what do I like to eat?", user_id="mem_carol")
    assert "peanuts" not in chat["message"]
    cleared = flora.ask("忘掉关于我的一切", user_id="mem_carol")  # nothing of carol's: bob's stays
    assert cleared["intent"] == "memory"
    assert "peanuts" in flora.ask("what do you remember about me?", user_id="mem_bob")["message"]


def test_a_question_about_the_person_that_nothing_told_answers_gets_no_invented_answer(flora):
    # by the words ("what's my name?") and by the examples it lies near ("我的狗叫什么名字？")
    for said, honest in (("what's my name?", "haven't told me"), ("我的狗叫什么名字？", "还没告诉过我"),
                         ("Can you remind me what I'm allergic to?", "haven't told me")):
        reply = flora.ask(said, user_id="mem_new")
        assert reply["message_type"] == "chat_reply" and honest in reply["message"], (said, reply)
    told = flora.ask("My dog is called Bruno and I live in Hangzhou.", user_id="mem_new")  # told, not asked
    assert "haven't told me" not in told["message"], told


def test_questions_about_memory_are_answered_in_chinese_and_events_recorded(flora, store):
    flora.ask("我喜欢喝绿茶", user_id="mem_dan")
    wait_for_memory(flora, "mem_dan", "绿茶")
    listed = flora.ask("你记得我什么？", user_id="mem_dan")
    assert listed["message"].startswith("我记得关于你的这些") and "绿茶" in listed["message"]
    flora.ask("推荐一款饮料", user_id="mem_dan")
    kinds = {e.event_type for e in store.events(flora.config.default_tenant, user_id="mem_dan")}
    assert {EventType.MEMORY_WRITTEN.value, EventType.MEMORY_RECALLED.value} <= kinds
    cleared = flora.ask("忘掉关于我的一切", user_id="mem_dan")
    assert "记忆都已删除" in cleared["message"]
    assert EventType.MEMORY_FORGOTTEN.value in {e.event_type for e in store.events(
        flora.config.default_tenant, user_id="mem_dan")}


@pytest.mark.chroma_here  # embedded Chroma in this process (tests/conftest.py)
def test_a_turn_left_waiting_is_distilled_after_a_restart(tmp_path, dify, sales_db):
    from agents.coordination.memory_desk import turn_work

    config = flora_config(tmp_path, dify.url, sales_db, "simpleSystemBase")
    first = main.start_flora(config)
    first.shutdown()
    store = SQLiteTaskStore(first.config.sqlite_path)  # a turn kept but not distilled when the node stopped
    store.add_work(turn_work(tenant_id=first.config.default_tenant, user_id="mem_erin", msg_id="msg_left",
                             content="I live in Hangzhou", reply="Nice!"))
    store.close()
    again = main.start_flora(config)
    try:
        assert "Hangzhou" in wait_for_memory(again, "mem_erin", "Hangzhou")["message"]
    finally:
        again.shutdown()


@pytest.mark.chroma_here  # embedded Chroma in this process (tests/conftest.py)
def test_asking_right_after_telling_answers_with_what_was_just_said(tmp_path, dify, sales_db):
    config = flora_config(tmp_path, dify.url, sales_db, "simpleSystemBase")
    talking = main.start_flora({**config, "memory": {"distil_after_idle_s": 600}})  # no pause comes by itself
    try:
        talking.ask("I live in Hangzhou", user_id="mem_gina")
        listed = talking.ask("what do you remember about me?", user_id="mem_gina")  # asked once, not waited for
        assert listed["intent"] == "memory" and "Hangzhou" in listed["message"], listed
        talking.ask("my name is Gina", user_id="mem_gina")
        forgot = talking.ask("forget that my name is Gina", user_id="mem_gina")
        assert "forgot 1" in forgot["message"], forgot
        after = talking.ask("what do you remember about me?", user_id="mem_gina")
        assert "Gina" not in after["message"] and "Hangzhou" in after["message"]
    finally:
        talking.shutdown()


@pytest.mark.chroma_here  # embedded Chroma in this process (tests/conftest.py)
def test_with_memory_off_flora_says_so_and_keeps_nothing(tmp_path, dify, sales_db):
    config = flora_config(tmp_path, dify.url, sales_db, "simpleSystemBase")
    off = main.start_flora({**config, "memory": {"enabled": False}})
    try:
        off.ask("my name is Frank", user_id="mem_frank")
        reply = off.ask("what do you remember about me?", user_id="mem_frank")
        assert reply["intent"] == "memory" and "memory.enabled: false" in reply["message"]
        assert off.memory is None
    finally:
        off.shutdown()
    store = SQLiteTaskStore(off.config.sqlite_path)
    try:
        assert store.pending_work("memory") == []
    finally:
        store.close()


def test_a_search_lists_the_nearest_memories_whatever_they_score_where_a_recall_keeps_to_the_floor(flora):
    flora.ask("my name is Li Wei, I work on the billing team", user_id="mem_hana")
    wait_for_memory(flora, "mem_hana", "billing team")

    def ask(op: str, query: str) -> dict:
        return flora.system.ask(flora.interaction, m.memory_request(op=op, tenant_id="default", user_id="mem_hana",
                                                                    query=query), 10)

    searched = ask("search", "why is the sky blue?")  # the HTTP API's GET /v1/memories?q=
    assert searched["message_type"] == "memory_reply" and len(searched["memories"]) == 2, searched
    assert all(r["score"] < 0.70 for r in searched["memories"])
    assert ask("recall", "why is the sky blue?")["memories"] == []  # nothing of this goes into a prompt
    assert "billing team" in ask("recall", "which team am I on?")["memories"][0]["fact"]


@pytest.mark.parametrize("bad", [{"op": "recall"}, {"op": "wake", "tenant_id": "t", "user_id": "u"},
                                 {"op": "nonsense", "tenant_id": "t", "user_id": "u"}])
def test_a_malformed_memory_request_gets_a_clear_error_and_memory_keeps_serving(flora, bad):
    reply = flora.system.ask(flora.interaction, {"message_type": "memory_request", **bad}, 10)
    assert reply["message_type"] == "memory_reply" and "malformed memory_request" in reply["error"]
    assert flora.ask("what do you remember about me?", user_id="mem_gina")["intent"] == "memory"
