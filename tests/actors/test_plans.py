"""Requests of several steps through ``system.ask``, on both actor bases: the plan, its steps
run in parallel with results passed on, retries, failure policies, a paused step, cancel,
and operations on finished tasks (comment, revise, re-run, cancel) in English and Chinese."""

from __future__ import annotations

import time

import pytest

import main
from common import messages as m
from tests.actors.conftest import BASES, flora_config
from tests.support.asking import ask_flora

TIMEOUT = 60


def plan_config(data_dir, dify_url, sales_db, base, **planning) -> dict:
    config = flora_config(data_dir, dify_url, sales_db, base)
    config["capabilities"]["plugin_modules"].append("tests.support.plan_plugins")
    config["planning"] = {"parallelism": "fixed", "concurrency": 4, "max_retries": 2, "retry_backoff_s": 0.05,
                          **planning}
    return config


@pytest.fixture(scope="module", params=BASES)
def flora(request, tmp_path_factory, dify, sales_db):
    data_dir = tmp_path_factory.mktemp(f"plans-{request.param}")
    running = main.start_flora(plan_config(data_dir, dify.url, sales_db, request.param))
    yield running
    running.shutdown()


def ask(flora, user: str, content: str, **fields) -> dict:
    return ask_flora(flora, user, content, timeout=TIMEOUT, **fields)


def events_of(store, task_id: str) -> list[str]:
    return [e.event_type for e in store.events("default", task_id=task_id)]


@pytest.mark.parametrize("request_text", [
    "slow fetch label=sales, slow fetch label=returns, then measure step 1",
    "慢速获取 label=sales，慢速获取 label=returns，然后 measure 第1步",
], ids=["en", "zh"])
def test_a_three_step_plan_passes_a_result_on_and_answers_with_the_aggregate(flora, user, store, request_text):
    done = ask(flora, user, request_text)
    assert done["message_type"] == "task_completed", done
    assert done["capability"] == "plan"
    plan = done["result"]["plan"]
    assert [s["capability"] for s in plan["steps"]] == ["slow_fetch", "slow_fetch", "measure_input"]
    assert plan["steps"][2]["parameters"] == {"input": "${s1.result}"} and "s1" in plan["steps"][2]["depends_on"]
    # s1 only feeds s3 (intermediate): the answer is s2's record and s3's measure of s1's record
    value = {v["source"]: v["value"] for v in done["result"]["value"]}
    assert sorted(value) == ["s2", "s3"]
    assert value["s3"] == {"measured": "sales", "items": 2} and value["s2"]["label"] == "returns"

    task = store.get_task("default", done["task_id"])
    assert task.state == "completed" and task.meta["plan"] == plan
    kinds = events_of(store, done["task_id"])
    assert kinds[:2] == ["TASK_CREATED", "PLAN_CREATED"] and kinds[-1] == "PLAN_COMPLETED"
    (started,) = store.events("default", task_id=done["task_id"], event_type="TASK_STARTED")
    assert started.data["parallel"] == "fixed" and started.data["concurrency"] == 4  # s1 and s2 can run at once
    assert kinds.count("STEP_STARTED") == 3 and kinds.count("STEP_COMPLETED") == 3
    steps = [store.get_task("default", cid) for cid in task.meta["children"].values()]
    assert all(s.meta["parent"] == done["task_id"] and s.state == "completed" for s in steps)


def test_independent_steps_run_at_the_same_time_on_several_execution_actors(flora, user):
    if flora.config.actors.system_base != "multiprocTCPBase":
        pytest.skip("steps overlap only when ExecutionActors are processes of their own")
    ask(flora, user, "slow fetch label=warm and slow fetch label=up")  # the group's workers exist now
    started = time.monotonic()
    done = ask(flora, user, "slow fetch label=a seconds=0.6 and slow fetch label=b seconds=0.6 "
                            "and slow fetch label=c seconds=0.6")
    wall = time.monotonic() - started
    assert done["message_type"] == "task_completed", done
    runs = [v["value"] for v in done["result"]["value"]]
    assert max(r["started"] for r in runs) < min(r["ended"] for r in runs)  # all three ran at once
    assert len({r["pid"] for r in runs}) == 3
    assert wall < 3 * 0.6


def test_a_failing_step_is_retried_with_backoff_then_succeeds(flora, user, store, tmp_path):
    done = ask(flora, user, f"flaky fetch key=k failures=2 counter_dir={tmp_path} and slow fetch label=x")
    assert done["message_type"] == "task_completed", done
    value = {v["source"]: v["value"] for v in done["result"]["value"]}
    assert value["s1"] == {"key": "k", "tries": 3}
    assert events_of(store, done["task_id"]).count("STEP_RETRIED") == 2


def test_fail_fast_reports_the_failed_step_and_nothing_as_done(flora, user, store):
    failed = ask(flora, user, "please fail and slow fetch label=x seconds=1")
    assert failed["message_type"] == "task_error", failed
    assert "s1" in failed["message"] and "always_fails" in failed["message"]
    task = store.get_task("default", failed["task_id"])
    assert task.state == "failed"
    assert "PLAN_COMPLETED" not in events_of(store, task.task_id)


