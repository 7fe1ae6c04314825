"""What a user sees through ``system.ask``: the seed's scenarios, pause/resume, chat,
clarification, and the reply contract."""

from __future__ import annotations

from common import messages as m
from tests.support.asking import ask_flora

TIMEOUT = 30


def ask(flora, user: str, content: str, **fields) -> dict:
    reply = ask_flora(flora, user, content, timeout=TIMEOUT, **fields)
    assert reply["message_type"] in m.REPLY_TYPES
    return reply


def test_dify_workflow_without_key_asks_for_it_then_resumes_with_the_answer(flora, user, dify):
    paused = ask(flora, user, "执行Dify工作流")
    assert paused["message_type"] == "task_paused"
    assert paused["pause_kind"] == "waiting_parameters"
    asked = {p["name"]: p for p in paused["missing_parameters"]}
    assert list(asked) == ["api_key"]
    assert "API key" in asked["api_key"]["description"] and "api_key" in paused["message"]

    done = ask(flora, user, "sk-xxxxx")
    assert done["message_type"] == "task_completed"
    assert done["task_id"] == paused["task_id"]
    assert done["result"]["status"] == "succeeded"
    assert done["result"]["outputs"]["user"] == user
    sent = [r for r in dify.requests if r.headers.get("authorization") == "Bearer sk-xxxxx"]
    assert sent, "the resumed task did not call the Dify workflow API with the given key"


def test_english_request_pauses_the_same_way_and_a_refused_key_is_asked_again(flora, user):
    paused = ask(flora, user, "please run the dify workflow")
    assert paused["message_type"] == "task_paused"
    again = ask(flora, user, "sk-bad")
    assert again["message_type"] == "task_paused"
    assert again["task_id"] == paused["task_id"]
    assert again["missing_parameters"][0]["name"] == "api_key"
    assert "invalid" in again["missing_parameters"][0]["reason"].lower()
    done = ask(flora, user, "api_key=sk-good")
    assert done["message_type"] == "task_completed"


def test_a_key_that_cannot_be_a_header_is_refused_with_a_reason_and_asked_again(flora, user, dify):
    paused = ask(flora, user, "please run the dify workflow")
    assert paused["message_type"] == "task_paused"
    calls = len(dify.requests)
    again = ask(flora, user, "api_key=北京明天天气怎么样")
    assert again["message_type"] == "task_paused", again
    assert again["task_id"] == paused["task_id"]
    refused = again["missing_parameters"][0]
    assert refused["name"] == "api_key" and "API key" in refused["reason"]
    assert "not accepted" in again["message"]
    assert len(dify.requests) == calls  # refused before any call
    done = ask(flora, user, "api_key=sk-good")
    assert done["message_type"] == "task_completed"


def test_plugin_capability_asks_for_each_missing_parameter_and_checks_types(flora, user):
    paused = ask(flora, user, "add numbers a=2")
    assert paused["message_type"] == "task_paused"
    assert [p["name"] for p in paused["missing_parameters"]] == ["b"]
    wrong = ask(flora, user, "three")
    assert wrong["message_type"] == "task_paused"
    assert wrong["missing_parameters"][0]["reason"] == "must be a whole number"
    done = ask(flora, user, "3")
    assert done["message_type"] == "task_completed"
    assert done["result"] == {"sum": 5}


def test_model_routed_request_keeps_no_invented_parameters(flora, user):
    # the test model "invents" an api_key; only values written by the user may be used
    paused = ask(flora, user, "what were the sales last month?")
    assert paused["message_type"] == "task_paused"
    assert paused["capability"] == "data_query"
    assert "sql" in [p["name"] for p in paused["missing_parameters"]]
    done = ask(flora, user, "SELECT amount FROM sales WHERE month = '2026-10'")
    assert done["message_type"] == "task_completed"
    assert done["result"]["rows"] == [[120]]


def test_two_paused_tasks_and_an_ambiguous_answer_get_a_clarification(flora, user):
    first = ask(flora, user, "执行Dify工作流")
    second = ask(flora, user, "run the dify workflow again")
    assert first["task_id"] != second["task_id"]
    clarification = ask(flora, user, "sk-shared")
    assert clarification["message_type"] == "clarification"
    listed = {o.get("task_id") for o in clarification["options"]}
    assert listed == {first["task_id"], second["task_id"]}
    pick = next(o for o in clarification["options"] if o["task_id"] == first["task_id"])
    done = ask(flora, user, pick["id"])
    assert done["message_type"] == "task_completed"
    assert done["task_id"] == first["task_id"]


