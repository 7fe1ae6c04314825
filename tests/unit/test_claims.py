"""A chat reply never says something was done that the turn did not do: the claims table
(capabilities/cognition/tables/claims.json) finds what a reply claims, in Chinese and English,
and what the store does not back is taken out and said honestly. The model is scripted to claim
acts it never did, as the small model did ("好的，我会立即执行「执行Dify工作流」")."""

from __future__ import annotations

import json

import pytest

from agents.coordination.task_coordinator import TaskCoordinator
from capabilities.cognition.claims import TABLE, ClaimsChecker, ClaimsTableError, acts_of, shipped
from common import messages as m
from common.i18n import say
from common.tasks.models import TaskRecord
from events.event_bus import EventBus

TENANT, USER = "acme", "ana"


def _examples():
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    return [(act, lang, said) for act, row in table["acts"].items() for lang, says in row["examples"].items()
            for said in says]


@pytest.mark.parametrize("act, lang, said", _examples())
def test_every_rows_examples_are_read_as_its_claim(act, lang, said):
    assert act in [c.act for c in shipped().check(said)]


@pytest.mark.parametrize("said", [
    "I can't run that for you.", "I haven't paused anything yet.", "我无法立即执行这个任务。", "这个任务还没有执行。",
    "Hello! How are you today?", "你好！今天想聊点什么？", "The weather report comes out every Monday.",
    "Runners often start at dawn.", "我已经知道你的意思了。",
])
def test_a_denial_or_plain_talk_claims_nothing(said):
    assert shipped().check(said) == []


@pytest.mark.parametrize("reply, said, kept, note_lang", [
    ("好的，我会立即执行「执行Dify工作流」", "运行一下那个报表任务", "", "zh"),
    ("Sure, I'll run the sales report task now. Anything else?", "run the sales report task now",
     "Anything else?", "en"),
    ("没问题！已暂停销售周报。祝你假期愉快！", "下周放假", "没问题！祝你假期愉快！", "zh"),
])
def test_an_unbacked_claim_is_taken_out_and_the_reply_says_nothing_was_done(reply, said, kept, note_lang):
    honest = shipped().honest(reply, set(), said=said)
    assert shipped().check(honest) == []
    assert honest.endswith(say(note_lang, "nothing_done"))
    assert honest.removesuffix(say(note_lang, "nothing_done")).strip() == kept


def test_a_claim_the_turn_backs_stays():
    reply = "Done — I've cancelled it."
    assert shipped().honest(reply, {"cancel"}) == reply
    assert [c.act for c in shipped().unbacked(reply, {"run"})] == ["cancel"]


def test_what_the_store_shows_a_task_did_backs_claims():
    ran = TaskRecord(task_id="t1", tenant_id=TENANT, user_id=USER, content="x", state="completed")
    stopped = TaskRecord(task_id="t2", tenant_id=TENANT, user_id=USER, content="x", state="cancelled")
    looped = TaskRecord(task_id="t3", tenant_id=TENANT, user_id=USER, content="x", state="completed",
                        result={"loop_task_id": "loop_1"})
    waiting = TaskRecord(task_id="t4", tenant_id=TENANT, user_id=USER, content="x", state="waiting_parameters")
    assert acts_of([ran, None]) == {"run"} and acts_of([stopped]) == {"cancel"}
    assert acts_of([looped]) == {"run", "schedule"} and acts_of([waiting]) == set()


def test_a_malformed_table_is_refused_with_its_key(tmp_path):
    with pytest.raises(ClaimsTableError, match="not among"):
        ClaimsChecker({"negations": {"en": [], "zh": []}, "acts": {"teleport": {"en": ["beamed"]}}})
    bad = tmp_path / "claims.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(ClaimsTableError, match="cannot read"):
        ClaimsChecker.load(bad)


# -- a scripted model that claims what it never did, through the AgentActor's coordinator -----------
@pytest.mark.parametrize("content, written, note_lang", [
    ("run the sales report task now", "Sure! I'm running the sales report task now.", "en"),
    ("下周放假，周报那个先别发了", "好的，已暂停销售周报的定时任务。", "zh"),
    ("帮我跑一下", "好的，我会立即执行「执行Dify工作流」", "zh"),
])
def test_a_chat_reply_that_claims_an_act_the_store_does_not_show_is_corrected(store, content, written, note_lang):
    events = EventBus(store)
    coordinator = TaskCoordinator(store, events, tenant_id=TENANT)
    request = m.agent_task(task_id="task_turn", msg_id="msg_turn", tenant_id=TENANT, user_id=USER, content=content)
    assert coordinator.on_agent_task(request)[0][0] == "worker"  # understood by the model
    [(to, reply)] = coordinator.on_analysis(m.analysis_result(task_id="task_turn", intent="chat", message=written))
    assert to == "reply" and reply["message_type"] == "chat_reply"
    assert reply["message"].endswith(say(note_lang, "nothing_done")) and shipped().check(reply["message"]) == []
    assert store.get_task(TENANT, "task_turn") is None  # and indeed nothing was recorded, let alone run


def test_a_chat_reply_without_claims_is_left_as_the_model_wrote_it(store):
    coordinator = TaskCoordinator(store, EventBus(store), tenant_id=TENANT)
    coordinator.on_agent_task(m.agent_task(task_id="task_hi", msg_id="msg_hi", tenant_id=TENANT, user_id=USER,
                                           content="hi there"))
    [(_, reply)] = coordinator.on_analysis(m.analysis_result(task_id="task_hi", intent="chat",
                                                             message="Hi! What can I do for you?"))
    assert reply["message"] == "Hi! What can I do for you?"