@pytest.fixture(scope="module")
def flora_continue(tmp_path_factory, dify, sales_db):
    data_dir = tmp_path_factory.mktemp("plans-continue")
    running = main.start_flora(plan_config(data_dir, dify.url, sales_db, "simpleSystemBase",
                                           failure_policy="continue", min_ok=1, max_retries=0))
    yield running
    running.shutdown()


@pytest.mark.chroma_here  # embedded Chroma in this process (tests/conftest.py)
def test_continue_answers_with_what_succeeded_and_names_what_failed(flora_continue, user):
    done = ask(flora_continue, user, "please fail and slow fetch label=x")
    assert done["message_type"] == "task_completed", done
    assert [v["source"] for v in done["result"]["value"]] == ["s2"]
    assert done["result"]["failed"] == ["s1"]
    assert "the backend said no" in done["result"]["steps"]["s1"]["error"]


def test_a_paused_step_asks_the_user_and_the_answer_runs_the_whole_plan(flora, user, store):
    paused = ask(flora, user, "add numbers a=2, slow fetch label=x")
    assert paused["message_type"] == "task_paused", paused
    plan_task = store.get_task("default", paused["task_id"])
    assert plan_task.capability == "plan" and plan_task.state == "waiting_parameters"
    assert [p["name"] for p in paused["missing_parameters"]] == ["b"]

    done = ask(flora, user, "3")  # answers the plan, not its step
    assert done["message_type"] == "task_completed", done
    assert done["task_id"] == paused["task_id"]
    value = {v["source"]: v["value"] for v in done["result"]["value"]}
    assert value["s1"] == {"sum": 5} and value["s2"]["label"] == "x"


def test_cancel_during_a_run_stops_the_steps_and_reports_nothing_as_done(flora, user, store):
    if flora.config.actors.system_base != "multiprocTCPBase":
        pytest.skip("a second request while the first runs needs actors in their own processes")
    request = m.user_input(user_id=user, content="slow fetch label=a seconds=5 and slow fetch label=b seconds=5")
    flora.system.tell(flora.interaction, request)
    deadline = time.monotonic() + 30
    while True:
        plans = [t for t in store.list_tasks("default", user_id=user) if t.capability == "plan"]
        if plans and len([t for t in store.list_tasks("default", user_id=user, states=["running"])
                          if t.meta.get("parent")]) == 2:
            break
        assert time.monotonic() < deadline, "the plan's steps never started"
        time.sleep(0.05)
    with flora.system.private() as endpoint:
        cancelled = endpoint.ask(flora.interaction, m.user_input(user_id=user, content="cancel it"), TIMEOUT)
    assert cancelled["message_type"] == "task_completed", cancelled
    assert cancelled["task_id"] == plans[0].task_id and len(cancelled["result"]["steps_cancelled"]) == 2
    original = flora.system.listen(TIMEOUT)
    assert original["msg_id"] == request["msg_id"] and original["error_type"] == "cancelled"

    time.sleep(1.0)  # the steps notice within a tick; anything they send back is refused
    task = store.get_task("default", plans[0].task_id)
    steps = [store.get_task("default", cid) for cid in task.meta["children"].values()]
    assert task.state == "cancelled" and [s.state for s in steps] == ["cancelled", "cancelled"]
    assert not {"STEP_COMPLETED", "PLAN_COMPLETED"} & set(events_of(store, task.task_id))


@pytest.mark.parametrize("words", ["cancel it", "取消刚才的任务"], ids=["en", "zh"])
def test_cancelling_a_waiting_plan_cancels_its_steps(flora, user, store, words):
    paused = ask(flora, user, "add numbers a=2, slow fetch label=x")
    assert paused["message_type"] == "task_paused"
    cancelled = ask(flora, user, words)
    assert cancelled["message_type"] == "task_completed", cancelled
    assert cancelled["task_id"] == paused["task_id"]
    task = store.get_task("default", paused["task_id"])
    assert task.state == "cancelled"
    assert {store.get_task("default", c).state for c in task.meta["children"].values()} <= {"cancelled",
                                                                                            "completed"}
    assert store.paused_tasks("default", user) == []  # its step no longer waits either
    again = ask(flora, user, words)
    assert again["message_type"] == "task_error" and again["error_type"] == "conflict"