def test_continue_resumes_the_latest_unfinished_draft(flora, user):
    paused = ask(flora, user, "add numbers")
    again = ask(flora, user, "继续")
    assert again["message_type"] == "task_paused"
    assert again["task_id"] == paused["task_id"]
    assert {p["name"] for p in again["missing_parameters"]} == {"a", "b"}
    done = ask(flora, user, "a=1, b=4")
    assert done["result"] == {"sum": 5}
    nothing = ask(flora, user, "continue")
    assert nothing["message_type"] == "chat_reply"


def test_greetings_get_a_chat_reply_and_create_no_task(flora, user, store):
    for text in ("hi", "你好", "tell me a joke"):
        reply = ask(flora, user, text)
        assert reply["message_type"] == "chat_reply", text
        assert "task_id" not in reply
    assert store.list_tasks(flora.config.default_tenant, user_id=user) == []


def test_request_without_a_clear_capability_gets_options_and_the_pick_runs(flora, user):
    reply = ask(flora, user, "please do the thing with the numbers")
    assert reply["message_type"] == "clarification"
    # with no evidence for any capability the first few are offered; which ones depends on
    # how many are installed, so the test picks the first one offered
    option = next(o for o in reply["options"] if o.get("capability"))
    paused = ask(flora, user, option["id"])
    assert paused["message_type"] == "task_paused"  # every built-in offered first needs a parameter
    assert paused["capability"] == option["capability"]


def test_approval_pauses_then_yes_runs_and_no_cancels(flora, user):
    paused = ask(flora, user, "delete file path=notes.txt")
    assert paused["message_type"] == "task_paused"
    assert paused["pause_kind"] == "waiting_approval"
    done = ask(flora, user, "yes")
    assert done["message_type"] == "task_completed"
    assert done["result"] == {"deleted": "notes.txt", "by": user}
    ask(flora, user, "delete file path=other.txt")
    cancelled = ask(flora, user, "no")
    assert cancelled["message_type"] == "task_error"
    assert cancelled["error_type"] == "cancelled"


def test_failing_capability_reports_a_task_error_with_retryable(flora, user):
    reply = ask(flora, user, "please fail")
    assert reply["message_type"] == "task_error"
    assert reply["error_type"] == "capability_failed"
    assert reply["retryable"] is True
    assert "the backend said no" in reply["message"]


def test_a_capabilitys_own_kind_of_failure_is_reported_as_capability_failed_with_its_reason(flora, user):
    reply = ask(flora, user, "run the misconfigured tool")
    assert (reply["message_type"], reply["error_type"]) == ("task_error", "capability_failed")
    assert "No databases are configured" in reply["message"]
    assert ask(flora, user, "hello")["message_type"] == "chat_reply"


def test_structured_answer_by_task_id_and_parameters(flora, user):
    paused = ask(flora, user, "add numbers")
    done = ask(flora, user, "", task_id=paused["task_id"], parameters={"a": 10, "b": 5})
    assert done["message_type"] == "task_completed"
    assert done["result"] == {"sum": 15}


def test_events_record_the_task_life_cycle(flora, user, store):
    from events.event_bus import EventBus

    paused = ask(flora, user, "add numbers a=1")
    ask(flora, user, "b=2")
    history = EventBus(store).history(flora.config.default_tenant, task_id=paused["task_id"])
    assert [e.event_type for e in history] == ["TASK_CREATED", "TASK_PAUSED", "TASK_RESUMED", "TASK_COMPLETED"]
    assert {e.source for e in history} == {"AgentActor", "ExecutionActor"}


def test_seed_example_sales_query_asks_for_what_the_query_needs(flora, user):
    reply = ask(flora, user, "帮我查询一下上个月的销售数据")
    assert reply["message_type"] == "task_paused"
    assert reply["capability"] == "data_query"
    assert [p["name"] for p in reply["missing_parameters"]] == ["sql"]
