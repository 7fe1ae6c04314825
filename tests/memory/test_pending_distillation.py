"""A turn whose distillation found the model busy or down is not lost: it waits, uncounted,
and a Flora started again (a new desk over the same task store) distils it — with the real
memory service on a real embedded Chroma and a scripted model."""

from __future__ import annotations

from agents.coordination.memory_desk import WORK_KIND, MemoryDesk, turn_work
from capabilities.llm.base import LLMUnavailable
from capabilities.llm.fake import FunctionLLM, ScriptedLLM
from capabilities.memory.distill import FactDistiller
from capabilities.memory.service import MemoryCapability
from common import messages as m
from common.tasks.sqlite_store import SQLiteTaskStore


def facts(*items):
    return {"facts": [{"fact": f, "subject": s, "kind": k, "confidence": 1.0} for f, s, k in items]}


def busy(messages, json_schema=None, **_):
    raise LLMUnavailable("http://127.0.0.1:1/v1/chat/completions failed 1 times; last: ReadTimeout")


def test_a_turn_that_timed_out_waits_and_is_distilled_after_a_restart(store, tmp_path):
    db = tmp_path / "flora.db"
    first = SQLiteTaskStore(db)
    first.add_work(turn_work(tenant_id="acme", user_id="erin", msg_id="msg_left", content="I live in Hangzhou",
                             reply="Nice!"))
    desk = MemoryDesk(MemoryCapability(store, FactDistiller(FunctionLLM(busy))), first)
    for _ in range(5):  # more than MAX_ATTEMPTS: a busy model is no failure of the turn
        assert desk.distil_pending() == 0
    (waiting,) = first.pending_work(WORK_KIND)
    assert waiting.key == "msg_left" and waiting.attempts == 0
    assert not store.seen_sources("acme", "erin", ["msg_left"])  # not marked distilled: it was not
    first.close()  # Flora stops with the turn still waiting

    again = SQLiteTaskStore(db)  # ... and starts again
    llm = ScriptedLLM([facts(("Lives in Hangzhou", "home city", "personal"))])
    restarted = MemoryDesk(MemoryCapability(store, FactDistiller(llm)), again)
    assert restarted.distil_pending() == 1
    assert again.pending_work(WORK_KIND) == []
    reply = restarted.on_request(m.memory_request(op="recall", tenant_id="acme", user_id="erin",
                                                  query="where do I live?"))
    assert [r["fact"] for r in reply["memories"]] == ["Lives in Hangzhou"]
    again.close()


def test_asking_about_oneself_distils_ones_waiting_turns_before_recalling(store, tmp_path):
    tasks = SQLiteTaskStore(tmp_path / "flora.db")
    tasks.add_work(turn_work(tenant_id="acme", user_id="fay", msg_id="msg_1", content="my name is Fay",
                             reply="Hello Fay!"))
    llm = ScriptedLLM([facts(("The person's name is Fay", "name", "name"))])
    desk = MemoryDesk(MemoryCapability(store, FactDistiller(llm)), tasks)
    reply = desk.on_request(m.memory_request(op="recall", tenant_id="acme", user_id="fay", query="what's my name?"))
    assert [r["fact"] for r in reply["memories"]] == ["The person's name is Fay"]
    other = desk.on_request(m.memory_request(op="recall", tenant_id="acme", user_id="fay", query="recommend a tea"))
    assert other["op"] == "recall" and len(llm.calls) == 1  # a question not about them distils nothing
    tasks.close()