@pytest.mark.parametrize("lang,comment,rerun,revise", [
    ("en", "comment on it: the numbers look right", "re-run it", "revise it: in French"),
    ("zh", "评论：数字没问题", "重新执行", "把结果改成英文"),
])
def test_comment_rerun_and_revise_a_finished_plan(flora, user, store, lang, comment, rerun, revise):
    first = ask(flora, user, "slow fetch label=a and slow fetch label=b")
    assert first["message_type"] == "task_completed"

    noted = ask(flora, user, comment)
    assert noted["message_type"] == "task_completed" and noted["task_id"] == first["task_id"]
    task = store.get_task("default", first["task_id"])
    assert [c["text"] for c in task.meta["comments"]] == [noted["result"]["comment"]]
    assert "TASK_COMMENTED" in events_of(store, first["task_id"])

    again = ask(flora, user, rerun)
    assert again["message_type"] == "task_completed", again
    assert again["task_id"] != first["task_id"] and again["result"]["plan"] == first["result"]["plan"]
    assert store.get_task("default", again["task_id"]).meta["rerun_of"] == first["task_id"]

    revised = ask(flora, user, revise)
    assert revised["message_type"] == "task_completed", revised
    instruction = store.get_task("default", revised["task_id"]).meta["instruction"]
    assert instruction and instruction in revise
    assert {v["value"]["instruction"] for v in revised["result"]["value"]} == {instruction}  # the steps saw it


def test_single_step_tasks_are_re_run_and_revised_as_new_tasks(flora, user, store):
    first = ask(flora, user, "slow fetch label=solo")
    assert first["message_type"] == "task_completed" and first["capability"] == "slow_fetch"
    revised = ask(flora, user, "revise it: shorter")
    assert revised["message_type"] == "task_completed", revised
    assert revised["capability"] == "slow_fetch" and revised["result"]["instruction"] == "shorter"
    assert revised["message"].startswith('Revised as asked ("shorter").')
    assert store.get_task("default", revised["task_id"]).meta["revision_of"] == first["task_id"]


def test_another_users_task_is_refused_and_another_tenants_is_not_found(flora, user):
    mine = ask(flora, user, "slow fetch label=a and slow fetch label=b")
    refused = ask(flora, user + "_other", f"cancel task {mine['task_id']}")
    assert refused["message_type"] == "task_error" and refused["error_type"] == "forbidden"
    unseen = ask(flora, user, f"re-run {mine['task_id']}", tenant_id="acme")
    assert unseen["message_type"] == "task_error" and unseen["error_type"] == "not_found"


def test_a_request_the_rules_cannot_split_is_planned_by_the_model(flora, user, store):
    done = ask(flora, user, "make the numbers report and file it")
    assert done["message_type"] == "task_completed", done
    assert done["result"]["plan"]["source"] == "llm"
    assert [v["value"] for v in done["result"]["value"]] == [{"sum": 3}, {"sum": 13}]  # s2 read s1's sum
    assert "PLAN_CREATED" in events_of(store, done["task_id"])


def test_a_workflow_step_contributes_its_outputs_to_the_answer(flora, user, store):
    asked = ask(flora, user, "run workflow, and slow fetch label=sales")
    assert asked["message_type"] == "task_paused" and asked["missing_parameters"][0]["name"] == "api_key", asked
    done = ask(flora, user, "sk-test")
    assert done["message_type"] == "task_completed", done
    steps = done["result"]["plan"]["steps"]
    assert [(s["capability"], s["kind"]) for s in steps] == [("dify_workflow", "workflow"), ("slow_fetch", "leaf")]
    value = {v["source"]: v["value"] for v in done["result"]["value"]}
    assert value["s1"] == {"echo": {}, "user": user}  # the workflow's outputs, not the run around them
    assert done["result"]["steps"]["s1"]["result"]["status"] == "succeeded"  # the run stays in the step's record
    assert value["s2"]["label"] == "sales"


def test_a_plans_steps_share_one_whiteboard_that_comes_back_in_the_result(flora, user, store):
    done = ask(flora, user, "note finding label=alpha, note finding label=beta, then note finding label=gamma")
    assert done["message_type"] == "task_completed", done
    plan_id = done["task_id"]
    values = [v["value"] for v in done["result"]["value"]]
    assert {v["board_id"] for v in values} == {plan_id}  # every step wrote on its plan's board
    assert all(f"found {v['label']}" in v["seen"] for v in values)  # and read its own line back from it
    board = done["result"]["whiteboard"]
    assert sorted(line["text"] for line in board["facts"]) == ["found alpha", "found beta", "found gamma"]
    assert [line["done"] for line in board["todo"]] == [False, False, False]
    updates = store.events("default", task_id=plan_id, event_type="WHITEBOARD_UPDATED")
    assert sorted(u.data["author"] for u in updates) == ["note_finding:alpha", "note_finding:beta",
                                                         "note_finding:gamma"]
    assert store.get_task("default", plan_id).result["whiteboard"] == board


@pytest.mark.parametrize("said, words", [("把它弄成跟上次一样的格式", "还没有任何任务"), ("re-run it", "You have no task yet")])
def test_an_operation_on_it_from_someone_with_no_task_is_asked_about_in_their_language(flora, user, said, words):
    asked = ask(flora, user + "_new", said)
    assert (asked["message_type"], asked["intent"]) == ("clarification", "clarify"), asked
    assert words in asked["message"]
